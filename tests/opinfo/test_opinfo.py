"""PyTorch's OpInfo database as onion's operator specification.

For every OpInfo entry whose operator onion has (opinfo_entries.py finds them; nothing here is per
operator) and every dtype PyTorch supports for it on CPU, the samples PyTorch itself tests with run
through both libraries:

- values: the function and method variants give the same outcome (PyTorch's exception type, or a
  result with the same dtype, shape, strides on dimensions longer than one, values within PyTorch's
  default tolerances for the dtype, NaN at the same places), and a result that aliases an input in
  PyTorch aliases it in onion;
- noncontiguous: the same for ``sample.noncontiguous()``;
- meta: the function on Meta tensors gives the real result's shape, dtype and strides (or those of
  PyTorch's own Meta result, where its Meta kernel lays out otherwise than its CPU one);
- out: ``out=`` with a correctly sized tensor and with an empty one that must be resized;
- inplace: the in-place variant on a copy of the input, returning that tensor;
- grad: in float64/complex128, gradients for the same output gradients equal PyTorch's.

By default the first few samples of each (entry, dtype) run; the ``slow`` test runs all samples
and PyTorch's ``reference_inputs`` (extremal values, large and small magnitudes; gradients take every
``sample_inputs`` sample, as PyTorch's own gradient tests do).
"""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import onion  # noqa: E402
from opinfo_convert import (Unconvertible, onion_values, run, to_onion, torch_values,  # noqa: E402
                            _ONION_DTYPES)
from opinfo_entries import entries, entry_is_seeded, torch_excludes  # noqa: E402
from opinfo_known import KNOWN, KNOWN_FULL, MACHINE_DEPENDENT  # noqa: E402

pytestmark = pytest.mark.oracle

DEFAULT_SAMPLES = 2
# The default run takes these dtypes (where PyTorch supports them); the slow run takes every one.
DEFAULT_DTYPES = ("bool", "int64", "bfloat16", "float32", "float64", "complex128")
GRAD_DTYPES = (torch.float64, torch.complex128)


def _dtype_name(dt) -> str:
    return str(dt).split(".")[-1]


CASES = [(e, dt) for e in entries() for dt in e.dtypes if dt in _ONION_DTYPES]
CASE_IDS = [f"{e.key}-{_dtype_name(dt)}" for e, dt in CASES]
DEFAULT_CASES = [c for c in CASES if _dtype_name(c[1]) in DEFAULT_DTYPES]
DEFAULT_IDS = [f"{e.key}-{_dtype_name(dt)}" for e, dt in DEFAULT_CASES]


class Mismatch(AssertionError):
    pass


# ----------------------------------------------------------------------------- comparing results
def _tolerances(dt):
    from torch.testing._comparison import default_tolerances
    return default_tolerances(dt)


def _shares_storage(a, b) -> bool:
    """Same memory (storages of zero bytes have no address to share: they all report 0)."""
    sa, sb = a.untyped_storage(), b.untyped_storage()
    return sa.nbytes() > 0 and sb.nbytes() > 0 and sa.data_ptr() == sb.data_ptr()


def compare(ro, rt, where: str) -> None:
    """onion's result ``ro`` is PyTorch's ``rt``: same structure, tensors equal in dtype/shape/strides/values."""
    if isinstance(rt, torch.Tensor):
        if not isinstance(ro, onion.Tensor):
            raise Mismatch(f"{where}: expected a Tensor, onion returned {type(ro).__name__}")
        if _dtype_name(ro.dtype) != _dtype_name(rt.dtype):
            raise Mismatch(f"{where}: dtype onion {ro.dtype} vs torch {rt.dtype}")
        if tuple(ro.shape) != tuple(rt.shape):
            raise Mismatch(f"{where}: shape onion {tuple(ro.shape)} vs torch {tuple(rt.shape)}")
        so, st = ro.stride(), rt.stride()
        if any(a != b for a, b, n in zip(so, st, rt.shape) if n > 1):
            raise Mismatch(f"{where}: strides onion {so} vs torch {st} (shape {tuple(rt.shape)})")
        if rt.device.type == "meta" or ro.device.type == "meta":
            return
        a, b = onion_values(ro), torch_values(rt)
        rtol, atol = _tolerances(rt.dtype)
        try:
            torch.testing.assert_close(torch.from_numpy(np.ascontiguousarray(a)),
                                       torch.from_numpy(np.ascontiguousarray(b)), rtol=rtol, atol=atol,
                                       equal_nan=True, check_dtype=False)
        except AssertionError as e:
            raise Mismatch(f"{where}: values differ: {e}") from None
        return
    if isinstance(rt, (tuple, list)):
        if not isinstance(ro, (tuple, list)) or len(ro) != len(rt):
            raise Mismatch(f"{where}: onion returned {type(ro).__name__} where torch returned {len(rt)} values")
        for i, (a, b) in enumerate(zip(ro, rt)):
            compare(a, b, f"{where}[{i}]")
        return
    if isinstance(rt, (bool, int, float, complex)):
        same = ro == rt or (isinstance(rt, float) and rt != rt and ro != ro) or (
            isinstance(rt, (float, complex)) and np.isclose(ro, rt, rtol=1e-6, atol=1e-6))
        if not same or type(ro) is not type(rt):
            raise Mismatch(f"{where}: onion {ro!r} vs torch {rt!r}")
        return
    if rt != ro:
        raise Mismatch(f"{where}: onion {ro!r} vs torch {rt!r}")


def _flat_tensors(x):
    if isinstance(x, (torch.Tensor, onion.Tensor)):
        return [x]
    if isinstance(x, (tuple, list)):
        return [t for v in x for t in _flat_tensors(v)]
    if isinstance(x, dict):
        return [t for v in x.values() for t in _flat_tensors(v)]
    return []


def to_torch_meta(x, memo):
    """The same argument tree with every torch tensor (and device) moved to Meta, strides kept."""
    if isinstance(x, torch.Tensor):
        if id(x) not in memo:
            memo[id(x)] = torch.empty_strided(x.shape, x.stride(), dtype=x.dtype, device="meta").requires_grad_(x.requires_grad)
        return memo[id(x)]
    if isinstance(x, torch.device):
        return torch.device("meta")
    if isinstance(x, (list, tuple)):
        out = [to_torch_meta(v, memo) for v in x]
        return out if isinstance(x, list) else tuple(out)
    if isinstance(x, dict):
        return {k: to_torch_meta(v, memo) for k, v in x.items()}
    return x


# Random operators: both libraries are seeded alike before every call (onion draws PyTorch's CPU stream).
SEED = 42


def compare_outcomes(ro, rt, where: str) -> None:
    if rt[0] == "err":
        if ro[0] != "err":
            raise Mismatch(f"{where}: torch raised {type(rt[1]).__name__}: {rt[1]}; onion returned")
        if not isinstance(ro[1], type(rt[1])):
            raise Mismatch(f"{where}: onion raised {type(ro[1]).__name__}: {ro[1]}; "
                           f"torch raised {type(rt[1]).__name__}: {rt[1]}")
        return
    if ro[0] == "err":
        raise Mismatch(f"{where}: onion raised {type(ro[1]).__name__}: {ro[1]}")
    compare(ro[1], rt[1], where)


def check_aliasing(ro, rt, o_inputs, t_inputs, where):
    """A result that shares an input's storage in PyTorch (a view) shares it in onion, and only then."""
    for r_o, r_t in zip(_flat_tensors(ro), _flat_tensors(rt)):
        for i_o, i_t in zip(o_inputs, t_inputs):
            if _shares_storage(r_t, i_t) != _shares_storage(r_o, i_o):
                raise Mismatch(f"{where}: torch result {'aliases' if _shares_storage(r_t, i_t) else 'does not alias'}"
                               " an input; onion's does not do the same")


# ----------------------------------------------------------------------------- the checks
class _Sample:
    """A sample's three parts, for a call made of other values (the in-place check's cloned self)."""

    def __init__(self, input, args, kwargs):
        self.input, self.args, self.kwargs = input, args, kwargs


class Case:
    """One (entry, dtype): runs each check over the samples, collecting mismatches per check."""

    def __init__(self, entry, dtype, full: bool):
        self.entry, self.op, self.dtype, self.full = entry, entry.op, dtype, full
        self.seed = SEED if entry_is_seeded(entry.op) else None
        self.failures: dict[str, list[str]] = {}
        self.ran: set[str] = set()
        self._samples: dict[bool, list] = {}

    def samples(self, requires_grad=False):
        """The (entry, dtype)'s samples, made once (checks copy what they modify)."""
        if requires_grad not in self._samples:
            self._samples[requires_grad] = list(self._make_samples(requires_grad))
        return self._samples[requires_grad]

    def _make_samples(self, requires_grad):
        torch.manual_seed(0)
        it = self.op.sample_inputs("cpu", self.dtype, requires_grad=requires_grad)
        if self.full and not requires_grad:
            # reference_inputs are values tests (PyTorch's gradient tests take sample_inputs only): with
            # requires_grad some are integer tensors, Python numbers or views made without grad mode
            torch.manual_seed(1)
            try:
                it = itertools.chain(it, self.op.reference_inputs("cpu", self.dtype, requires_grad=requires_grad))
            except NotImplementedError:
                pass
        return itertools.islice(it, None if self.full else DEFAULT_SAMPLES)

    def attempt(self, check: str, i: int, body) -> None:
        if torch_excludes(self.op, check, self.dtype):
            return
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                body()
            self.ran.add(check)
        except Unconvertible:
            return
        except Mismatch as e:
            self.ran.add(check)
            self.failures.setdefault(check, []).append(f"sample {i}: {e}")

    # onion's side of a call: made, read back and compared (DeviceCase, in opinfo_device.py, overrides these
    # hooks to run onion on another device; the checks below are the same for every device) ----------------
    check_aliasing = True
    device = None           # where onion's tensors are made (None: the CPU)

    def args(self, sample, memo):
        """onion's (input, args, kwargs) for ``sample`` and, for each torch tensor among them (by id), its
        onion twin (aliasing and gradients are checked pairwise)."""
        o = (to_onion(sample.input, memo=memo), to_onion(sample.args, memo=memo), to_onion(sample.kwargs, memo=memo))
        return o, {tid: pair[1] for tid, pair in memo.items()}

    def convert(self, x):
        """A torch value tree on onion's side, on its own (output gradients)."""
        return to_onion(x)

    def new_out(self, shape, dtype):
        return onion.empty(shape, dtype=dtype, device=self.device)

    def outcome(self, ro, rt, where):
        """Compare two ``run`` outcomes: both results, or both exceptions."""
        compare_outcomes(ro, rt, where)

    def check(self, o, t, where):
        """Compare an onion tensor (tree) that is known to exist with torch's."""
        compare(o, t, where)

    # values, method, noncontiguous -------------------------------------------------------
    def variant(self, t_fn, o_fn, sample, where):
        memo: dict = {}
        (o_input, o_args, o_kwargs), by_torch = self.args(sample, memo)
        rt = run(t_fn, sample.input, *sample.args, **sample.kwargs, seed=self.seed)
        ro = run(o_fn, o_input, *o_args, **o_kwargs, seed=self.seed)
        self.outcome(ro, rt, where)
        if self.check_aliasing and rt[0] == "ok":
            t_inputs = _flat_tensors([sample.input, sample.args, sample.kwargs])
            check_aliasing(ro[1], rt[1], [by_torch[id(t)] for t in t_inputs], t_inputs, where)
        return ro, rt

    def check_values(self):
        e = self.entry
        for i, s in enumerate(self.samples()):
            if e.function is not None:
                self.attempt("values", i, lambda: self.variant(self.op.op, e.function, s, "function"))
            if e.method is not None and self.op.method_variant is not None:
                self.attempt("method", i, lambda: self.variant(self.op.method_variant, e.method, s, "method"))
            fn, o_fn = (self.op.op, e.function) if e.function is not None else (self.op.method_variant, e.method)
            self.attempt("noncontiguous", i, lambda: self.variant(fn, o_fn, s.noncontiguous(), "noncontiguous"))

    # meta ----------------------------------------------------------------------------------
    def check_meta(self):
        e = self.entry
        fn, o_fn = (self.op.op, e.function) if e.function is not None else (self.op.method_variant, e.method)
        for i, s in enumerate(self.samples()):
            def body(s=s):
                rt = run(fn, s.input, *s.args, **s.kwargs, seed=self.seed)
                if rt[0] == "err" or not _flat_tensors(rt[1]) or not isinstance(rt[1], (torch.Tensor, tuple, list)):
                    return
                kwargs = dict(s.kwargs)
                if not _flat_tensors([s.input, s.args, s.kwargs]) or kwargs.get("device") == "cpu":
                    kwargs["device"] = torch.device("cpu")      # a factory: made on Meta by asking for it
                t_memo: dict = {}
                rtm = run(fn, *to_torch_meta([s.input, *s.args], t_memo), **to_torch_meta(kwargs, t_memo),
                          seed=self.seed)
                memo: dict = {}
                ro = run(o_fn, to_onion(s.input, "meta", memo), *to_onion(s.args, "meta", memo),
                         **to_onion(kwargs, "meta", memo))
                if rtm[0] == "err":                 # PyTorch's Meta kernel refuses too (it reads values)
                    if ro[0] != "err":
                        raise Mismatch(f"meta: torch raised {type(rtm[1]).__name__}: {rtm[1]}; onion returned")
                    return
                if ro[0] == "err":
                    raise Mismatch(f"meta: onion raised {type(ro[1]).__name__}: {ro[1]}")
                for a in _flat_tensors(ro[1]):
                    if a.device.type != "meta":
                        raise Mismatch(f"meta: onion returned a {a.device} tensor")
                try:
                    compare(ro[1], rt[1], "meta")
                except Mismatch:
                    # PyTorch's own Meta kernel may lay out differently from its CPU one (Python references
                    # for empty_like/nan_to_num, CompositeExplicitAutograd ops on empty inputs): onion's Meta
                    # may follow either
                    try:
                        compare(ro[1], rtm[1], "meta")
                    except Mismatch:
                        pass
                    else:
                        return
                    raise
            self.attempt("meta", i, body)

    # out= ----------------------------------------------------------------------------------
    def check_out(self):
        e = self.entry
        if not self.op.supports_out or e.function is None:
            return
        for i, s in enumerate(self.samples()):
            def body(s=s, resize=False):
                expected = run(self.op.op, s.input, *s.args, **s.kwargs, seed=self.seed)
                if expected[0] == "err" or not isinstance(expected[1], torch.Tensor):
                    return
                ref = expected[1]
                t_out = torch.empty(0 if resize else ref.shape, dtype=ref.dtype)
                memo: dict = {}
                (o_in, o_args, o_kwargs), _ = self.args(s, memo)
                o_out = self.new_out(0 if resize else tuple(ref.shape), to_onion(ref.dtype))
                rt = run(self.op.op, s.input, *s.args, **s.kwargs, out=t_out, seed=self.seed)
                ro = run(e.function, o_in, *o_args, **o_kwargs, out=o_out, seed=self.seed)
                where = "out (empty, resized)" if resize else "out"
                if rt[0] == "ok" and ro[0] == "ok" and ro[1] is not o_out:
                    raise Mismatch(f"{where}: onion did not return the out tensor")
                self.outcome(ro, rt, where)
                if rt[0] == "ok":
                    self.check(o_out, t_out, where)
            self.attempt("out", i, body)
            self.attempt("out", i, lambda s=s: body(s, True))

    # in-place ------------------------------------------------------------------------------
    def check_inplace(self):
        e = self.entry
        if e.inplace is None:
            return
        for i, s in enumerate(self.samples()):
            def body(s=s):
                if not isinstance(s.input, torch.Tensor):
                    raise Unconvertible("a Python number as self has no in-place variant")
                t_self = s.input.clone()
                memo: dict = {}
                (o_self, o_args, o_kwargs), _ = self.args(_Sample(t_self, s.args, s.kwargs), memo)
                rt = run(self.op.inplace_variant, t_self, *s.args, **s.kwargs, seed=self.seed)
                ro = run(e.inplace, o_self, *o_args, **o_kwargs, seed=self.seed)
                if rt[0] == "ok" and ro[0] == "ok" and ro[1] is not o_self:
                    raise Mismatch("inplace: onion did not return self")
                self.outcome(ro, rt, "inplace")
                self.check(o_self, t_self, "inplace self")
            self.attempt("inplace", i, body)

    # gradients -----------------------------------------------------------------------------
    def check_grad(self):
        e = self.entry
        if self.dtype not in GRAD_DTYPES or not self.op.supports_autograd:
            return
        fn, o_fn = (self.op.op, e.function) if e.function is not None else (self.op.method_variant, e.method)
        for i, s in enumerate(self.samples(requires_grad=True)):
            def body(s=s):
                t_inputs = [t for t in _flat_tensors([s.input, s.args, s.kwargs]) if t.requires_grad]
                rt = run(fn, s.input, *s.args, **s.kwargs, seed=self.seed)
                if rt[0] == "err" or not t_inputs:
                    return
                # PyTorch's gradient tests differentiate the sample's processed output (for svd_lowrank, U @ V^H
                # and S, which do not depend on the singular vectors' signs); its method calls serve both
                process = s.output_process_fn_grad
                rt = ("ok", process(rt[1]))
                t_outs = [t for t in _flat_tensors(rt[1]) if t.requires_grad]
                if not t_outs:
                    return
                g = torch.Generator().manual_seed(i)
                t_gouts = [torch.randn(t.shape, dtype=t.dtype, generator=g) for t in t_outs]
                tg = run(torch.autograd.grad, t_outs, t_inputs, t_gouts, allow_unused=True)
                if tg[0] == "err":      # PyTorch's own backward fails (narrow_copy on an empty slice): no reference
                    return
                t_grads = tg[1]
                memo: dict = {}
                (o_input, o_args, o_kwargs), by_torch = self.args(s, memo)
                ro = run(o_fn, o_input, *o_args, **o_kwargs, seed=self.seed)
                if ro[0] == "err":
                    raise Mismatch(f"grad: onion forward raised {type(ro[1]).__name__}: {ro[1]}")
                ro = run(process, ro[1])
                if ro[0] == "err":
                    raise Mismatch(f"grad: processing onion's output raised {type(ro[1]).__name__}: {ro[1]}")
                o_outs = [o for o, t in zip(_flat_tensors(ro[1]), _flat_tensors(rt[1])) if t.requires_grad]
                if any(not o.requires_grad for o in o_outs):
                    raise Mismatch("grad: onion's result does not require grad")
                o_inputs = [by_torch[id(t)] for t in t_inputs]
                o_gouts = [self.convert(t) for t in t_gouts]
                rg = run(onion.autograd.grad, o_outs, o_inputs, o_gouts, allow_unused=True)
                if rg[0] == "err":
                    raise Mismatch(f"grad: onion backward raised {type(rg[1]).__name__}: {rg[1]}")
                for k, (a, b) in enumerate(zip(rg[1], t_grads)):
                    if (a is None) != (b is None):
                        raise Mismatch(f"grad[{k}]: onion {'None' if a is None else 'a tensor'} vs torch "
                                       f"{'None' if b is None else 'a tensor'}")
                    if b is not None:
                        self.check(a, b, f"grad[{k}]")
            self.attempt("grad", i, body)

    def run_all(self):
        self.check_values()
        self.check_meta()
        self.check_out()
        self.check_inplace()
        self.check_grad()


def _report(case: Case) -> None:
    key, dt = case.entry.key, _dtype_name(case.dtype)
    known = {**KNOWN, **KNOWN_FULL} if case.full else KNOWN
    problems = []
    for check, msgs in case.failures.items():
        if (key, check) in known or (key, check, dt) in known:
            continue
        problems.append(f"[{check}] " + "\n    ".join(msgs[:3]))
    # a difference listed for one dtype must still show there; one listed for every dtype may match on
    # some of them (its reason names the work that removes it)
    for check in sorted(case.ran - set(case.failures)):
        if (key, check, dt) in known and known[key, check, dt] not in MACHINE_DEPENDENT:
            problems.append(f"[{check}] listed in opinfo_known.py ({known[key, check, dt]}) but matches PyTorch now")
    if problems:
        pytest.fail(f"{key} ({dt}):\n" + "\n".join(problems), pytrace=False)


@pytest.mark.parametrize("entry,dtype", DEFAULT_CASES, ids=DEFAULT_IDS)
def test_opinfo(entry, dtype):
    case = Case(entry, dtype, full=False)
    case.run_all()
    _report(case)


@pytest.mark.slow
@pytest.mark.parametrize("entry,dtype", CASES, ids=CASE_IDS)
def test_opinfo_full(entry, dtype):
    case = Case(entry, dtype, full=True)
    case.run_all()
    _report(case)
