"""Where onion knowingly differs from PyTorch in the OpInfo harness: one place, a reason each.

Keys are (entry key, check) for every dtype, or (entry key, check, dtype name) for one dtype.
Checks: values, method, noncontiguous, meta, out, inplace, grad.  A difference listed for one dtype
fails the harness when it starts matching, so those entries only shrink; an every-dtype entry is
checked by hand when its cause is fixed (its reason names the work that removes it).
"""
NO_CONJ_BIT = ("onion has no Conjugate bit: conj of a complex tensor is a conjugated copy (new memory, contiguous "
               "strides), where PyTorch returns a lazy view of the input")

KNOWN: dict[tuple, str] = {
    **{(key, check, dt): NO_CONJ_BIT for key in ("conj", "mH") for check in ("values", "method", "noncontiguous")
       for dt in ("complex64", "complex128")},
}

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
    ("ormqr", "grad"): "ormqr's derivative (householder_product based) is not implemented yet",
    ("pinverse", "grad"): ("pinverse is composed of _linalg_svd, where and matmul: its gradient has PyTorch's values "
                           "but row-major strides (PyTorch's is column-major)"),
})
KNOWN.update({
    ("stft", "grad"): "stft's derivative (an overlap-add of inverse transforms) is not implemented yet",
    ("istft", "grad"): "istft's derivative is not implemented yet",
})
