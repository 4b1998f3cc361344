"""The dtype groups ``ufunc_inner_loop`` entries name (PyTorch's AT_DISPATCH groups), as data.

Codegen validates YAML against these names and the runtime instantiates loops from
them, so both read this one table.
"""
from __future__ import annotations

DTYPE_GROUPS = {
    "All": ("uint8", "int8", "int16", "int32", "int64", "float32", "float64"),
    "AllAndComplex": ("uint8", "int8", "int16", "int32", "int64", "float32", "float64", "complex64", "complex128"),
    "Floating": ("float32", "float64"),
    "FloatingAndComplex": ("float32", "float64", "complex64", "complex128"),
    "Integral": ("uint8", "int8", "int16", "int32", "int64"),
    "Complex": ("complex64", "complex128"),
    "BFloat16": ("bfloat16",), "Half": ("float16",), "Bool": ("bool",), "ComplexHalf": (),
    # AT_BAREBONES_UNSIGNED_TYPES: the few kernels PyTorch dispatches for uint16/uint32/uint64
    "BareBonesUnsigned": ("uint16", "uint32", "uint64"),
}
# a loop spec without a group list: every dtype
DEFAULT_GROUPS = ("AllAndComplex", "Bool", "BFloat16", "Half")


def parse_loop_spec(spec: str) -> tuple:
    """``"add (AllAndComplex, BFloat16, Half)"`` -> ("add", ("AllAndComplex", "BFloat16", "Half"))."""
    name, _, rest = spec.partition("(")
    groups = tuple(g.strip() for g in rest.rstrip().rstrip(")").split(",") if g.strip()) if rest else DEFAULT_GROUPS
    for g in groups:
        if g not in DTYPE_GROUPS:
            raise ValueError(f"unknown dtype group '{g}' (known: {', '.join(DTYPE_GROUPS)})")
    return name.strip(), groups
