"""The hand-written ``Tensor`` methods (PyTorch's python_variable_methods.cpp and python_variable_indexing.cpp).

Indexing goes through the view operators (``select``, ``slice``,
``unsqueeze``), so it dispatches like any other call.  The public surface
sets ``EXTRA_METHODS`` on ``Tensor`` next to the generated methods.
"""
from __future__ import annotations

import numbers

import numpy as np

from ..aten.at import at
from ..aten.native.factories import checked_scalar
from ..aten.tensor_new import scalar_to_tensor
from ..autograd.engine import backward as _autograd_backward, run_backward as _run_backward
from ..autograd.graph import _RemovableHandle, detach
from ..autograd.history import retain_grad
from ..core import dtype as _dt
from ..core.device import canonical, device as _device
from ..core.dispatch_key import K
from ..core.memory_format import memory_format as _memory_format
from ..core.tensor import Tensor
from ..core.promotion import scalar_dtype
from .python_torch_functions import dtype_arg, from_numpy, tensor
from .tensor_str import format_tensor


def _index(self, key):
    # the commonest keys first: one in-range int (select), one slice of ints (slice / alias) and one
    # index tensor (index); anything else, errors included, takes the general road below
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
    elif tk is Tensor and key._impl._array.ndim:
        return at.index_Tensor(self, [key])
    out, indices = _apply_slicing(self, key)
    if indices:
        return at.index_Tensor(out, indices)
    if out is self:
        out = at.alias(self)
    return out


_SEQUENCE_WARNING = ("Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed in "
                     "pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be interpreted as "
                     "tensor index, x[torch.tensor(seq)], which will result either in an error or a different result")


def _treat_sequence_as_tuple(key) -> bool:
    """PyTorch's (deprecated) reading of a list key holding slices, sequences, tensors, None or ``...``
    as a tuple of indices, as NumPy once did."""
    if not isinstance(key, list) or len(key) >= 32:
        return False
    for k in key:
        if k is None or k is Ellipsis or isinstance(k, (Tensor, list, tuple, slice)):
            return True
    return False


def _sequence_to_index(seq) -> Tensor:
    """A list in an index is a tensor: bool when its elements are, int64 otherwise (numbers truncated)."""
    t = tensor(seq)
    if t._impl.dtype is not _dt.bool and t._impl.dtype is not _dt.uint8 and t._impl.dtype is not _dt.int64:
        t = t.to(_dt.int64)
    return t


def _bool_index(value: bool, device) -> Tensor:
    """A Python bool (or 0-dim bool tensor) in an index: a new dim of size 1 kept (True) or emptied (False)."""
    return tensor([0] if value else [], dtype=_dt.int64, device=device)


def _as_key_items(key):
    if type(key) is tuple:
        return key
    if _treat_sequence_as_tuple(key):
        import warnings
        warnings.warn(_SEQUENCE_WARNING, UserWarning, stacklevel=4)
        return tuple(key)
    return (key,)


def _index_span(t) -> int:
    """How many of the indexed tensor's dims an index tensor consumes: a mask its own dims (a 0-dim one
    none: it adds a dim), anything else one."""
    ki = t._impl
    if ki.dtype is _dt.bool or ki.dtype is _dt.uint8:
        return ki._array.ndim
    return 1


def _apply_slicing(self, key):
    """PyTorch's applySlicing: the basic parts of ``key`` applied as views (select, slice, unsqueeze),
    the advanced parts (index tensors, lists, bools) gathered into ``index``'s list against that view."""
    items = list(_as_key_items(key))
    n_real = 0      # one pass: the type errors first, the sequences made tensors, then the counts
    for i, k in enumerate(items):
        tk = type(k)
        if tk is int or tk is slice:
            n_real += 1
        elif k is Ellipsis or k is None or tk is bool or tk is np.bool_:
            pass
        elif isinstance(k, str):
            raise TypeError("new(): invalid data type 'str'")     # a string is a sequence to PyTorch
        elif isinstance(k, float):
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
                             "valid indices (got " + type(k).__name__ + ")")
        elif isinstance(k, Tensor):
            n_real += _index_span(k)
        elif isinstance(k, (list, tuple, np.ndarray)):
            t = from_numpy(np.ascontiguousarray(k)) if isinstance(k, np.ndarray) else _sequence_to_index(k)
            if t._impl.dtype.category >= 2:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            items[i] = t
            n_real += _index_span(t)
        else:
            n_real += 1
    ndim = self._impl._array.ndim
    if n_real > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    skip = ndim - n_real     # what each ellipsis stands for: PyTorch lets every one of several skip as much
    out = self
    dim = 0
    indices = []            # index's list against ``out``: one entry per dim it covers (a mask covers several)
    covered = 0

    def record(t, span):
        nonlocal dim, covered
        while covered < dim:
            indices.append(None)
            covered += 1
        indices.append(t)
        covered += span
        dim += span

    for k in items:
        tk = type(k)
        if tk is int:
            out = _select(out, dim, _check_index_int(k))
        elif k is Ellipsis:
            dim += skip
        elif k is None:
            out = at.unsqueeze(out, dim)
            dim += 1
        elif tk is slice:
            step = 1 if k.step is None else _as_int(k.step)
            if step <= 0:
                raise ValueError("step must be greater than zero")
            if k.start is None and k.stop is None and step == 1:   # `:` is no view at all, as in PyTorch
                dim += 1
                continue
            out = at.slice_Tensor(out, dim, None if k.start is None else _as_int(k.start),
                                  None if k.stop is None else _as_int(k.stop), step)
            dim += 1
        elif tk is bool or tk is np.bool_:
            out = at.unsqueeze(out, dim)
            record(_bool_index(bool(k), out._impl.device), 1)
        elif isinstance(k, Tensor):
            ki = k._impl
            if ki._array.ndim == 0 and ki.dtype.category <= 1:
                if ki.dtype is _dt.bool or ki.dtype is _dt.uint8:
                    out = at.unsqueeze(out, dim)
                    record(_bool_index(bool(k), out._impl.device), 1)
                else:
                    out = _select(out, dim, _check_index_int(int(k)))
            elif ki.dtype is _dt.bool or ki.dtype is _dt.uint8:
                record(k, max(ki._array.ndim, 1))
            else:
                record(k, 1)
        elif isinstance(k, numbers.Integral):
            out = _select(out, dim, _check_index_int(int(k)))
        else:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
                             f"valid indices (got {type(k).__name__})")
    return out, indices


def _select(out, dim, i):
    shape = out._impl._array.shape
    if not shape:
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                         "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
    if i < -shape[dim] or i >= shape[dim]:
        raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {shape[dim]}")
    return at.select_int(out, dim, i)


def _check_index_int(i: int) -> int:
    if -(2 ** 63) <= i < 2 ** 63:
        return i
    raise ValueError(f"index {i} does not fit in int64 (Overflow when unpacking long long)")


def _as_int(v) -> int:
    if isinstance(v, numbers.Integral) or (isinstance(v, Tensor) and v._impl.dtype.category == 1):
        return int(v)
    raise TypeError(f"slice indices must be integers or None or have an __index__ method, got {type(v).__name__}")


def _type_str(impl) -> str:
    """``Tensor.type()``'s name for a tensor (``torch.FloatTensor``, ``torch.meta.FloatTensor``), as
    PyTorch's indexing errors print it."""
    dev = impl.device.type
    return f"torch.{'' if dev == 'cpu' else dev + '.'}{impl.dtype.scalar_type_name}Tensor"


def _qualified_type_name(value) -> str:
    tp = type(value)
    return tp.__name__ if tp.__module__ == "builtins" else f"{tp.__module__}.{tp.__qualname__}"


_INT64_LIMIT = 2 ** 63


def _setitem(self, key, value):
    # a value is a tensor or one number (checked against the dtype before anything is written, as
    # c10's checked conversion does): no lists, arrays or None, which PyTorch refuses too
    impl = self._impl
    if not isinstance(value, Tensor):
        if not isinstance(value, numbers.Number):
            raise TypeError(f"can't assign a {_qualified_type_name(value)} to a {_type_str(impl)}")
        if type(value) is int and not -_INT64_LIMIT <= value < _INT64_LIMIT:   # read as a C long long there
            raise ValueError("Overflow when unpacking long long")
        v = checked_scalar(value, impl.dtype)
        value = scalar_to_tensor(value.item() if isinstance(value, np.generic) else value, impl.device)
        converted = (v, impl.dtype)
    else:
        converted = None
    if key is False or (type(key) is np.bool_ and not key):
        return                                  # x[False] selects nothing: nothing is written
    if type(key) is Tensor and key._impl._array.ndim:
        target, indices = self, [key]
    else:
        target, indices = _apply_slicing(self, key)
    value = _strip_leading_ones(value)
    if indices:
        if converted is not None:               # a number is a tensor of the destination's dtype
            value = _scalar_like(converted, impl)
        at.index_put_(target, indices, value, False)
    else:
        at.copy_(target, value, False)
    if target._impl._vc is not impl._vc:
        impl.bump_version()


def _strip_leading_ones(value):
    """The value's leading size-1 dims dropped (PyTorch's slicePrefix1sSize), so ``x[i] = v[None]`` fits."""
    shape = value._impl._array.shape
    if not shape or shape[0] != 1:
        return value
    k = 0
    while k < len(shape) and shape[k] == 1:
        k += 1
    return at.view(value, list(shape[k:]))


def _scalar_like(converted, impl):
    from ..aten.tensor_new import empty_tensor, wrap
    v, dt = converted
    if impl.device.type == "cpu":
        return wrap(np.array(v, dtype=dt.np), dt, impl.device)
    t = empty_tensor((), dt, impl.device)
    if impl.device.type != "meta":
        at.fill__Scalar(t, v)
    return t


def _conv(dtype):
    def method(self, *, memory_format=None):
        if memory_format is None and type(self) is Tensor:     # PyTorch's binding: to.dtype
            return at.to_dtype(self, dtype, False, False, None)
        return self.to(dtype, memory_format=memory_format)
    return method


_PY_TYPES = (float, int, bool, complex)     # a Python number type names its dtype (see dtype_arg)

_TO_SIGNATURES = ("to() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                  " * (onion.device device = None, onion.dtype dtype = None, bool non_blocking = False, "
                  "bool copy = False, *, onion.memory_format memory_format = None)\n"
                  " * (onion.dtype dtype, bool non_blocking = False, bool copy = False, *, "
                  "onion.memory_format memory_format = None)\n"
                  " * (Tensor tensor, bool non_blocking = False, bool copy = False, *, "
                  "onion.memory_format memory_format = None)\n")


def _is_dtype(a) -> bool:
    return isinstance(a, _dt.dtype) or any(a is tp for tp in _PY_TYPES)


def _is_device(a) -> bool:
    return isinstance(a, (str, _device)) or (isinstance(a, numbers.Integral) and not isinstance(a, (bool, np.bool_)))


def _to(self, *args, dtype=None, device=None, non_blocking=False, copy=False, memory_format=None):
    """``Tensor.to`` with PyTorch's three signatures: ``(device, dtype, non_blocking, copy)``,
    ``(dtype, non_blocking, copy)`` and ``(tensor, non_blocking, copy)``.  A Python number where the
    tensor goes stands for its wrapped tensor (``to(1.5)`` is float64, ``to(True)`` bool), as there."""
    if type(self) is Tensor and len(args) == 1 and type(args[0]) is _dt.dtype and dtype is None and device is None \
            and non_blocking is False and copy is False and memory_format is None:
        return at.to_dtype(self, args[0], False, False, None)      # ``t.to(float64)``: PyTorch's to.dtype
    if args:
        first = args[0]
        if isinstance(first, Tensor):
            dtype, device, flags = first._impl.dtype, first._impl.device, args[1:]
        elif first is not None and _is_dtype(first):
            dtype, flags = first, args[1:]
        elif first is None or _is_device(first):
            device = _device("cuda", int(first)) if isinstance(first, numbers.Integral) else first
            rest = args[1:]
            if rest and (rest[0] is None or _is_dtype(rest[0])):
                dtype, rest = rest[0], rest[1:]
            flags = rest
        elif isinstance(first, (numbers.Number, np.generic)):
            dtype, flags = scalar_dtype(first.item() if isinstance(first, np.generic) else first), args[1:]
        else:
            flags = None
        if flags is None or len(flags) > 2 or not all(type(f) is bool for f in flags):
            raise TypeError(_TO_SIGNATURES.format(got=", ".join(_arg_type_name(a) for a in args)))
        if flags:
            non_blocking = flags[0]
            if len(flags) > 1:
                copy = flags[1]
    dtype = dtype_arg(dtype, "to")
    if not isinstance(non_blocking, bool) or not isinstance(copy, bool):
        raise TypeError("to(): arguments 'non_blocking' and 'copy' must be bool")
    if memory_format is not None:
        if not isinstance(memory_format, _memory_format):
            raise TypeError(f"to(): argument 'memory_format' must be onion.memory_format, not "
                            f"{type(memory_format).__name__}")
        memory_format = memory_format.name
    return at.to_dtype_layout(self, dtype, None, None if device is None else canonical(device), None,
                              non_blocking, copy, memory_format)


def _arg_type_name(a) -> str:
    if isinstance(a, _dt.dtype):
        return "onion.dtype"
    if isinstance(a, _device):
        return "onion.device"
    return type(a).__name__


def _backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    if inputs is None and (gradient is None or type(gradient) is Tensor) and \
            (retain_graph is None or retain_graph.__class__ is bool) and create_graph.__class__ is bool:
        # the common call, straight to the engine
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


def _detach_(self):
    impl = self._impl
    if impl._base is not None:      # any view, as in PyTorch: its base would keep the history
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
    if impl.device.type == "meta" or tensor_contents is not None:
        data = None
    else:
        data = self._host_array()
        if dt is _dt.bfloat16:
            data = data.astype("float32")
    dev = None if impl.device.type == "cpu" else str(impl.device)
    # a subclass prints its own name (PyTorch: ``LoggingTensor(tensor([1.]))``)
    return format_tensor(data, dtype_name=dt.name, default_dtype_name=_dt.get_default_dtype().name,
                         is_floating=dt.is_floating_point, is_complex=dt.is_complex,
                         is_bool=dt is _dt.bool, device=dev, shape=tuple(impl._array.shape),
                         extras=tuple(extras), type_name="tensor" if type(self) is Tensor else type(self).__name__,
                         contents=tensor_contents)


_REVERSED_DIMS = tuple(tuple(range(n - 1, -1, -1)) for n in range(65))     # what Tensor.T permutes by, per rank


def _T(self):
    n = self._impl._array.ndim
    return at.permute(self, _REVERSED_DIMS[n] if n < 65 else tuple(range(n - 1, -1, -1)))


def _conj(self):
    """``t.conj()``: a real tensor is returned as itself without dispatching, as PyTorch's C++
    ``Tensor::conj`` does, so the derivative formulas that conjugate cost real tensors nothing."""
    if not self._impl.dtype.is_complex:
        return self
    return at.conj(self)


_CONJ_BIT = 1 << int(K.Conjugate)
_NEG_BIT = 1 << int(K.Negative)


def _is_conj(self) -> bool:
    """Whether a conjugation is pending (a ``conj()`` view: the Conjugate bit)."""
    return bool(self._impl.keyset & _CONJ_BIT)


def _is_neg(self) -> bool:
    """Whether a negation is pending (a ``_neg_view()``, as ``x.conj().imag``: the Negative bit)."""
    return bool(self._impl.keyset & _NEG_BIT)


def _set_part(part):
    """The setter of ``t.real`` / ``t.imag``: copy into the view of that part (PyTorch's property setters)."""
    def setter(self, value):
        view = part(self)
        at.copy_(view, value if isinstance(value, Tensor) else scalar_to_tensor(value), False)
    return setter


def _H(self):
    """``t.H``: the conjugate transpose of a matrix (a view; the Conjugate bit for complex)."""
    n = self._impl._array.ndim
    if n != 2:
        extra = " For batches of matrices, consider using tensor.mH" if n > 2 else ""
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {n}-D tensor.{extra}")
    return _conj(at.transpose_int(self, 0, 1))


def _adjoint(self, name="adjoint()"):
    """The conjugate transpose of the last two dims (``mH``); PyTorch refuses fewer than 2 dims."""
    n = self._impl._array.ndim
    if n < 2:
        raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of matrices. Got {n}-D tensor.")
    return _conj(at.transpose_int(self, -2, -1))


# --- the reflected operators: ``number - t`` and friends ---------------------------------------------
# Python calls these only when the left operand gave up; like PyTorch's, they answer NotImplemented for
# what they cannot take (so Python raises its own "unsupported operand type(s)" error), never an
# internal error.  NumPy scalars arrive here too (Tensor's __array_priority__ makes NumPy defer).

def _number(other):
    """``other`` as a Python number, or None when it is not one."""
    if isinstance(other, np.generic):
        if isinstance(other, np.bool_) or not isinstance(other, numbers.Number):
            return bool(other) if isinstance(other, np.bool_) else None
        return other.item()
    return other if isinstance(other, numbers.Number) else None


def _rsub(self, other):
    if not isinstance(self, Tensor):
        return NotImplemented
    if isinstance(other, Tensor):
        return at.sub_Tensor(other, self, 1)
    n = _number(other)
    return NotImplemented if n is None else at.rsub_Scalar(self, n, 1)


def _reflected(op, numbers=True, scalar_op=None):
    """``other <op> self`` for a tensor or Python number ``other`` (torch/_tensor.py's reflected operators);
    anything else (a number too, where ``numbers`` is False: ``1.5 @ t``) is NotImplemented.  Called unbound
    with a number ``self`` and a tensor ``other`` (``Tensor.__rmod__(1, t)``), PyTorch's Python body computes
    ``op(other, self)``: ``scalar_op(other, number)`` here."""
    def method(self, other):
        if not isinstance(self, Tensor):
            n = _number(self)
            if scalar_op is None or n is None or not isinstance(other, Tensor):
                return NotImplemented
            return scalar_op(other, n)
        if not numbers and not isinstance(other, Tensor):
            return NotImplemented
        if not isinstance(other, Tensor):
            n = _number(other)
            if n is None:
                return NotImplemented
            other = scalar_to_tensor(n, self._impl.device)
        return op(other, self)
    return method


def _rdiv(self, other):
    """``other / self`` as PyTorch's Tensor.__rdiv__ computes it: ``self.reciprocal() * other``."""
    if not isinstance(self, Tensor):        # Tensor.__rdiv__(2, t): PyTorch's self.reciprocal() fails too
        raise TypeError(f"descriptor '__rdiv__' requires a 'Tensor' object but received a '{type(self).__name__}'")
    if isinstance(other, np.ndarray):
        return np.true_divide(other, self)
    if not isinstance(other, Tensor):
        other = _number(other)
        if other is None:
            return NotImplemented
        return at.mul_Scalar(at.reciprocal(self), other)
    return at.mul_Tensor(at.reciprocal(self), other)


def _same_as(name):
    """A commutative reflected operator (``2 & t``): the method itself, NotImplemented for a foreign type."""
    def method(self, other):
        try:
            return getattr(Tensor, name)(self, other)
        except TypeError:
            if isinstance(other, (Tensor, int, float, complex, bool)):
                raise
            return NotImplemented
    return method


def _rpow(self, other):
    if not isinstance(self, Tensor):        # Tensor.__rpow__(2, t): PyTorch's body is pow(t, 2)
        n = _number(self)
        return at.pow_Tensor_Scalar(other, n) if n is not None and isinstance(other, Tensor) else NotImplemented
    if isinstance(other, Tensor):
        return at.pow_Tensor_Tensor(other, self)
    n = _number(other)
    return NotImplemented if n is None else at.pow_Scalar(n, self)


def _eq(self, other):
    """``t == other``.  A NumPy array is compared as the tensor it holds, as PyTorch's ``__eq__`` does
    (NumPy defers to a tensor, so without this Python would fall back to identity and answer False);
    what cannot be compared is NotImplemented."""
    if isinstance(other, np.ndarray):
        try:
            other = tensor(other)
        except TypeError:               # a dtype no tensor has (strings, objects)
            return NotImplemented
    try:
        return self.eq(other)
    except TypeError:
        if isinstance(other, (Tensor, int, float, complex, bool)):
            raise
        return NotImplemented


def _array_wrap(self, array, context=None, return_scalar=False):
    """A NumPy ufunc's result over tensors comes back as a tensor (bool results as uint8, as PyTorch does)."""
    if array.dtype == np.bool_:
        array = array.astype(np.uint8)
    return from_numpy(np.ascontiguousarray(array) if any(s < 0 for s in array.strides) else array)


EXTRA_METHODS = {
    "__repr__": _repr,
    "backward": _backward,
    "register_hook": _register_hook,
    "retain_grad": _retain_grad,
    "retains_grad": property(lambda self: bool(self._impl._retains_grad)),
    "detach_": _detach_,
    "data": property(_data_get, _data_set),
    "to": _to,
    "__getitem__": _index,
    "__setitem__": _setitem,
    "cpu": lambda self: self.to("cpu"),
    "cuda": lambda self, device=None: self.to(device if device is not None else "cuda"),
    "float": _conv(_dt.float32), "double": _conv(_dt.float64), "half": _conv(_dt.float16),
    "cfloat": _conv(_dt.complex64), "cdouble": _conv(_dt.complex128),
    "is_neg": _is_neg,
    "real": property(lambda self: at.real(self), _set_part(lambda self: at.real(self))),
    "imag": property(lambda self: at.imag(self), _set_part(lambda self: at.imag(self))),
    "bfloat16": _conv(_dt.bfloat16), "long": _conv(_dt.int64), "int": _conv(_dt.int32),
    "short": _conv(_dt.int16), "bool": _conv(_dt.bool), "byte": _conv(_dt.uint8), "char": _conv(_dt.int8),
    "__rsub__": _rsub,
    "__rtruediv__": _rdiv,
    "__rdiv__": _rdiv,
    "__rmod__": _reflected(lambda a, b: at.remainder_Tensor(a, b), scalar_op=at.remainder_Scalar),
    "__rfloordiv__": _reflected(lambda a, b: at.floor_divide(a, b), scalar_op=at.floor_divide_Scalar),
    "__rlshift__": _reflected(lambda a, b: at.bitwise_left_shift_Tensor(a, b),
                                 scalar_op=at.bitwise_left_shift_Tensor_Scalar),
    "__rrshift__": _reflected(lambda a, b: at.bitwise_right_shift_Tensor(a, b),
                                 scalar_op=at.bitwise_right_shift_Tensor_Scalar),
    "__rmatmul__": _reflected(lambda a, b: at.matmul(a, b), numbers=False),
    "__rand__": _same_as("__and__"),
    "__ror__": _same_as("__or__"),
    "__rxor__": _same_as("__xor__"),
    "__rpow__": _rpow,
    "__array_wrap__": _array_wrap,
    "__eq__": _eq,
    "__pos__": lambda self: self,
    "T": property(_T),
    "mT": property(lambda self: at.transpose_int(self, -2, -1)),
    "mH": property(lambda self: _adjoint(self, "mH")),
    "H": property(_H),
    "adjoint": _adjoint,
    "conj": _conj,
    "is_conj": _is_conj,
}
