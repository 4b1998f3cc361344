"""Where onion knowingly differs from PyTorch in the OpInfo harness: one place, a reason each.

Keys are (entry key, check) for every dtype, or (entry key, check, dtype name) for one dtype.
Checks: values, method, noncontiguous, meta, out, inplace, grad.  A difference listed for one dtype
fails the harness when it starts matching, so those entries only shrink; an every-dtype entry is
checked by hand when its cause is fixed (its reason names the work that removes it).
"""
KNOWN: dict[tuple, str] = {
}

# ---- sort
# PyTorch's CPU sort (stable=False), topk and kthvalue order equal values by how std::sort, std::partial_sort
# and its quickselect happen to move them; onion orders ties by input position (one stable sort), so the
# indices of tied elements (integers, bool, bfloat16 samples) differ while the values agree.
TIE_ORDER = ("indices of equal elements: PyTorch's unstable sort/topk/kthvalue order ties by its std::sort / "
             "partial_sort / quickselect moves, onion by input position (stable); values agree")
KNOWN.update({(key, check, dt): TIE_ORDER
              for key, dts in (("sort", ("bool", "bfloat16")), ("argsort", ("bool", "bfloat16")),
                               ("topk", ("bfloat16", "int64")),
                               ("kthvalue", ("int64", "int32", "int16", "int8", "uint8")))
              for dt in dts for check in ("values", "method", "noncontiguous")})
# ---- reduce
NUCLEAR_NORM = ("torch.norm(p='nuc') is a matrix norm over singular values (linalg.svdvals), which onion does not have "
                "yet (the linalg issue); onion.norm raises NotImplementedError for it")
KNOWN.update({("norm.nuc", check): NUCLEAR_NORM for check in ("values", "method", "noncontiguous", "meta", "out", "grad")})
DIFF_CONCAT = ("diff with prepend/append joins the tensors by copying into slices of a new tensor (onion has no cat "
               "yet); the gradients of prepend/append are then contiguous copies, where PyTorch's cat backward gives "
               "slices of the joined gradient (other strides, same values)")
KNOWN[("diff", "grad")] = DIFF_CONCAT
# ---- linalg
GEMM_ROUNDING = ("float32/complex64 gemm: MKL's kernels (PyTorch's BLAS) sum the products in another order than "
                 "NumPy's OpenBLAS; a sum with cancellation differs by a few ulps more than the default tolerance")
KNOWN.update({
    ("addbmm", "noncontiguous", "float32"): GEMM_ROUNDING,
    **{("baddbmm", check, "complex64"): GEMM_ROUNDING
       for check in ("values", "method", "noncontiguous", "out", "inplace")},
})
MATRIX_EXP_F32 = ("float32/bfloat16 matrix_exp of a batch with a large norm: PyTorch's degree-18 Taylor "
                  "scaling-and-squaring in float32 is 0.2% off the exact value; onion computes in float64 (SciPy's "
                  "expm) and rounds once")
KNOWN.update({
    **{("matrix_exp", check, dt): MATRIX_EXP_F32 for check in ("values", "method", "noncontiguous")
       for dt in ("float32", "bfloat16")},
    ("pinverse", "grad"): ("pinverse is composed of _linalg_svd, where and matmul: its gradient has PyTorch's values "
                           "but row-major strides (PyTorch's is column-major)"),
})

# ---- ops
# svd_lowrank/pca_lowrank draw PyTorch's Gaussian test matrix (same seed, same randn), so they project onto the same
# subspace; the last step is the SVD of a wide q x n matrix, whose singular vectors' signs differ between MKL's gesdd
# (PyTorch's LAPACK) and NumPy's.  PyTorch's own suite skips the value comparison (test_compare_cpu: "output is
# non-deterministic") and differentiates U @ V^H and S, which the harness checks too.
LOWRANK_SIGNS = ("the singular vectors of the wide q x n matrix svd_lowrank ends with: MKL's gesdd (PyTorch) and "
                 "NumPy's LAPACK choose other signs for some columns; S, U @ V^H and the gradients agree")
KNOWN.update({(key, "noncontiguous"): LOWRANK_SIGNS for key in ("svd_lowrank", "pca_lowrank")})
