"""What each layer of one call costs: ``onion.add(a, b)`` on 4 floats, entered at every layer in turn.

    python benchmarks/layers.py

Each row calls the same add from a lower layer (the binding, the operator entry, the autograd kernel,
the CPU kernel, then NumPy alone), so the difference between two rows is what the layer between them
costs.  ``torch.add`` is timed in the same run.  Every figure includes the ~40 ns of the timing lambda.
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"

import timeit  # noqa: E402

import numpy as np  # noqa: E402

import onion  # noqa: E402
from onion._generated import operators, register_autograd  # noqa: E402
from onion.core.dispatch_key import AFTER_AUTOGRAD  # noqa: E402
from onion.core.tls import state  # noqa: E402


def _ns(fn, number=200_000, repeat=7) -> float:
    fn()
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e9


def main() -> None:
    a, b = onion.rand(4), onion.rand(4)
    st = state()
    ks = (a._impl.keyset | b._impl.keyset | st.include) & st.mask
    cpu_kernel = operators.redispatch_add_Tensor[ks & AFTER_AUTOGRAD]
    autograd_kernel = register_autograd.add_Tensor_autograd
    x, y = a._impl._array, b._impl._array
    rows = [("onion.add(a, b)            binding and below", lambda: onion.add(a, b)),
            ("operators.add_Tensor        entry and below", lambda: operators.add_Tensor(a, b, 1)),
            ("add_Tensor_autograd         autograd kernel and below", lambda: autograd_kernel(ks, a, b, 1)),
            ("CPU kernel                  meta, NumPy, wrap", lambda: cpu_kernel(ks, a, b, 1)),
            ("np.add(x, y)                NumPy alone", lambda: np.add(x, y))]
    try:
        import torch
        torch.set_num_threads(1)
        ta, tb = torch.rand(4), torch.rand(4)
        rows.insert(0, ("torch.add(a, b)             PyTorch, for reference", lambda: torch.add(ta, tb)))
    except ImportError:
        pass
    for name, fn in rows:
        print(f"{name:58s} {_ns(fn):7.0f} ns")


if __name__ == "__main__":
    main()
