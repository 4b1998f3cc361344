"""The linear-algebra functions PyTorch writes in Python (torch/functional.py): they take
Python-level argument forms (``dims=2``, ``einsum('ij,jk', a, b)``, sublists) and call the
operators onion declares."""
from __future__ import annotations

import numbers

from ._generated.python_functions import FUNCTIONS as _F
from .core.tensor import Tensor

__all__ = ["block_diag", "cdist", "einsum", "lu", "stft", "tensordot"]


def tensordot(a, b, dims=2, out=None):
    """``torch.tensordot``: ``dims`` an int (the last dims of ``a`` with the first of ``b``), a pair of
    lists, or a tensor of either form."""
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        raise TypeError(f"tensordot expects Tensor arguments, got {type(a).__name__} and {type(b).__name__}")
    if isinstance(dims, Tensor):
        dims = dims.tolist() if dims.numel() > 1 else int(dims.item())
    if isinstance(dims, (tuple, list)):
        if len(dims) != 2:
            raise RuntimeError(f"tensordot expects dims to be a pair of lists or an int, but got {dims}")
        d1, d2 = dims
        dims_a = [int(d1)] if isinstance(d1, numbers.Integral) else [int(x) for x in d1]
        dims_b = [int(d2)] if isinstance(d2, numbers.Integral) else [int(x) for x in d2]
    elif isinstance(dims, numbers.Integral):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.dim(), b.dim()):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a = list(range(-dims, 0))
        dims_b = list(range(dims))
    else:
        raise RuntimeError(f"tensordot expects dims to be int or tuple[list[int], list[int]] or "  # noqa: TRY004
                           f"list[list[int]] containing two lists, but got dims={dims}")
    if out is None:
        return _F["tensordot"](a, b, dims_a, dims_b)
    return _F["tensordot"](a, b, dims_a, dims_b, out=out)


def _sublist_letter(n):
    if 0 <= n < 26:
        return chr(ord("A") + n)
    if 26 <= n < 52:
        return chr(ord("a") + n - 26)
    raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")


def _sublist_equation(args):
    """``einsum(op1, sub1, op2, sub2, ..., [out])`` as an equation string and its operands."""
    ops = list(args[0::2])
    subs = list(args[1::2])
    out = None
    if len(args) % 2 == 1:
        out = ops.pop()
        if isinstance(out, Tensor):
            raise TypeError("einsum(): the last argument must be a list of output subscripts")

    def term(sub):
        return "".join("..." if s is Ellipsis else _sublist_letter(int(s)) for s in sub)
    eq = ",".join(term(s) for s in subs)
    if out is not None:
        eq += "->" + term(out)
    return eq, ops


def einsum(*args):
    """``torch.einsum(equation, *operands)`` or the sublist form ``einsum(op1, [0, 1], op2, [1, 2], [0, 2])``."""
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, or at least one "
                         "operand and its subscripts list")
    if isinstance(args[0], Tensor):
        equation, operands = _sublist_equation(args)
    else:
        equation, operands = args[0], list(args[1:])
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = list(operands[0])
    return _F["einsum"](equation, operands)


def block_diag(*tensors):
    """``torch.block_diag(*tensors)``."""
    return _F["block_diag"](list(tensors))


_CDIST_MODES = {"use_mm_for_euclid_dist_if_necessary": None, "use_mm_for_euclid_dist": 1,
                "donot_use_mm_for_euclid_dist": 2}


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """``torch.cdist``: ``compute_mode`` by name."""
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    return _F["cdist"](x1, x2, p, _CDIST_MODES[compute_mode])


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,  # noqa: A002
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None, align_to_window=None):
    """``torch.stft``: centred frames (padded by ``n_fft // 2`` with ``pad_mode``) unless ``center=False``."""
    return _F["stft"](input, n_fft, hop_length=hop_length, win_length=win_length, window=window, center=center,
                      pad_mode=pad_mode, normalized=normalized, onesided=onesided, return_complex=return_complex,
                      align_to_window=align_to_window)


def lu(A, pivot=True, get_infos=False, out=None):
    """``torch.lu``: the packed LU factorization and its pivots (and the LAPACK infos with ``get_infos``)."""
    LU, pivots, infos = _F["_lu_with_info"](A, pivot=pivot, check_errors=not get_infos)
    result = (LU, pivots, infos) if get_infos else (LU, pivots)
    if out is None:
        return result
    if len(out) != len(result):
        raise TypeError(f"lu(): out expects {len(result)} tensors, got {len(out)}")
    for o, r in zip(out, result):
        o.resize_(r.shape) if tuple(o.shape) != tuple(r.shape) else None
        o.copy_(r)
    return tuple(out)


PUBLIC = {name: globals()[name] for name in __all__}
