"""Where onion knowingly differs from PyTorch in the OpInfo harness: one place, a reason each.

Keys are (entry key, check) for every dtype, or (entry key, check, dtype name) for one dtype.
Checks: values, method, noncontiguous, meta, out, inplace, grad.  A difference listed for one dtype
fails the harness when it starts matching, so those entries only shrink; an every-dtype entry is
checked by hand when its cause is fixed (its reason names the work that removes it).
"""
ADVANCED_INDEXING = "advanced indexing (lists and tensors as indices) is not implemented yet (issue 8, item 3)"
COMPLEX_GRAD = ("complex autograd: PyTorch's derivative formulas conjugate (grad * other.conj(), "
                "grad.mm(mat2.mH), ...); onion has no conj operator or Conjugate bit yet (issue 8, item 2)")

KNOWN: dict[tuple, str] = {
    **{("__getitem__", check): ADVANCED_INDEXING for check in ("values", "method", "noncontiguous", "meta", "grad")},
    **{(key, "grad", "complex128"): COMPLEX_GRAD for key in (
        "mul", "__rmul__", "mm", "bmm", "addmm", "addmm.decomposed", "matmul", "div.no_rounding_mode", "exp",
        "prod", "abs", "pow", "__rpow__")},
    ("mean", "out"): "onion has no mean.out overload yet (issue 8)",
    **{(key, "grad", "complex128"): COMPLEX_GRAD for key in (
        "cos", "log", "rsqrt", "sigmoid", "sin", "sqrt", "tanh")},
}
