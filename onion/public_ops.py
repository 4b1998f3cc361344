"""Small public functions that are not operators in PyTorch either."""
from __future__ import annotations

import numbers

from .core.promotion import WRAPPED, result_type_of, scalar_dtype
from .core.tensor import Tensor
from .aten.iterator import priority


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def numel(t) -> int:
    return t.numel()


def result_type(tensor1, tensor2):
    """The dtype an elementwise op on these operands would give (PyTorch's rules)."""
    ops = []
    for x in (tensor1, tensor2):
        if isinstance(x, Tensor):
            ops.append((x._impl.dtype, priority(x._impl)))
        elif isinstance(x, (numbers.Number, bool)):
            ops.append((scalar_dtype(x), WRAPPED))
        else:
            raise TypeError(f"result_type(): argument must be Tensor or Number, not {type(x).__name__}")
    return result_type_of(tuple(ops))
