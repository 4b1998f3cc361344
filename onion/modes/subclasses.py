"""Tensor subclasses: ``_make_subclass``, ``_make_wrapper_subclass``, ``as_subclass`` and the
``__torch_dispatch__`` classmethod the Python key hands their operators to.

A subclass whose ``__torch_dispatch__`` is its own (not ``_disabled_torch_dispatch_impl``) gets the
``Python | PythonTLSSnapshot`` keys on every tensor of it made here, as PyTorch sets them when it makes
the Python object: each operator on such a tensor then runs autograd first and reaches the Python key's
fallback, which (with no dispatch mode pushed, or after the mode returned NotImplemented) calls
``dispatch_to_subclasses`` through its ``SUBCLASS_DISPATCH`` slot.  A wrapper subclass has
sizes, strides, dtype and the given device but no data (a Meta array under it): everything it computes
comes from its ``__torch_dispatch__``.
"""
from __future__ import annotations

import numbers

from ..core import dtype as _dt
from ..core.device import canonical as _canonical, device as _device
from ..core.dispatch_key import AFTER_PYTHON, K, bit, tensor_keyset
from ..core.geometry import contiguous_strides
from ..core.storage import Storage
from ..core.tensor import Tensor, make_tensor
from ..core.tensor_impl import make_impl
from ..core.tls import state

from .torch_function import _append_overloaded
from .python_dispatch import SUBCLASS_DISPATCH, _plan_of, check_result, python_arguments

PYTHON_KEYS = bit(K.Python) | bit(K.PythonTLSSnapshot)


def _disabled_torch_dispatch_impl(func, types, args=(), kwargs=None):
    """What plain ``Tensor`` has as ``__torch_dispatch__``: its tensors take no part in Python dispatch."""
    return NotImplemented


def has_torch_dispatch(cls) -> bool:
    """The class defines its own ``__torch_dispatch__`` (its tensors carry the Python key)."""
    td = getattr(cls, "__torch_dispatch__", None)
    return td is not None and td is not _disabled_torch_dispatch_impl and \
        getattr(td, "__func__", None) is not _disabled_torch_dispatch_impl


def _check_tensor_class(cls, name: str) -> None:
    if not isinstance(cls, type):
        raise TypeError(f"cls must be a type (got {type(cls).__name__})")
    if not issubclass(cls, Tensor):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from Tensor is not "
                        "possible. Make sure your class inherits from Tensor.")


def _wrap(impl, cls):
    """A Python object of ``cls`` over ``impl``, with the Python keys when ``cls`` has its own dispatch."""
    if cls is not Tensor and has_torch_dispatch(cls):
        impl.keyset |= PYTHON_KEYS
    if impl._storage is None:
        impl.storage()      # autograd's detach keeps a subclass's class for impls with a storage (graph.py)
    return make_tensor(impl, cls)


def _make_subclass(cls, data, require_grad=False, *, dispatch_sizes_strides_policy=None,
                   dispatch_device=False, dispatch_layout=False):
    """A ``cls`` tensor sharing ``data``'s memory, outside autograd's graph (a leaf)."""
    _check_tensor_class(cls, "_make_subclass")
    if not isinstance(data, Tensor):
        raise TypeError(f"_make_subclass(): argument 'data' (position 2) must be Tensor, not "
                        f"{type(data).__name__}")
    if not isinstance(require_grad, bool):
        raise TypeError(f"_make_subclass(): argument 'require_grad' (position 3) must be bool, not "
                        f"{type(require_grad).__name__}")
    impl = data._impl
    if require_grad and not (impl.dtype.is_floating_point or impl.dtype.is_complex):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    new = impl.shallow_copy_and_detach()
    t = _wrap(new, cls)
    new.requires_grad = require_grad
    return t


def as_subclass(self, cls):
    """``self`` as a ``cls`` tensor: the same memory, and still in autograd's graph (an alias view)."""
    _check_tensor_class(cls, "as_subclass")
    from ..dispatch.ops import ops
    alias = ops.aten.alias.default(self) if self._impl.requires_grad else make_tensor(self._impl.shallow_copy_and_detach())
    return _wrap(alias._impl, cls)


def _int_list(v, name: str) -> tuple:
    if isinstance(v, numbers.Integral) and not isinstance(v, bool):
        return (int(v),)
    if isinstance(v, (list, tuple)) and all(isinstance(x, numbers.Integral) and not isinstance(x, bool) for x in v):
        return tuple(int(x) for x in v)
    raise TypeError(f"_make_wrapper_subclass(): argument '{name}' must be tuple of ints, not {type(v).__name__}")


def _make_wrapper_subclass(cls, size, strides=None, storage_offset=None, memory_format=None, dtype=None,
                           layout="strided", device=None, pin_memory=False, requires_grad=False,
                           dispatch_sizes_strides_policy=None, dispatch_device=False, dispatch_layout=False,
                           _extra_dispatch_keys=None, storage_size=None):
    """A ``cls`` tensor with this geometry, dtype and device and no data: every operator on it goes to
    ``cls.__torch_dispatch__``."""
    _check_tensor_class(cls, "_make_wrapper_subclass")
    if not has_torch_dispatch(cls):
        raise TypeError(f"{cls.__name__} must define __torch_dispatch__")
    size = _int_list(size, "size")
    if strides is None:
        strides = contiguous_strides(size)
    else:
        strides = _int_list(strides, "strides")
        if len(strides) != len(size):
            raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality of strides "
                               f"({len(strides)})")
    if any(s < 0 for s in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: {list(size)}")
    if dtype is None:
        dtype = _dt.get_default_dtype()
    elif not isinstance(dtype, _dt.dtype):
        raise TypeError(f"_make_wrapper_subclass(): argument 'dtype' must be onion.dtype, not "
                        f"{type(dtype).__name__}")
    # the policy is checked and kept; sizes and strides are still read from the tensor (the sym_size /
    # sym_stride operators PyTorch then dispatches do not exist in onion yet)
    if dispatch_sizes_strides_policy not in (None, "sizes", "strides"):
        raise ValueError(f"Unknown dispatch_sizes_strides_policy: {dispatch_sizes_strides_policy}")
    dev = _canonical(device if device is None or isinstance(device, (_device, str)) else _device(device))
    if requires_grad and not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    offset = 0 if storage_offset is None else int(storage_offset)
    from ..backends.meta import MetaArray
    item = dtype.itemsize
    array = MetaArray(size, tuple(s * item for s in strides), dtype.np, offset)
    impl = make_impl(array, dtype, dev, tensor_keyset(dev.backend_key) | PYTHON_KEYS)
    n = 0 if 0 in size else offset + 1 + sum((s - 1) * st for s, st in zip(size, strides))
    impl._storage = Storage(None, (n if storage_size is None else int(storage_size)) * item, dev)
    impl._offset = offset
    impl._strides = tuple(strides)
    impl._wrapper = True
    impl._sizes_strides_policy = dispatch_sizes_strides_policy
    t = make_tensor(impl, cls)
    if requires_grad:
        impl.requires_grad = True
    return t


# --- the Python key, for subclass tensors ----------------------------------------------------------------
def _overloaded_tensors(values) -> list:
    """Subclass tensors among the operator's arguments whose class has its own ``__torch_dispatch__``, in
    PyTorch's order (left to right, a subclass before its parent classes, each class once)."""
    out: list = []

    def add(x):
        tp = type(x)
        if tp is not Tensor and has_torch_dispatch(tp):
            _append_overloaded(x, out)

    for v in values:
        if isinstance(v, Tensor):
            add(v)
        elif isinstance(v, (list, tuple)):
            for x in v:
                if isinstance(x, Tensor):
                    add(x)
    return out


def dispatch_types(values) -> tuple:
    """The ``types`` argument of ``__torch_dispatch__``: the overloaded subclasses (``()`` for plain tensors)."""
    return tuple(type(a) for a in _overloaded_tensors(values))


def _op_name(op) -> str:
    return f"{getattr(op, '__module__', 'onion.ops')}.{getattr(op, '__name__', op)}"


def not_implemented_error(op, mode, types) -> TypeError:
    """PyTorch's error when the mode and every subclass returned ``NotImplemented``."""
    lines = [f"Multiple dispatch failed for '{_op_name(op)}'; all __torch_dispatch__ handlers returned "
             "NotImplemented:", ""]
    if mode is not None:
        lines.append(f"  - mode object {mode!r}")
    lines += [f"  - tensor subclass {t!r}" for t in types]
    lines += ["", "For more information, try re-running with TORCH_LOGS=not_implemented"]
    return TypeError("\n".join(lines))


_WRITE_RETURNS: dict = {}      # operator handle -> per return, the index of the argument it writes (or None)


def _write_returns(op) -> tuple:
    """Which returns are an argument written in place (``out=``, ``add_``): the call returns that argument
    itself whatever ``__torch_dispatch__`` handed back, as PyTorch's boxing of ``Tensor&`` returns does."""
    handle = op._handle
    got = _WRITE_RETURNS.get(handle)
    if got is None:
        schema = handle.schema
        args = schema.arguments
        got = []
        for r in schema.returns:
            idx = None
            if r.alias_info is not None and r.is_write:
                for i, a in enumerate(args):
                    if a.alias_info is not None and a.alias_info.before_set == r.alias_info.before_set:
                        idx = i
                        break
            got.append(idx)
        got = _WRITE_RETURNS[handle] = tuple(got) if any(i is not None for i in got) else ()
    return got


def dispatch_to_subclasses(op, ks, values, mode=None):
    """The Python key with no dispatch mode to take the call (or after the mode returned NotImplemented): each
    overloaded subclass's ``__torch_dispatch__`` in turn until one returns something other than
    ``NotImplemented``.  Arguments reach it as they reach a mode (onion/modes/python_dispatch.py)."""
    overloaded = _overloaded_tensors(values)
    if not overloaded:      # the Python keys without a subclass to run (a detached alias): the kernels below
        return op._handle.redispatch(ks & AFTER_PYTHON, *values)
    plan = _plan_of(op)
    _, args, kwargs = python_arguments(op, values, plan)
    types = tuple(type(a) for a in overloaded)
    for a in overloaded:
        # looked up on the tensor, as PyTorch does: a classmethod gets the class, a plain method the tensor
        ret = a.__torch_dispatch__(op, types, args, kwargs)
        if ret is not NotImplemented:
            ret = check_result(plan, ret)
            writes = _write_returns(op)
            if writes:
                if len(writes) == 1:
                    return values[writes[0]]
                ret = tuple(r if i is None else values[i] for r, i in zip(ret, writes))
            return ret
    raise not_implemented_error(op, mode, types)


# --- Tensor methods whose meaning changes for a subclass --------------------------------------------------
def _wrapper_refusal(self, what: str):
    raise RuntimeError(f".{what}() is not supported for tensor subclasses, got {type(self).__name__}")


_DETACH = [None]
_PYTHON_BIT = bit(K.Python)


def _detach_subclass(t):
    """PyTorch's ``shallow_copy_and_detach`` of a tensor with the Python key (autograd saving or unpacking an
    output, ``.data``): ``aten.detach.default`` handed to its class's ``__torch_dispatch__``.  None (a plain
    shallow copy) where the key is excluded or the class takes no part in Python dispatch."""
    if not (t._impl.keyset & _PYTHON_BIT) or state().exclude & _PYTHON_BIT or not has_torch_dispatch(type(t)):
        return None
    op = _DETACH[0]
    if op is None:
        from ..dispatch.ops import ops
        op = _DETACH[0] = ops.aten.detach.default
    return dispatch_to_subclasses(op, t._impl.keyset, [t])


def install(tensor_cls) -> None:
    """Called once by onion's loader."""
    from ..autograd import graph
    graph._PYTHON_DETACH[0] = _detach_subclass
    tensor_cls._make_subclass = staticmethod(_make_subclass)
    tensor_cls._make_wrapper_subclass = staticmethod(_make_wrapper_subclass)
    tensor_cls.as_subclass = as_subclass
    tensor_cls.__torch_dispatch__ = staticmethod(_disabled_torch_dispatch_impl)
    SUBCLASS_DISPATCH[0] = dispatch_to_subclasses
