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
