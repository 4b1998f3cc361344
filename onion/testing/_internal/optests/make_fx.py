"""``make_fx_check``: a function traced with ``make_fx`` replays to what it computes eagerly."""
from __future__ import annotations

from ....fx.experimental.proxy_tensor import make_fx
from .tensor_facts import assert_close

__all__ = ["make_fx_check"]

_MSG = ("op(*args, **kwargs) and make_fx(op)(*args, **kwargs) produced different values. This could mean that "
        "your abstract impls (meta/FakeTensor impls) are incorrect, that your operator is not completely "
        "traceable (e.g., it relies on some global state), or that there is a bug in make_fx.")


def make_fx_check(func, args, tracing_mode: str, *, rtol=None, atol=None):
    """Trace ``func(*args)`` (positional tensors and values), replay the graph on ``args`` and compare;
    returns the GraphModule."""
    traced = make_fx(func, tracing_mode=tracing_mode)(*args)
    expected = func(*args)
    result = traced(*args)
    assert_close(result, expected, rtol=rtol, atol=atol, msg=_MSG)
    return traced
