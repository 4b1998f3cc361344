"""The hand-written ``Tensor`` methods (PyTorch's python_variable_methods.cpp and python_variable_indexing.cpp).

Indexing goes through the view operators (``select``, ``slice``,
``unsqueeze``), so it dispatches like any other call.  The public surface
sets ``EXTRA_METHODS`` on ``Tensor`` next to the generated methods.
"""
from __future__ import annotations

import numbers

import numpy as np

from ..aten.at import at
from ..aten.tensor_new import scalar_to_tensor
from ..autograd.engine import backward as _autograd_backward, run_backward as _run_backward
from ..autograd.graph import _RemovableHandle, detach
from ..autograd.history import retain_grad
from ..core import dtype as _dt
from ..core.device import canonical, device as _device
from ..core.tensor import Tensor
from .python_torch_functions import tensor
from .tensor_str import format_tensor


def _index(self, key):
    # the two commonest keys first: one in-range int (select) and one slice of ints (slice / alias);
    # anything else, errors included, takes the general road below
    tk = type(key)
    if tk is int:
        shape = self._impl._array.shape
        if shape and -shape[0] <= key < shape[0]:
            return at.select_int(self, 0, key)
    elif tk is slice:
        if self._impl._array.ndim:
            start, stop, step = key.start, key.stop, key.step
            if (step is None or (type(step) is int and step > 0)) and (start is None or type(start) is int) \
                    and (stop is None or type(stop) is int):
                if start is None and stop is None and (step is None or step == 1):
                    return at.alias(self)
                return at.slice_Tensor(self, 0, start, stop, 1 if step is None else step)
    return _index_general(self, key)


def _index_general(self, key):
    if type(key) is not tuple:
        key = (key,)
    n_real = n_ellipsis = 0     # one pass (no generator frames): the type errors first, then the counts
    for k in key:
        tk = type(k)
        if tk is int or tk is slice:
            n_real += 1
        elif k is Ellipsis:
            n_ellipsis += 1
        elif k is None or tk is bool:
            pass
        elif isinstance(k, (str, float)):
            raise (TypeError if isinstance(k, str) else IndexError)("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
                            "valid indices (got " + type(k).__name__ + ")")
        else:
            n_real += 1
    ndim = self._impl._array.ndim
    if n_real > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    skip = ndim - n_real     # what each ellipsis stands for: PyTorch lets every one of several skip as much
    out = self
    dim = 0
    for k in key:
        if type(k) is int:
            _check_index_int(k)
            shape = out._impl._array.shape
            if not shape:
                raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                                 "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
            if k < -shape[dim] or k >= shape[dim]:
                raise IndexError(f"index {k} is out of bounds for dimension {dim} with size {shape[dim]}")
            out = at.select_int(out, dim, k)
        elif k is Ellipsis:
            dim += skip
        elif k is None:
            out = at.unsqueeze(out, dim)
            dim += 1
        elif isinstance(k, slice):
            step = 1 if k.step is None else _as_int(k.step)
            if step <= 0:
                raise ValueError("step must be greater than zero")
            if k.start is None and k.stop is None and step == 1:   # `:` is no view at all, as in PyTorch
                dim += 1
                continue
            out = at.slice_Tensor(out, dim, None if k.start is None else _as_int(k.start),
                                  None if k.stop is None else _as_int(k.stop), step)
            dim += 1
        elif isinstance(k, bool):
            raise IndexError("onion does not support boolean scalar indices yet")
        elif isinstance(k, (numbers.Integral,)) or (isinstance(k, Tensor) and k._impl.dtype.category == 1
                                                    and k._impl._array.ndim == 0):
            shape = out._impl._array.shape
            if not shape:
                raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                                 "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
            i = _check_index_int(int(k))
            if i < -shape[dim] or i >= shape[dim]:
                raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {shape[dim]}")
            out = at.select_int(out, dim, i)
        else:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and integer scalar tensors are "
                             f"valid indices (got {type(k).__name__}); advanced indexing is not supported yet")
    if out is self:
        out = at.alias(self)
    return out


def _check_index_int(i: int) -> int:
    if -(2 ** 63) <= i < 2 ** 63:
        return i
    raise ValueError(f"index {i} does not fit in int64 (Overflow when unpacking long long)")


def _as_int(v) -> int:
    if isinstance(v, numbers.Integral) or (isinstance(v, Tensor) and v._impl.dtype.category == 1):
        return int(v)
    raise TypeError(f"slice indices must be integers or None or have an __index__ method, got {type(v).__name__}")


def _setitem(self, key, value):
    target = _index(self, key)
    if not isinstance(value, Tensor):
        value = scalar_to_tensor(value, self._impl.device) if isinstance(value, (numbers.Number, bool)) \
            else tensor(value, dtype=self._impl.dtype, device=self._impl.device)
    at.copy_(target, value, False)
    if target._impl._vc is not self._impl._vc:
        self._impl.bump_version()


def _check_memory_format(fn, memory_format):
    if memory_format is not None and type(memory_format).__name__ != "memory_format":
        raise TypeError(f"{fn}(): argument 'memory_format' must be onion.memory_format, not "
                        f"{type(memory_format).__name__}")


def _conv(dtype, name):
    def method(self, *, memory_format=None):
        _check_memory_format(name, memory_format)
        return self.to(dtype)
    method.__name__ = name
    return method


_PY_TYPES = {float: _dt.float64, int: _dt.int64, bool: _dt.bool, complex: _dt.complex128}


def _to_got(args, kwargs) -> str:
    names = [type(a).__name__ for a in args] + [f"{k}={type(v).__name__}" for k, v in kwargs.items()]
    return "(" + ", ".join(names) + ")"


_TO_SIGNATURES = ("\n * (onion.device device = None, onion.dtype dtype = None, bool non_blocking = False, "
                  "bool copy = False, *, onion.memory_format memory_format = None)"
                  "\n * (onion.dtype dtype, bool non_blocking = False, bool copy = False, *, "
                  "onion.memory_format memory_format = None)"
                  "\n * (Tensor tensor, bool non_blocking = False, bool copy = False, *, "
                  "onion.memory_format memory_format = None)")


def _to(self, *args, **kwargs):
    """``Tensor.to(device, dtype)``, ``.to(dtype)``, ``.to(other)`` and keywords, with PyTorch's three
    signatures: positional arguments in that order, then ``non_blocking`` and ``copy`` (bools)."""
    def refuse():
        return TypeError(f"to() received an invalid combination of arguments - got {_to_got(args, kwargs)}, "
                         f"but expected one of:{_TO_SIGNATURES}")
    unknown = set(kwargs) - {"dtype", "device", "non_blocking", "copy", "memory_format"}
    if unknown:
        raise refuse()
    dtype, device = kwargs.get("dtype"), kwargs.get("device")
    non_blocking, copy = kwargs.get("non_blocking", False), kwargs.get("copy", False)
    memory_format = kwargs.get("memory_format")
    stage = 0           # 0: device may come, 1: dtype may come, 2: only the two bools
    flags = []
    for a in args:
        if isinstance(a, Tensor) and stage == 0:
            dtype, device, stage = a._impl.dtype, a._impl.device, 2
        elif isinstance(a, _dt.dtype) and stage <= 1:
            dtype, stage = a, 2
        elif isinstance(a, type) and a in _PY_TYPES and stage <= 1:
            dtype, stage = _PY_TYPES[a], 2
        elif stage == 0 and (isinstance(a, (str, _device)) or
                             (isinstance(a, numbers.Integral) and not isinstance(a, bool))):
            device, stage = (_device("cuda", a) if isinstance(a, numbers.Integral) else a), 1
        elif isinstance(a, bool) and len(flags) < 2:
            flags.append(a)
            stage = 2
        elif a is None and stage <= 1:
            stage += 1
        else:
            raise refuse()
    if flags:
        non_blocking = flags[0]
        copy = flags[1] if len(flags) > 1 else copy
    if isinstance(dtype, type) and dtype in _PY_TYPES:
        dtype = _PY_TYPES[dtype]
    if dtype is not None and not isinstance(dtype, _dt.dtype):
        raise refuse()
    if device is not None and not isinstance(device, (str, _device)):
        raise refuse()
    if not isinstance(non_blocking, bool) or not isinstance(copy, bool):
        raise refuse()
    if memory_format is not None and type(memory_format).__name__ != "memory_format":
        raise refuse()
    return at.to_dtype_layout(self, dtype, None, None if device is None else canonical(device), None,
                              non_blocking, copy, memory_format)


def _backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    if inputs is None:      # the common call, straight to the engine
        _run_backward((self,), (gradient,), create_graph if retain_graph is None else retain_graph, create_graph)
        return
    _autograd_backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def _register_hook(self, hook):
    """A function of the gradient run when it is computed (before accumulation for leaves)."""
    impl = self._impl
    if not impl.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if impl.grad_fn is not None:
        return impl.grad_fn._add_tensor_pre_hook(impl.output_nr, hook)
    if impl._hooks is None:
        impl._hooks = []
    impl._hooks.append(hook)
    return _RemovableHandle(impl._hooks, hook)


def _retain_grad(self):
    retain_grad(self)


def _detach(self):
    return detach(self)


def _detach_(self):
    impl = self._impl
    if impl._base is not None:
        raise RuntimeError("Can't detach views in-place. Use detach() instead.")
    impl.grad_fn = None
    impl.requires_grad = False
    return self


def _data_get(self):
    d = detach(self)
    d._impl._vc = [self._impl.version]       # .data does not share the version counter
    return d


def _data_set(self, value):
    impl, src = self._impl, value._impl
    impl._array, impl.dtype, impl.device, impl._storage = src._array, src.dtype, src.device, src._storage
    impl._offset, impl._strides = src._offset, src._strides


def _repr(self, *, tensor_contents=None):
    """``repr(tensor)``: the values gathered into NumPy, then PyTorch's printer (tensor_str)."""
    impl = self._impl
    dt = impl.dtype
    extras = []
    if impl.grad_fn is not None:
        extras.append(f"grad_fn=<{impl.grad_fn.name()}>")
    elif impl.requires_grad:
        extras.append("requires_grad=True")
    if impl.device.type == "meta":
        data = None
    else:
        data = self._host_array()
        if dt is _dt.bfloat16:
            data = data.astype("float32")
    dev = None if impl.device.type == "cpu" else str(impl.device)
    return format_tensor(data, dtype_name=dt.name, default_dtype_name=_dt.get_default_dtype().name,
                         is_floating=dt.is_floating_point, is_complex=dt.is_complex,
                         is_bool=dt is _dt.bool, device=dev, shape=tuple(impl._array.shape),
                         extras=tuple(extras))


def _reflected(fn):
    """A reflected operator (``2 - t``) returns NotImplemented for an operand that is no number, so that
    Python raises its own TypeError (or tries the other operand), as torch.Tensor's do."""
    def method(self, other):
        if not isinstance(other, (Tensor, numbers.Number, np.bool_)):
            return NotImplemented
        return fn(self, other)
    return method


_REVERSED_DIMS = tuple(tuple(range(n - 1, -1, -1)) for n in range(65))     # what Tensor.T permutes by, per rank


def _T(self):
    n = self._impl._array.ndim
    return at.permute(self, _REVERSED_DIMS[n] if n < 65 else tuple(range(n - 1, -1, -1)))


EXTRA_METHODS = {
    "__repr__": _repr,
    "backward": _backward,
    "register_hook": _register_hook,
    "retain_grad": _retain_grad,
    "retains_grad": property(lambda self: bool(self._impl._retains_grad)),
    "detach": _detach,
    "detach_": _detach_,
    "data": property(_data_get, _data_set),
    "to": _to,
    "__getitem__": _index,
    "__setitem__": _setitem,
    "cpu": lambda self: self.to("cpu"),
    "cuda": lambda self, device=None: self.to(device if device is not None else "cuda"),
    **{name: _conv(dt, name) for name, dt in (
        ("float", _dt.float32), ("double", _dt.float64), ("half", _dt.float16), ("bfloat16", _dt.bfloat16),
        ("long", _dt.int64), ("int", _dt.int32), ("short", _dt.int16), ("bool", _dt.bool), ("byte", _dt.uint8),
        ("char", _dt.int8))},
    "__rsub__": _reflected(lambda self, other: at.rsub_Scalar(self, other, 1) if not isinstance(other, Tensor)
                           else at.sub_Tensor(other, self, 1)),
    "__rtruediv__": _reflected(lambda self, other: at.div_Tensor(scalar_to_tensor(other, self._impl.device), self)),
    "__rpow__": _reflected(lambda self, other: at.pow_Scalar(other, self)),
    "__pos__": lambda self: self,
    "T": property(_T),
    "mT": property(lambda self: at.transpose_int(self, -2, -1)),
}
