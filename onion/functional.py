"""Python-level functions of ``torch.functional`` that pick an operator overload from their arguments.

``torch.unique`` and ``torch.unique_consecutive`` are not operators: they call ``_unique2`` /
``unique_dim`` / ``unique_consecutive`` and return only the outputs asked for; ``torch.norm`` picks a vector
or matrix norm from ``p`` and ``dim``; the variadic forms of the shape operators (``meshgrid(a, b)``,
``atleast_2d(a, b)``, ``broadcast_tensors(a, b)``), ``broadcast_shapes``, and ``split``'s choice between an int
and a list of sizes.  They call the generated bindings, so dispatch, autograd and modes see the ATen operators.
"""
from __future__ import annotations

import warnings

from .aten.at import at
from ._generated import operators as _ops
from ._generated import python_functions as _F
from .aten import view_geometry as _g
from .core.tensor import Size as _Size

BINDINGS: dict = {}     # the generated bindings these call (filled in by onion._load)


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):  # noqa: A002 - torch's parameter name
    """torch.norm: the vector norm for numbers and 'fro' over at most two dims, else a matrix norm."""
    _dim = None if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    if isinstance(p, str):
        if p == "fro" and (dim is None or isinstance(dim, int) or len(dim) <= 2):
            return _vector_norm(input, 2, _dim, keepdim, dtype, out)
        if _dim is None:
            _dim = list(range(input.dim()))
        return _matrix_norm(input, p, _dim, keepdim, dtype, out)
    return _vector_norm(input, 2.0 if p is None else p, _dim, keepdim, dtype, out)


def _vector_norm(input, ord, dim, keepdim, dtype, out):  # noqa: A002
    # through the binding, so its arguments are checked as torch.linalg.vector_norm's are
    vector_norm = BINDINGS["linalg_vector_norm"]
    if out is None:
        return vector_norm(input, ord, dim, keepdim, dtype=dtype)
    return vector_norm(input, ord, dim, keepdim, dtype=dtype, out=out)


def _matrix_norm(input, ord, dim, keepdim, dtype, out):  # noqa: A002
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(str(d) for d in dim)}")
    if ord not in ("fro", "nuc"):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if ord == "fro":
        return _vector_norm(input, 2, dim, keepdim, dtype, out)
    raise NotImplementedError("norm(p='nuc'): the nuclear norm needs singular values (linalg.svdvals), which onion "
                              "does not have yet")


def _tensor_norm(self, p="fro", dim=None, keepdim=False, dtype=None):
    return norm(self, p, dim, keepdim, dtype=dtype)


_tensor_norm.__name__ = _tensor_norm.__qualname__ = "norm"


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    """The unique elements (or slices along ``dim``), sorted, with the inverse indices and counts if asked."""
    if dim is not None:
        output, inverse, counts = at.unique_dim(input, dim, sorted, return_inverse, return_counts)
    else:
        output, inverse, counts = at._unique2(input, sorted, return_inverse, return_counts)
    return _pick(output, inverse, counts, return_inverse, return_counts)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    """One element (or slice along ``dim``) per run of equal consecutive ones."""
    output, inverse, counts = at.unique_consecutive(input, return_inverse, return_counts, dim)
    return _pick(output, inverse, counts, return_inverse, return_counts)


def _pick(output, inverse, counts, return_inverse, return_counts):
    if return_inverse and return_counts:
        return output, inverse, counts
    if return_inverse:
        return output, inverse
    if return_counts:
        return output, counts
    return output


def _tensor_unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    return unique(self, sorted, return_inverse, return_counts, dim)


def _tensor_unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
    return unique_consecutive(self, return_inverse, return_counts, dim)


TENSOR_METHODS = {"unique": _tensor_unique, "unique_consecutive": _tensor_unique_consecutive}


def histogramdd(input, bins, *, range=None, weight=None, density=False):  # noqa: A002
    """A histogram over the innermost dimension's coordinates: ``bins`` an int, one int per coordinate, or one
    tensor of edges per coordinate; returns (hist, bin_edges) as ``torch.return_types.histogramdd``."""
    from .bindings.return_types import return_type
    result = return_type("histogramdd", ("hist", "bin_edges"))
    if isinstance(bins, int):
        bins = [bins] * (input.shape[-1] if input.dim() else 0)
    if bins and hasattr(bins[0], "_impl"):
        hist = at._histogramdd_from_bin_tensors(input, list(bins), weight, density)
        return result((hist, tuple(bins)))
    bins = list(bins)
    edges = at._histogramdd_bin_edges(input, bins, range, weight, density)
    hist = at._histogramdd_from_bin_cts(input, bins, range, weight, density)
    return result((hist, tuple(edges)))


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


def cartesian_prod(*tensors):
    """``torch.cartesian_prod(a, b, ...)``: the variadic form of ``aten::cartesian_prod(Tensor[] tensors)``."""
    return _F.cartesian_prod(_unpack(tensors))


def install(tensor_cls, namespace) -> None:
    """Put these forms where torch has them (called once by ``onion._load``)."""
    global _RESIZE_
    for n in ("split", "tensor_split", "meshgrid", "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_tensors",
              "broadcast_shapes", "resize_as_", "cartesian_prod"):
        namespace[n] = globals()[n]
    _RESIZE_ = tensor_cls.resize_
    tensor_cls.split = split_method
    tensor_cls.tensor_split = tensor_split_method
    tensor_cls.resize_ = resize_method
    tensor_cls.resize_as_ = resize_as_
