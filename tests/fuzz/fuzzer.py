"""The bad-input fuzzer: known-good calls of every public operator, one argument swapped for a bad value.

Shared by the fuzz tier (tests/fuzz/test_fuzz_bad_inputs.py) and the report
(benchmarks/fuzz_report.py).  Everything here is data first: a call is a frozen
``Call`` of value descriptors (``T`` for a tensor, ``Lit`` for a Python value,
``DT`` for a dtype...), built once, then materialised afresh for each library, so
onion and PyTorch get equal, independent arguments and a call that writes cannot
leak into the next one.

The good calls come from the operators' schemas (the signatures the argument
parser holds), probed against both libraries; only what a schema cannot say
(Python-only functions, indexing, ``to``) is written by hand in ``HAND_CALLS``.
A new operator joins by being public: nothing here names it.

Each bad call is judged against PyTorch: where torch raises, onion must raise the
same exception type; whatever onion raises must not be an internal exception
(one raised by NumPy or by the interpreter inside onion, not by a ``raise`` of
onion's); and a call that raises must leave every tensor it was given as it was
(values, geometry, version counter, autograd state).
"""
from __future__ import annotations

import dataclasses
import functools
import linecache
import operator
import os
import traceback
import warnings
from dataclasses import dataclass

import numpy as np

import onion

try:
    import torch
except ImportError:     # the fuzz tier is an oracle tier: callers skip without torch
    torch = None

# ----------------------------------------------------------------------------- value descriptors


@dataclass(frozen=True)
class T:
    """A tensor: shape, dtype and how it is made (``layout``)."""
    shape: tuple
    dtype: str = "float32"
    layout: str = "plain"      # plain | leaf_rg | nonleaf | expanded | transposed | meta | index (values 0, 1)

    def __repr__(self):
        extra = "" if self.dtype == "float32" else f",{self.dtype}"
        lay = "" if self.layout == "plain" else f",{self.layout}"
        return f"T{self.shape}{extra}{lay}".replace(",)", ")").replace("T()", "T[]")


@dataclass(frozen=True)
class Lit:
    """A Python value passed as it is (numbers, strings, None, tuples of ints...)."""
    value: object

    def __repr__(self):
        v = self.value
        if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 2 ** 31:
            return f"{'-' if v < 0 else ''}2**{(abs(v)).bit_length() - 1}" + ("" if abs(v) == 2 ** ((abs(v)).bit_length() - 1) else "+")
        return repr(v)


@dataclass(frozen=True)
class DT:
    """A dtype of either library, by name."""
    name: str

    def __repr__(self):
        return self.name


@dataclass(frozen=True)
class MF:
    """A memory format of either library, by name."""
    name: str

    def __repr__(self):
        return self.name


@dataclass(frozen=True)
class NP:
    """A fresh NumPy array (what ``from_numpy`` / ``tensor`` take)."""
    shape: tuple
    dtype: str = "float32"

    def __repr__(self):
        return f"np{self.shape}{'' if self.dtype == 'float32' else ',' + self.dtype}"


@dataclass(frozen=True)
class Seq:
    """A list or tuple of descriptors (``Tensor[]``, mixed lists)."""
    items: tuple
    kind: str = "list"

    def __repr__(self):
        inner = ", ".join(map(repr, self.items))
        return f"[{inner}]" if self.kind == "list" else f"({inner}{',' if len(self.items) == 1 else ''})"


@dataclass(frozen=True)
class Obj:
    """An object of no type any operator takes."""

    def __repr__(self):
        return "object()"


@dataclass(frozen=True)
class Call:
    """A call: ``kind`` is ``function`` (``onion.<name>``), ``method`` (``args[0].<name>``) or ``operator``
    (a function of Python's ``operator`` module, so the binary-operator protocol applies)."""
    kind: str
    name: str
    args: tuple = ()
    kwargs: tuple = ()       # ((name, descriptor), ...)

    @property
    def id(self) -> str:
        kw = [f"{k}={v!r}" for k, v in self.kwargs]
        if self.kind == "method":
            return f"{self.args[0]!r}.{self.name}({', '.join([repr(a) for a in self.args[1:]] + kw)})"
        if self.kind == "operator":
            return f"operator.{self.name}({', '.join(repr(a) for a in self.args)})"
        return f"{self.name}({', '.join([repr(a) for a in self.args] + kw)})"

    @property
    def op_name(self) -> str:
        return f"Tensor.{self.name}" if self.kind == "method" else \
            (f"operator.{self.name}" if self.kind == "operator" else self.name)

    def replace(self, where, value) -> "Call":
        if isinstance(where, int):
            args = list(self.args)
            if where == len(args):
                args.append(value)
            else:
                args[where] = value
            return dataclasses.replace(self, args=tuple(args))
        kw = dict(self.kwargs)
        kw[where] = value
        return dataclasses.replace(self, kwargs=tuple(kw.items()))


# ----------------------------------------------------------------------------- materialising

def _data(shape, dtype):
    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
    base = np.arange(n, dtype=np.float64).reshape(shape)
    if dtype == "bool":
        return (base % 2).astype(bool)
    if dtype in ("uint8", "int8", "int16", "int32", "int64"):
        return (base % 7 + 1).astype(dtype)
    if dtype.startswith("complex"):
        return (base * 0.25 + 0.5 + 0.5j).astype(dtype)
    return (base * 0.25 + 0.5).astype("float32" if dtype == "bfloat16" else dtype)


def _tensor(lib, d: T):
    dt = getattr(lib, d.dtype)
    if d.layout == "meta":
        return lib.empty(d.shape, dtype=dt, device="meta")
    if d.layout == "expanded":          # first dimension expanded from size 1
        src = _data((1,) + tuple(d.shape[1:]), d.dtype)
        return lib.tensor(src.tolist(), dtype=dt).expand(*d.shape)
    if d.layout == "transposed":
        src = _data(tuple(d.shape[:-2]) + (d.shape[-1], d.shape[-2]), d.dtype)
        return lib.tensor(src.tolist(), dtype=dt).transpose(-1, -2)
    if d.layout == "index":             # valid indices into any dimension of size >= 2
        n = int(np.prod(d.shape, dtype=np.int64)) if d.shape else 1
        return lib.tensor((np.arange(n) % 2).reshape(d.shape).tolist(), dtype=dt)
    t = lib.tensor(_data(d.shape, d.dtype).tolist(), dtype=dt)
    if d.layout == "leaf_rg":
        t.requires_grad_(True)
    elif d.layout == "nonleaf":
        t = t.requires_grad_(True) * 1
    return t


def materialize(lib, d):
    if isinstance(d, T):
        return _tensor(lib, d)
    if isinstance(d, Lit):
        return d.value
    if isinstance(d, DT):
        return getattr(lib, d.name)
    if isinstance(d, MF):
        return getattr(lib, d.name)
    if isinstance(d, NP):
        return _data(d.shape, d.dtype)
    if isinstance(d, Seq):
        items = [materialize(lib, x) for x in d.items]
        return items if d.kind == "list" else tuple(items)
    if isinstance(d, Obj):
        return object()
    raise TypeError(d)


def _tensors_in(x, lib_tensor, acc):
    if isinstance(x, lib_tensor):
        acc.append(x)
    elif isinstance(x, (list, tuple)):
        for y in x:
            _tensors_in(y, lib_tensor, acc)
    return acc


def invoke(lib, call: Call, args, kwargs):
    if call.kind == "function":
        return getattr(lib, call.name)(*args, **kwargs)
    if call.kind == "method":
        return getattr(args[0], call.name)(*args[1:], **kwargs)
    return getattr(operator, call.name)(*args)


def run(lib, call: Call):
    """('ok', result, args) or ('err', exception, args) with warnings silenced."""
    args = [materialize(lib, a) for a in call.args]
    kwargs = {k: materialize(lib, v) for k, v in call.kwargs}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return "ok", invoke(lib, call, args, kwargs), (args, kwargs)
    except Exception as e:  # noqa: BLE001 - the exception is what is compared
        return "err", e, (args, kwargs)


# ----------------------------------------------------------------------------- snapshots


def _state(t):
    impl = t._impl
    vals = None
    if impl.device.type != "meta":
        try:
            vals = np.array(t.detach()._host_array(), copy=True)
        except Exception:  # noqa: BLE001 - a tensor that cannot be read back compares by metadata only
            vals = None
    return (tuple(t.shape), tuple(t.stride()), t.storage_offset(), str(t.dtype), str(t.device),
            impl.version if not impl._inference else None, bool(t.requires_grad), id(t.grad_fn)), vals


def snapshot(args, kwargs):
    ts = _tensors_in(list(args) + list(kwargs.values()), onion.Tensor, [])
    return [(t, _state(t)) for t in ts]


def changed(snap) -> list:
    """Descriptions of the tensors a call changed."""
    out = []
    for i, (t, (meta, vals)) in enumerate(snap):
        meta2, vals2 = _state(t)
        if meta2 != meta:
            out.append(f"tensor {i}: {meta} -> {meta2}")
        elif vals is not None and not np.array_equal(vals, vals2, equal_nan=vals.dtype.kind in "fc"):
            out.append(f"tensor {i}: values changed")
    return out


# ----------------------------------------------------------------------------- internal exceptions

_INTERNAL_TYPES = (AttributeError, KeyError, MemoryError, ZeroDivisionError, AssertionError, NameError,
                   RecursionError, StopIteration, UnboundLocalError, SystemError)
_NUMPY_DIRS = tuple(os.path.dirname(m.__file__) + os.sep for m in (np,) if getattr(m, "__file__", None))
_ONION_DIR = os.path.dirname(onion.__file__) + os.sep


def leak_reason(e: BaseException, torch_exc=None) -> str | None:
    """Why ``e`` is an internal exception (None if it is one onion raised on purpose).

    Internal: a type a user never gets from PyTorch for a bad argument (AttributeError,
    KeyError, ...) unless torch raised that very type, or any exception whose innermost
    frame is NumPy's, or one the interpreter raised inside onion (the innermost frame in
    onion is not a ``raise`` statement: ``None[0]``, ``int('a')``...)."""
    if isinstance(e, _INTERNAL_TYPES) and not (torch_exc is not None and isinstance(e, type(torch_exc))):
        return f"internal type {type(e).__name__}"
    frames = traceback.extract_tb(e.__traceback__)
    if not frames:
        return None
    last = frames[-1]
    if last.filename.startswith(_NUMPY_DIRS) or "/numpy/" in last.filename or "/ml_dtypes/" in last.filename:
        return f"raised by NumPy ({last.filename.rsplit('/', 2)[-2]}:{last.lineno})"
    if last.filename.startswith(_ONION_DIR):
        if not _is_raise_statement(last.filename, last.lineno):
            return f"raised by the interpreter in {last.filename[len(_ONION_DIR):]}:{last.lineno}: {last.line}"
    return None


def _is_raise_statement(filename, lineno) -> bool:
    # a raise may span lines: look back a few lines for the start of the statement
    for k in range(0, 4):
        line = linecache.getline(filename, lineno - k).strip()
        if line.startswith("raise ") or " raise " in line or line.startswith("raise(") or line == "raise":
            return True
        if k == 0 and line.endswith(")") is False and not line:
            break
    return False


# ----------------------------------------------------------------------------- judging


@dataclass
class Verdict:
    call: Call
    torch_outcome: str          # ok | err
    onion_outcome: str
    torch_exc: str = ""
    onion_exc: str = ""
    same_type: bool = True
    leak: str | None = None
    modified: list = dataclasses.field(default_factory=list)

    @property
    def failed(self) -> bool:
        return bool(self.problems())

    def problems(self) -> list:
        p = []
        if self.torch_outcome == "err" and self.onion_outcome == "ok":
            p.append(f"onion accepts; torch raises {self.torch_exc}")
        elif self.torch_outcome == "err" and not self.same_type:
            p.append(f"onion raises {self.onion_exc}; torch raises {self.torch_exc}")
        if self.leak:
            p.append(f"internal exception leaks: {self.leak}: {self.onion_exc}")
        if self.modified:
            p.append(f"a failing call modified its tensors: {self.modified}")
        return p


def _exc_text(e) -> str:
    msg = str(e).split("\n")[0]
    return f"{type(e).__name__}({msg[:160]!r})"


def judge(call: Call) -> Verdict:
    rt = run(torch, call)
    args = [materialize(onion, a) for a in call.args]
    kwargs = {k: materialize(onion, v) for k, v in call.kwargs}
    snap = snapshot(args, kwargs)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            invoke(onion, call, args, kwargs)
        ro = ("ok", None)
    except Exception as e:  # noqa: BLE001
        ro = ("err", e)
    v = Verdict(call, rt[0], ro[0])
    if rt[0] == "err":
        v.torch_exc = _exc_text(rt[1])
    if ro[0] == "err":
        eo = ro[1]
        v.onion_exc = _exc_text(eo)
        v.leak = leak_reason(eo, rt[1] if rt[0] == "err" else None)
        v.modified = changed(snap)
        if rt[0] == "err":
            v.same_type = isinstance(eo, type(rt[1]))
    return v


# ----------------------------------------------------------------------------- public operators


def public_functions() -> dict:
    """``{name: PyFunction or None}`` for every public ``onion.<name>`` that is an operator binding or a
    hand-written tensor function (None: no schema, the good calls are hand-written)."""
    from onion._generated import python_functions as pf
    out = {}
    for name, fn in sorted(pf.FUNCTIONS.items()):
        if name.startswith("_") or getattr(onion, name, None) is not fn:
            continue
        out[name] = getattr(pf, f"_F_{name}", None)
    for name in ("tensor", "as_tensor", "from_numpy", "numel", "result_type", "is_tensor"):
        out.setdefault(name, None)
    return out


def public_methods() -> dict:
    """``{name: PyFunction or None}`` for the public ``Tensor`` methods (binary operators go through
    ``OPERATORS``)."""
    from onion._generated import tensor_methods as tm
    from onion.bindings.python_variable_methods import EXTRA_METHODS
    out = {}
    for name in sorted(tm.METHODS):
        if name.startswith("_"):
            continue
        out[name] = getattr(tm, f"_M_{name}", None)
    for name, v in EXTRA_METHODS.items():
        if not name.startswith("_") and callable(v) and not isinstance(v, property):
            out.setdefault(name, None)
    return out


# Python's operators on tensors, by the ``operator`` function that applies them
OPERATORS = ("add", "sub", "mul", "truediv", "pow", "matmul", "neg", "abs", "eq", "ne", "lt", "le", "gt", "ge",
             "iadd", "isub", "imul", "itruediv", "ipow", "getitem", "setitem")

# ----------------------------------------------------------------------------- good calls


@dataclass(frozen=True)
class Site:
    """A place in a call that can take a bad value: a position or a keyword, with the parameter's type
    (a schema type such as ``int[]`` or ``Tensor?``, or a hand-written kind such as ``index``)."""
    where: object             # int position or keyword name
    type: str
    optional: bool = False
    role: str = ""            # "" | self_inplace | out | self


@dataclass(frozen=True)
class GoodCall:
    call: Call
    sites: tuple              # Site, ...
    absent: tuple = ()        # Site, ... of optional keywords the call leaves out (bad values are added)


_SHAPES = ((3, 3), (3, 3, 3), (3,), ())
_INT_BY_NAME = {"dim": (0, 1), "dim0": (0,), "dim1": (1,), "dim2": (1,), "index": (1,), "offset": (0,),
                "steps": (4,), "storage_offset": (0,)}
_INTLIST_BY_NAME = {"dims": ((1, 0), (2, 1, 0), (0,)), "dim": ((0,), (1,)), "size": ((3, 3), (9,), (3, 3, 3)),
                    "shape": ((9,), (3, 3), (27,)), "stride": ((3, 1), (1,), (9, 3, 1)),
                    "split_sizes": ((1, 2), (3,)), "sizes": ((3, 1), (1, 3)), "physical_layout": ((1, 0), (0,))}
_INDEX_NAMES = frozenset({"index", "indices", "idx", "sorter"})
_SCALAR_BY_NAME = {"start": (0,), "end": (4,), "step": (1,), "exponent": (2,)}


def _type_text(t) -> str:
    base = "int" if t.base == "SymInt" else t.base
    text = base + ("[]" if t.is_list else "")
    return text + ("?" if t.optional else "")


def _good_values(p, shape, dtype="float32"):
    """Candidate good values for one required parameter (first preferred)."""
    t = p.arg.type
    base, name = t.base, p.name
    if base == "Tensor":
        if t.is_list and t.elem_optional:      # index's Tensor?[]: one int64 index within a size-3 dim
            return [Seq((T((2,), "int64"),))]
        if t.is_list:
            return [Seq((T(shape, dtype), T(shape, dtype)))]
        if name in ("condition", "mask"):
            return [T(shape, "bool")]
        if name in _INDEX_NAMES:
            return [T(shape, "int64", "index"), T(shape, "int64")]
        if name == "values":
            return [T((), dtype), T(shape, dtype)]
        return [T(shape, dtype)]
    if t.is_list and base in ("int", "SymInt"):
        return [Lit(v) for v in _INTLIST_BY_NAME.get(name, ((3, 3),))]
    if base in ("int", "SymInt"):
        return [Lit(v) for v in _INT_BY_NAME.get(name, (1,))]
    if base == "Scalar":
        return [Lit(v) for v in _SCALAR_BY_NAME.get(name, (2, 0.5))]
    if base == "float":
        return [Lit(0.5)]
    if base == "bool":
        return [Lit(False), Lit(True)]
    if base == "str":
        return [Lit("floor")]
    if base == "ScalarType":
        return [DT("float64")]
    if base == "Device":
        return [Lit("cpu")]
    if base == "MemoryFormat":
        return [MF("contiguous_format")]
    return [Lit(None)]


def _refuses_bare(sig, required) -> bool:
    return sig.schema.name in _NEEDS_AN_OPTIONAL


_NEEDS_AN_OPTIONAL = frozenset({"aten::clamp", "aten::clamp_", "aten::clip", "aten::clip_"})    # min or max


def _outcome_ok(lib, call) -> bool:
    return run(lib, call)[0] == "ok"


def _schema_calls(kind, name, pyfn):
    """One good call per signature of a binding, found by probing small candidates against both
    libraries; ``out=`` gets a tensor shaped like torch's result."""
    import itertools

    from onion.dispatch.arguments import REQUIRED
    method = kind == "method"
    inplace = name.endswith("_")
    good = []
    for sig in pyfn.signatures:
        params = [p for p in sig.params if not p.arg.is_out]
        required = [p for p in params if p.default is REQUIRED]
        if _refuses_bare(sig, required):
            # e.g. clamp(x) with neither bound: a good call needs the first optional parameter too
            required = required + [p for p in params if p.default is not REQUIRED][:1]
        if any(p.varargs is False and p.arg.type.base in ("Generator", "Layout", "Dimname") for p in required):
            continue
        found = None
        # float32 tensors first; integer-only operators (bitwise_and, gcd) take int64, float_power_ float64,
        # complex-only ones (imag, view_as_real) complex64
        for dtype, shape in itertools.product(("float32", "int64", "float64", "complex64"), _SHAPES):
            head = (T(shape, dtype),) if method else ()
            for combo in itertools.islice(itertools.product(*[_good_values(p, shape, dtype) for p in required]), 24):
                pos = tuple(v for p, v in zip(required, combo) if not p.kwarg_only)
                kw = tuple((p.name, v) for p, v in zip(required, combo) if p.kwarg_only)
                call = Call(kind, name, head + pos, kw)
                if sig.is_out:
                    rt = run(torch, call)
                    if rt[0] != "ok" or not isinstance(rt[1], torch.Tensor):
                        continue
                    res = rt[1]
                    call = call.replace("out", T(tuple(res.shape), str(res.dtype).split(".")[-1]))
                if _outcome_ok(torch, call) and _outcome_ok(onion, call):
                    found = call
                    break
            if found:
                break
        if found is None:
            continue
        sites = []
        if method:
            sites.append(Site(0, "Tensor", role="self_inplace" if inplace else "self"))
        off = 1 if method else 0
        n_pos = len(found.args) - off
        pos_params = [p for p in required if not p.kwarg_only]
        for i, p in enumerate(pos_params[:n_pos]):
            role = "self_inplace" if (inplace and p.arg.name == "self") else ""
            sites.append(Site(i + off, _type_text(p.arg.type), p.arg.type.optional, role))
        present = {k for k, _ in found.kwargs}
        for p in required:
            if p.kwarg_only:
                sites.append(Site(p.name, _type_text(p.arg.type), p.arg.type.optional))
        if sig.is_out:
            sites.append(Site("out", "Tensor", role="out"))
        absent = tuple(Site(p.name, _type_text(p.arg.type), p.arg.type.optional or p.default is None)
                       for p in params if p.default is not REQUIRED and p.name not in present
                       and p.arg.type.base not in ("Generator", "Layout"))
        extras = tuple(Site(e, "bool") for e in sorted(sig.extras))
        good.append(GoodCall(found, tuple(sites), absent + extras))
    return good


def _g(kind, name, args, sites, kwargs=(), absent=()):
    return GoodCall(Call(kind, name, tuple(args), tuple(kwargs)), tuple(sites), tuple(absent))


def hand_calls() -> list:
    """Good calls of what has no schema: Python-only functions, hand-written methods, operators."""
    S, t33 = Site, T((3, 3))
    dt_sites = (S("dtype", "ScalarType?", True), S("device", "Device?", True), S("requires_grad", "bool"))
    calls = [
        _g("function", "tensor", [Lit([1.0, 2.0])], [S(0, "data")], absent=dt_sites),
        _g("function", "tensor", [Lit([[1, 2], [3, 4]])], [S(0, "data")], kwargs=[("dtype", DT("float32"))],
           absent=dt_sites[1:]),
        _g("function", "as_tensor", [Lit([1.0, 2.0])], [S(0, "data")], absent=dt_sites[:2]),
        _g("function", "as_tensor", [NP((3,))], [S(0, "data")], absent=dt_sites[:2]),
        _g("function", "from_numpy", [NP((3,))], [S(0, "ndarray")]),
        _g("function", "numel", [t33], [S(0, "Tensor")]),
        _g("function", "view_as_complex", [T((3, 2))], [S(0, "Tensor")]),
        _g("function", "view_as_complex_copy", [T((3, 2))], [S(0, "Tensor")]),
        _g("function", "result_type", [t33, Lit(2)], [S(0, "Tensor"), S(1, "Scalar")]),
        _g("function", "result_type", [t33, T((3,), "int64")], [S(0, "Tensor"), S(1, "Tensor")]),
        _g("method", "to", [t33, DT("float64")], [S(0, "Tensor", role="self"), S(1, "to_arg")],
           absent=(S("non_blocking", "bool"), S("copy", "bool"), S("memory_format", "MemoryFormat?", True))),
        _g("method", "to", [t33, Lit("cpu")], [S(0, "Tensor", role="self"), S(1, "to_arg")]),
        _g("method", "to", [t33, T((2,), "int64")], [S(1, "to_arg")]),
        _g("method", "to", [t33], [], kwargs=[("dtype", DT("float64"))], absent=(S("device", "Device?", True),)),
        _g("method", "view", [t33, Lit(9)], [S(1, "int")]),
        _g("method", "view", [t33, Lit(9), Lit(1)], [S(1, "int"), S(2, "int")]),
        _g("method", "expand", [T((1, 3)), Lit(3), Lit(3)], [S(1, "int"), S(2, "int")]),
        _g("method", "size", [t33, Lit(1)], [S(1, "int")]),
        _g("method", "stride", [t33, Lit(1)], [S(1, "int")]),
        _g("method", "item", [T((1,))], [S(0, "Tensor", role="self")]),
        _g("method", "tolist", [t33], [S(0, "Tensor", role="self")]),
        _g("method", "numpy", [t33], [S(0, "Tensor", role="self")]),
        _g("method", "requires_grad_", [t33, Lit(True)], [S(0, "Tensor", role="self"), S(1, "bool")]),
        _g("method", "detach_", [t33], [S(0, "Tensor", role="self_inplace")]),
        _g("method", "backward", [T((), layout="nonleaf")], [S(0, "Tensor", role="self")],
           absent=(S("gradient", "Tensor?", True), S("retain_graph", "bool?", True), S("inputs", "Tensor[]?", True))),
        _g("method", "float", [T((3,), "int64")], [S(0, "Tensor", role="self")],
           absent=(S("memory_format", "MemoryFormat?", True),)),
        _g("method", "long", [t33], [S(0, "Tensor", role="self")]),
        _g("method", "is_contiguous", [t33], [], absent=(S("memory_format", "MemoryFormat?", True),)),
        _g("method", "contiguous", [t33], [S(0, "Tensor", role="self")],
           absent=(S("memory_format", "MemoryFormat", False),)),
        _g("method", "data_ptr", [t33], [S(0, "Tensor", role="self")]),
        # ---- sort: bincount counts non-negative integers (a float 3x3 is no good call)
        _g("function", "bincount", [T((3,), "int64")], [S(0, "Tensor", role="self")],
           absent=(S("weights", "Tensor?", False), S("minlength", "SymInt", False))),
        _g("method", "bincount", [T((3,), "int64")], [S(0, "Tensor", role="self")]),
    ]
    for op in ("add", "sub", "mul", "truediv", "pow", "eq", "ne", "lt", "le", "gt", "ge"):
        calls.append(_g("operator", op, [t33, t33], [S(0, "operand"), S(1, "operand")]))
        calls.append(_g("operator", op, [Lit(2), t33], [S(0, "operand")]))
    # linear algebra whose operands differ in shape (a matrix and a vector, batches) or need values
    # (a positive-definite matrix, pivots): covered, their arguments not fuzzed
    t3, t333, t11 = T((3,)), T((3, 3, 3)), T((1, 1))
    piv = T((1,), "int32")
    for kind in ("function", "method"):
        calls += [
            _g(kind, "mv", [t33, t3], []),
            _g(kind, "addmv", [t3, t33, t3], []),
            _g(kind, "addmv_", [t3, t33, t3], []),
            _g(kind, "addbmm", [t33, t333, t333], []),
            _g(kind, "cholesky", [t11], []),
            _g(kind, "lu_solve", [t11, t11, piv], []),
            _g(kind, "ormqr", [t33, t3, t33], []),
        ]
    calls += [_g("method", "addbmm_", [t33, t333, t333], []), _g("method", "addr_", [t33, t3, t3], []),
              _g("function", "lu_unpack", [t11, piv], []),
              _g("function", "istft", [T((3, 3), "complex64")], [], kwargs=[("n_fft", Lit(4))])]
    calls.append(_g("operator", "matmul", [t33, t33], [S(0, "operand"), S(1, "operand")]))
    for op in ("neg", "abs"):
        calls.append(_g("operator", op, [t33], [S(0, "Tensor", role="self")]))
    for op in ("iadd", "isub", "imul", "itruediv", "ipow"):
        calls.append(_g("operator", op, [t33, t33], [S(0, "Tensor", role="self_inplace"), S(1, "operand")]))
        calls.append(_g("operator", op, [t33, Lit(2)], [S(1, "operand")]))
    calls.append(_g("operator", "getitem", [T((3, 3)), Lit(0)], [S(1, "index")]))
    calls.append(_g("operator", "getitem", [T((3, 3)), Lit((Ellipsis, 1))], [S(1, "index")]))
    calls.append(_g("operator", "setitem", [T((3, 3)), Lit(0), Lit(1.0)],
                    [S(0, "Tensor", role="self_inplace"), S(1, "index"), S(2, "value")]))
    calls.append(_g("operator", "setitem", [T((3, 3)), Lit((1, 2)), T(())], [S(2, "value")]))
    calls.extend(_scatter_calls())
    return calls


def _scatter_calls() -> list:
    """gather/scatter/index_*: the schema probe's float32 samples cannot index, so these are written by hand
    (int64 index tensors hold 1, 2, ...: valid along a dim of size 8)."""
    x, i2, i1, s2 = T((3, 8)), T((3, 2), "int64"), T((2,), "int64"), T((3, 2))
    calls = []
    for kind in ("function", "method"):
        calls += [_g(kind, "gather", [x, Lit(1), i2], []),
                  _g(kind, "scatter", [x, Lit(1), i2, s2], []),
                  _g(kind, "scatter_add", [x, Lit(1), i2, s2], []),
                  _g(kind, "scatter_reduce", [x, Lit(1), i2, s2, Lit("sum")], []),
                  _g(kind, "index_add", [x, Lit(1), i1, s2], []),
                  _g(kind, "index_copy", [x, Lit(1), i1, s2], []),
                  _g(kind, "index_fill", [x, Lit(1), i1, Lit(2.0)], []),
                  _g(kind, "index_reduce", [x, Lit(1), i1, s2, Lit("amax")], []),
                  _g(kind, "index_select", [x, Lit(1), i1], []),
                  _g(kind, "take_along_dim", [x, i2, Lit(1)], []),
                  _g(kind, "roll", [T((3, 3)), Lit(1)], []),
                  _g(kind, "diagonal_scatter", [T((3, 3)), T((3,))], []),
                  _g(kind, "select_scatter", [T((3, 3)), T((3,)), Lit(0), Lit(0)], [])]
    calls += [_g("method", name, [x, Lit(1), i2, s2], []) for name in ("scatter_", "scatter_add_")]
    calls += [_g("method", "scatter_reduce_", [x, Lit(1), i2, s2, Lit("sum")], []),
              _g("method", "index_add_", [x, Lit(1), i1, s2], []),
              _g("method", "index_copy_", [x, Lit(1), i1, s2], []),
              _g("method", "index_fill_", [x, Lit(1), i1, Lit(2.0)], []),
              _g("method", "index_reduce_", [x, Lit(1), i1, s2, Lit("amax")], []),
              _g("function", "segment_reduce", [T((3,)), Lit("sum")], [], kwargs=[("lengths", i1)])]
    return calls


@functools.lru_cache(maxsize=None)
def good_calls() -> tuple:
    """Every good call: from the schemas of the public functions and methods, then the hand-written ones."""
    out = []
    hand_names = {(g.call.kind, g.call.name) for g in hand_calls()}
    for name, pyfn in public_functions().items():
        if pyfn is not None and ("function", name) not in hand_names:
            out.extend(_schema_calls("function", name, pyfn))
    for name, pyfn in public_methods().items():
        if pyfn is not None and ("method", name) not in hand_names:
            out.extend(_schema_calls("method", name, pyfn))
    out.extend(hand_calls())
    return tuple(out)


def uncovered() -> list:
    """Public names with no good call (the tier cannot fuzz them): should stay empty."""
    have = {(g.call.kind, g.call.name) for g in good_calls()}
    miss = [f"onion.{n}" for n in public_functions() if ("function", n) not in have and n != "is_tensor"
            and hasattr(torch, n)]
    # torch.Tensor.index is functorch's first-class-dims method (``index(dims, ...)``), not aten::index
    miss += [f"Tensor.{n}" for n, f in public_methods().items() if f is not None and ("method", n) not in have
             and hasattr(torch.Tensor, n) and n != "index"]
    return miss


# ----------------------------------------------------------------------------- bad values

HUGE = (2 ** 63, 2 ** 64, -(2 ** 63) - 1)


def _tensor_of(call: Call, where):
    v = call.args[where] if isinstance(where, int) else dict(call.kwargs).get(where)
    return v if isinstance(v, T) else None


def bad_values(site: Site, good) -> list:
    """The bad values tried at one site (``good``: the descriptor there now, or None when absent)."""
    ty = site.type
    opt = site.optional or ty.endswith("?")
    base = ty.rstrip("?")
    shape = good.shape if isinstance(good, T) else (3, 3)
    nd = len(shape)
    out = []
    if site.role == "out":
        dt = good.dtype if isinstance(good, T) else "float32"
        out += [T(shape, "int64" if dt != "int64" else "float32"), T(shape, "bool"), T(shape, "complex64"),
                T(shape, layout="meta"),
                T(shape, dt if dt.startswith(("float", "complex", "bfloat")) else "float32", "leaf_rg"), Lit("abc"), Seq((T(shape, dt),), "tuple")]
        if nd and shape[0] > 1:
            out.append(T(shape, dt, "expanded"))
        elif nd == 0:
            out.append(T((3, 3), dt, "expanded"))
        return out
    if site.role in ("self", "self_inplace"):
        out += [T(shape, "int64"), T(shape, "bool"), T(shape, "complex64"), T(shape, "float16"),
                T(shape, layout="meta")]
        if site.role == "self_inplace":
            out.append(T(shape, layout="leaf_rg"))
            if nd and shape[0] > 1:
                out.append(T(shape, layout="expanded"))
        return out
    if base in ("Tensor", "operand"):
        out += [Lit("abc"), Obj(), Lit([1.0, 2.0]), Lit(1.5), T((5, 7)), T((2,)), T((3, 3, 3, 3)),
                T(shape, "int64"), T(shape, "bool"), T(shape, "complex64"), T(shape, layout="meta")]
        if not opt:
            out.append(Lit(None))
        return out
    if base == "Tensor[]":
        return [Lit("abc"), Seq((T(shape), Lit(1))), Seq(()), T(shape), Seq((T(shape), T((5, 7))))]
    if base == "int":
        out += [Lit("abc"), Lit(1.5), Lit(True), Obj(), T((2,), "int64"), T((), "float32")]
        out += [Lit(v) for v in HUGE + (nd + 2, -(nd + 3), 64, -1)]
        if not opt:
            out.append(Lit(None))
        return out
    if base == "int[]":
        out += [Lit("abc"), Lit((-2, 3)), Lit((-1,)), Lit((2 ** 62, 2 ** 62)), Lit((2 ** 63,)), Lit((2 ** 64,)),
                Lit((1.5, 2)), Lit((None,)), Lit((0, 0)), Lit((0, nd + 2)), Lit(()), Lit((-(nd + 3),))]
        if not opt:
            out.append(Lit(None))
        return out
    if base == "Scalar":
        out += [Lit("abc"), Lit([1]), T((2,)), Lit(1j), Lit(2 ** 64), Lit(np.bool_(True)), Obj(),
                Lit(float("nan")), Lit(float("inf"))]
        if not opt:
            out.append(Lit(None))
        return out
    if base == "float":
        return [Lit("abc"), Lit(1j), T((2,)), Obj()] + ([] if opt else [Lit(None)])
    if base == "bool":
        return [Lit("abc"), Lit(2), Lit(1.5), Obj(), T((2,), "bool")] + ([] if opt else [Lit(None)])
    if base == "str":
        return [Lit(1), Lit("bogus"), Obj()]
    if base == "ScalarType":
        return [Lit("float32"), Lit(3), Obj(), MF("channels_last"), Lit(float)]
    if base == "Device":
        return [Lit("bogus"), Lit(1.5), Lit("cpu:x"), DT("float32"), Obj()]
    if base == "MemoryFormat":
        return [Lit("channels_last"), Lit(1), DT("float32"), MF("channels_last"), Obj()]
    if base == "data":
        return [Lit("abc"), Lit([[1, 2], [3]]), Lit([1, "a"]), Obj(), Lit([1, None]), Lit([1j, 2.0])]
    if base == "ndarray":
        return [Lit([1, 2]), T((3,)), Lit("abc"), Lit(None)]
    if base == "to_arg":
        return [Lit("abc"), Lit(1.5), Obj(), Lit(True), Lit([1]), MF("channels_last")]
    if base == "index":
        return [Lit(5), Lit(-4), Lit(1.5), Lit("a"), Lit((Ellipsis, Ellipsis)), Lit((0, 0, 0)), Lit(2 ** 64),
                T((2,), "float32"), Lit(slice(0, 2, -1)), Lit(slice("a", 2)), Lit(slice(None, None, 0)), Obj()]
    if base == "value":
        return [Lit("abc"), Lit(1j), T((5,)), Lit([1.0, 2.0]), Obj(), T((3,), "complex64")]
    return []


@dataclass(frozen=True)
class Case:
    """One bad call: the good call it came from, the site, and the label of the swap."""
    good: GoodCall
    call: Call

    @property
    def id(self) -> str:
        return self.call.id


def cases_of(good: GoodCall) -> list:
    """Every bad call made from one good call: each site and each absent optional keyword swapped for
    each of its bad values, plus an unknown keyword and one positional argument too many."""
    out, seen = [], set()

    def add(call):
        if call.id not in seen:
            seen.add(call.id)
            out.append(Case(good, call))
    c = good.call
    for site in good.sites:
        cur = c.args[site.where] if isinstance(site.where, int) else dict(c.kwargs).get(site.where)
        for bad in bad_values(site, cur):
            add(c.replace(site.where, bad))
    for site in good.absent:
        for bad in bad_values(site, None):
            add(c.replace(site.where, bad))
    if c.kind != "operator":
        add(c.replace("bogus_kwarg", Lit(1)))
        add(c.replace(len(c.args), Lit("extra")))
    return out


@functools.lru_cache(maxsize=None)
def all_cases() -> tuple:
    return tuple(case for g in good_calls() for case in cases_of(g))


# ----------------------------------------------------------------------------- known failures


@functools.lru_cache(maxsize=None)
def _compiled(pattern: str):
    import re
    return re.compile(".*".join(re.escape(part) for part in pattern.split("*")), re.DOTALL)


def pattern_matches(pattern: str, case_id: str) -> bool:
    """``*`` is the only wildcard (ids are full of brackets, which fnmatch would read as classes)."""
    if "*" not in pattern:
        return pattern == case_id
    return _compiled(pattern).fullmatch(case_id) is not None


def known_reason(case_id: str, known: dict) -> str | None:
    reason = known.get(case_id)
    if reason is not None:
        return reason
    for pattern, reason in known.items():
        if "*" in pattern and pattern_matches(pattern, case_id):
            return reason
    return None


def matching_cases(pattern: str) -> list:
    """The listed bad calls a known-failure entry stands for."""
    if "*" not in pattern:
        return [c for c in _cases_by_id().get(pattern, ())]
    return [c for c in all_cases() if pattern_matches(pattern, c.id)]


@functools.lru_cache(maxsize=None)
def _cases_by_id() -> dict:
    by_id: dict = {}
    for c in all_cases():
        by_id.setdefault(c.id, []).append(c)
    return by_id
