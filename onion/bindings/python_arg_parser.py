"""Binding Python calls to operator overloads, as torch's PythonArgParser does.

Each public function (``onion.add``, ``Tensor.add``) has a list of signatures
built once from the schemas; a call tries them in order (Tensor overloads
before Scalar ones) and dispatches the first that binds.  Generated bindings
only come here when their specialised fast path does not apply.
"""
from __future__ import annotations

import numbers

from ..core import dtype as _dt
from ..core.device import canonical as _canonical, device as _device
from ..core.memory_format import memory_format as _memory_format
from ..core.tensor import Tensor
from ..dispatch.arguments import REQUIRED, python_default
from ..aten.tensor_new import scalar_to_tensor

# torch lets Python numbers stand for Tensor arguments only for these functions
ALLOW_NUMBERS_AS_TENSORS = frozenset({
    "add", "add_", "div", "div_", "mul", "mul_", "sub", "sub_", "true_divide", "true_divide_",
    "to", "_to_copy", "copy_", "floor_divide", "floor_divide_"})

_TYPE_NAMES = {"Scalar": "Number", "SymInt": "int", "ScalarType": "dtype", "Device": "Device",
               "MemoryFormat": "memory_format", "Layout": "layout"}


class _NoMatch(Exception):
    pass


def _is_int(v) -> bool:
    return (isinstance(v, numbers.Integral) and not isinstance(v, bool)) or \
        (isinstance(v, Tensor) and v._impl.dtype.category == 1 and v._impl._array.ndim == 0)


def _type_text(arg) -> str:
    t = arg.type
    base = _TYPE_NAMES.get(t.base, t.base)
    if t.is_list:
        if t.base in ("int", "SymInt"):
            return "tuple of ints"
        return f"tuple of {base}s"
    return base


class Param:
    __slots__ = ("name", "arg", "index", "default", "kwarg_only", "allow_number", "varargs")

    def __init__(self, arg, index, allow_number, pyname):
        self.name = pyname
        self.arg = arg
        self.index = index
        self.default = python_default(arg)
        self.kwarg_only = arg.kwarg_only
        self.allow_number = allow_number
        self.varargs = False

    def convert(self, v):
        t = self.arg.type
        base = t.base
        if v is None:
            if t.optional or (self.default is None):
                return None
            raise _NoMatch
        if base == "Tensor":
            if t.is_list:
                if isinstance(v, (list, tuple)) and all(isinstance(x, Tensor) or (x is None and t.elem_optional)
                                                        for x in v):
                    return list(v)
                raise _NoMatch
            if isinstance(v, Tensor):
                return v
            if self.allow_number and isinstance(v, (numbers.Number, bool)):
                return scalar_to_tensor(v)
            raise _NoMatch
        if t.is_list:
            if base in ("int", "SymInt"):
                if _is_int(v):
                    return (int(v),) * (t.list_size or 1)
                if isinstance(v, (list, tuple)) and all(_is_int(x) for x in v):
                    return tuple(int(x) for x in v)
                raise _NoMatch
            if isinstance(v, (list, tuple)):
                return list(v)
            raise _NoMatch
        if base in ("int", "SymInt"):
            if _is_int(v):
                return int(v)
            raise _NoMatch
        if base == "float":
            if isinstance(v, numbers.Real) and not isinstance(v, bool):
                return float(v)
            raise _NoMatch
        if base == "bool":
            if isinstance(v, bool):
                return v
            raise _NoMatch
        if base == "Scalar":
            if isinstance(v, (numbers.Number, bool)) and not isinstance(v, Tensor):
                return v
            if isinstance(v, Tensor) and v._impl._array.ndim == 0 and not v._impl.requires_grad:
                return v.item()
            raise _NoMatch
        if base == "str":
            if isinstance(v, str):
                return v
            raise _NoMatch
        if base == "ScalarType":
            if isinstance(v, _dt.dtype):
                return v
            if v in (float,):
                return _dt.float64
            if v is int:
                return _dt.int64
            if v is bool:
                return _dt.bool
            if v is complex:
                return _dt.complex128
            raise _NoMatch
        if base == "Device":
            if isinstance(v, (_device, str)):
                return _canonical(v)
            if _is_int(v):
                return _canonical(_device("cuda", int(v)))
            raise _NoMatch
        if base == "MemoryFormat":
            if isinstance(v, _memory_format):    # kernels take the format's name
                return v.name
            raise _NoMatch
        return v


class PySignature:
    """One overload as Python sees it (``self`` dropped for methods; ``out`` as keyword)."""

    def __init__(self, handle, name, method: bool, python_extras=()):
        self.handle = handle
        self.schema = handle.schema
        allow = name in ALLOW_NUMBERS_AS_TENSORS
        args = self.schema.arguments
        self.n_schema = len(args)
        self.method = method
        self.self_index = next((i for i, a in enumerate(args) if a.name == "self"), 0)
        self.params = []
        for i, a in enumerate(args):
            pyname = "input" if (a.name == "self" and not method) else a.name
            if method and i == self.self_index:
                continue
            self.params.append(Param(a, i, allow, pyname))
        self.positional = [p for p in self.params if not p.kwarg_only]
        self.by_name = {p.name: p for p in self.params}
        if self.positional and self.positional[0].arg.type.is_list and \
                self.positional[0].arg.type.base in ("int", "SymInt"):
            self.positional[0].varargs = True
        self.is_out = any(p.arg.is_out for p in self.params)
        self.has_options = any(a.name == "device" for a in args) and any(a.name == "dtype" for a in args)
        self.extras = set(python_extras)
        if self.has_options:
            self.extras.add("requires_grad")

    def bind(self, args, kwargs, self_tensor=None):
        values = [REQUIRED] * self.n_schema
        if self.method:
            values[self.self_index] = self_tensor
        pos = self.positional
        if args and pos and pos[0].varargs and len(args) > 1 and (len(pos) == 1 or len(args) > len(pos)) \
                and all(_is_int(a) for a in args):
            args = (tuple(args),)
        if len(args) > len(pos):
            raise _NoMatch
        for p, v in zip(pos, args):
            values[p.index] = p.convert(v)
        extra = {}
        for k, v in kwargs.items():
            p = self.by_name.get(k)
            if p is None:
                if k in self.extras:
                    extra[k] = v
                    continue
                raise _NoMatch
            if values[p.index] is not REQUIRED:
                raise _NoMatch
            values[p.index] = p.convert(v)
        for p in self.params:
            if values[p.index] is REQUIRED:
                if p.default is REQUIRED:
                    raise _NoMatch
                values[p.index] = list(p.default) if isinstance(p.default, list) else p.default
        return values, extra

    def describe(self) -> str:
        parts = []
        star = False
        for p in self.params:
            if p.kwarg_only and not star:
                parts.append("*")
                star = True
            text = f"{_type_text(p.arg)} {p.name}"
            if p.default is not REQUIRED:
                text += f" = {p.arg.default}"
            elif p.arg.is_out:
                text += " = None"
            parts.append(text)
        if "requires_grad" in self.extras:
            if not star:
                parts.append("*")
            parts.append("bool requires_grad = False")
        return "(" + ", ".join(parts) + ")"


def _describe_got(args, kwargs) -> str:
    def tn(v):
        if isinstance(v, Tensor):
            return "Tensor"
        if isinstance(v, (list, tuple)):
            return f"{type(v).__name__} of [{', '.join(tn(x) for x in v)}]"
        return type(v).__name__
    parts = [tn(a) for a in args] + [f"{k}={tn(v)}" for k, v in kwargs.items()]
    return "(" + ", ".join(parts) + ")"


class PyFunction:
    """All signatures of one Python-visible name; ``call`` binds and dispatches."""

    def __init__(self, name: str, method: bool = False):
        self.name = name
        self.method = method
        self._pending: list = []                 # (handle, extras) until the first slow-path call
        self._signatures: list[PySignature] | None = None

    def add(self, handle, python_extras=()):
        self._pending.append((handle, python_extras))
        self._signatures = None

    def finish(self):
        return self

    @property
    def signatures(self) -> list:
        """Built on first use: most calls take a generated fast path and never need them, and building
        them for every name would cost import time."""
        if self._signatures is None:
            sigs = [PySignature(h, self.name, self.method, extras) for h, extras in self._pending]
            sigs.sort(key=lambda sig: sum(1 for p in sig.positional if p.arg.type.base == "Scalar"))
            self._signatures = sigs
        return self._signatures

    def call(self, args, kwargs, self_tensor=None):
        out = kwargs.get("out", None) if kwargs else None
        if out is None and kwargs and "out" in kwargs:
            kwargs = {k: v for k, v in kwargs.items() if k != "out"}
        for sig in self.signatures:
            if sig.is_out != (out is not None):
                continue
            try:
                values, extra = sig.bind(args, kwargs or {}, self_tensor)
            except _NoMatch:
                continue
            result = sig.handle.call(*values)
            rg = extra.get("requires_grad")
            if rg:
                result.requires_grad_(True)
            return result
        raise TypeError(self.error(args, kwargs))

    def error(self, args, kwargs) -> str:
        sigs = "\n".join(f" * {s.describe()}" for s in self.signatures)
        got = _describe_got(args, kwargs or {})
        return (f"{self.name}() received an invalid combination of arguments - got {got}, "
                f"but expected one of:\n{sigs}")
