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
