"""Carry PyTorch OpInfo samples into onion and onion's results back, exactly.

A torch tensor is rebuilt from a copy of its WHOLE storage with ``as_strided``, so strides and the
storage offset of a sample survive (a transposed or sliced sample stays transposed or sliced, and a
view's result can be checked for aliasing).  Results come back as NumPy arrays (bfloat16 as its raw
bits reinterpreted by ml_dtypes), never through onion's own printing or conversion helpers.
"""
from __future__ import annotations

import types
import warnings

import numpy as np
import torch

import onion

_ONION_DTYPES = {getattr(torch, n): getattr(onion, n) for n in (
    "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
    "complex64", "complex128")}
_MEMORY_FORMATS = {torch.contiguous_format: "contiguous_format", torch.preserve_format: "preserve_format",
                   torch.channels_last: "channels_last", torch.channels_last_3d: "channels_last_3d"}


class Unconvertible(Exception):
    """A sample holds something onion has no counterpart for (a Generator, complex32, a sparse tensor)."""


def onion_dtype(dt):
    try:
        return _ONION_DTYPES[dt]
    except KeyError:
        raise Unconvertible(f"dtype {dt}") from None


def _storage_array(t: torch.Tensor) -> np.ndarray:
    """A NumPy copy of every element of ``t``'s storage, in the dtype onion uses for it."""
    n = t.untyped_storage().nbytes() // t.element_size()
    flat = torch.empty(0, dtype=t.dtype).set_(t.untyped_storage(), 0, (n,), (1,)).detach()
    if t.dtype == torch.bfloat16:
        import ml_dtypes
        return flat.view(torch.int16).numpy().copy().view(ml_dtypes.bfloat16)
    return flat.numpy().copy()


def tensor_to_onion(t: torch.Tensor, device: str = "cpu"):
    """The onion tensor with ``t``'s values, sizes, strides and storage offset (and requires_grad)."""
    if t.layout != torch.strided:
        raise Unconvertible(f"layout {t.layout}")
    dt = onion_dtype(t.dtype)
    if device == "meta":       # a storage as long as the sample's, holding nothing
        base = onion.empty(t.untyped_storage().nbytes() // t.element_size(), dtype=dt, device="meta")
    else:
        if t.is_conj() or t.is_neg():
            t = t.resolve_conj().resolve_neg()
        base = onion.from_numpy(_storage_array(t.detach()))
    if t.requires_grad and t.grad_fn is None and t._base is not None and t._base.requires_grad:
        # a view PyTorch made without grad mode of a leaf that requires grad: it requires grad through its
        # base, but no gradient reaches it; made the same way here
        base.requires_grad_(True)
        with onion.no_grad():
            return base.as_strided(tuple(t.shape), tuple(t.stride()), t.storage_offset())
    o = base.as_strided(tuple(t.shape), tuple(t.stride()), t.storage_offset())
    if t.requires_grad:
        o = o.detach().requires_grad_(True)
    return o


def to_onion(x, device: str = "cpu", memo=None):
    """Convert a sample's argument tree (tensors, dtypes, devices, memory formats, sizes, lists)."""
    memo = {} if memo is None else memo
    if isinstance(x, torch.Tensor):
        if id(x) not in memo:                      # the same tensor twice stays one tensor
            memo[id(x)] = (x, tensor_to_onion(x, device))
        return memo[id(x)][1]
    if isinstance(x, torch.dtype):
        return onion_dtype(x)
    if isinstance(x, torch.device):
        return onion.device(device if x.type == "cpu" else x.type)
    if isinstance(x, torch.memory_format):
        name = _MEMORY_FORMATS[x]
        if not hasattr(onion, name):
            raise Unconvertible(f"memory format {name}")
        return getattr(onion, name)
    if isinstance(x, torch.layout):
        if x != torch.strided:
            raise Unconvertible(f"layout {x}")
        return onion.strided
    if isinstance(x, torch.Size):
        return tuple(x)
    if isinstance(x, torch.Generator):
        raise Unconvertible("torch.Generator")
    if isinstance(x, (list, tuple)):
        out = [to_onion(v, device, memo) for v in x]
        return out if isinstance(x, list) else tuple(out)
    if isinstance(x, dict):
        return {k: to_onion(v, device, memo) for k, v in x.items()}
    if isinstance(x, (bool, int, float, complex, str, type(None), slice, type(Ellipsis))):
        return x
    raise Unconvertible(f"argument of type {type(x).__name__}")


def onion_values(o) -> np.ndarray:
    """The values of an onion CPU tensor as a NumPy array (bfloat16 widened to float32)."""
    arr = np.asarray(o.detach().resolve_conj().resolve_neg().numpy())
    if o.dtype is onion.bfloat16:
        arr = arr.astype(np.float32)
    return arr


def torch_values(t: torch.Tensor) -> np.ndarray:
    t = t.detach().resolve_conj().resolve_neg()
    if t._is_zerotensor():          # a gradient PyTorch knows to be zero (sgn's of a real input)
        return np.zeros(tuple(t.shape), dtype=torch.empty(0, dtype=t.dtype).numpy().dtype)
    if t.dtype == torch.bfloat16:
        t = t.float()
    return t.numpy()


def names_torch(fn) -> bool:
    """Whether a Python function's code refers to ``torch`` (so it cannot run on onion tensors)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return True
    stack = [code]
    while stack:
        c = stack.pop()
        if "torch" in c.co_names or "torch" in c.co_freevars:
            return True
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            v = cell.cell_contents
        except ValueError:
            continue
        if getattr(v, "__module__", "") and str(getattr(v, "__module__", "")).startswith("torch"):
            return True
    return False


def run(fn, *args, seed=None, **kwargs):
    """("ok", result) or ("err", exception) of one call, warnings silenced; both libraries seeded alike first
    when ``seed`` is given (onion draws PyTorch's CPU stream)."""
    if seed is not None:
        torch.manual_seed(seed)
        onion.manual_seed(seed)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return "ok", fn(*args, **kwargs)
    except Unconvertible:
        raise
    except Exception as e:  # noqa: BLE001 - the outcome is compared with PyTorch's
        return "err", e
