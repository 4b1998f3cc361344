"""The hand-written ``onion.*`` functions (PyTorch's python_torch_functions_manual.cpp).

Tensor constructors from Python data, and small functions that are not
operators in PyTorch either.
"""
from __future__ import annotations

import numbers

import numpy as np

from ..aten.at import at
from ..aten.iterator import priority
from ..aten.native.factories import infer_dtype, string_data_error
from ..aten.tensor_new import wrap
from ..backends import backend_for
from ..core import dtype as _dt
from ..core.device import CPU, canonical
from ..core.dispatch_key import K, bit
from ..core.tls import set_state as _set_state, state as _tls_state
from ..core.promotion import WRAPPED, result_type_of, scalar_dtype
from ..core.tensor import Tensor


_PYTHON_KEYS = bit(K.Python) | bit(K.PythonTLSSnapshot)
_PY_DTYPES = ((float, _dt.float64), (int, _dt.int64), (bool, _dt.bool), (complex, _dt.complex128))


def dtype_arg(dtype, fname: str):
    """A ``dtype=`` argument as an onion dtype (Python's number types name their PyTorch dtypes)."""
    if dtype is None or isinstance(dtype, _dt.dtype):
        return dtype
    for tp, dt in _PY_DTYPES:
        if dtype is tp:
            return dt
    raise TypeError(f"{fname}(): argument 'dtype' must be onion.dtype, not {type(dtype).__name__}")


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor copying ``data`` (nested lists, scalars, NumPy arrays or tensors)."""
    return _copy_data(data, dtype, device, requires_grad, "tensor")


def _copy_data(data, dtype, device, requires_grad, fname):
    """``tensor()``'s work; ``fname`` names the public function in argument errors.

    As PyTorch's ``internal_new_from_data``: a tensor argument is detached and copied (a mode sees both);
    other data is made into a tensor out of the modes' sight, then handed to ``lift_fresh``, which they see."""
    dtype = dtype_arg(dtype, fname)
    if type(requires_grad) is not bool:
        raise TypeError(f"{fname}(): argument 'requires_grad' must be bool, not {type(requires_grad).__name__}")
    dev = canonical(device)
    if isinstance(data, Tensor):
        src = data.detach() if hasattr(data, "detach") else data
        out = at._to_copy(src, dtype if dtype is not None else src.dtype, None, dev, None, False, None)
    elif _tls_state().mode_stack:
        st = _tls_state()
        _set_state(st.with_exclude(st.exclude | _PYTHON_KEYS))
        try:
            out = _from_data(data, dtype, dev)
        finally:
            _set_state(st)
        out = at.lift_fresh(out)
    else:
        out = _from_data(data, dtype, dev)
    if requires_grad:
        out.requires_grad_(True)
    return out


def _from_data(data, dtype, dev):
    """A new tensor from Python data or a NumPy array."""
    if isinstance(data, np.ndarray):
        dt = dtype or _dt.from_numpy_dtype(data.dtype)
        if dt.itemsize == 2 and dt.category == 2 and data.dtype.kind in "fc" and data.dtype.itemsize >= 8:
            with np.errstate(over="ignore"):    # a double reaches Half/BFloat16 through float (c10)
                arr = data.astype(np.float32 if data.dtype.kind == "f" else np.complex64).astype(dt.np)
        else:
            arr = np.array(data, dtype=dt.np, copy=True, order="K")
    else:
        if isinstance(data, (str, bytes)):
            raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
        if dtype is None:
            dt = infer_dtype(data)
        else:
            dt = dtype
            _check_elements(data, dt)
        arr = _to_array(data, dt)
    if arr.size == 0:
        arr = np.empty(arr.shape, arr.dtype)
    if dev.type != "cpu":
        arr = backend_for(dev).from_numpy(arr, dev)
    return wrap(arr, dt, dev)


def _check_elements(data, dt) -> None:
    """Each element of nested data must convert to ``dt`` as PyTorch's ``store_scalar`` converts it:
    no None, objects or strings, no complex into a real type (NumPy would quietly write NaN or drop the
    imaginary part).  Only needed when ``dtype=`` is given; inference refuses these by itself."""
    integral = dt.category <= 1
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, (Tensor, np.ndarray)):
            continue
        elif isinstance(x, str) and isinstance(string_data_error(data), ValueError):
            raise string_data_error(data)       # read as one more dimension; other strings: bad elements
        elif not isinstance(x, numbers.Number) and not isinstance(x, np.bool_) or \
                (isinstance(x, complex) and not dt.is_complex and dt is not _dt.bool):
            if integral:
                raise TypeError(f"'{type(x).__name__}' object cannot be interpreted as an integer")
            raise TypeError(f"must be real number, not {type(x).__name__}")


def _check_integral_range(a, dt) -> None:
    """Values bound for an integer dtype must fit it (c10's checked conversion; unsigned types also take
    negatives down to -max, which wrap); NaN and infinities never fit."""
    if a.size == 0 or a.dtype.kind not in "fiu":
        return
    info = np.iinfo(dt.np)
    lo = info.min if dt.is_signed else -int(info.max)
    if a.dtype.kind == "f":
        ok = np.isfinite(a).all() and a.min() >= lo and a.max() <= info.max
    else:
        ok = int(a.min()) >= lo and int(a.max()) <= info.max
    if not ok:
        raise RuntimeError(f"value cannot be converted to type {dt.name} without overflow")


def _all_python_ints(data) -> bool:
    return all(type(v) is int for v in np.array(data, dtype=object).ravel())


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
            if dt is _dt.bfloat16 or dt is _dt.float16:
                # c10 makes Half and BFloat16 from a float: a Python float (a double) is rounded twice
                with np.errstate(over="ignore"):
                    return np.array(data, dtype=np.float64).astype(np.float32).astype(dt.np)
            return np.array(data, dtype=dt.np)
        if dt.category == 1:
            a = np.array(data)
            if dt is _dt.uint64 and a.dtype.kind in "fO" and _all_python_ints(data):
                return np.array(data, dtype=np.uint64)     # ints past int64's range that fit uint64
            if a.dtype.kind == "c":
                raise TypeError("'complex' object cannot be interpreted as an integer")
            if a.dtype.kind == "O":     # Python ints beyond 64 bits
                raise ValueError("Overflow when unpacking long long: a Python int does not fit in 64 bits")
            _check_integral_range(a, dt)
            if a.dtype.kind == "f":
                return np.trunc(a).astype(np.int64).astype(dt.np)
            return a.astype(dt.np)      # in range, or a negative wrapping into an unsigned type as in C
        return np.array(data, dtype=bool)
    except OverflowError:
        raise ValueError("Overflow when unpacking long long: a Python int does not fit in 64 bits") from None
    except ValueError as e:
        if str(e).startswith("Overflow"):
            raise
        raise ValueError(f"expected sequence of equal-length lists: {e}") from None


def from_numpy(array) -> Tensor:
    """A CPU tensor sharing memory with ``array``."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    dt = _dt.from_numpy_dtype(array.dtype)
    # a tensor's strides count elements and are never negative: refuse here, not at a later view
    if any(s < 0 for s in array.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors with negative "
                         "strides are not currently supported. (You can probably work around this by making a "
                         "copy of your array with array.copy().)")
    if any(s % array.itemsize for s in array.strides):
        raise ValueError("given numpy array strides not a multiple of the element byte size. Copy the numpy "
                         "array to reallocate the memory.")
    return wrap(array, dt, CPU)


def as_tensor(data, *, dtype=None, device=None) -> Tensor:
    dtype = dtype_arg(dtype, "as_tensor")
    if isinstance(data, Tensor):
        return data.to(dtype=dtype, device=device) if (dtype or device) else data
    if isinstance(data, np.ndarray) and dtype is None and canonical(device) == CPU:
        return from_numpy(data)
    return _copy_data(data, dtype, device, False, "as_tensor")



def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def numel(input) -> int:
    if not isinstance(input, Tensor):
        raise TypeError(f"numel(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return input.numel()


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


def is_conj(input) -> bool:  # noqa: A002 - PyTorch's argument name
    """``torch.is_conj``: whether ``input`` is a ``conj()`` view whose conjugation is still pending."""
    if not isinstance(input, Tensor):
        raise TypeError(f"is_conj(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return input.is_conj()


def is_neg(input) -> bool:  # noqa: A002 - PyTorch's argument name
    """``torch.is_neg``: whether ``input`` carries a pending negation (the Negative bit)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"is_neg(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return input.is_neg()


def is_inference(input) -> bool:  # noqa: A002 - PyTorch's argument name
    """``torch.is_inference``: whether ``input`` was made in inference mode (no version counter, no autograd)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"is_inference(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return input.is_inference()
