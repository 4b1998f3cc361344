"""Elementwise operators from one formula: ``UfuncFormula`` and its per-dtype loops.

A formula is written once against an array namespace ``xp`` (NumPy's API) and
instantiated per backend and per dtype: float16/bfloat16 compute in float32
and round once (PyTorch's opmath), everything else computes in its own dtype.
``functional``/``out``/``inplace`` are the general paths the generated kernels
fall back to when the fast path (same dtypes, no scalars to promote) does not apply.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..core import dtype as _dt
from ..core.dtype import get_default_dtype
from . import iterator as _it
import functools
from ..backends import backend_for
from .tensor_new import wrap
from .view_geometry import contiguous_strides
from .view_geometry import output_strides_like
from .tensor_new import empty_tensor

DTYPE_GROUPS = {
    "All": ("uint8", "int8", "int16", "int32", "int64", "float32", "float64"),
    "AllAndComplex": ("uint8", "int8", "int16", "int32", "int64", "float32", "float64", "complex64", "complex128"),
    "Floating": ("float32", "float64"),
    "FloatingAndComplex": ("float32", "float64", "complex64", "complex128"),
    "Integral": ("uint8", "int8", "int16", "int32", "int64"),
    "Complex": ("complex64", "complex128"),
    "BFloat16": ("bfloat16",), "Half": ("float16",), "Bool": ("bool",), "ComplexHalf": (),
}


def parse_dtype_spec(spec: str) -> tuple:
    """``"add (AllAndComplex, BFloat16, Half)"`` -> ("add", (dtypes...))."""
    name, _, rest = spec.partition("(")
    groups = [g.strip() for g in rest.rstrip(")").split(",") if g.strip()] if rest else ["AllAndComplex", "Bool",
                                                                                          "BFloat16", "Half"]
    names = []
    for g in groups:
        if g not in DTYPE_GROUPS:
            raise ValueError(f"unknown dtype group '{g}' (known: {', '.join(DTYPE_GROUPS)})")
        names.extend(DTYPE_GROUPS[g])
    return name.strip(), tuple(_dt.DTYPE_BY_NAME[n] for n in dict.fromkeys(names))


@dataclass
class UfuncFormula:
    """One elementwise formula.  ``kind`` says how dtypes flow:

    binary: promote -> same out; binary_float: ints become the default float;
    comparison: promote, out bool; unary: out = in; unary_float: ints -> float;
    abs: complex -> real.  ``check(dtype, *scalars)`` adds op-specific errors.
    """

    name: str
    fn: object
    kind: str
    n_tensors: int
    check: object = None
    errstate: bool = False
    opmath: bool = True
    torch_name: str = ""
    fast_ok: str = ""         # codegen: an expression over `dt` and the scalars under which `check` can be skipped
    loops: dict = field(default_factory=dict)    # (backend type, dtype) -> loop
    # checks that need the operands themselves (wrapped numbers, absent optional bounds):
    # ``operand_check(ops, compute_dtype, *scalars)`` with ``ops`` the operands' impls (None where absent)
    operand_check: object = None
    # ``promote(ops, common, *scalars) -> compute dtype`` for ops whose dtype rule is not the plain one
    promote: object = None
    # dtypes the formula runs although the YAML does not list them (its operand_check guards when)
    extra_dtypes: tuple = ()
    # ``plain_layout(ops) -> bool``: the output is plainly contiguous whatever the inputs' layout
    # (ops whose meta function sets the output without strides, e.g. pow.Scalar)
    plain_layout: object = None
    # ``out_check(ops, result_dtype, out_dtype, inplace)``: an op's own rule for the dtype of an
    # ``out=`` / in-place result (instead of TensorIterator's can_cast)
    out_check: object = None

    def compute_dtype(self, common):
        if self.kind in ("binary_float", "unary_float") and common.category < 2:
            return get_default_dtype()
        return common

    def out_dtype(self, compute):
        if self.kind == "comparison":
            return _dt.bool
        if self.kind == "abs" and compute.is_complex:
            return compute.to_real()
        return compute


def make_loop(formula: UfuncFormula, xp, dtype):
    """The loop for one (backend namespace, compute dtype): arrays and scalars in, array out."""
    fn = formula.fn
    n = formula.n_tensors
    out_np = formula.out_dtype(dtype).np
    if dtype in (_dt.float16, _dt.bfloat16) and formula.opmath:
        f32 = _dt.float32.np

        def loop(*args):
            arrays = [None if a is None else xp.asarray(a).astype(f32) for a in args[:n]]
            r = fn(xp, *arrays, *args[n:])
            return r.astype(out_np) if r.dtype != out_np else r
    else:
        want = dtype.np

        def loop(*args):
            arrays = [a if a is None or a.dtype == want else a.astype(want) for a in args[:n]]
            return fn(xp, *arrays, *args[n:])
    if formula.errstate and xp is not None and hasattr(xp, "errstate"):
        inner = loop

        def loop(*args, _inner=inner, _es=xp.errstate):
            with _es(all="ignore"):
                return _inner(*args)
    return loop


def instantiate(formula: UfuncFormula, backend_type: str, xp, dtypes) -> dict:
    """Per-dtype loops of a formula for one backend (done once, at import of the generated code)."""
    loops = {d: make_loop(formula, xp, d) for d in dtypes}
    for d, lp in loops.items():
        formula.loops[(backend_type, d)] = lp
    return loops


def instantiate_scalar(formula: UfuncFormula, xp, dtypes) -> dict:
    """Loops for an array in the compute dtype and a Python scalar (NumPy keeps the array's dtype);
    float16/bfloat16 are left out: they need opmath casts."""
    out = {}
    for d in dtypes:
        if d in (_dt.float16, _dt.bfloat16):
            continue
        fn = functools.partial(formula.fn, xp)
        if formula.errstate:
            def fn(*args, _f=fn, _es=xp.errstate):
                with _es(all="ignore"):
                    return _f(*args)
        out[d] = fn
    return out


def instantiate_direct(formula: UfuncFormula, xp, dtypes) -> dict:
    """Loops for inputs already in the compute dtype: the bare formula bound to ``xp``
    (opmath dtypes and error-state formulas keep their wrapping)."""
    out = {}
    for d in dtypes:
        if (d in (_dt.float16, _dt.bfloat16) and formula.opmath) or formula.errstate:
            out[d] = formula.loops.get(("cpu", d)) or make_loop(formula, xp, d)
        else:
            out[d] = functools.partial(formula.fn, xp)
    return out


def not_implemented_for(formula: UfuncFormula, dtype) -> NotImplementedError:
    """PyTorch's dtype-dispatch failure (a NotImplementedError, as torch raises)."""
    return NotImplementedError(f'"{formula.torch_name or formula.name}_cpu" not implemented for '
                               f"'{dtype.scalar_type_name}'")


# --- the general paths ----------------------------------------------------------
def plan(opname: str, formula: UfuncFormula, impls, scalars, operands=None):
    """dtype half of the meta function: (compute dtype, out dtype, device)."""
    dev = _it.check_devices(opname, impls)
    common = _it.common_dtype2(impls[0], impls[1]) if len(impls) == 2 else \
        (impls[0].dtype if len(impls) == 1 else _it.common_dtype(impls))
    if formula.promote is not None or formula.operand_check is not None:
        ops = impls if operands is None else [None if o is None else o._impl for o in operands]
        compute = formula.promote(ops, common, *scalars) if formula.promote is not None \
            else formula.compute_dtype(common)
        if formula.operand_check is not None:
            formula.operand_check(ops, compute, *scalars)
    else:
        compute = formula.compute_dtype(common)
    if formula.check is not None:
        formula.check(compute, *scalars)
    return compute, formula.out_dtype(compute), dev


__all__ = ["UfuncFormula", "instantiate", "plan", "parse_dtype_spec", "not_implemented_for"]


# --- what the generated elementwise kernels call when the fast path does not apply --
def _operands(opname, operands):
    """Tensors among the operands (Scalars were wrapped by the caller; None skipped)."""
    return [o._impl for o in operands if o is not None]


def _run(opname: str, formula: UfuncFormula, operands, scalars):
    impls = _operands(opname, operands)
    compute_dtype, out_dtype, dev = plan(opname, formula, impls, scalars, operands)
    backend = backend_for(dev)
    loop = formula.loops.get((dev.type, compute_dtype))
    if loop is None:
        if not any(k[1] is compute_dtype for k in formula.loops) and formula.loops and \
                compute_dtype not in formula.extra_dtypes:
            raise not_implemented_for(formula, compute_dtype)
        loop = formula.loops[(dev.type, compute_dtype)] = make_loop(formula, backend.xp, compute_dtype)
    arrays = [o._impl._array if o is not None else None for o in operands]
    if dev.type != "cpu":
        arrays = [a if a is None or type(a) is not _np_ndarray() else backend.from_numpy(a, dev) for a in arrays]
    try:
        r = loop(*arrays, *scalars)
    except ValueError as e:
        if "broadcast" in str(e) or "shape" in str(e):
            _it.broadcast_error(opname, impls, e)
        raise RuntimeError(f"{opname}: {e}") from None
    return r, out_dtype, dev, impls


def _np_ndarray():
    import numpy as np
    return np.ndarray


def _plain(formula: UfuncFormula, operands) -> bool:
    return formula.plain_layout is not None and formula.plain_layout(
        [None if o is None else o._impl for o in operands])


def functional(opname: str, formula: UfuncFormula, operands, scalars):
    r, out_dtype, dev, impls = _run(opname, formula, operands, scalars)
    r = _fix_result(r, out_dtype, dev, impls, _plain(formula, operands))
    return wrap(r, out_dtype, dev)


def _fix_result(r, out_dtype, dev, impls, plain=False):
    """Make the computed array a proper array of the out dtype with PyTorch's layout."""
    import numpy as np
    if dev.type == "cpu":
        if type(r) is not np.ndarray:
            r = np.asarray(r)
    if r.dtype != out_dtype.np:
        r = r.astype(out_dtype.np)
    if plain:
        want = contiguous_strides(tuple(r.shape))
    else:
        want = _expected_strides(tuple(r.shape), impls)
    if want is not None:
        item = r.dtype.itemsize
        if tuple(s // item for s in r.strides) != want and r.size > 1:
            arr = backend_for(dev).empty_strided(tuple(r.shape), want, r.dtype, dev)
            _it.xp_copy(arr, r)
            r = arr
    return r


def _expected_strides(shape, impls):
    """PyTorch's output layout when some input is not plain contiguous (else None: NumPy's is right)."""
    for i in impls:
        if not i._array.flags.c_contiguous:
            break
    else:
        return None
    return tuple(output_strides_like(shape, [(tuple(i._array.shape), i.strides) for i in impls]))


def out_variant(opname: str, formula: UfuncFormula, operands, scalars, out):
    r, out_dtype, dev, impls = _run(opname, formula, operands, scalars)
    _it.check_devices(opname, impls + [out._impl]) if out._impl.device != dev else None
    _out_check(formula, operands, out_dtype, out, False)
    return _it.write_out(opname, out, r, out_dtype, inputs=impls)


def _out_check(formula: UfuncFormula, operands, result_dtype, out, inplace) -> None:
    if formula.out_check is not None:
        formula.out_check([None if o is None else o._impl for o in operands], result_dtype, out._impl.dtype,
                          inplace)


def _inplace_check(formula: UfuncFormula, self) -> None:
    if formula.kind == "abs" and self._impl.dtype.is_complex:
        raise RuntimeError("In-place abs is not supported for complex tensors.")


def inplace_variant(opname: str, formula: UfuncFormula, operands, scalars):
    self = operands[0]
    _inplace_check(formula, self)
    r, out_dtype, dev, impls = _run(opname, formula, operands, scalars)
    _out_check(formula, operands, out_dtype, self, True)
    return _it.write_out(opname, self, r, out_dtype, inplace=True, inputs=impls)


def meta_shape_dtype(opname: str, formula: UfuncFormula, operands, scalars):
    impls = _operands(opname, operands)
    compute_dtype, out_dtype, dev = plan(opname, formula, impls, scalars, operands)
    shape = _it.broadcast_operands([tuple(i._array.shape) for i in impls])
    if _plain(formula, operands):
        strides = contiguous_strides(shape)
    else:
        strides = tuple(output_strides_like(shape, [(tuple(i._array.shape), i.strides) for i in impls]))
    return shape, strides, out_dtype, dev


def meta_functional(opname, formula, operands, scalars):
    shape, strides, out_dtype, dev = meta_shape_dtype(opname, formula, operands, scalars)
    return empty_tensor(shape, out_dtype, dev, strides)


def meta_out(opname, formula, operands, scalars, out):
    shape, strides, out_dtype, dev = meta_shape_dtype(opname, formula, operands, scalars)
    if out._impl.device != dev:
        _it.check_devices(opname, _operands(opname, operands) + [out._impl])
    _out_check(formula, operands, out_dtype, out, False)
    if out_dtype is not out._impl.dtype:
        _it.check_out_dtype(out_dtype, out._impl.dtype)
    _it.resize_out(out, shape)
    return out


def meta_inplace(opname, formula, operands, scalars):
    self = operands[0]
    _inplace_check(formula, self)
    shape, strides, out_dtype, dev = meta_shape_dtype(opname, formula, operands, scalars)
    if tuple(self._impl._array.shape) != tuple(shape):
        raise RuntimeError(f"output with shape {list(self._impl._array.shape)} doesn't match the broadcast shape "
                           f"{list(shape)}")
    _out_check(formula, operands, out_dtype, self, True)
    if out_dtype is not self._impl.dtype:
        _it.check_out_dtype(out_dtype, self._impl.dtype)
    return self


def raise_value_error(opname, impls, exc):
    if "broadcast" in str(exc):
        _it.broadcast_error(opname, impls, exc)
    raise RuntimeError(f"{opname}: {exc}") from None
