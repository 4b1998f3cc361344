"""Binding Python calls to operator overloads, as torch's PythonArgParser does.

Each public function (``onion.add``, ``Tensor.add``) has a list of signatures
built once from the schemas; a call tries them in order (Tensor overloads
before Scalar ones) and dispatches the first that binds.  Generated bindings
only come here when their specialised fast path does not apply.
"""
from __future__ import annotations

import numbers

import numpy as np

from ..core import dtype as _dt
from ..core.device import CPU as _CPU, canonical as _canonical, device as _device
from ..core.generator import Generator as _Generator
from ..core.memory_format import memory_format as _memory_format
from ..core.tensor import Tensor
from ..dispatch.arguments import REQUIRED, python_default
from ..aten.tensor_new import scalar_to_tensor
from .return_types import for_schema

# torch lets Python numbers stand for Tensor arguments only for these functions
ALLOW_NUMBERS_AS_TENSORS = frozenset({
    "add", "add_", "div", "div_", "mul", "mul_", "sub", "sub_", "true_divide", "true_divide_",
    "to", "_to_copy", "copy_", "floor_divide", "floor_divide_"})

# overloads PyTorch does not bind in Python (a Python number goes to the Tensor overload instead)
HIDDEN_IN_PYTHON = frozenset(f"aten::{n}.{o}" for n in ("add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_")
                             for o in ("Scalar", "Scalar_mode"))

_TYPE_NAMES = {"Scalar": "Number", "SymInt": "int", "ScalarType": "dtype", "Device": "Device",
               "MemoryFormat": "memory_format", "Layout": "layout", "Generator": "torch.Generator"}


INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1
# a Python int a Scalar argument can hold: int64, or uint64 above it (PyTorch's unpacking)
SCALAR_INT_MIN, SCALAR_INT_END = -(2 ** 63), 2 ** 64


class _NoMatch(Exception):
    """The value does not fit this signature (another overload may take it).  ``param`` names the
    parameter that refused it, for the error of a name with a single signature."""

    def __init__(self, param=None, value=None):
        self.param = param
        self.value = value
        self.sig = None


class BadArgument(Exception):
    """The value has the parameter's type but cannot be unpacked (an int beyond int64): PyTorch raises
    for it at once, with its own exception type, instead of trying the next overload."""

    def __init__(self, exc_type, text):
        self.exc_type = exc_type
        self.text = text


def _checked_int(v, param, pos=None) -> int:
    i = int(v)
    if INT64_MIN <= i <= INT64_MAX:
        return i
    if pos is None:
        raise BadArgument(ValueError, f"argument '{param.name}': {i} does not fit in int64 "
                                      "(Overflow when unpacking long long)")
    raise BadArgument(TypeError, f"argument '{param.name}' failed to unpack the object at pos {pos} with error "
                                 f"\"Overflow when unpacking long long\" ({i} does not fit in int64)")


def _scalar_value(v, param):
    """A Python number for a Scalar argument, or _NoMatch; ints must fit int64 or uint64."""
    if isinstance(v, np.bool_):
        return float(v)     # PyTorch unpacks a NumPy bool as a double (t_bool + np.True_ is float32)
    if isinstance(v, numbers.Number) and not isinstance(v, Tensor):
        if isinstance(v, numbers.Integral) and not isinstance(v, bool) and \
                not SCALAR_INT_MIN <= int(v) < SCALAR_INT_END:
            raise BadArgument(OverflowError, f"argument '{param.name}': int {int(v)} is too big to convert to a "
                                             "Scalar (it must fit in int64 or uint64)")
        return v
    raise _NoMatch(param, v)


def _is_int(v) -> bool:
    tv = type(v)
    if tv is int:               # the common case, before the ABC check (isinstance of numbers.Integral is slow)
        return True
    if tv is bool:
        return False
    return isinstance(v, numbers.Integral) or \
        (isinstance(v, Tensor) and v._impl.dtype.category == 1 and v._impl._array.ndim == 0)


def small_ints(values, _int=int, _lo=INT64_MIN, _hi=INT64_MAX) -> bool:
    """Every value a Python int within int64: the generated bindings' test for a size list they may pass on
    as it is (a loop: cheaper than ``all()`` over a generator on the two or three sizes calls pass; the
    defaults make the names it reads locals)."""
    for i in values:
        if type(i) is not _int or not _lo <= i <= _hi:
            return False
    return True


def plain_numbers(args, kwargs, names, defaults, nullable):
    """The values of a binding's Scalar parameters ``names`` when every one given is a plain Python number
    (a float, or an int within int64), positionally then by name, the defaults filled in: what the
    generated fast path of ``t.clamp(min=0)`` passes on as it is.  None for anything else (a tensor, a
    bool, a bigger int, an unknown or repeated keyword, a None where the parameter takes none), which
    takes the parser's road to its overload or its error."""
    n = len(args)
    if n > len(names):
        return None
    if kwargs:
        vals = [*args, *defaults[n:]]
        for k, v in kwargs.items():
            if k not in names:
                return None
            i = names.index(k)
            if i < n:
                return None
            vals[i] = v
    else:
        vals = args + defaults[n:]      # (tuples: no list made)
    for v, null in zip(vals, nullable):
        tv = type(v)
        if tv is float or (tv is int and INT64_MIN <= v <= INT64_MAX) or (v is None and null):
            continue
        return None
    return vals


def _is_int_list(v) -> bool:
    """An int list as PyTorch's parser tells one: the first element an int, later ones may also be bools
    (``t.view(9, True)`` is taken, ``t.view(True, 9)`` is not)."""
    for x in v:                 # plain ints (the common case): no generator, no ABC check
        if type(x) is not int:
            break
    else:
        return True
    return not v or (_is_int(v[0]) and all(_is_int(x) or isinstance(x, (bool, np.bool_)) for x in v[1:]))


def _type_text(arg) -> str:
    t = arg.type
    base = _TYPE_NAMES.get(t.base, t.base)
    if t.is_list:
        if t.base in ("int", "SymInt"):
            return "tuple of ints"
        return f"tuple of {base}s"
    return base


_MISS = object()        # a quick converter's "this value cannot bind here" (``convert`` would raise for it)


def _quick_converter(p):
    """``p.convert`` preceded by the test of the value a call usually passes (a Tensor for a Tensor, an int
    within int64 for an int, ...), which it returns as it is: what ``convert`` would return for it, without
    walking the general chain.  Anything else (None, a subclass, a NumPy number, an error) goes to ``convert``."""
    t = p.arg.type
    base = t.base
    general = p.convert
    if t.is_list:
        if base == "Tensor":
            def tensor_list(v):
                tv = type(v)
                if tv is list or tv is tuple:
                    for x in v:
                        if type(x) is not Tensor:
                            return general(v)
                    return list(v)
                return general(v)
            return tensor_list
        if base not in ("int", "SymInt"):
            return general
        n = t.list_size or 1

        def int_list(v):
            tv = type(v)
            if (tv is tuple or tv is list) and small_ints(v):
                return tuple(v)
            if tv is int and INT64_MIN <= v <= INT64_MAX:
                return (v,) * n
            return general(v)
        return int_list
    if base == "Tensor":
        if p.allow_number:
            def tensor_or_number(v):
                return v if type(v) is Tensor else general(v)
            return tensor_or_number

        def tensor(v):
            tv = type(v)
            if tv is Tensor:
                return v
            if tv is float or tv is int or tv is bool or tv is str:   # (where(c, x, 0.0): the Scalar overload's)
                return _MISS
            return general(v)
        return tensor
    if base in ("int", "SymInt"):
        def int_(v):
            if type(v) is int and INT64_MIN <= v <= INT64_MAX:
                return v
            return _MISS if type(v) is float else general(v)
        return int_
    if base == "bool":
        def bool_(v):
            return v if v is True or v is False else general(v)
        return bool_
    if base == "float":
        def float_(v):
            return v if type(v) is float else general(v)
        return float_
    if base == "Scalar":
        def scalar(v):
            tv = type(v)
            if tv is float or (tv is int and SCALAR_INT_MIN <= v < SCALAR_INT_END):
                return v
            if tv is Tensor and (v._impl._array.ndim or v._impl.requires_grad):
                return _MISS        # (only a 0-d tensor without grad stands for a number)
            return general(v)
        return scalar
    if base == "ScalarType":
        def scalar_type(v):
            return v if type(v) is _dt.dtype else general(v)
        return scalar_type
    if base == "str":
        def str_(v):
            return v if type(v) is str else general(v)
        return str_
    return general


class Param:
    __slots__ = ("name", "arg", "index", "default", "kwarg_only", "allow_number", "varargs", "quick", "pos_index")

    def __init__(self, arg, index, allow_number, pyname):
        self.name = pyname
        self.arg = arg
        self.index = index
        self.default = python_default(arg)
        self.kwarg_only = arg.kwarg_only
        self.allow_number = allow_number
        self.varargs = False
        self.quick = _quick_converter(self)     # what ``bind`` calls
        self.pos_index = 1 << 30                # the position it binds (set by PySignature for positional ones)

    def convert(self, v):
        t = self.arg.type
        base = t.base
        if v is None:
            if t.optional or (self.default is None):
                return None
            if t.is_list and base in ("int", "SymInt") and isinstance(self.default, (list, tuple)):
                return tuple(self.default)      # amax(t, dim=None): PyTorch reads None as the default
            raise _NoMatch(self, v)
        if base == "Tensor":
            if t.is_list:
                if isinstance(v, (list, tuple)) and all(isinstance(x, Tensor) or (x is None and t.elem_optional)
                                                        for x in v):
                    return list(v)
                raise _NoMatch(self, v)
            if isinstance(v, Tensor):
                return v
            if self.allow_number and isinstance(v, (numbers.Number, np.bool_)):
                return scalar_to_tensor(_scalar_value(v, self))
            raise _NoMatch(self, v)
        if t.is_list:
            if base in ("int", "SymInt"):
                if _is_int(v):
                    return (_checked_int(v, self, 1),) * (t.list_size or 1)
                if isinstance(v, (list, tuple)) and _is_int_list(v):
                    if small_ints(v):       # plain ints within int64: nothing to convert
                        return tuple(v)
                    return tuple(_checked_int(x, self, i + 1) for i, x in enumerate(v))
                raise _NoMatch(self, v)
            if isinstance(v, (list, tuple)):
                if base == "Scalar" and any(isinstance(x, Tensor) for x in v):
                    raise _NoMatch(self, v)     # Scalar[] holds numbers: a list of tensors binds Tensor[] (gradient)
                return list(v)
            raise _NoMatch(self, v)
        if base in ("int", "SymInt"):
            if _is_int(v):
                return _checked_int(v, self)
            raise _NoMatch(self, v)
        if base == "float":
            if isinstance(v, numbers.Real) and not isinstance(v, bool):
                return float(v)
            raise _NoMatch(self, v)
        if base == "bool":
            if isinstance(v, (bool, np.bool_)):
                return bool(v)
            raise _NoMatch(self, v)
        if base == "Scalar":
            if isinstance(v, Tensor) and v._impl._array.ndim == 0 and not v._impl.requires_grad:
                if v._impl.device.type == "meta":   # no value to read: another signature must take it
                    raise _NoMatch(self, v)
                return v.item()
            return _scalar_value(v, self)
        if base == "str":
            if isinstance(v, str):
                return v
            raise _NoMatch(self, v)
        if base == "ScalarType":
            if isinstance(v, _dt.dtype):
                return v
            if v is float:
                return _dt.float64
            if v is int:
                return _dt.int64
            if v is bool:
                return _dt.bool
            if v is complex:
                return _dt.complex128
            raise _NoMatch(self, v)
        if base == "Device":
            if isinstance(v, (_device, str)):
                return _canonical(v)
            if _is_int(v):
                return _canonical(_device("cuda", int(v)))
            raise _NoMatch(self, v)
        if base == "MemoryFormat":
            if isinstance(v, _memory_format):    # kernels take the format's name
                return v.name
            raise _NoMatch(self, v)
        if base == "Generator":
            if isinstance(v, _Generator):
                return v
            raise _NoMatch(self, v)
        return v


class PySignature:
    """One overload as Python sees it (``self`` dropped for methods; ``out`` as keyword)."""

    def __init__(self, handle, name, method: bool, python_extras=(), entry=None):
        self.handle = handle
        # the generated operator entry (operators.py) when there is one: the same dispatch as ``handle.call``,
        # with the keyset computed by code written for this schema instead of a walk over its arguments
        self.entry = entry if entry is not None else handle.call
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
        for k, p in enumerate(self.positional):
            p.pos_index = k
        self.n_pos = len(self.positional)
        self.by_name = {p.name: p for p in self.params}
        if self.positional and self.positional[0].arg.type.is_list and \
                self.positional[0].arg.type.base in ("int", "SymInt"):
            self.positional[0].varargs = True
        self.varargs = bool(self.positional) and self.positional[0].varargs
        # what ``bind`` starts from: every default in place (a list default is copied per call), the required
        # parameters then checked by position
        self.template = [REQUIRED] * self.n_schema
        self.list_defaults = []
        self.required = []
        for p in self.params:
            if p.default is REQUIRED:
                self.required.append(p.index)
            else:
                self.template[p.index] = p.default
                if isinstance(p.default, list):
                    self.list_defaults.append(p.index)
        self.is_out = any(p.arg.is_out for p in self.params)
        outs = [p for p in self.params if p.arg.is_out]
        self.out_params = outs if len(outs) > 1 else None    # out=(values, indices) fills several
        self.wrap = for_schema(self.schema)                  # torch.return_types.max(values=, indices=)
        rets = self.schema.returns
        if self.wrap is None and len(rets) == 1 and rets[0].type.is_list:
            self.wrap = tuple                                # a Tensor[] comes back as a tuple (split, unbind)
        self.has_options = any(a.name == "device" for a in args) and any(a.name == "dtype" for a in args)
        # the options PyTorch's binding fills when not given: pin_memory=False, and for a factory without
        # tensor arguments device= the default device (what a mode then sees)
        names = [a.name for a in args]
        self.fill_pin = names.index("pin_memory") if self.has_options and "pin_memory" in names else None
        self.fill_device = names.index("device") if self.has_options and not any(
            a.type.is_tensor_like for a in args) else None
        if self.fill_pin is not None or self.fill_device is not None:
            self.bind = self._bind_filling      # only these signatures pay for the filling
        self.extras = set(python_extras)
        if self.has_options:
            self.extras.add("requires_grad")
        # every keyword this signature can bind: a call naming another is refused without trying
        self.keywords = frozenset(self.by_name) | frozenset(self.extras) | ({"out"} if self.is_out else frozenset())

    def bind(self, args, kwargs, self_tensor=None, explain=False):
        """The schema's values for this call, and the Python-only keywords given; None when a value cannot bind
        here (another overload may take the call).  ``explain``: raise ``_NoMatch`` saying which value instead
        (the error path), by the general conversions alone."""
        values = self.template.copy()
        for i in self.list_defaults:
            values[i] = list(values[i])
        if self.method:
            values[self.self_index] = self_tensor
        pos = self.positional
        n = len(args)
        if self.varargs and n > 1 and (len(pos) == 1 or n > len(pos)) and _is_int_list(args):
            args = (tuple(args),)
            n = 1
        if n > len(pos):
            raise _NoMatch
        for p, v in zip(pos, args):
            r = p.convert(v) if explain else p.quick(v)
            if r is _MISS:
                return None
            values[p.index] = r
        extra = None
        if kwargs:
            extra = {}
            for k, v in kwargs.items():
                p = self.by_name.get(k)
                if p is None and k == "out" and self.out_params:
                    self._bind_outs(values, v)
                    continue
                if p is None:
                    if k in self.extras:
                        if k == "requires_grad" and not isinstance(v, bool) and v is not None:
                            raise _NoMatch(_ExtraParam(k, "bool"), v)
                        extra[k] = v
                        continue
                    raise _NoMatch
                if p.pos_index < n:         # given by position too
                    raise _NoMatch
                r = p.convert(v) if explain else p.quick(v)
                if r is _MISS:
                    return None
                values[p.index] = r
        for i in self.required:
            if values[i] is REQUIRED:
                raise _NoMatch
        return values, extra

    def _bind_filling(self, args, kwargs, self_tensor=None, explain=False):
        """``bind`` for a signature with tensor options: the options PyTorch's binding fills, filled."""
        bound = PySignature.bind(self, args, kwargs, self_tensor, explain)
        if bound is None:
            return None
        values, extra = bound
        if self.fill_pin is not None and values[self.fill_pin] is None:
            values[self.fill_pin] = False
        if self.fill_device is not None and values[self.fill_device] is None:
            values[self.fill_device] = _CPU
        return values, extra

    def _bind_outs(self, values, v) -> None:
        """``out=(a, b)`` for an operator with several out arguments: one tensor each, in order."""
        outs = self.out_params
        if not isinstance(v, (tuple, list)) or not all(isinstance(t, Tensor) for t in v):
            raise BadArgument(TypeError, f"argument 'out' must be tuple of Tensors, not {type(v).__name__}")
        if len(v) != len(outs):
            raise BadArgument(TypeError, f"expected tuple of {len(outs)} elements but got {len(v)}")
        for p, t in zip(outs, v):
            values[p.index] = t

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


class _ExtraParam:
    """A Python-only keyword (``requires_grad``) as a parameter, for error messages."""

    def __init__(self, name, type_text):
        self.name = name
        self.type_text = type_text
        self.kwarg_only = True


def _describe_got(args, kwargs) -> str:
    def tn(v):
        if isinstance(v, Tensor):
            return "Tensor"
        if isinstance(v, (list, tuple)):
            return f"{type(v).__name__} of [{', '.join(tn(x) for x in v)}]"
        return type(v).__name__
    parts = [tn(a) for a in args] + [f"{k}={tn(v)}" for k, v in kwargs.items()]
    return "(" + ", ".join(parts) + ")"


def _no_torch_function(args, kwargs, self_tensor) -> bool:
    return False


# the __torch_function__ hooks, installed by onion.modes.torch_function when onion loads (a layer above this one);
# ``_tf_active`` turns true once a Tensor subclass is defined or a torch function mode pushed, so that until
# then a call on the slow path pays one global read for them
_tf_active = False
_tf_wants = _no_torch_function
_tf_dispatch = None
_TF_PROCEED = None


class PyFunction:
    """All signatures of one Python-visible name; ``call`` binds and dispatches."""

    def __init__(self, name: str, method: bool = False):
        self.name = name
        self.method = method
        self._pending: list = []                 # (handle, extras) until the first slow-path call
        self._signatures: list[PySignature] | None = None

    def add(self, handle, entry=None, python_extras=()):
        """One overload: its handle and, from generated code, its operator entry (``_ops.add_Tensor``)."""
        self._pending.append((handle, python_extras, entry))
        self._signatures = None

    def finish(self):
        return self

    def _position(self, p) -> int:
        sig = next(s for s in self.signatures if p in s.params)
        return sig.positional.index(p) + 1 if p in sig.positional else 0

    @property
    def signatures(self) -> list:
        """Built on first use: most calls take a generated fast path and never need them, and building
        them for every name would cost import time."""
        if self._signatures is None:
            sigs = [PySignature(h, self.name, self.method, extras, entry) for h, extras, entry in self._pending]
            sigs.sort(key=lambda sig: sum(1 for p in sig.positional if p.arg.type.base == "Scalar"))
            self._by_out = ([s for s in sigs if not s.is_out], [s for s in sigs if s.is_out])
            self._signatures = sigs
        return self._signatures

    def call(self, args, kwargs, self_tensor=None):
        if _tf_active and _tf_wants(args, kwargs, self_tensor):     # an override or a mode may take the call
            result = _tf_dispatch(self, args, kwargs, self_tensor)
            if result is not _TF_PROCEED:
                return result
        if self.method and not isinstance(self_tensor, Tensor):
            # ``Tensor.add(1, t)``: PyTorch's methods are descriptors of TensorBase
            raise TypeError(f"descriptor '{self.name}' for 'torch._C.TensorBase' objects doesn't apply to a "
                            f"'{type(self_tensor).__name__}' object")
        out = None
        if kwargs:
            out = kwargs.get("out", None)
            if out is None and "out" in kwargs:
                kwargs = {k: v for k, v in kwargs.items() if k != "out"}
        if self._signatures is None:
            self.signatures
        n = len(args)
        for sig in self._by_out[out is not None]:
            if n > sig.n_pos and not sig.varargs:
                continue        # more arguments than it has places for (bind would refuse them)
            if kwargs and not sig.keywords.issuperset(kwargs):
                continue        # a keyword it has not: refused without binding (the error below says why)
            try:
                bound = sig.bind(args, kwargs, self_tensor)
            except (_NoMatch, BadArgument):
                # another overload may still bind (max(x, out=t) is max.unary_out, not max.dim_max's pair)
                continue
            if bound is None:
                continue
            values, extra = bound
            result = sig.entry(*values)
            if sig.wrap is not None:
                return sig.wrap(result)
            if extra and extra.get("requires_grad"):
                result.requires_grad_(True)
            return result
        kw = kwargs or {}
        if _tf_dispatch is not None:    # an object that is no tensor but defines __torch_function__ (never binds)
            result = _tf_dispatch(self, args, kwargs, self_tensor)
            if result is not _TF_PROCEED:
                return result
        refusals, bad = self._refusals(args, kw, self_tensor, out)
        if bad is not None:
            raise bad.exc_type(f"{self.name}(): {bad.text}") from None
        raise TypeError(self.error(args, kwargs, refusals))

    def _refusals(self, args, kwargs, self_tensor, out):
        """Why each signature refused the call, once none bound it: every one bound again in order, so the error
        path alone pays for the refusals (and for the signatures skipped for their keywords)."""
        refusals = []
        bad = None
        for sig in self.signatures:
            if sig.is_out != (out is not None):
                continue
            try:
                sig.bind(args, kwargs, self_tensor, True)
            except _NoMatch as e:
                e.sig = sig
                refusals.append(e)
            except BadArgument as e:
                bad = bad or e
        return refusals, bad

    def error(self, args, kwargs, refusals=()) -> str:
        # as PyTorch: a name with one signature (out= variants merged) says which argument is wrong; the
        # Scalar twins PyTorch does not bind in Python (add.Scalar...) do not count
        shown = [r for r in refusals if r.sig is None or str(r.sig.schema.name) + "." +
                 r.sig.schema.overload_name not in HIDDEN_IN_PYTHON]
        if len(shown) == 1 and shown[0].param is not None:
            p, v = shown[0].param, shown[0].value
            where = "" if p.kwarg_only else f" (position {self._position(p)})"
            want = p.type_text if isinstance(p, _ExtraParam) else _type_text(p.arg)
            return f"{self.name}(): argument '{p.name}'{where} must be {want}, not {type(v).__name__}"
        sigs = "\n".join(f" * {s.describe()}" for s in self.signatures)
        got = _describe_got(args, kwargs or {})
        return (f"{self.name}() received an invalid combination of arguments - got {got}, "
                f"but expected one of:\n{sigs}")
