"""onion_npu's kernels, one module per operator: stubs from
`python -m onion.codegen.backend_stubs`, filled in by hand."""
