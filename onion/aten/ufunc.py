"""Elementwise operators from one formula: ``UfuncFormula`` and its per-dtype loops.

A formula is written once against an array namespace ``xp`` (NumPy's API) and
instantiated per backend and per dtype: float16/bfloat16 compute in float32
and round once (PyTorch's opmath), everything else computes in its own dtype.
``functional``/``out``/``inplace`` are the general paths the generated kernels
fall back to when the fast path (same dtypes, no scalars to promote) does not apply.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

from ..core import dtype as _dt
from ..core.dtype import get_default_dtype
from ..core.dtype_groups import DTYPE_GROUPS, parse_loop_spec
from . import iterator as _it
import functools
from ..backends import backend_for
from .tensor_new import wrap
from .view_geometry import contiguous_strides
from .view_geometry import (elementwise_ref_strides, expand as expand_geometry, is_non_overlapping_and_dense,
                            meta_like_strides, output_strides_like, preserve_strides)
from .tensor_new import empty_tensor
from .tensor_new import scalar_to_tensor as _scalar_to_tensor, wrap_cpu as _wrap_cpu
from .tensor_new import CPU_KS as _CPU_KS, CPU_INFERENCE_KS as _CPU_INFERENCE_KS
from ..core.device import CPU as _CPU
from ..core.tensor import Tensor as _Tensor
from ..core.tensor_impl import TensorImpl as _TensorImpl
from ..core.tls import state as _tls_state
import numpy as _np
from numpy import ndarray as _ndarray



def parse_dtype_spec(spec: str) -> tuple:
    """``"add (AllAndComplex, BFloat16, Half)"`` -> ("add", (dtypes...))."""
    name, groups = parse_loop_spec(spec)
    return name, dtypes_of(groups)


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
    # ``skip_check(dtype, *scalars) -> bool``: the fast path may skip ``check`` (it has nothing to say)
    skip_check: object = None
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
    # ``layout(impls, out_impl) -> strides or None``: an op's own CPU layout for its functional result
    # (``out_impl`` None) or a resized ``out=``, where PyTorch's kernel does not let TensorIterator lay it
    # out (a composite over empty_like, a complex result copied into a real one); None: TensorIterator's
    layout: object = None
    # ``out_check(ops, result_dtype, out_dtype, inplace)``: an op's own rule for the dtype of an
    # ``out=`` / in-place result (instead of TensorIterator's can_cast)
    out_check: object = None
    # the operands' order in PyTorch's TensorIterator where it is not the schema's (threshold_backward adds
    # self before grad_output): the device check meets, and names, the devices in that order
    device_order: tuple = ()
    # for a float32/float64 self, Python-number operands keep self's dtype (clamp's bounds): the CPU fast
    # path runs the formula on the array and the numbers as they are
    float_keeps_python_scalars: bool = False
    # the array-namespace function this formula is when ``skip_check`` holds (or always, for a formula
    # with no check): the CPU fast path calls it straight on the arrays
    plain: str = ""
    # for a formula with scalar arguments: the Python ints they must be for ``plain`` to apply (add's
    # ``alpha=1``); ``skip_check`` must hold for them
    plain_scalars: tuple = ()
    # float16/bfloat16: the positions of the operands that reach the formula unrounded when 0-d (PyTorch's
    # mul/div read a CPU scalar second operand as opmath, lerp its Scalar weight); every other operand is cast
    # to the compute dtype first, as TensorIterator does
    opmath_scalars: tuple = ()

    @property
    def n_scalars(self) -> int:
        """The formula's arguments after the tensors (``alpha``): ``fn(xp, *tensors, *scalars)``."""
        return self.fn.__code__.co_argcount - 1 - self.n_tensors

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


def _opmath_operand(a, want, f32, keep_scalar):
    """An operand of a float16/bfloat16 loop, in float32: cast to the compute dtype first (``h + 2.7`` adds
    float16(2.7)), but with ``keep_scalar`` a 0-d one directly (an opmath scalar)."""
    if a.dtype != want and not (keep_scalar and a.ndim == 0):
        a = _cast(a, want)
    return a.astype(f32)


def _cast(a, want):
    """``a.astype(want)``, except that a double reaches float16/bfloat16 through float32, as c10 makes them."""
    if want.itemsize == 2 and a.dtype.itemsize >= 8 and a.dtype.kind in "fc" and want.kind in "fV":
        a = a.astype(_np.float32 if a.dtype.kind == "f" else _np.complex64)
    return a.astype(want)


def make_loop(formula: UfuncFormula, xp, dtype):
    """The loop for one (backend namespace, compute dtype): arrays and scalars in, array out."""
    fn = formula.fn
    n = formula.n_tensors
    out_dtype = formula.out_dtype(dtype)
    if dtype in (_dt.float16, _dt.bfloat16) and formula.opmath:
        f32, keep = _dt.float32.np, formula.opmath_scalars

        def loop(*args):
            # the NumPy dtype is read per call: bfloat16's (ml_dtypes) loads on first use, not at import
            out_np, want = out_dtype.np, dtype.np
            arrays = [None if a is None else _opmath_operand(xp.asarray(a), want, f32, i in keep)
                      for i, a in enumerate(args[:n])]
            r = fn(xp, *arrays, *args[n:])
            return r.astype(out_np) if r.dtype != out_np else r
    else:
        keep = formula.opmath_scalars if dtype in (_dt.float16, _dt.bfloat16) else ()  # the formula does opmath

        def loop(*args):
            want = dtype.np
            arrays = [a if a is None or a.dtype == want or (i in keep and a.ndim == 0) else _cast(a, want)
                      for i, a in enumerate(args[:n])]
            return fn(xp, *arrays, *args[n:])
    if formula.errstate and xp is not None and hasattr(xp, "errstate"):
        loop = _quiet(loop, xp)
    return loop


# NumPy's floating-point warnings (overflow in exp, 0/0) are PyTorch's silent inf and nan.  Ignoring them
# where onion's elementwise code calls NumPy costs nothing per call, where np.errstate costs about 1 us;
# ``_quiet`` still runs a loop under errstate when the user made NumPy raise (np.seterr, a warnings filter).
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"onion\.aten\.(ufunc|native\.ufunc_(formulas|special))$")
_FP_ERRORS = (FloatingPointError, RuntimeWarning)


def _quiet(fn, xp):
    errstate = xp.errstate

    def quiet(*args):
        try:
            return fn(*args)
        except _FP_ERRORS:
            with errstate(all="ignore"):
                return fn(*args)
    return quiet


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
        out[d] = _quiet(fn, xp) if formula.errstate else fn
    return out


def instantiate_direct(formula: UfuncFormula, xp, dtypes) -> dict:
    """Loops for inputs already in the compute dtype: the bare formula bound to ``xp``
    (opmath dtypes and error-state formulas keep their wrapping)."""
    out = {}
    for d in dtypes:
        if d in (_dt.float16, _dt.bfloat16) and formula.opmath:
            out[d] = formula.loops.get(("cpu", d)) or make_loop(formula, xp, d)
        else:
            fn = functools.partial(formula.fn, xp)
            out[d] = _quiet(fn, xp) if formula.errstate else fn
    return out


def not_implemented_for(formula: UfuncFormula, dtype) -> NotImplementedError:
    """PyTorch's dtype-dispatch failure (a NotImplementedError, as torch raises)."""
    return NotImplementedError(f'"{formula.torch_name or formula.name}_cpu" not implemented for '
                               f"'{dtype.scalar_type_name}'")


# --- the general paths ----------------------------------------------------------
def _out_dtype_first(opname, formula, operands, scalars, out) -> None:
    """A dtype the kernel does not implement is reported after the ``out=`` dtype check, as in PyTorch
    (TensorIterator checks the cast when it is built; the kernel's dtype dispatch fails later)."""
    impls = _operands(opname, operands)
    common = _it.common_dtype(impls)
    ops = [None if o is None else o._impl for o in operands]
    compute = formula.promote(ops, common, *scalars) if formula.promote is not None else formula.compute_dtype(common)
    if formula.out_check is None:
        _it.check_out_dtype(formula.out_dtype(compute), out._impl.dtype)


def plan(opname: str, formula: UfuncFormula, impls, scalars, operands=None):
    """dtype half of the meta function: (compute dtype, out dtype, device)."""
    dev = _it.check_devices(opname, impls if not formula.device_order else [impls[i] for i in formula.device_order])
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
    if formula.layout is not None and dev.type == "cpu":
        want = formula.layout(impls, None)
        if want is not None:
            return _laid_out(r, out_dtype, dev, want)
    plain = _plain(formula, operands)
    r = _fix_result(r, out_dtype, dev, impls, plain)
    t = wrap(r, out_dtype, dev)
    if r.size == 0 and r.ndim > 1 and not plain:     # an empty array cannot tell its strides: the impl keeps them
        want = _expected_strides(tuple(r.shape), impls)
        if want is not None:
            t._impl._strides = want
    return t


def _laid_out(r, out_dtype, dev, strides):
    """The result as a fresh tensor with the given strides."""
    t = empty_tensor(tuple(r.shape), out_dtype, dev, tuple(strides))
    _it.xp_copy(t._impl._array, r)
    return t


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
    """PyTorch's output layout, or None where NumPy's row-major one is already it: contiguous inputs
    of one shape, or contiguous inputs and an output without size-0/1 dims (whose strides
    TensorIterator orders by the inputs' strides, size-1 dims included)."""
    first = impls[0]._array.shape
    same = True
    for i in impls:
        a = i._array
        if not a.flags.c_contiguous:
            break
        if a.shape != first:
            same = False
    else:
        if same or (1 not in shape and 0 not in shape):
            return None
    return tuple(output_strides_like(shape, _promoted_geometry(impls)))


def _promoted_geometry(impls):
    """(sizes, strides) of the operands as TensorIterator sees them on CPU: an input of another dtype
    than the common one is first copied to it (``to`` with preserve_format), which may restride it."""
    dt0 = impls[0].dtype
    common = None
    for i in impls:
        if i.dtype is not dt0:
            common = _it.common_dtype(impls)
            break
    out = []
    for i in impls:
        sizes = tuple(i._array.shape)
        strides = i.strides
        if common is not None and i.dtype is not common and sizes:
            strides = preserve_strides(sizes, strides)
        out.append((sizes, strides))
    return out


def out_variant(opname: str, formula: UfuncFormula, operands, scalars, out):
    try:
        r, out_dtype, dev, impls = _run(opname, formula, operands, scalars)
    except NotImplementedError:
        _out_dtype_first(opname, formula, operands, scalars, out)
        raise
    _it.check_iterator_output(dev, out._impl)
    _out_check(formula, operands, out_dtype, out, False)
    if formula.layout is not None and dev.type == "cpu":
        def layout():
            want = formula.layout(impls, out._impl)
            return _expected_strides(tuple(r.shape), impls) if want is None else want
    elif _plain(formula, operands):
        layout = None       # resized row-major, as the functional result is laid out
    else:
        def layout():
            return _expected_strides(tuple(r.shape), impls)
    return _it.write_out(opname, out, r, out_dtype, inputs=impls, layout=layout)


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
    _it.check_iterator_output(dev, self._impl)
    _out_check(formula, operands, out_dtype, self, True)
    return _it.write_out(opname, self, r, out_dtype, inplace=True, inputs=impls)


def meta_shape_dtype(opname: str, formula: UfuncFormula, operands, scalars):
    impls = _operands(opname, operands)
    compute_dtype, out_dtype, dev = plan(opname, formula, impls, scalars, operands)
    shape = _it.broadcast_operands([tuple(i._array.shape) for i in impls])
    if _plain(formula, operands):
        strides = contiguous_strides(shape)
    else:
        strides = meta_output_strides(shape, impls)
    return shape, strides, out_dtype, dev


def meta_output_strides(shape, impls):
    """The layout PyTorch's Meta elementwise kernels give (its Python references' rule, not
    TensorIterator's): the tensor operands broadcast to ``shape``, CPU scalars left out."""
    tensors = [i for i in impls if i._array.ndim or not (i.is_wrapped_number or i.device.type == "cpu")]
    common = _it.common_dtype(tensors) if tensors else None
    broadcast = []
    for i in tensors:
        sizes = tuple(i._array.shape)
        strides = i.strides
        if i.dtype is not common and not is_non_overlapping_and_dense(sizes, strides):
            strides = meta_like_strides(sizes, strides)     # the refs convert it first, restriding it
        broadcast.append(expand_geometry(sizes, strides, 0, shape)[1] if sizes != shape else strides)
    return elementwise_ref_strides(shape, broadcast)


def meta_functional(opname, formula, operands, scalars):
    shape, strides, out_dtype, dev = meta_shape_dtype(opname, formula, operands, scalars)
    return empty_tensor(shape, out_dtype, dev, strides)


def meta_out(opname, formula, operands, scalars, out):
    try:
        shape, strides, out_dtype, dev = meta_shape_dtype(opname, formula, operands, scalars)
    except NotImplementedError:
        _out_dtype_first(opname, formula, operands, scalars, out)
        raise
    _it.check_iterator_output(dev, out._impl)
    _out_check(formula, operands, out_dtype, out, False)
    if out_dtype is not out._impl.dtype:
        _it.check_out_dtype(out_dtype, out._impl.dtype)
    _it.resize_out(out, shape)      # torch's Meta out= (the refs' wrapper) resizes row-major
    return out


def meta_inplace(opname, formula, operands, scalars):
    self = operands[0]
    _inplace_check(formula, self)
    shape, strides, out_dtype, dev = meta_shape_dtype(opname, formula, operands, scalars)
    _it.check_iterator_output(dev, self._impl)
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


# --- kernels the generated registrations bind -------------------------------------
_FAST_KINDS = frozenset({"binary", "unary", "comparison", "unary_float", "binary_float", "abs"})


def dtypes_of(groups) -> tuple:
    """The dtypes of ``ufunc_inner_loop`` groups (``("AllAndComplex", "Half")``), in order, once each."""
    names = [n for g in groups for n in DTYPE_GROUPS[g]]
    return tuple(_dt.DTYPE_BY_NAME[n] for n in dict.fromkeys(names))


def _operand_wrapper(kinds):
    """Turns Scalar operands into wrapped-number tensors (``None`` when every operand is a Tensor)."""
    if all(k in ("Tensor", "Tensor?") for k in kinds):
        return None
    from .tensor_new import scalar_to_tensor

    def wrap_operands(values):
        return tuple(scalar_to_tensor(v) if k.startswith("Scalar") and v is not None else v
                     for k, v in zip(kinds, values))
    return wrap_operands


class Ufunc:
    """One formula instantiated for one backend: its per-dtype loops, and the kernels
    (functional, ``out=``, in-place) that generated registrations bind by name.

    Kernels take ``(keyset, *operands, *scalars[, out])``: operands are the formula's
    Tensor/Scalar inputs (``kinds``), scalars its other arguments."""

    def __init__(self, formula: UfuncFormula, backend_type: str, xp, dtype_groups, scalar_only=None):
        """``xp`` None: the backend's loops are made on first use (its namespace may not exist yet);
        ``scalar_only``: the formula of the ``ScalarOnly`` entry, for a tensor with a Python number."""
        self.formula = formula
        self.backend_type = backend_type
        dtypes = dtypes_of(dtype_groups)
        self.loops = instantiate(formula, backend_type, xp, dtypes) if xp is not None else {}
        fast = backend_type == "cpu" and xp is not None
        self.direct = instantiate_direct(formula, xp, dtypes) if fast else {}
        # dtype -> the bare NumPy function, where the formula reduces to it (no opmath casts)
        plain_ok = fast and formula.plain and (formula.skip_check is not None or formula.check is None)
        self.plain = {d: getattr(xp, formula.plain) for d in dtypes
                      if not (d in (_dt.float16, _dt.bfloat16) and formula.opmath)} if plain_ok else {}
        self.with_scalar = instantiate_scalar(scalar_only or formula, xp, dtypes) if fast else {}
        self.ready = self._ready()

    def _ready(self) -> dict:
        """dtype -> the bare NumPy function, for the dtypes where nothing else is needed: the formula keeps
        the dtype (no int -> float for ``unary_float``/``binary_float``, no complex for ``abs``), and
        ``skip_check`` holds whatever the operands (or for the scalars ``plain_scalars``).  The front of
        the CPU fast kernels looks the dtype up here and, when found, only calls it."""
        f = self.formula
        if f.n_scalars != len(f.plain_scalars):
            return {}
        out = {}
        for d, fn in self.plain.items():
            if f.kind in ("unary_float", "binary_float") and d.category < 2:
                continue
            if f.kind == "abs" and d.is_complex:
                continue
            if f.skip_check is not None and not f.skip_check(d, *f.plain_scalars):
                continue
            out[d] = fn
        return out

    def _fast_ok(self, kinds) -> bool:
        f = self.formula
        return (self.backend_type == "cpu" and f.kind in _FAST_KINDS and f.promote is None
                # a layout rule leaves the fast path, but abs's complex inputs (the only ones it lays out) leave
                # anyway, and a tensor with a Python number (pow.Tensor_Scalar) takes shapes with sizes 0 or 1
                # (where the layouts can differ) to the general path
                and f.plain_layout is None and (f.layout is None or f.kind == "abs" or kinds[1:] == ("Scalar",))
                and kinds[0] == "Tensor" and len(kinds) <= 2
                and all(k in ("Tensor", "Scalar") for k in kinds))

    # the general path of each variant: ``run(opname, formula, operands, scalars[, out])``
    run_functional = staticmethod(functional)
    run_out = staticmethod(out_variant)
    run_inplace = staticmethod(inplace_variant)

    def _general(self, opname: str, kinds, run, with_out: bool = False):
        """A kernel that wraps Scalar operands as tensors and calls a variant's general path."""
        formula, n, wrap_ops = self.formula, len(kinds), _operand_wrapper(kinds)

        def kernel(ks, *args):
            ops = args[:n] if wrap_ops is None else wrap_ops(args[:n])
            if with_out:
                return run(opname, formula, ops, args[n:-1], args[-1])
            return run(opname, formula, ops, args[n:])
        return kernel

    def functional(self, opname: str, kinds):
        if self._fast_ok(kinds):
            if len(kinds) == 1:
                return _ready_front(self, _unary_fast(self, opname))
            general = _binary_fast(self, opname, kinds[1] == "Scalar")
            return general if kinds[1] == "Scalar" else _ready_front(self, general, opname)
        kernel = self._general(opname, kinds, self.run_functional)
        if (self.backend_type == "cpu" and self.direct and self.formula.float_keeps_python_scalars
                and kinds[0] == "Tensor" and all(k.startswith("Scalar") for k in kinds[1:])):
            return _python_scalars_fast(self, len(kinds), kernel)
        return kernel

    def out(self, opname: str, kinds):
        return self._general(opname, kinds, self.run_out, with_out=True)

    def inplace(self, opname: str, kinds):
        if self._fast_ok(kinds) and self.plain and self.formula.kind != "comparison" and self.formula.n_scalars <= 1:
            return _inplace_fast(self, opname, len(kinds), kinds[-1] == "Scalar")
        return self._general(opname, kinds, self.run_inplace)


class MetaUfunc(Ufunc):
    """The Meta twins: shapes, dtypes and checks, no data."""

    run_functional = staticmethod(meta_functional)
    run_out = staticmethod(meta_out)
    run_inplace = staticmethod(meta_inplace)

    def __init__(self, formula: UfuncFormula):
        super().__init__(formula, "meta", None, ())


_FLOAT_LIMITS = {_dt.float32: float(_np.finfo(_np.float32).max), _dt.float64: float(_np.finfo(_np.float64).max)}


def _kept_number(dt, v, a):
    """The Python number to hand NumPy with a float32/float64 array ``a`` when the number keeps ``dt``
    (PyTorch: a wrapped number does not promote a float tensor; NumPy: a Python scalar is weak, cast
    to the array's dtype): a real number within ``dt``'s range (NumPy warns when casting beyond it).
    None otherwise.  (The caller checks the layout of a result from a non-contiguous ``a``.)"""
    lim = _FLOAT_LIMITS.get(dt)
    if lim is None or not (type(v) is float or type(v) is int or type(v) is bool) or not -lim <= v <= lim:
        return None
    return v


def _ready_front(uf: Ufunc, general, opname: str = ""):
    """The commonest CPU calls first: operands of one dtype that ``uf.ready`` has, or a float tensor with
    a Python number (``h * 1.01``), and (for add/sub) the default ``alpha=1``.  The bare NumPy function
    runs on the arrays and its result is wrapped; anything else (promotion, a layout PyTorch would order
    otherwise) is ``general``'s.

    These fronts run for most calls of most programs, so each is one Python frame: the stores of
    ``tensor_new.wrap_cpu`` (the definition of a new CPU result) are spelled out in them rather than
    called (a call costs as much as the stores)."""
    ready = uf.ready
    if not ready or uf.formula.operand_check is not None:
        return general
    to_bool = _dt.bool if uf.formula.kind == "comparison" else None
    if uf.formula.n_tensors == 1:
        def unary(ks, self):
            ai = self._impl
            dt = ai.dtype
            fn = ready.get(dt)
            if fn is not None:
                a = ai._array
                if a.ndim < 2 or a.flags.c_contiguous:
                    r = fn(a)
                else:
                    r = fn(a)           # (an expanded gradient): kept where PyTorch's layout is row-major too
                    if not _row_major_result(r, ai):
                        return general(ks, self)
                if type(r) is not _ndarray:
                    r = _np.asarray(r)
                impl = _TensorImpl()       # wrap_cpu's stores
                impl._array = r
                impl.dtype = to_bool or dt
                impl.device = _CPU
                impl.requires_grad = False
                impl._base = None
                if _tls_state().inference_mode:
                    impl.keyset = _CPU_INFERENCE_KS
                    impl._inference = True
                else:
                    impl.keyset = _CPU_KS
                    impl._inference = False
                t = _Tensor()
                t._impl = impl
                return t
            return general(ks, self)
        return unary if not uf.formula.plain_scalars else general

    # add/sub take the bare function only for alpha=1 (``plain_scalars``); the other binary ops have no
    # scalar, and their calls leave ``alpha`` at that default
    has_alpha = bool(uf.formula.plain_scalars)
    want = uf.formula.plain_scalars[0] if has_alpha else 1

    def binary(ks, self, other, alpha=want):
        ai = self._impl
        dt = ai.dtype
        fn = ready.get(dt)
        if fn is not None and alpha.__class__ is int and alpha == want:
            r = None
            bi = other._impl
            a = ai._array
            if dt is bi.dtype:
                # both at most 1-D: NumPy's result is a new contiguous vector, as PyTorch's (a 0-d operand
                # broadcast included; shapes that do not broadcast make NumPy raise, and the general path
                # raises PyTorch's error); or both contiguous of one shape.  Two wrapped numbers (0-d) go
                # to the general path, which gives them the default dtype.
                b = bi._array
                na = a.ndim
                if na < 2 and b.ndim < 2:
                    if na or not ai.is_wrapped_number:
                        try:
                            r = fn(a, b)
                        except ValueError:
                            pass
                elif a.shape == b.shape and a.flags.c_contiguous and b.flags.c_contiguous:
                    r = fn(a, b)
                else:
                    # broadcast or non-contiguous operands: NumPy's result where PyTorch's is row-major too
                    # (shapes that do not broadcast make NumPy raise, and the general path raises PyTorch's error)
                    try:
                        r = fn(a, b)
                    except ValueError:
                        pass
                    else:
                        if not _row_major_result(r, ai, bi):
                            r = None
            elif bi.is_wrapped_number and not ai.is_wrapped_number:
                v = _kept_number(dt, bi.wrapped_value, a)
                if v is not None:
                    r = fn(a, v)
                    if a.ndim > 1 and not a.flags.c_contiguous and not _row_major_result(r, ai):
                        r = None        # PyTorch lays this result out otherwise: the general path
            if r is not None:
                if type(r) is not _ndarray:
                    r = _np.asarray(r)
                impl = _TensorImpl()           # wrap_cpu's stores
                impl._array = r
                impl.dtype = to_bool or dt
                impl.device = _CPU
                impl.requires_grad = False
                impl._base = None
                if _tls_state().inference_mode:
                    impl.keyset = _CPU_INFERENCE_KS
                    impl._inference = True
                else:
                    impl.keyset = _CPU_KS
                    impl._inference = False
                t = _Tensor()
                t._impl = impl
                return t
        if has_alpha:
            return general(ks, self, other, alpha)
        return general(ks, self, other)
    return binary


def _binary_fast(uf: Ufunc, opname: str, wrap_other: bool):
    """CPU functional kernel for two operands.  Same dtypes: the bare NumPy function when the formula
    reduces to it, else the dtype's loop, straight on the arrays; a tensor with a wrapped Python number
    that keeps its dtype: the loop with the number; anything else (promotion, strided inputs whose
    result NumPy lays out otherwise than PyTorch) takes the general path."""
    formula, plain, direct, with_scalar = uf.formula, uf.plain, uf.direct, uf.with_scalar
    check, skip, operand_check = formula.check, formula.skip_check, formula.operand_check
    floating_only = formula.kind in ("unary_float", "binary_float")
    to_bool = formula.kind == "comparison"
    bool_ = _dt.bool

    def kernel(ks, self, other, *scalars):
        if wrap_other:
            other = _scalar_to_tensor(other)
        ai = self._impl
        bi = other._impl
        dt = ai.dtype
        a = ai._array
        if dt is bi.dtype and not ai.is_wrapped_number and not (floating_only and dt.category < 2):
            b = bi._array
            fn = plain.get(dt)
            if fn is not None and (skip is None or skip(dt, *scalars)):
                if operand_check is not None:
                    operand_check((ai, bi), dt, *scalars)
                try:
                    r = fn(a, b)
                except ValueError as exc:
                    raise_value_error(opname, (ai, bi), exc)
            else:
                loop = direct.get(dt)
                if loop is None:
                    return functional(opname, formula, (self, other), scalars)
                if operand_check is not None:
                    operand_check((ai, bi), dt, *scalars)
                if check is not None and (skip is None or not skip(dt, *scalars)):
                    check(dt, *scalars)
                try:
                    r = loop(a, b, *scalars)
                except ValueError as exc:
                    raise_value_error(opname, (ai, bi), exc)
            contiguous = a.flags.c_contiguous and b.flags.c_contiguous
        elif (bi.is_wrapped_number and not ai.is_wrapped_number and dt.category >= bi.dtype.category
              and dt.category >= 2 and bi.dtype is not bool_):
            loop = with_scalar.get(dt)
            if loop is None or (floating_only and dt.category < 2):
                return functional(opname, formula, (self, other), scalars)
            if operand_check is not None:
                operand_check((ai, bi), dt, *scalars)
            if check is not None and (skip is None or not skip(dt, *scalars)):
                check(dt, *scalars)
            try:
                r = loop(a, bi._array.astype(dt.np), *scalars)
            except (ValueError, OverflowError, TypeError):
                return functional(opname, formula, (self, other), scalars)
            contiguous = a.flags.c_contiguous
        elif (ai.is_wrapped_number and not bi.is_wrapped_number and bi.dtype.category >= dt.category
              and bi.dtype.category >= 2 and dt is not bool_):
            # a Python number first (``1 - t``, as backward formulas write): the tensor's dtype wins
            dt = bi.dtype
            loop = with_scalar.get(dt)
            if loop is None or (floating_only and dt.category < 2):
                return functional(opname, formula, (self, other), scalars)
            if operand_check is not None:
                operand_check((ai, bi), dt, *scalars)
            if check is not None and (skip is None or not skip(dt, *scalars)):
                check(dt, *scalars)
            b = bi._array
            try:
                r = loop(a.astype(dt.np), b, *scalars)
            except (ValueError, OverflowError, TypeError):
                return functional(opname, formula, (self, other), scalars)
            contiguous = b.flags.c_contiguous
        else:
            return functional(opname, formula, (self, other), scalars)
        if type(r) is not _ndarray:
            return _wrap_cpu(r, bool_ if to_bool else dt)
        if r.ndim > 1 and not (contiguous and (a.shape == other._impl._array.shape
                                               or (1 not in r.shape and 0 not in r.shape))):
            if not _row_major_result(r, ai, bi):
                # PyTorch orders the output's dims by the inputs' strides (size-1 dims too): the general path
                return functional(opname, formula, (self, other), scalars)
        return _wrap_cpu(r, bool_ if to_bool else dt)
    return kernel


def _row_major_result(r, *impls) -> bool:
    """Whether NumPy's result ``r`` already has PyTorch's layout for these operands although some is not
    contiguous (an expanded gradient, a sliced tensor): TensorIterator keeps the dims in order, and so makes
    a row-major output, when every operand's nonzero strides strictly decrease from the outer dim in (a
    broadcast dim, of size 1 or missing, has stride 0 there and takes no part in the ordering); NumPy's
    row-major ``r`` is that layout when no dim of the result has size 0 or 1 (whose strides TensorIterator
    also orders)."""
    shape = r.shape
    if 1 in shape or 0 in shape or not r.flags.c_contiguous:
        return False
    for impl in impls:
        a = impl._array
        last = None
        for n, st in zip(a.shape, a.strides):
            if st and n != 1:
                if last is not None and st >= last:
                    return False
                last = st
    return True


def _unary_fast(uf: Ufunc, opname: str):
    """CPU functional kernel for one operand in a dtype the formula keeps: the bare NumPy function
    (or the dtype's loop) on the array."""
    formula, plain, direct = uf.formula, uf.plain, uf.direct
    check, skip, operand_check = formula.check, formula.skip_check, formula.operand_check
    floating_only = formula.kind in ("unary_float", "binary_float")
    real_only = formula.kind == "abs"
    to_bool = formula.kind == "comparison"
    bool_ = _dt.bool

    def kernel(ks, self, *scalars):
        ai = self._impl
        dt = ai.dtype
        if (floating_only and dt.category < 2) or (real_only and dt.is_complex):
            return functional(opname, formula, (self,), scalars)
        a = ai._array
        fn = plain.get(dt)
        if fn is not None and (skip is None or skip(dt, *scalars)):
            if operand_check is not None:
                operand_check((ai,), dt, *scalars)
            r = fn(a)
        else:
            loop = direct.get(dt)
            if loop is None:
                return functional(opname, formula, (self,), scalars)
            if operand_check is not None:
                operand_check((ai,), dt, *scalars)
            if check is not None and (skip is None or not skip(dt, *scalars)):
                check(dt, *scalars)
            try:
                r = loop(a, *scalars)
            except ValueError as exc:
                raise_value_error(opname, (ai,), exc)
        if type(r) is not _ndarray:
            return _wrap_cpu(r, bool_ if to_bool else dt)
        if r.ndim > 1 and not a.flags.c_contiguous and not _row_major_result(r, ai):
            return functional(opname, formula, (self,), scalars)
        return _wrap_cpu(r, bool_ if to_bool else dt)
    return kernel


def _inplace_fast(uf: Ufunc, opname: str, n: int, wrap_other: bool):
    """CPU in-place kernel (``a.add_(b)``): when self is a plain contiguous normal tensor and the other
    operand has its dtype and shape and shares no memory with it, the bare NumPy function writes
    straight into self; anything else (broadcasting, casts, overlap, inference tensors) takes the
    general path with all of PyTorch's checks."""
    formula, ready, want = uf.formula, uf.ready, uf.formula.plain_scalars
    operand_check = formula.operand_check
    may_share = _np.may_share_memory

    # add_/sub_ take the bare function only for alpha=1 (``plain_scalars``); the other ops with a ``ready``
    # function have no scalar, and their calls leave ``alpha`` at that default
    has_alpha = formula.n_scalars == 1
    want1 = want[0] if want else 1

    def binary(ks, self, other, alpha=want1):
        if wrap_other:
            other = _scalar_to_tensor(other)
        ai = self._impl
        bi = other._impl
        dt = ai.dtype
        fn = ready.get(dt)
        if fn is not None and dt is bi.dtype and not ai._inference and alpha.__class__ is int and alpha == want1:
            a = ai._array
            b = bi._array
            if type(a) is _ndarray:
                if a.base is None:
                    # self owns its memory: one dense block, no element written twice; two arrays that own
                    # their memory never overlap (np.may_share_memory costs ~0.4 us); an operand that does
                    # not broadcast to self's shape makes NumPy raise, and the general path raises PyTorch's
                    ok = (b.base is None and a is not b) or ai is bi or not may_share(a, b)
                else:
                    ok = a.flags.c_contiguous and a.shape == b.shape and (ai is bi or not may_share(a, b))
                if ok:
                    if operand_check is not None:
                        operand_check((ai, bi), dt, alpha) if has_alpha else operand_check((ai, bi), dt)
                    try:
                        fn(a, b, out=a)
                    except ValueError:
                        ok = False
                    if ok:
                        vc = ai._vc
                        if vc is None:
                            ai._vc = [1]
                        else:
                            vc[0] += 1
                        return self
        if has_alpha:
            return inplace_variant(opname, formula, (self, other), (alpha,))
        return inplace_variant(opname, formula, (self, other), ())

    def unary(ks, self, *scalars):
        ai = self._impl
        dt = ai.dtype
        a = ai._array
        fn = ready.get(dt) if not scalars else None
        if fn is not None and not ai._inference and type(a) is _ndarray and a.flags.c_contiguous:
            if operand_check is not None:
                operand_check((ai,), dt, *scalars)
            fn(a, out=a)
            vc = ai._vc
            if vc is None:
                ai._vc = [1]
            else:
                vc[0] += 1
            return self
        return inplace_variant(opname, formula, (self,), scalars)
    return binary if n == 2 else unary


_INT64_LIMIT = 2 ** 63      # a larger Python int is refused by the general path, as PyTorch refuses it


def _python_scalars_fast(uf: Ufunc, n: int, general):
    """CPU functional kernel for a float32/float64 tensor with Python-number operands (``x.clamp(min=0)``):
    the formula on the array and the numbers; anything else goes to ``general``."""
    fn, f32, f64 = uf.formula.fn, _dt.float32, _dt.float64

    def kernel(ks, self, *rest):
        ai = self._impl
        dt = ai.dtype
        if dt is f32 or dt is f64:
            given = False
            for v in rest[:n - 1]:
                tv = type(v)
                if tv is float or (tv is int and -_INT64_LIMIT <= v < _INT64_LIMIT):
                    given = True
                elif v is not None:
                    return general(ks, self, *rest)
            a = ai._array
            if given and type(a) is _ndarray and (a.ndim < 2 or a.flags.c_contiguous):
                r = fn(_np, a, *rest)
                if type(r) is _ndarray:
                    return _wrap_cpu(r, dt)
        return general(ks, self, *rest)
    return kernel
