"""Python-level functions of ``torch.functional`` that pick an operator overload from their arguments.

``torch.unique`` and ``torch.unique_consecutive`` are not operators: they call ``_unique2`` /
``unique_dim`` / ``unique_consecutive`` and return only the outputs asked for.
"""
from __future__ import annotations

from .aten.at import at


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
