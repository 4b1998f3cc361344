"""Turning Python ``(args, kwargs)`` into a schema's full positional tuple and back.

This is the generic (boxed) path used by ``OpOverload.__call__`` and by
Python modes; generated bindings do the same work specialised per operator.
"""
from __future__ import annotations

import numbers

from ..core import dtype as _dt
from ..core.device import canonical as _canonical_device, device as _device
from ..core.memory_format import memory_format as _memory_format
from ..core.tensor import Tensor

# set by the aten layer: makes a wrapped-number 0-dim tensor from a Python scalar
SCALAR_TO_TENSOR = [None]

_SYMBOLS = {
    # ScalarType names used as defaults in PyTorch's schemas
    "long": _dt.int64, "int": _dt.int32, "float": _dt.float32, "double": _dt.float64,
    "half": _dt.float16, "bool": _dt.bool, "bfloat16": _dt.bfloat16,
    # reductions
    "Mean": 1, "Sum": 2, "None": 0,
    # layouts / memory formats / qschemes stay as names
}


class _Missing:
    def __repr__(self):
        return "<required>"


REQUIRED = _Missing()


def python_default(arg):
    """The Python value of a schema argument's default (REQUIRED if none)."""
    if arg.default is None:
        return REQUIRED
    value = arg.default_value
    name = getattr(value, "name", None)
    if name is not None and not isinstance(value, (str, int, float)):
        if name in _SYMBOLS:
            return _SYMBOLS[name]
        return _dt.DTYPE_BY_NAME.get(name, name)      # ``ScalarType f=float32`` (custom operators' schemas)
    return value


def type_error(opname: str, arg, value) -> TypeError:
    return TypeError(f"{opname}() Expected a value of type '{arg.type}' for argument '{arg.name}' "
                     f"but instead found type '{type(value).__name__}'.")


def _is_int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool) or \
        (isinstance(v, Tensor) and v.dtype.category == 1 and v.numel() == 1 and v.dim() == 0)


def convert(opname: str, arg, value):
    """Check ``value`` against the argument's type and convert it (numbers to tensors, ...)."""
    t = arg.type
    if value is None:
        if t.optional or t.base in ("Layout", "MemoryFormat", "Generator"):
            return None
        raise type_error(opname, arg, value)
    base = t.base
    if base == "Tensor":
        if t.is_list:
            if isinstance(value, Tensor) or not isinstance(value, (list, tuple)):
                raise type_error(opname, arg, value)
            out = []
            for v in value:
                if v is None and getattr(t, "elem_optional", False):
                    out.append(None)
                elif isinstance(v, Tensor):
                    out.append(v)
                else:
                    raise type_error(opname, arg, value)
            return out
        if isinstance(value, Tensor):
            return value
        if isinstance(value, (bool, numbers.Number)) and SCALAR_TO_TENSOR[0] is not None:
            return SCALAR_TO_TENSOR[0](value)
        raise type_error(opname, arg, value)
    if t.is_list:
        if base in ("int", "SymInt"):
            if isinstance(value, (bool,)):
                raise type_error(opname, arg, value)
            if _is_int(value) and t.list_size is not None:
                return [int(value)] * t.list_size
            if _is_int(value):
                return [int(value)]
            if isinstance(value, (list, tuple)) and all(_is_int(v) for v in value):
                return [int(v) for v in value]
            raise type_error(opname, arg, value)
        if base == "float":
            if isinstance(value, (list, tuple)) and all(isinstance(v, numbers.Real) for v in value):
                return [float(v) for v in value]
            raise type_error(opname, arg, value)
        if base == "bool":
            if isinstance(value, (list, tuple)) and all(isinstance(v, bool) for v in value):
                return list(value)
            raise type_error(opname, arg, value)
        if isinstance(value, (list, tuple)):
            return list(value)
        raise type_error(opname, arg, value)
    if base in ("int", "SymInt"):
        if _is_int(value):
            return int(value)
        raise type_error(opname, arg, value)
    if base == "float":
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, Tensor) and value.numel() == 1 and value.dim() == 0:
            return float(value.item())
        raise type_error(opname, arg, value)
    if base == "bool":
        if isinstance(value, bool) or (hasattr(value, "dtype") and type(value).__name__ == "bool_"):
            return bool(value)
        raise type_error(opname, arg, value)
    if base == "str":
        if isinstance(value, str):
            return value
        raise type_error(opname, arg, value)
    if base == "Scalar":
        if isinstance(value, (bool, numbers.Number)):
            return value
        if isinstance(value, Tensor) and value.numel() == 1:
            return value.item()
        raise type_error(opname, arg, value)
    if base == "ScalarType":
        if isinstance(value, _dt.dtype):
            return value
        raise type_error(opname, arg, value)
    if base == "Device":
        if isinstance(value, (_device, str)):
            return _canonical_device(value)
        if _is_int(value):
            return _canonical_device(_device("cuda", int(value)))
        raise type_error(opname, arg, value)
    if base == "Dimname":
        if isinstance(value, str):
            return value
        raise type_error(opname, arg, value)
    if base == "MemoryFormat":
        if isinstance(value, _memory_format):   # kernels take the format's name (as the bindings pass it)
            return value.name
        if isinstance(value, str):
            return value
        raise type_error(opname, arg, value)
    return value


_PASSES = {("Tensor", False): (Tensor,), ("int", False): (int,), ("SymInt", False): (int,),
           ("float", False): (float,), ("bool", False): (bool,), ("str", False): (str,),
           ("Scalar", False): (int, float, bool, complex), ("ScalarType", False): (_dt.dtype,)}


class ArgumentSpec:
    """Per-overload facts for normalizing calls, computed once from the schema."""

    def __init__(self, schema):
        self.schema = schema
        self.opname = schema.name.split("::")[-1] + ("." + schema.overload_name if schema.overload_name else "")
        self.args = schema.arguments
        self.names = [a.name for a in self.args]
        self.index = {a.name: i for i, a in enumerate(self.args)}
        self.num_positional = sum(1 for a in self.args if not a.kwarg_only)
        self.defaults = [python_default(a) for a in self.args]
        # the filler for arguments not passed: the default itself, or REQUIRED where there is none
        self.missing = tuple(self.defaults)
        self.unset = (REQUIRED,) * len(self.args)
        # per argument, the value types ``convert`` would return unchanged (checked first, to skip the call)
        self.passes = tuple(_PASSES.get((a.type.base, a.type.is_list), ()) for a in self.args)

    def normalize(self, args, kwargs) -> tuple:
        """Full positional tuple, or raise TypeError saying what is wrong."""
        n = len(args)
        if n > self.num_positional:
            raise TypeError(f"{self.opname}() expected at most {self.num_positional} positional argument(s) "
                            f"but received {n} argument(s). Declaration: {self.schema}")
        values = list(args)
        passes = self.passes
        if kwargs:
            values.extend(self.unset[n:])
            for k, v in kwargs.items():
                i = self.index.get(k)
                if i is None:
                    raise TypeError(f"{self.opname}() got an unexpected keyword argument '{k}'. "
                                    f"Declaration: {self.schema}")
                if i < n:
                    raise TypeError(f"{self.opname}() got multiple values for argument '{k}'. "
                                    f"Declaration: {self.schema}")
                values[i] = v
            for i, v in enumerate(values):
                if v is REQUIRED:
                    d = self.defaults[i]
                    if d is REQUIRED:
                        raise TypeError(f"{self.opname}() is missing value for argument '{self.args[i].name}'. "
                                        f"Declaration: {self.schema}")
                    values[i] = list(d) if isinstance(d, list) else d
                elif type(v) not in passes[i]:
                    values[i] = convert(self.opname, self.args[i], v)
            return tuple(values)
        values.extend(self.missing[n:])
        for i in range(n):
            if type(values[i]) not in passes[i]:
                values[i] = convert(self.opname, self.args[i], values[i])
        for i in range(n, len(values)):
            v = values[i]
            if v is REQUIRED:
                raise TypeError(f"{self.opname}() is missing value for argument '{self.args[i].name}'. "
                                f"Declaration: {self.schema}")
            if type(v) is list:
                values[i] = list(v)
        return tuple(values)

    def unnormalize(self, values) -> tuple:
        """Positional args (trailing defaults dropped) and kwarg-only args that differ from defaults."""
        pos = list(values[: self.num_positional])
        while pos and self.defaults[len(pos) - 1] is not REQUIRED and _same(pos[-1], self.defaults[len(pos) - 1]):
            pos.pop()
        kwargs = {}
        for i in range(self.num_positional, len(self.args)):
            d = self.defaults[i]
            v = values[i]
            if d is REQUIRED or not _same(v, d):
                kwargs[self.names[i]] = v
        return tuple(pos), kwargs


def _same(a, b) -> bool:
    if a is b:
        return True
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return False
    try:
        return type(a) is type(b) and a == b or (isinstance(a, (list, tuple)) and list(a) == list(b))
    except Exception:  # noqa: BLE001 - odd objects are simply "not equal"
        return False
