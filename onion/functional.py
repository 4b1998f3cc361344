"""The Python-level functions of torch/functional.py that onion's shape operators need: the
variadic forms (``meshgrid(a, b)``, ``atleast_2d(a, b)``, ``broadcast_tensors(a, b)``),
``broadcast_shapes``, and ``split``'s choice between an int and a list of sizes.

They call the generated bindings, so dispatch, autograd and modes see the ATen operators.
"""
from __future__ import annotations

import warnings

from ._generated import operators as _ops
from ._generated import python_functions as _F
from .aten import view_geometry as _g
from .core.tensor import Size as _Size

__all__ = ["split", "tensor_split", "meshgrid", "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_tensors",
           "broadcast_shapes", "tensor_split_method", "split_method"]


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) or hasattr(x, "__index__") and not hasattr(x, "_impl")


def _plain_int(v) -> bool:
    """An int the parser would take for an ``int`` parameter; one outside int64 raises its overflow error."""
    if type(v) is not int:
        return False
    if not -(1 << 63) <= v < (1 << 63):
        raise ValueError("Overflow when unpacking long long")
    return True


def split_method(self, split_size, dim=0):
    """Tensor.split: an int is split.Tensor, a sequence of sizes is split_with_sizes (torch/_tensor.py).
    Anything else goes to the argument parser, which names what is wrong."""
    if hasattr(split_size, "_impl"):
        try:
            split_size = int(split_size)
        except (ValueError, RuntimeError, TypeError):
            pass
    if _plain_int(split_size) and _plain_int(dim):
        return tuple(_ops.split_Tensor(self, split_size, dim))
    if isinstance(split_size, int) and not isinstance(split_size, bool):
        return tuple(_F.FUNCTIONS["split"](self, split_size, dim))
    return tuple(_F.FUNCTIONS["split_with_sizes"](self, split_size, dim))


def split(tensor, split_size_or_sections, dim=0):
    return split_method(tensor, split_size_or_sections, dim)


def tensor_split_method(self, indices_or_sections, dim=0):
    """An int is tensor_split.sections, a tensor tensor_indices_or_sections, a sequence indices."""
    v = indices_or_sections
    if _plain_int(dim):
        if hasattr(v, "_impl"):
            return tuple(_ops.tensor_split_tensor_indices_or_sections(self, v, dim))
        if _plain_int(v):
            return tuple(_ops.tensor_split_sections(self, v, dim))
        if isinstance(v, (list, tuple)) and all(type(i) is int and -(1 << 63) <= i < (1 << 63) for i in v):
            return tuple(_ops.tensor_split_indices(self, list(v), dim))
    return tuple(_F.FUNCTIONS["tensor_split"](self, v, dim))


def tensor_split(input, indices_or_sections, dim=0):  # noqa: A002 - torch's parameter name
    return tensor_split_method(input, indices_or_sections, dim)


def _unpack(tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(tensors[0])
    return tensors


def meshgrid(*tensors, indexing: str | None = None):
    tensors = _unpack(tensors)
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=2)
        indexing = "ij"
    return tuple(_F.FUNCTIONS["meshgrid"](list(tensors), indexing=indexing))


def _atleast(name, tensors):
    if len(tensors) == 1:
        tensors = tensors[0]
    fn = _F.FUNCTIONS[name]
    if isinstance(tensors, (list, tuple)):
        return tuple(fn(list(tensors)))
    return fn(tensors)


def atleast_1d(*tensors):
    return _atleast("atleast_1d", tensors)


def atleast_2d(*tensors):
    return _atleast("atleast_2d", tensors)


def atleast_3d(*tensors):
    return _atleast("atleast_3d", tensors)


def broadcast_tensors(*tensors):
    return tuple(_F.FUNCTIONS["broadcast_tensors"](list(_unpack(tensors))))


def broadcast_shapes(*shapes):
    """The shape tensors of these shapes would broadcast to (no tensor is made)."""
    for s in shapes:
        if isinstance(s, (list, tuple, _Size)):
            for d in s:
                if not _is_int(d):
                    raise TypeError(f"Input shapes should be of type ints, a tuple of ints, or a list of ints, "
                                    f"got {shapes}")
        elif not _is_int(s):
            raise TypeError(f"Input shapes should be of type ints, a tuple of ints, or a list of ints, got {shapes}")
    return _Size(_g.broadcast_shapes(*[tuple(s) if isinstance(s, (list, tuple, _Size)) else s for s in shapes]))


def _refuse_resize_with_grad(t):
    # PyTorch's autograd kernel of resize_ (VariableTypeManual), before the in-place checks
    if t._impl.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")


def resize_method(self, *size, memory_format=None):
    _refuse_resize_with_grad(self)
    return _RESIZE_(self, *size, memory_format=memory_format)


def resize_as_(self, the_template, *, memory_format=None):
    _refuse_resize_with_grad(self)
    return _F.FUNCTIONS["resize_as_"](self, the_template, memory_format=memory_format)


_RESIZE_ = None


def install(tensor_cls, namespace) -> None:
    """Put these forms where torch has them (called once by ``onion._load``)."""
    global _RESIZE_
    for n in ("split", "tensor_split", "meshgrid", "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_tensors",
              "broadcast_shapes", "resize_as_"):
        namespace[n] = globals()[n]
    _RESIZE_ = tensor_cls.resize_
    tensor_cls.split = split_method
    tensor_cls.tensor_split = tensor_split_method
    tensor_cls.resize_ = resize_method
    tensor_cls.resize_as_ = resize_as_
