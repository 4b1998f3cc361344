"""What each layer of a call costs, for the calls whose target is PyTorch's own cost (``<= 1.0x``).

    python benchmarks/layers.py

Each case is entered at every layer in turn: the binding (what a user types), the operator entry
(``operators.py``), then every kernel the Dispatcher reaches for the call's keyset, from the highest key
down to the backend's, and finally the NumPy call the backend kernel makes.  The difference between two
rows is what the layer between them costs; the PyTorch row is the whole call in C++.  Every figure
includes the ~20-40 ns of the timing lambda.  (The keyset walk is the Dispatcher's: the highest key that
is not a fallthrough, then the keys below it, as each kernel's redispatch goes.)
"""
from __future__ import annotations

import contextlib
import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"

import timeit  # noqa: E402

import numpy as np  # noqa: E402

import onion  # noqa: E402
from onion._generated import operators  # noqa: E402
from onion.core.dispatch_key import RUNTIME_KEY_NAMES, mask_below  # noqa: E402
from onion.core.tls import state  # noqa: E402
from onion.dispatch.dispatcher import dispatcher as _dispatcher  # noqa: E402


def _ns(fn, number=100_000, repeat=7) -> float:
    fn()
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e9


def _bound(kernel, ks, args):
    """A call of ``kernel`` with these arguments spelled out (a ``*args`` call would add its own cost)."""
    if len(args) == 1:
        return lambda: kernel(ks, args[0])
    a0, a1, *rest = args
    if not rest:
        return lambda: kernel(ks, a0, a1)
    a2, = rest
    return lambda: kernel(ks, a0, a1, a2)


def kernel_chain(name: str, tensors, args):
    """``(key name, callable)`` for each kernel the Dispatcher runs for ``name`` on ``tensors``, top first."""
    op = _dispatcher.find("aten::" + name)
    st = state()
    ks = st.include
    for t in tensors:
        ks |= t._impl.keyset
    ks &= st.mask
    rows = []
    while ks:
        key = (ks & ~op.skip_mask).bit_length() - 1
        if key < 0:
            break
        kernel = op.table[key].fn
        rows.append((RUNTIME_KEY_NAMES[key], _bound(kernel, ks, args)))
        if RUNTIME_KEY_NAMES[key] == "CPU":
            break
        ks &= mask_below(key)
    return rows


def user_calls(lib) -> dict:
    """Each case as a user writes it: title -> (call, context manager)."""
    a, b, m = lib.rand(4), lib.rand(4), lib.rand(2, 2)
    g = lib.rand(4, requires_grad=True)
    none = contextlib.nullcontext
    return {"add(a, b)": (lambda: lib.add(a, b), none),
            "a + b under inference_mode": (lambda: a + b, lib.inference_mode),
            "a.add_(b)": (lambda: a.add_(b), none),
            "a.view(2, 2)": (lambda: a.view(2, 2), none),
            "a[0]": (lambda: a[0], none),
            "m.t()": (lambda: m.t(), none),
            "g + b (recording)": (lambda: g + b, none)}, (a, b, m, g)


def layers(title, a, b, m, g):
    """(overload, operator entry call, tensors, kernel arguments, the NumPy call) of one case."""
    x, y = a._impl._array, b._impl._array
    return {"add(a, b)": ("add.Tensor", lambda: operators.add_Tensor(a, b, 1), (a, b), (a, b, 1),
                          lambda: np.add(x, y)),
            "a + b under inference_mode": ("add.Tensor", lambda: operators.add_Tensor(a, b, 1), (a, b), (a, b, 1),
                                           lambda: np.add(x, y)),
            "a.add_(b)": ("add_.Tensor", lambda: operators.add__Tensor(a, b, 1), (a, b), (a, b, 1),
                          lambda: np.add(x, y, out=x)),
            "a.view(2, 2)": ("view", lambda: operators.view(a, (2, 2)), (a,), (a, (2, 2)), lambda: x.reshape((2, 2))),
            "a[0]": ("select.int", lambda: operators.select_int(a, 0, 0), (a,), (a, 0, 0), lambda: x[0, ...]),
            "m.t()": ("t", lambda: operators.t(m), (m,), (m,), lambda: m._impl._array.T),
            "g + b (recording)": ("add.Tensor", lambda: operators.add_Tensor(g, b, 1), (g, b), (g, b, 1),
                                  lambda: np.add(g._impl._array, y)),
            }[title]


def main() -> None:
    try:
        import torch
        torch.set_num_threads(1)
        torch_calls, _ = user_calls(torch)
    except ImportError:
        torch_calls = {}
    calls, tensors = user_calls(onion)
    for title, (call, ctx) in calls.items():
        name, entry, operands, args, raw = layers(title, *tensors)
        rows = []
        if title in torch_calls:
            tcall, tctx = torch_calls[title]
            with tctx():
                rows.append(("PyTorch, the whole call", _ns(tcall)))
        with ctx():
            rows.append(("binding", _ns(call)))
            rows.append(("operator entry (operators.py)", _ns(entry)))
            for key, fn in kernel_chain(name, operands, args):
                rows.append((f"{key} kernel", _ns(fn)))
            rows.append(("NumPy alone", _ns(raw)))
        print(title)
        for label, ns in rows:
            print(f"    {label:34s} {ns:7.0f} ns")


if __name__ == "__main__":
    main()
