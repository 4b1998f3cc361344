"""What the Autograd keys do for an operator without an autograd kernel (a custom operator registered only
for CPU, say), as PyTorch's ``basicAutogradNotImplementedFallback``.

The mode is process-wide, as in PyTorch (``onion._C._set_autograd_fallback_mode``):

- ``"nothing"``: redispatch below autograd; outputs don't require grad.
- ``"warn"`` (the default): when an input requires grad, outputs that don't are given a ``WarnNotImplemented``
  node, so they require grad and a backward through them warns that no autograd kernel was registered (and
  gives no gradient); outputs that already require grad (the kernel composed differentiable operators) get a
  hook that warns the same way.
- ``"error"``: as "warn", but the backward raises instead of warning.

The kernel runs with the keyset below autograd but the thread-local state unchanged, as in PyTorch: a Python
kernel that calls other operators is recorded by them.
"""
from __future__ import annotations

import warnings

from ..core.dispatch_key import AFTER_AUTOGRAD, K
from ..core.tls import state as _tls_state
from ..dispatch.fallback_specialize import specialized_fallback
from .graph import Node, gradient_edge
from .history import set_history

_MODES = ("nothing", "warn", "error")
_mode = ["warn"]


def _set_autograd_fallback_mode(mode: str) -> None:
    if mode not in _MODES:
        raise RuntimeError(f"Unsupported AutogradFallbackMode: {mode}; expected one of {', '.join(_MODES)}")
    _mode[0] = mode


def _get_autograd_fallback_mode() -> str:
    return _mode[0]


def _not_implemented_message(op_name: str) -> str:
    return (f"{op_name}: an autograd kernel was not registered to the Autograd key(s) but we are trying to "
            f"backprop through it. This may lead to silently incorrect behavior. If your operator is "
            f"differentiable, please ensure you have registered an autograd kernel to the correct Autograd key "
            f"(e.g. DispatchKey::Autograd, DispatchKey::CompositeImplicitAutograd), or use "
            f"onion.library.register_autograd. If your operator is not differentiable, or to squash this warning "
            f"and use the previous behavior, please register onion.library.fallthrough_kernel to "
            f"DispatchKey::Autograd.")


def _report(op_name: str) -> None:
    if _mode[0] == "error":
        raise RuntimeError(_not_implemented_message(op_name))
    warnings.warn(_not_implemented_message(op_name), UserWarning, stacklevel=2)


class WarnNotImplemented(Node):
    """The backward of an operator that has no autograd kernel: warns (or raises) and gives no gradient."""

    _name = "WarnNotImplemented"

    def __init__(self, op_name: str, num_inputs: int):
        super().__init__()
        self.op_name = op_name
        self.num_inputs = num_inputs

    def apply(self, grads):
        _report(self.op_name)
        return [None] * self.num_inputs


def _tensors_in(values, positions) -> list:
    out = []
    for i in positions:
        v = values[i]
        if v is None:
            continue
        if isinstance(v, (list, tuple)):
            out.extend(t for t in v if t is not None)
        else:
            out.append(v)
    return out


def _differentiable(t) -> bool:
    dt = t._impl.dtype
    return dt.is_floating_point or dt.is_complex


def autograd_fallback(op, ks, values):
    """The boxed fallback of every Autograd key (``values``: the schema's arguments, normalized)."""
    handle = op._handle
    below = ks & AFTER_AUTOGRAD
    if _mode[0] == "nothing":
        return handle.redispatch(below, *values)
    inputs = _tensors_in(values, handle.tensor_positions)
    if not (any(t._impl.requires_grad for t in inputs) and _tls_state().grad_enabled):
        return handle.redispatch(below, *values)
    name = handle.qualified_name.partition(".")[0]
    node = WarnNotImplemented(name, len(inputs))
    node.next_functions = tuple(gradient_edge(t) for t in inputs)
    result = handle.redispatch(below, *values)
    returns = handle.schema.returns
    outs = result if len(returns) != 1 else (result,)
    output_nr = 0
    for ret, out in zip(returns, outs if isinstance(outs, tuple) else (outs,)):
        mutable = ret.is_write
        for t in (out if isinstance(out, (list, tuple)) else (out,)):
            if t is None or not hasattr(t, "_impl") or not _differentiable(t):
                output_nr += 1
                continue
            if t._impl.requires_grad:
                t.register_hook(lambda grad, _n=name: _report(_n))
                base = t._base
                if mutable and base is not None and base.requires_grad:
                    base.register_hook(lambda grad, _n=name: _report(_n))
            elif not mutable:
                set_history(t, node, output_nr)
            output_nr += 1
    node._num_outputs = max(output_nr, 1)
    return result


# in an operator's table, the fallback written out for its schema: only a call that records goes to the boxed one
autograd_fallback.specialize = lambda handle: specialized_fallback(handle, autograd_fallback, _mode)

# PyTorch's list (VariableFallbackKernel.cpp), plus PrivateUse2/3 so that their tensors run too
_FALLBACK_KEYS = (K.AutogradOther, K.AutogradCPU, K.AutogradCUDA, K.AutogradXLA, K.AutogradMPS, K.AutogradXPU,
                  K.AutogradHPU, K.AutogradLazy, K.AutogradMTIA, K.AutogradMAIA, K.AutogradPrivateUse1,
                  K.AutogradPrivateUse2, K.AutogradPrivateUse3, K.AutogradMeta)


def register_autograd_fallback(lib) -> None:
    """Install the fallback on every Autograd key through ``lib`` (an ``IMPL`` library of namespace ``_``)."""
    for key in _FALLBACK_KEYS:
        lib._fallback_internal(key, autograd_fallback,
                               "registered at onion/autograd/autograd_fallback.py (basic autograd fallback)")


__all__ = ["WarnNotImplemented", "autograd_fallback", "register_autograd_fallback",
           "_set_autograd_fallback_mode", "_get_autograd_fallback_mode"]
