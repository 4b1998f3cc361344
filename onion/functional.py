"""Python-level functions of ``torch.functional`` that pick an operator overload from their arguments.

``torch.unique`` and ``torch.unique_consecutive`` are not operators: they call ``_unique2`` /
``unique_dim`` / ``unique_consecutive`` and return only the outputs asked for; ``torch.norm`` picks a vector
or matrix norm from ``p`` and ``dim``.
"""
from __future__ import annotations

from .aten.at import at

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
