"""The hand-written ``onion.*`` functions (PyTorch's python_torch_functions_manual.cpp).

Tensor constructors from Python data, and small functions that are not
operators in PyTorch either.
"""
from __future__ import annotations

import numbers

import numpy as np

from ..aten.at import at
from ..aten.iterator import priority
from ..aten.native.factories import infer_dtype
from ..aten.tensor_new import wrap
from ..backends import backend_for
from ..core import dtype as _dt
from ..core.device import CPU, canonical
from ..core.promotion import WRAPPED, result_type_of, scalar_dtype
from ..core.tensor import Tensor


_PY_DTYPES = {float: _dt.float64, int: _dt.int64, bool: _dt.bool, complex: _dt.complex128}


def check_dtype_arg(fn: str, dtype):
    """``dtype=`` as PyTorch's parser takes it: a dtype, a Python number type, or None."""
    if dtype is None or isinstance(dtype, _dt.dtype):
        return dtype
    if isinstance(dtype, type) and dtype in _PY_DTYPES:
        return _PY_DTYPES[dtype]
    raise TypeError(f"{fn}(): argument 'dtype' must be onion.dtype, not {type(dtype).__name__}")


def check_bool_arg(fn: str, name: str, value, position=None):
    if not isinstance(value, bool):
        where = "" if position is None else f" (position {position})"
        raise TypeError(f"{fn}(): argument '{name}'{where} must be bool, not {type(value).__name__}")
    return value


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor copying ``data`` (nested lists, scalars, NumPy arrays or tensors)."""
    dtype = check_dtype_arg("tensor", dtype)
    check_bool_arg("tensor", "requires_grad", requires_grad)
    dev = canonical(device)
    if isinstance(data, Tensor):
        src = data.detach() if hasattr(data, "detach") else data
        out = at._to_copy(src, dtype, None, dev, None, False, None)
    else:
        if isinstance(data, np.ndarray):
            dt = dtype or _dt.from_numpy_dtype(data.dtype)
            arr = np.array(data, dtype=dt.np, copy=True, order="K")
        else:
            dt = dtype or infer_dtype(data)
            arr = _to_array(data, dt)
        if arr.size == 0:
            arr = np.empty(arr.shape, arr.dtype)
        if dev.type != "cpu":
            arr = backend_for(dev).from_numpy(arr, dev)
        out = wrap(arr, dt, dev)
    if requires_grad:
        out.requires_grad_(True)
    return out


def _to_array(data, dt):
    def flat(x):
        if isinstance(x, Tensor):
            return x.tolist()
        if isinstance(x, (list, tuple)):
            return [flat(y) for y in x]
        return x
    data = flat(data)
    try:
        if dt.is_complex:
            return np.array(data, dtype=dt.np)
        if dt.category == 2:
            return np.array(data, dtype=np.float64 if dt is not _dt.float64 else dt.np).astype(dt.np) \
                if dt in (_dt.bfloat16,) else np.array(data, dtype=dt.np)
        if dt.category == 1:
            a = np.array(data)
            if a.dtype.kind == "c":
                raise TypeError
            return a.astype(np.float64).astype(dt.np) if a.dtype.kind == "f" else a.astype(dt.np)
        return np.array(data, dtype=bool)
    except ValueError as e:
        raise ValueError(f"expected sequence of equal-length lists: {e}") from None


def from_numpy(array) -> Tensor:
    """A CPU tensor sharing memory with ``array``."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    dt = _dt.from_numpy_dtype(array.dtype)
    return wrap(array, dt, CPU)


def as_tensor(data, *, dtype=None, device=None) -> Tensor:
    dtype = check_dtype_arg("as_tensor", dtype)
    if isinstance(data, Tensor):
        return data.to(dtype=dtype, device=device) if (dtype or device) else data
    if isinstance(data, np.ndarray) and dtype is None and canonical(device) == CPU:
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)



def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def numel(t) -> int:
    if not isinstance(t, Tensor):
        raise TypeError(f"numel(): argument 'input' (position 1) must be Tensor, not {type(t).__name__}")
    return t.numel()


def result_type(tensor1, tensor2):
    """The dtype an elementwise op on these operands would give (PyTorch's rules)."""
    ops = []
    for x in (tensor1, tensor2):
        if isinstance(x, Tensor):
            ops.append((x._impl.dtype, priority(x._impl)))
        elif isinstance(x, numbers.Integral) and not isinstance(x, bool) and not -(2 ** 63) <= x < 2 ** 64:
            raise OverflowError(f"result_type(): int too big to convert: {x}")
        elif isinstance(x, (numbers.Number, bool, np.bool_)):
            ops.append((scalar_dtype(float(x) if isinstance(x, np.bool_) else x), WRAPPED))
        else:
            raise TypeError(f"result_type(): argument must be Tensor or Number, not {type(x).__name__}")
    return result_type_of(tuple(ops))
