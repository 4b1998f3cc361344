"""``Tensor``: a light handle over a ``TensorImpl``.

Only what needs no operator lives here (geometry, conversion to Python and
NumPy).  Operator methods (``add``, ``__add__``, ``view``...) are
attached by the generated code, per the ``variants`` of each operator.
"""
from __future__ import annotations

from . import dtype as _dt
from .creation_meta import check_view_unchanged
from .geometry import is_contiguous_as, wrap_dim
from .layout import strided as _strided
from .memory_format import contiguous_format, memory_format as memory_format_type
from .tensor_impl import TensorImpl
from .dispatch_key import K as _K
from .tls import state as _tls_state

_new = object.__new__


class Size(tuple):
    """A tuple of sizes that prints like ``torch.Size``."""

    __slots__ = ()

    def __repr__(self):
        return f"onion.Size([{', '.join(str(s) for s in self)}])"

    __str__ = __repr__

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, item):
        r = tuple.__getitem__(self, item)
        return Size(r) if isinstance(item, slice) else r

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))


def _dim_arg(dim, method: str) -> int:
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"{method}(): argument 'dim' (position 1) must be int, not {type(dim).__name__}")
    if not -(2 ** 63) <= dim < 2 ** 63:
        raise ValueError(f"{method}(): argument 'dim' {dim} does not fit in int64 (Overflow when unpacking long long)")
    return dim


class Tensor:
    """A handle: all state is in ``self._impl`` so that views and
    ``detach`` can share it cheaply.

    The operator methods (generated) and the hand-written ones that need
    higher layers (``__repr__``, indexing, ``backward``; onion/bindings) are
    set on the class by the public surface when onion loads.
    """

    __slots__ = ("_impl", "__dict__", "__weakref__")   # attributes users set go to the dict, as on torch.Tensor
    __hash__ = object.__hash__

    # --- metadata ------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._impl._array.shape)

    def size(self, dim=None):
        shape = self._impl._array.shape
        if dim is None:
            return Size(shape)
        return shape[wrap_dim(_dim_arg(dim, "size"), len(shape), wrap_scalar=False)]

    def stride(self, dim=None):
        strides = self._impl.strides
        if dim is None:
            return strides
        return strides[wrap_dim(_dim_arg(dim, "stride"), len(strides), wrap_scalar=False)]

    @property
    def dtype(self):
        return self._impl.dtype

    @property
    def device(self):
        return self._impl.device

    @property
    def ndim(self) -> int:
        return self._impl._array.ndim

    def dim(self) -> int:
        return self._impl._array.ndim

    ndimension = dim

    def numel(self) -> int:
        return self._impl._array.size

    nelement = numel

    def element_size(self) -> int:
        return self._impl.dtype.itemsize

    def storage_offset(self) -> int:
        return self._impl.storage_offset()

    def untyped_storage(self):
        return self._impl.storage()

    def data_ptr(self) -> int:
        impl = self._impl
        return impl.storage().data_ptr() + impl.storage_offset() * impl.dtype.itemsize

    def is_contiguous(self, memory_format=None) -> bool:
        if memory_format is None or memory_format is contiguous_format:
            return self._impl.is_contiguous()
        if not isinstance(memory_format, memory_format_type):
            raise TypeError("is_contiguous(): argument 'memory_format' must be onion.memory_format, not "
                            f"{type(memory_format).__name__}")
        impl = self._impl
        return is_contiguous_as(impl._array.shape, impl.strides, memory_format.name)

    def is_floating_point(self) -> bool:
        return self._impl.dtype.is_floating_point

    def is_complex(self) -> bool:
        return self._impl.dtype.is_complex

    @property
    def is_meta(self) -> bool:
        return self._impl.device.type == "meta"

    @property
    def is_cpu(self) -> bool:
        return self._impl.device.type == "cpu"

    @property
    def is_cuda(self) -> bool:
        return self._impl.device.type == "cuda"

    @property
    def layout(self):
        return _strided

    @property
    def _version(self) -> int:
        if self._impl._inference:
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._impl.version

    @property
    def _base(self):
        """The tensor this one is a view of (None for a non-view): the root's own Python object."""
        impl = self._impl
        base = impl._base
        if base is None:
            return None
        root = impl._base_tensor
        return make_tensor(base) if root is None else root

    def _is_view(self) -> bool:
        return self._impl._base is not None

    def is_inference(self) -> bool:
        return self._impl._inference

    # --- autograd metadata (behaviour lives in onion.autograd) ---------------
    @property
    def requires_grad(self) -> bool:
        return self._impl.requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if type(value) is not bool:
            raise RuntimeError("requires_grad must be a bool")
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        if type(requires_grad) is not bool:
            raise TypeError("requires_grad_(): argument 'requires_grad' (position 1) must be bool, not "
                            f"{type(requires_grad).__name__}")
        impl = self._impl
        if requires_grad and not (impl.dtype.is_floating_point or impl.dtype.is_complex):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if not requires_grad and impl.grad_fn is not None:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().")
        if requires_grad and impl._inference and not _tls_state().inference_mode:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
        if not requires_grad and impl._creation_meta and impl._base is not None and impl._base.requires_grad:
            return self     # a view made in no_grad / inference mode requires grad through its base (PyTorch)
        impl.requires_grad = bool(requires_grad)
        return self

    @property
    def grad_fn(self):
        impl = self._impl
        fn = impl.grad_fn
        if fn is None and impl._creation_meta:
            check_view_unchanged(impl)      # a no_grad / inference-mode view whose base changed: PyTorch raises
        return fn

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def grad(self):
        return self._impl.grad

    @grad.setter
    def grad(self, value) -> None:
        impl = self._impl
        if value is not None:
            _check_assigned_grad(impl, value)
        impl.grad = value

    # --- conversion ------------------------------------------------------------
    def numpy(self, *, force: bool = False):
        impl = self._impl
        if impl.device.type != "cpu":
            if force:
                return self.cpu().numpy()
            raise TypeError(f"can't convert {impl.device} device type tensor to numpy. "
                            "Use Tensor.cpu() to copy the tensor to host memory first.")
        if impl.requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. "
                               "Use tensor.detach().numpy() instead.")
        if impl.keyset & _MATH_BITS:
            if impl.keyset & _PY_BIT:
                raise RuntimeError(".numpy() is not supported for tensor subclasses.")
            if force:
                return _resolved_array(impl)
            bit, fix = ("conjugate", "resolve_conj") if impl.keyset & _CONJ_BIT else ("negative", "resolve_neg")
            raise RuntimeError(f"Can't call numpy() on Tensor that has {bit} bit set. "
                               f"Use tensor.{fix}().numpy() instead.")
        return impl._array

    # NumPy defers its binary operators to a Tensor operand (``np.float64(2) * t`` runs ``Tensor.__rmul__``,
    # keeping autograd), and converts a tensor only as ``numpy()`` would: never one that requires grad.
    __array_priority__ = 1000

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def _host_array(self):
        """The values on the host, the Conjugate/Negative bits applied (for printing and Python numbers)."""
        impl = self._impl
        if impl.keyset & _MATH_BITS:
            if impl.keyset & _PY_BIT:
                raise RuntimeError(f"a {type(self).__name__} (a tensor subclass dispatched in Python) has no values "
                                   "to read here: unwrap it in its __torch_dispatch__")
            if impl.device.type == "meta":
                raise NotImplementedError("Cannot copy out of meta tensor; no data!")
            # another device: the copy to the host (``_to_copy``) resolves the bits itself
            return _resolved_array(impl) if impl.device.type == "cpu" else make_tensor(impl).cpu()._impl._array
        if impl.device.type == "cpu":
            return impl._array
        if impl.device.type == "meta":
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        return self.cpu()._impl._array

    def item(self):
        impl = self._impl
        if impl.device.type == "meta":
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        if impl._array.size != 1:
            raise RuntimeError(f"a Tensor with {impl._array.size} elements cannot be converted to Scalar")
        v = self._host_array().reshape(()).item()
        cat = impl.dtype.category
        return bool(v) if cat == 0 else int(v) if cat == 1 else float(v) if cat == 2 else complex(v)

    def tolist(self):
        impl = self._impl
        a = self._host_array()
        cat = impl.dtype.category
        if impl.dtype is _dt.bfloat16 or impl.dtype is _dt.float16:
            a = a.astype("float32")
        out = a.tolist()
        if cat == 2 and impl.dtype is not _dt.float64:
            return out
        return out

    def __len__(self):
        shape = self._impl._array.shape
        if not shape:
            raise TypeError("len() of a 0-d tensor")
        return shape[0]

    def __iter__(self):
        shape = self._impl._array.shape
        if not shape:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(shape[0]))

    def __bool__(self):
        if self._impl._array.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def _python_scalar(self, kind: str):
        """The one element as a Python number for ``float()`` / ``int()`` / ``complex()``; a complex value
        converts to a real one only without an imaginary part, as c10's checked conversion allows."""
        if self._impl._array.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        v = self.item()
        if kind == "complex":
            return complex(v)
        if type(v) is complex:
            if v.imag != 0:
                raise RuntimeError("value cannot be converted to type "
                                   f"{'double' if kind == 'float' else 'int64_t'} without overflow")
            v = v.real
        return float(v) if kind == "float" else int(v)

    def __float__(self):
        return self._python_scalar("float")

    def __int__(self):
        return self._python_scalar("int")

    def __complex__(self):
        return self._python_scalar("complex")

    def __index__(self):
        if self._impl.dtype.category != 1 or self._impl._array.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __format__(self, spec):
        if self._impl._array.ndim == 0 and spec:
            return format(self.item(), spec)
        return repr(self)

    def __reduce_ex__(self, proto):
        raise TypeError("pickling onion tensors is not supported yet")


def _check_assigned_grad(impl, value) -> None:
    """What ``x.grad = value`` refuses (PyTorch's THPVariable_set_grad): a later ``backward`` would
    accumulate into it, so it must be a tensor of the leaf's own dtype, device and size."""
    if not isinstance(value, Tensor):
        raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type {type(value).__name__}")
    if value._impl is impl:
        raise RuntimeError("can't assign Variable as its own grad")
    g = value._impl
    if g.dtype is not impl.dtype:
        raise RuntimeError(f"attempting to assign a gradient with dtype '{g.dtype.cpp_type_name}' to a tensor with "
                           f"grad_dtype '{impl.dtype.scalar_type_name}'. The gradient must match the tensor's "
                           "grad_dtype (defaults to the tensor's dtype).")
    if g.device.type != impl.device.type:
        raise RuntimeError(f"attempting to assign a gradient with device type '{g.device.type}' to a tensor with "
                           f"device type '{impl.device.type}'. Please ensure that the gradient and the tensor "
                           "are on the same device")
    if g.device != impl.device:
        raise RuntimeError("attempting to assign a gradient located on device with index "
                           f"'{g.device.index}' to a tensor located on device with index '{impl.device.index}'. "
                           "Please ensure that the gradient and the tensor are on the same device")
    if g._array.shape != impl._array.shape:
        raise RuntimeError(f"attempting to assign a gradient of size '{list(g._array.shape)}' to a tensor of size "
                           f"'{list(impl._array.shape)}'. Please ensure that the gradient and the tensor are the "
                           "same size")


def make_tensor(impl: TensorImpl, cls=Tensor) -> Tensor:
    """Wrap an impl without running ``__init__`` (the hot path; ``Tensor`` has none, so calling it is
    CPython's cheapest allocation; a subclass's ``__init__`` is skipped)."""
    t = Tensor() if cls is Tensor else _new(cls)
    t._impl = impl
    return t


_CONJ_BIT = 1 << int(_K.Conjugate)
_NEG_BIT = 1 << int(_K.Negative)
_PY_BIT = 1 << int(_K.Python)       # a subclass with __torch_dispatch__: no values of its own to read
_MATH_BITS = _CONJ_BIT | _NEG_BIT | _PY_BIT     # the keys the conversions must look at before reading the array


def _resolved_array(impl):
    """``impl``'s array with its Conjugate / Negative bits applied (a new array when a bit is set)."""
    arr = impl._array
    if impl.keyset & _CONJ_BIT and impl.dtype.is_complex:
        arr = arr.conj()
    if impl.keyset & _NEG_BIT:
        arr = -arr
    return arr
