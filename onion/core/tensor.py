"""``Tensor``: a light handle over a ``TensorImpl``.

Only what needs no operator lives here (geometry, conversion to Python and
NumPy).  Operator methods (``add``, ``__add__``, ``view``...) are
attached by the generated code, per the ``variants`` of each operator.
"""
from __future__ import annotations

from . import dtype as _dt
from .geometry import wrap_dim
from .tensor_impl import TensorImpl

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
        return self._impl.is_contiguous()

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
        return "strided"

    @property
    def _version(self) -> int:
        if self._impl._inference:
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._impl.version

    @property
    def _base(self):
        """The tensor this one is a view of (None for a non-view)."""
        base = self._impl._base
        return None if base is None else make_tensor(base)

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
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        if not isinstance(requires_grad, bool):
            raise TypeError("requires_grad_(): argument 'requires_grad' (position 1) must be bool, not "
                            f"{type(requires_grad).__name__}")
        impl = self._impl
        if requires_grad and not (impl.dtype.is_floating_point or impl.dtype.is_complex):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if not requires_grad and impl.grad_fn is not None:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().")
        impl.requires_grad = bool(requires_grad)
        return self

    @property
    def grad_fn(self):
        return self._impl.grad_fn

    @property
    def is_leaf(self) -> bool:
        return self._impl.grad_fn is None

    @property
    def grad(self):
        return self._impl.grad

    @grad.setter
    def grad(self, value) -> None:
        self._impl.grad = value

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
        return impl._array

    def __array__(self, dtype=None, copy=None):
        a = self.numpy(force=True)
        return a if dtype is None else a.astype(dtype, copy=False)

    def _host_array(self):
        impl = self._impl
        if impl.device.type == "cpu":
            return impl._array
        if impl.device.type == "meta":
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        return self.cpu()._impl._array

    def item(self):
        impl = self._impl
        if impl._array.size != 1:
            raise RuntimeError(f"a Tensor with {impl._array.size} elements cannot be converted to Scalar")
        v = self._host_array().reshape(()).item() if impl.device.type != "meta" else self._host_array()
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

    def __float__(self):
        return float(self.item()) if not self._impl.dtype.is_complex else complex(self.item()).__float__()

    def __int__(self):
        return int(self.item())

    def __complex__(self):
        return complex(self.item())

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


def make_tensor(impl: TensorImpl, cls=Tensor) -> Tensor:
    """Wrap an impl without running ``__init__`` (the hot path)."""
    t = _new(cls)
    t._impl = impl
    return t
