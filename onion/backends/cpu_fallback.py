"""The CPU fallback of an out-of-tree backend (PyTorch's ``at::native::cpu_fallback`` pattern).

A boxed kernel for every operator a backend does not implement: the tensor arguments are copied to
the CPU, the operator runs there, and the results (and the inputs it mutated) are copied back to the
backend's device; the first time an operator falls back it warns.  Opt-in per backend::

    from onion.library import Library
    lib = Library("_", "IMPL")
    lib.fallback(cpu_fallback, "PrivateUse1")        # or register_cpu_fallback("PrivateUse1")

Transfers go through the ``Backend`` object (``to_numpy``, ``empty_strided``, ``asarray``) rather than
through the dispatcher, so a backend needs no ``copy_`` kernel for its fallback to work, and the
fallback never calls itself.  Operators that return a view of an input cannot fall back (a CPU copy
is not an alias of the device tensor): they raise, as PyTorch's fallback does.
"""
from __future__ import annotations

import warnings

from ..core.device import CPU, device as _device

_WARNED: set = set()        # (device type, operator) pairs that have warned once already


def _backend(dev):
    from .base import backend_for
    return backend_for(dev)


def _empty(shape, strides, dtype, dev):
    """A fresh tensor of ``dev`` with the given geometry (made here: the backends layer is below aten's
    tensor factories)."""
    from ..core.dispatch_key import tensor_keyset
    from ..core.tensor import make_tensor
    from ..core.tensor_impl import make_impl
    arr = _backend(dev).empty_strided(tuple(shape), tuple(strides), dtype.np, dev)
    impl = make_impl(arr, dtype, dev, tensor_keyset(dev.backend_key))
    if 0 in tuple(shape):
        impl._strides = tuple(strides)         # an empty array cannot tell its strides
    return make_tensor(impl)


def _to_cpu(t):
    """A CPU copy of a device tensor with the same sizes and strides (as ``at::_to_cpu``)."""
    impl = t._impl
    src = _backend(impl.device).to_numpy(impl._array)
    out = _empty(impl.sizes, impl.strides, impl.dtype, CPU)
    if src.size:
        out._impl._array[...] = src
    return out


def _to_device(t, dev):
    """A copy of CPU tensor ``t`` on ``dev``, keeping its strides."""
    impl = t._impl
    out = _empty(impl.sizes, impl.strides, impl.dtype, dev)
    if impl.numel():
        out._impl._array[...] = _backend(dev).asarray(impl._array, dev)
    return out


def _write_back(dst, src) -> None:
    """Copy CPU tensor ``src`` into device tensor ``dst`` (an input the operator mutated); where the
    operator resized it (``out=``), ``dst`` gets fresh memory of the new geometry first (the CPU run
    has warned about the resize already)."""
    if tuple(dst._impl.sizes) != tuple(src._impl.sizes):
        impl = dst._impl
        if impl._base is not None:
            raise RuntimeError("resize_ on a view of another tensor is not supported by the CPU fallback; pass a "
                               "fresh tensor as out=")
        fresh = _empty(src._impl.sizes, src._impl.strides, impl.dtype, impl.device)._impl
        impl._array = fresh._array
        impl._strides = fresh._strides
        impl._storage = None
        impl._offset = 0
    if src._impl.numel():
        dst._impl._array[...] = _backend(dst.device).asarray(src._impl._array, dst.device)
    dst._impl.bump_version()          # onion's kernels bump what they write (the CPU copy's bump stays there)


def _is_tensor(v) -> bool:
    from ..core.tensor import Tensor
    return isinstance(v, Tensor)


def cpu_fallback(op, *args, **kwargs):
    """Run ``op`` on the CPU for a backend that has no kernel for it (``Library.fallback``'s calling
    convention: ``fn(op, *args, **kwargs)``)."""
    handle = op._handle
    schema = handle.schema
    values = list(op._spec.normalize(args, kwargs))
    name = handle.qualified_name
    for r in schema.returns:
        if r.alias_info is not None and not r.alias_info.is_write:
            dev = next((v.device for v in _flat_tensors(values) if v.device.type not in ("cpu", "meta")), None)
            raise RuntimeError(
                f"The operator {name} appears to be a view operator, but it has no implementation for the backend "
                f"\"{dev}\". View operators don't support falling back to run on the CPU, since the tensor's "
                f"storage cannot be shared across devices.")
    target = None
    cpu_values = []
    for v in values:
        if _is_tensor(v):
            if v.device.type != "cpu":
                target = target or v.device
                v = _to_cpu(v)
        elif isinstance(v, (list, tuple)) and any(_is_tensor(x) for x in v):
            moved = []
            for x in v:
                if _is_tensor(x) and x.device.type != "cpu":
                    target = target or x.device
                    x = _to_cpu(x)
                moved.append(x)
            v = type(v)(moved)
        elif isinstance(v, _device) and v.type not in ("cpu", "meta"):
            target = target or v
            v = CPU
        cpu_values.append(v)
    if target is None:          # nothing on the device (an operator that reached the key another way)
        target = next((v.device for v in _flat_tensors(values) if v.device.type != "cpu"), None)
    if target is not None and (target.type, name) not in _WARNED:
        _WARNED.add((target.type, name))
        warnings.warn(f"The operator '{name}' is not currently supported on the {target.type} backend and will "
                      f"fall back to run on the CPU. This may have performance implications.",
                      UserWarning, stacklevel=3)
    cpu_args, cpu_kwargs = op._spec.unnormalize(tuple(cpu_values))
    result = op(*cpu_args, **cpu_kwargs)
    # inputs the operator wrote to: their CPU copies go back into the device tensors
    aliased = {}
    for a, v, c in zip(schema.arguments, values, cpu_values):
        if a.alias_info is not None and a.alias_info.is_write:
            if _is_tensor(v):
                if c is not v:
                    _write_back(v, c)
                aliased[a.alias_info.before_set] = v
            elif isinstance(v, (list, tuple)):
                for x, cx in zip(v, c):
                    if _is_tensor(x) and cx is not x:
                        _write_back(x, cx)
    if target is None:
        return result
    returns = schema.returns
    if len(returns) == 1:
        return _result_to_device(result, returns[0], aliased, target)
    return type(result)(_result_to_device(r, ret, aliased, target) for r, ret in zip(result, returns))


def _result_to_device(value, ret, aliased, target):
    if ret.alias_info is not None and ret.alias_info.before_set in aliased:
        return aliased[ret.alias_info.before_set]          # out= / in-place: the device tensor itself
    if _is_tensor(value):
        return _to_device(value, target)
    if isinstance(value, (list, tuple)):
        return type(value)(_to_device(x, target) if _is_tensor(x) else x for x in value)
    return value


def _flat_tensors(values):
    for v in values:
        if _is_tensor(v):
            yield v
        elif isinstance(v, (list, tuple)):
            yield from (x for x in v if _is_tensor(x))


def register_cpu_fallback(dispatch_key="PrivateUse1"):
    """Opt a backend key into the CPU fallback; the returned Library undoes it when destroyed."""
    from ..dispatch.library import Library
    lib = Library("_", "IMPL")
    lib.fallback(cpu_fallback, str(getattr(dispatch_key, "name", dispatch_key)))
    return lib
