"""The ``*_copy`` twins of views that the functionalization pass needs (select_copy, split_copy, detach_copy,
view_as_real_copy, view_as_complex_copy, _conj_copy, _neg_view_copy): the view, cloned
contiguous with its math bits resolved, as PyTorch's CompositeExplicitAutogradNonFunctional kernels do; their
``out=`` variants resize ``out`` row-major and want its dtype exact."""
from __future__ import annotations

from ..at import at
from .shape import _contig, _copies, _copy_out


def select_copy_int(self, dim, index):
    return _contig(at.select_int(self, dim, index))


def select_copy_int_out(self, dim, index, out=None):
    return _copy_out(at.select_copy_int(self, dim, index), out)


def detach_copy(self):
    return _contig(self.detach())


def detach_copy_out(self, out=None):
    return _copy_out(at.detach_copy(self), out)


def split_copy_Tensor(self, split_size, dim=0):
    return _copies(at.split_Tensor(self, split_size, dim))


def split_copy_Tensor_out(self, split_size, dim=0, out=None):
    """Unlike split_with_sizes_copy's, PyTorch's kernel copies into each ``out`` as it is (copy_: no resize,
    any dtype)."""
    parts = at.split_Tensor(self, split_size, dim)
    if len(out) != len(parts):
        raise RuntimeError(f"split_copy_Tensor_out() expected an out= argument of size {len(parts)}, got size "
                           f"{len(out)}")
    for p, o in zip(parts, out):
        at.copy_(o, p, False)


def view_as_real_copy(self):
    return _contig(at.view_as_real(self))


def view_as_real_copy_out(self, out=None):
    return _copy_out(at.view_as_real_copy(self), out)


def view_as_complex_copy(self):
    return _contig(at.view_as_complex(self))


def view_as_complex_copy_out(self, out=None):
    return _copy_out(at.view_as_complex_copy(self), out)


def _conj_copy(self):
    return _contig(at._conj(self))


def _conj_copy_out(self, out=None):
    return _copy_out(at._conj_copy(self), out)


def _neg_view_copy(self):
    return _contig(at._neg_view(self))


def _neg_view_copy_out(self, out=None):
    return _copy_out(at._neg_view_copy(self), out)
