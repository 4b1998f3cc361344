"""FakeTensorMode over PyTorch's OpInfo samples: for every entry of the OpInfo harness (tests/opinfo), the fake
result has the real result's shape, dtype, strides and device, and where PyTorch's own FakeTensorMode raises
``DynamicOutputShapeException`` / ``DataDependentOutputException`` for a sample, onion's raises the same.

The default run takes one dtype per entry (float32 where supported) and its first sample; the ``slow`` run
takes every dtype the OpInfo harness does and every sample.
"""
from __future__ import annotations

import os
import sys

import pytest

torch = pytest.importorskip("torch")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "opinfo"))

import onion  # noqa: E402
import onion.utils._pytree as pytree  # noqa: E402
from onion._subclasses.fake_tensor import (DataDependentOutputException, DynamicOutputShapeException,  # noqa: E402
                                           FakeTensor, FakeTensorMode)
from opinfo_convert import Unconvertible, _ONION_DTYPES, run, to_onion  # noqa: E402
from opinfo_entries import entries, entry_is_seeded  # noqa: E402
from torch._subclasses import fake_tensor as tft  # noqa: E402

pytestmark = pytest.mark.oracle

_DATA_DEPENDENT = {tft.DynamicOutputShapeException: DynamicOutputShapeException,
                   tft.DataDependentOutputException: DataDependentOutputException}

# (entry key) -> why onion's fake run differs from the real run or from PyTorch's fake run
FAKE_KNOWN: dict = {}
# differences seen only in the full sweep (other samples)
FAKE_KNOWN_FULL: dict = {}


def _dtype_name(dt) -> str:
    return str(dt).split(".")[-1]


def _default_dtype(e):
    dts = [d for d in e.dtypes if d in _ONION_DTYPES]
    for pref in (torch.float32, torch.float64, torch.int64, torch.bool):
        if pref in dts:
            return pref
    return dts[0] if dts else None


ENTRIES = entries()
DEFAULT_CASES = [(e, _default_dtype(e)) for e in ENTRIES if _default_dtype(e) is not None]
FULL_CASES = [(e, dt) for e in ENTRIES for dt in e.dtypes
              if dt in _ONION_DTYPES and _dtype_name(dt) in ("bool", "int64", "bfloat16", "float32", "float64",
                                                             "complex128")]


def _torch_fake_outcome(fn, sample, seed):
    """PyTorch's FakeTensorMode on the sample: ('ok', result), ('err', exception)."""
    mode = tft.FakeTensorMode()
    conv = lambda x: mode.from_tensor(x) if isinstance(x, torch.Tensor) else x  # noqa: E731
    try:
        inp, args, kwargs = torch.utils._pytree.tree_map(conv, (sample.input, sample.args, sample.kwargs))
    except Exception as e:  # noqa: BLE001
        return "err", e
    with mode:
        return run(fn, inp, *args, seed=seed, **kwargs)


def _flat(x):
    return [t for t in pytree.tree_leaves(x) if isinstance(t, onion.Tensor)]


def _geometry_mismatch(real, fake) -> str | None:
    rl, fl = pytree.tree_leaves(real), pytree.tree_leaves(fake)
    if len(rl) != len(fl):
        return f"{len(fl)} results from the fake run, {len(rl)} from the real one"
    for i, (r, f) in enumerate(zip(rl, fl)):
        if isinstance(r, onion.Tensor):
            if not isinstance(f, FakeTensor):
                return f"result {i}: fake run returned {type(f).__name__}"
            if (tuple(f.shape), f.dtype, f.device) != (tuple(r.shape), r.dtype, r.device):
                return (f"result {i}: fake {tuple(f.shape)} {f.dtype} {f.device} vs real "
                        f"{tuple(r.shape)} {r.dtype} {r.device}")
            if any(a != b for a, b, n in zip(f.stride(), r.stride(), r.shape) if n > 1):
                return f"result {i}: fake strides {f.stride()} vs real {r.stride()} (shape {tuple(r.shape)})"
        elif type(r) is not type(f) or (r != f and r == r):
            return f"result {i}: fake {f!r} vs real {r!r}"
    return None


def check_entry(entry, dtype, n_samples):
    op = entry.op
    fn_t, fn_o = (op.op, entry.function) if entry.function is not None else (op.method_variant, entry.method)
    seed = 42 if entry_is_seeded(op) else None
    torch.manual_seed(0)
    problems = []
    ran = 0
    # the sample function itself: ``op.sample_inputs`` wraps it in a tracker that inspects the call stack
    # for every sample, which costs more than the fake and real runs together
    for i, s in enumerate(op.sample_inputs_func(op, "cpu", dtype, False)):
        if n_samples is not None and i >= n_samples:
            break
        try:
            memo: dict = {}
            o_in, o_args, o_kwargs = (to_onion(s.input, memo=memo), to_onion(s.args, memo=memo),
                                      to_onion(s.kwargs, memo=memo))
        except Unconvertible:
            continue
        real = run(fn_o, o_in, *o_args, seed=seed, **o_kwargs)
        mode = FakeTensorMode()
        f_in, f_args, f_kwargs = pytree.tree_map_only(onion.Tensor, mode.from_tensor, (o_in, o_args, o_kwargs))
        with mode:
            fake = run(fn_o, f_in, *f_args, seed=seed, **f_kwargs)
        tfake = _torch_fake_outcome(fn_t, s, seed)
        ran += 1
        t_dd = _DATA_DEPENDENT.get(type(tfake[1])) if tfake[0] == "err" else None
        if t_dd is not None:
            if fake[0] != "err" or type(fake[1]) is not t_dd:
                problems.append(f"sample {i}: torch's fake run raised {type(tfake[1]).__name__}({tfake[1]}); "
                                f"onion's {'returned' if fake[0] == 'ok' else 'raised ' + repr(fake[1])}")
            continue
        if fake[0] == "err" and type(fake[1]) in (DynamicOutputShapeException, DataDependentOutputException):
            if tfake[0] == "ok":
                problems.append(f"sample {i}: onion's fake run raised {fake[1]!r}; torch's returned")
            continue
        if real[0] == "err":
            continue            # the fake run may or may not see the problem (a Meta kernel cannot read values)
        if fake[0] == "err":
            if tfake[0] == "err":
                continue        # PyTorch's fake run fails too (an operator it has no fake kernel for)
            problems.append(f"sample {i}: fake run raised {type(fake[1]).__name__}: {fake[1]}")
            continue
        msg = _geometry_mismatch(real[1], fake[1])
        if msg is not None:
            problems.append(f"sample {i}: {msg}")
    return ran, problems


def _report(entry, problems, strict_known=False):
    known = FAKE_KNOWN if strict_known else {**FAKE_KNOWN, **FAKE_KNOWN_FULL}
    if problems and entry.key not in known:
        pytest.fail(f"{entry.key}:\n  " + "\n  ".join(problems[:4]), pytrace=False)
    if strict_known and not problems and entry.key in FAKE_KNOWN:
        pytest.fail(f"{entry.key} is listed in FAKE_KNOWN ({FAKE_KNOWN[entry.key]}) but matches now", pytrace=False)


@pytest.mark.parametrize("entry,dtype", DEFAULT_CASES, ids=[f"{e.key}-{_dtype_name(d)}" for e, d in DEFAULT_CASES])
def test_fake_matches_real(entry, dtype):
    _, problems = check_entry(entry, dtype, 1)
    _report(entry, problems, strict_known=True)


@pytest.mark.slow
@pytest.mark.parametrize("entry,dtype", FULL_CASES, ids=[f"{e.key}-{_dtype_name(d)}" for e, d in FULL_CASES])
def test_fake_matches_real_full(entry, dtype):
    _, problems = check_entry(entry, dtype, None)
    _report(entry, problems)
