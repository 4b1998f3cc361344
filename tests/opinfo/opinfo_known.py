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
