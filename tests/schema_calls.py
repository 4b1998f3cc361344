"""A valid call of any aten overload, built from its schema alone, for onion and for torch alike.

Sweeps over the operator registry (device mixing, ``out=`` with autograd) need one call per
overload that succeeds on plain CPU tensors; they then change one thing (a tensor's device,
``requires_grad``) and compare the two libraries.  Arguments come from their types and names:
tensors are 2x2 float32 (3-D for the batched products, bool for ``condition``, a vector for
``bias``), sizes and dims fit them, arguments with defaults keep them.  An ``out=`` tensor gets
the shape and dtype that a first all-CPU call (with an empty ``out``) resizes it to.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

# base operator name -> the shape of its tensors, where 2x2 does not fit
SHAPES = {"bmm": (1, 2, 2)}
# operators whose tensors other than the first must be 0-dim (they take a scalar tensor)
SCALAR_TENSOR_ARGS = {"fill_": ("value",), "linspace": ("start", "end"), "masked_fill": ("value",),
                      "masked_fill_": ("value",), "logspace": ("start", "end"), "fill": ("value",)}
# tensor arguments whose dtype is not float32, by name
TENSOR_DTYPES = {"condition": "bool", "mask": "bool", "index": "int64"}
# overloads no tensor made here can call (randint_like.Tensor's high must hold a positive integer; the out= of
# normal.Tensor_float_out must already broadcast with mean, so an empty one is refused)
NO_SAMPLE = {"randint_like.Tensor", "randint_like.Tensor_generator", "normal.Tensor_float_out"}
# arguments whose value is not decided by type alone
VALUES = {("to", "dtype"): "float32", ("clamp", "min"): 0.25, ("div", "rounding_mode"): "floor",
          # random sampling: parameters inside each distribution's domain
          ("randint", "high"): 5, ("randint_like", "high"): 5, ("random", "to"): 5, ("randperm", "n"): 4,
          ("multinomial", "num_samples"): 1, ("geometric", "p"): 0.5, ("bernoulli", "p"): 0.5,
          ("native_dropout", "p"): 0.5, ("normal", "mean"): 0.0, ("normal", "std"): 1.0,
          ("unfold_copy", "size"): 1, ("unfold_copy", "step"): 1, ("unfold", "size"): 1, ("unfold", "step"): 1}
# ---- sort: tensors that must be integral (indices, counts' inputs) or 1-D (boundaries, bin edges)
ARG_DTYPES = {("max", "max_values"): "int64", ("min", "min_indices"): "int64", ("searchsorted", "sorter"): "int64",
              ("bincount", "self"): "int64",
              **{(op, "indices"): "int64" for op in ("sort", "topk", "kthvalue", "median", "nanmedian", "mode",
                                                     "cummax", "cummin")}}
ARG_SHAPES = {("bucketize", "boundaries"): (2,), ("histogram", "bins"): (3,), ("bincount", "self"): (2,),
              ("bincount", "weights"): (2,), ("searchsorted", "sorted_sequence"): (2,), ("searchsorted", "sorter"): (2,),
              ("quantile", "q"): (2,), ("nanquantile", "q"): (2,)}
VALUES[("kthvalue", "k")] = 1


@dataclass
class TensorSpec:
    """One tensor argument: where it goes and what it is made of."""

    name: str
    position: int            # index among the call's tensor arguments (schema order)
    shape: tuple
    dtype: str
    is_out: bool = False
    fixed: bool = False      # a dtype of its own (ARG_DTYPES), kept when an out= template asks another


@dataclass
class CallSpec:
    """A library-neutral call: the overload's path, its arguments (TensorSpec where a tensor goes)."""

    qualified: str           # "add.Tensor"
    op_name: str
    overload: str
    args: list = field(default_factory=list)
    kwargs: dict = field(default_factory=dict)
    tensors: list = field(default_factory=list)

    @property
    def out(self):
        return next((t for t in self.tensors if t.is_out), None)


def _base(op_name: str) -> str:
    return op_name[:-1] if op_name.endswith("_") and not op_name.endswith("__") else op_name


def call_spec(schema):
    """The CallSpec of an onion schema, or None when a type has no sample value here."""
    full = schema.name.split("::")[-1]
    op_name, overload = full, schema.overload_name or "default"
    base = _base(op_name)
    shape = SHAPES.get(base, (2, 2))
    spec = CallSpec(f"{op_name}.{overload}", op_name, overload)
    if spec.qualified in NO_SAMPLE:
        return None
    skipped = False     # a defaulted argument was left out: later ones go by keyword
    for a in schema.arguments:
        ty = str(a.type)
        name = a.name
        is_out = getattr(a, "is_out", False) or (a.kwarg_only and name == "out")
        if ty.startswith("Tensor") and "[]" not in ty:
            shp = () if name in SCALAR_TENSOR_ARGS.get(op_name, ()) else (shape[-1],) if name == "bias" else shape
            shp = ARG_SHAPES.get((base, name), shp)
            fixed = ARG_DTYPES.get((base, name))
            t = TensorSpec(name, len(spec.tensors), shp, fixed or TENSOR_DTYPES.get(name, "float32"), is_out,
                           fixed is not None)
            spec.tensors.append(t)
            val = t
        elif (base, name) in VALUES:
            val = VALUES[(base, name)]
        elif a.default is not None:
            skipped = True
            continue
        elif ty in ("int[]", "SymInt[]", "int[1]", "int[1]?", "SymInt[]?"):
            if name in ("size", "shape"):
                val = list(shape)
            elif name == "stride":
                val = [shape[-1], 1] if len(shape) == 2 else [4, 2, 1]
            elif name == "dims":
                val = list(range(len(shape)))[::-1]
            else:
                val = [0]
        elif ty in ("int", "SymInt"):
            val = 2 if name == "steps" else 0
        elif ty.startswith("Scalar[]"):
            val = [1.0]
        elif ty.startswith("Scalar") and not ty.startswith("ScalarType"):
            val = 1.0
        elif ty.endswith("?"):
            val = None
        elif ty == "bool":
            val = False
        elif ty == "Device":
            val = "cpu"
        elif ty == "ScalarType":
            val = "float32"
        elif ty == "str":
            val = "floor"
        else:
            return None
        if a.kwarg_only or (skipped and not is_out):
            spec.kwargs[name] = val
        else:
            spec.args.append(val)
    return spec


def overload(lib, spec: CallSpec):
    return getattr(getattr(lib.ops.aten, spec.op_name), spec.overload)


def make_tensor(lib, t: TensorSpec, device="cpu", zero_dim=False, requires_grad=False, shape=None, dtype=None):
    """The tensor for ``t`` in ``lib``: CPU tensors hold 0.5 (True for bool), meta ones nothing."""
    shp = () if zero_dim else (t.shape if shape is None else shape)
    dt = getattr(lib, t.dtype if t.fixed else (dtype or t.dtype))
    if device == "meta":
        x = lib.empty(shp, dtype=dt, device="meta")
    else:
        x = lib.full(shp, True if dt is lib.bool else 0.5, dtype=dt)
    if requires_grad and dt.is_floating_point:      # not the indices out of a (values, indices) pair
        x.requires_grad_(True)
    return x


INDEX_NAMES = {"index": "int64", "indices": "int64", "idx": "int64", "mask": "bool", "indices_or_sections": "int64",
               "repeats": "int64", "sorter": "int64", "boundaries": "float32", "lengths": "int64", "offsets": "int64"}


def variants(spec: CallSpec):
    """The spec as built (2x2 float32), then with other dtypes, for operators that refuse float32 samples:
    index-like arguments as int64/bool, then every tensor complex64, int64, float64, bool."""
    import dataclasses
    yield spec
    plans = [lambda t: INDEX_NAMES.get(t.name, t.dtype)] + [
        (lambda dt: lambda t: dt if t.name != "condition" else "bool")(dt)
        for dt in ("complex64", "int64", "float64", "bool")]
    for plan in plans:
        tensors = [dataclasses.replace(t, dtype=plan(t)) if not (t.is_out or t.fixed) else t for t in spec.tensors]
        if tensors != spec.tensors:
            yield dataclasses.replace(spec, tensors=tensors)


def out_template(lib, spec: CallSpec):
    """(shape, dtype name) the op gives its ``out=`` on plain CPU tensors (None if no dtype works)."""
    for dtype in ("float32", "bool", "int64", "complex64", "float64"):
        tensors = [make_tensor(lib, t) if not t.is_out else lib.empty(0, dtype=getattr(lib, t.dtype if t.fixed else dtype))
                   for t in spec.tensors]
        if run(lib, spec, tensors)[0] == "ok":
            out = tensors[spec.out.position]
            return tuple(out.shape), dtype
    return None


def realize(spec: CallSpec, tensors):
    """(args, kwargs) with each TensorSpec replaced by ``tensors[position]``; dtype names stay names
    except where a ScalarType is wanted (the caller's library supplies it)."""
    def r(v):
        return tensors[v.position] if isinstance(v, TensorSpec) else v
    return [r(v) for v in spec.args], {k: r(v) for k, v in spec.kwargs.items()}


def with_dtypes(lib, args, kwargs):
    """dtype names (from VALUES / ScalarType arguments) become ``lib``'s dtypes."""
    def r(v):
        return getattr(lib, v) if isinstance(v, str) and v in ("float32", "float64", "int64", "bool") else v
    return [r(v) for v in args], {k: r(v) for k, v in kwargs.items()}


def run(lib, spec: CallSpec, tensors):
    """('ok', result) or ('err', exception), warnings silenced."""
    args, kwargs = with_dtypes(lib, *realize(spec, tensors))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return "ok", overload(lib, spec)(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - compared with torch's outcome
        return "err", e
