"""Autocast against PyTorch 2.13: the policy table, output dtypes per policy operator, gradients, the trace,
region semantics (nesting, enabled=False, exceptions, threads, decorator, weight cache), custom_fwd, bad input,
and a bfloat16 MLP trained 50 SGD steps."""
from __future__ import annotations

import os
import sys
import threading
import re
import warnings

import numpy as np
import pytest
import yaml

import onion
from tests.conftest import dispatch_trace, torch

pytestmark = pytest.mark.oracle

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "opinfo"))
POLICY = os.path.join(os.path.dirname(onion.__file__), "aten", "autocast_policy.yaml")


def _policy():
    with open(POLICY) as f:
        return yaml.safe_load(f)


def _names(device):
    return {n.split("->")[0].strip() for names in _policy()[device].values() for n in names}


@pytest.mark.parametrize("device,key", [("cpu", "AutocastCPU"), ("cuda", "AutocastCUDA")])
def test_table_lists_what_pytorch_registers(device, key):
    """The table's overloads per device are exactly those PyTorch 2.13 registers at the Autocast key."""
    theirs = {n[len("aten::"):] for n in torch._C._dispatch_get_all_op_names()
              if n.startswith("aten::") and torch._C._dispatch_has_kernel_for_dispatch_key(n, key)}
    assert _names(device) == theirs


def _onion_has(name):
    base, _, overload = name.partition(".")
    packet = getattr(onion.ops.aten, base, None)
    return packet is not None and hasattr(packet, overload or "default")


def _cpu_policy_ops():
    return sorted(n for n in _names("cpu") if _onion_has(n))


def test_generated_kernels_cover_the_table():
    """Every CPU-policy overload onion declares has an AutocastCPU kernel; the others are listed as skipped."""
    from onion._generated import register_autocast_cpu as gen
    have = _cpu_policy_ops()
    assert {"mm", "bmm", "addmm", "matmul", "linear", "cat", "stack", "prod"} <= set(have)
    assert set(gen.SKIPPED) == _names("cpu") - set(have)
    for name in have:
        dump = onion._C._dispatch_dump(f"aten::{name}")
        assert "AutocastCPU: " in dump and "register_autocast_cpu.py" in dump, name


# ---- output dtypes over the policy table, on PyTorch's OpInfo samples ----------------------------------

_OPINFO_ALIASES = {"linear": "nn.functional.linear", "linalg_qr": "linalg.qr", "linalg_inv_ex": "linalg.inv_ex"}


def _opinfo_entries(name):
    from torch.testing._internal.common_methods_invocations import op_db
    base = name.partition(".")[0]
    want = _OPINFO_ALIASES.get(base, base)
    return [op for op in op_db if op.name == want]


def _onion_fn(op):
    from opinfo_entries import onion_callable
    fn = onion_callable(op.op)
    if fn is None and "." in op.name:            # nn.functional.linear, linalg.qr: the same path on onion
        fn = onion
        for part in op.name.split("."):
            fn = getattr(fn, part, None)
    return fn


def _dtypes_of(x):
    if isinstance(x, (list, tuple)):
        return [d for v in x for d in _dtypes_of(v)]
    if hasattr(x, "dtype") and not isinstance(x, (np.ndarray, np.generic)):
        return [str(x.dtype).split(".")[-1]]
    return []


def _run(fn, args, kwargs, autocast):
    try:
        with autocast:
            return "ok", _dtypes_of(fn(*args, **kwargs))
    except Exception as e:  # noqa: BLE001 - the exception type is the answer compared
        return "error", type(e).__name__


def _mixed(sample_args):
    """The sample with its first floating tensor in bfloat16 (a mixed-precision input)."""
    out, done = [], False
    for a in sample_args:
        if not done and isinstance(a, torch.Tensor) and a.is_floating_point():
            a, done = a.to(torch.bfloat16), True
        out.append(a)
    return out, done


CPU_OPS = [n for n in (
    "mm", "bmm", "addmm", "baddbmm", "addbmm", "matmul", "linear", "cat", "stack", "index_copy", "prod",
    "trace", "cdist", "polar", "quantile", "nanquantile", "cholesky", "cholesky_inverse", "cholesky_solve",
    "pinverse", "qr", "svd", "triangular_solve", "view_as_complex", "lu_solve", "ormqr", "geqrf",
    "linalg_qr", "linalg_inv_ex")]


@pytest.mark.parametrize("name", CPU_OPS)
def test_policy_output_dtypes_match_pytorch(name):
    from opinfo_convert import Unconvertible, to_onion
    if not _onion_has(name) and not _onion_has(name + ".default"):
        pytest.skip(f"onion has no {name}")
    entries = [op for op in _opinfo_entries(name) if _onion_fn(op) is not None]
    assert entries, f"no OpInfo entry with an onion callable for {name}"
    compared = 0
    for op in entries:
        ofn = _onion_fn(op)
        for dt in (torch.float32, torch.float64):
            if dt not in op.supported_dtypes("cpu"):
                continue
            for i, s in enumerate(op.sample_inputs("cpu", dt, requires_grad=False)):
                if i >= 3:
                    break
                variants = [list((s.input, *s.args))]
                mixed, ok = _mixed(variants[0])
                if ok and dt == torch.float32:
                    variants.append(mixed)
                for targs in variants:
                    try:
                        oargs, okw = to_onion(targs), to_onion(s.kwargs)
                    except Unconvertible:
                        continue
                    want = _run(op.op, targs, s.kwargs, torch.autocast("cpu"))
                    got = _run(ofn, oargs, okw, onion.autocast("cpu"))
                    assert got == want, (name, dt, i, targs[0].dtype)
                    compared += 1
    assert compared


def test_default_dtypes_and_fp32_policy_keeps_float64():
    assert onion.get_autocast_dtype("cpu") == onion.bfloat16 and torch.get_autocast_dtype("cpu") == torch.bfloat16
    assert onion.get_autocast_dtype("cuda") == onion.float16
    x = onion.ones(2, 2, dtype=onion.float64)
    with onion.autocast("cpu"):
        assert onion.mm(x, x).dtype == onion.float64          # float64 is never cast
        assert onion.prod(x.to(onion.bfloat16)).dtype == onion.float32


def test_gradients_reach_float32_leaves_in_float32():
    rng = np.random.default_rng(0)
    xa, wa = rng.standard_normal((4, 6), dtype=np.float32), rng.standard_normal((6, 3), dtype=np.float32)
    ow = onion.tensor(wa, requires_grad=True)
    tw = torch.tensor(wa, requires_grad=True)
    with onion.autocast("cpu"):
        oy = onion.mm(onion.tensor(xa), ow)
    with torch.autocast("cpu"):
        ty = torch.mm(torch.tensor(xa), tw)
    assert oy.dtype == onion.bfloat16 and ty.dtype == torch.bfloat16
    (oy.float() ** 2).sum().backward()
    (ty.float() ** 2).sum().backward()
    assert ow.grad.dtype == onion.float32 and tw.grad.dtype == torch.float32
    np.testing.assert_allclose(ow.grad.numpy(), tw.grad.numpy(), rtol=2e-2, atol=1e-2)


def test_operator_outside_policy_runs_at_input_dtype_and_skips_the_key():
    a = onion.ones(3)
    with onion.autocast("cpu"):
        with dispatch_trace(2) as buf:
            r = onion.add(a, a)
        m = onion.ones(2, 2)
        with dispatch_trace(1) as mm_buf:
            onion.mm(m, m)
    with torch.autocast("cpu"):
        assert torch.add(torch.ones(3), torch.ones(3)).dtype == torch.float32
    assert r.dtype == onion.float32
    text = buf.getvalue()
    assert "skipped as fallthrough: AutocastCPU" in text
    assert "key=[AutocastCPU]" not in text
    assert mm_buf.getvalue().splitlines()[0] == "[call] op=[aten::mm], key=[AutocastCPU]"
    with dispatch_trace(1) as off:              # outside a region the key is excluded: never reached
        onion.mm(m, m)
    assert "Autocast" not in off.getvalue()


# ---- region semantics -----------------------------------------------------------------------------------

def _state():
    return (onion.is_autocast_enabled("cpu"), onion.get_autocast_dtype("cpu"), onion.is_autocast_cache_enabled())


def _tstate():
    return (torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu"), torch.is_autocast_cache_enabled())


def _same(o, t):
    return o[0] == t[0] and str(o[1]).split(".")[-1] == str(t[1]).split(".")[-1] and o[2] == t[2]


def test_nesting_enabled_false_and_restore_on_exception():
    seen_o, seen_t = [], []
    for ac, seen, st in ((onion.autocast, seen_o, _state), (torch.autocast, seen_t, _tstate)):
        seen.append(st())
        with ac("cpu"):
            seen.append(st())
            with ac("cpu", enabled=False):
                seen.append(st())
                with ac("cpu", dtype=(onion.float16 if ac is onion.autocast else torch.float16),
                        cache_enabled=False):
                    seen.append(st())
                seen.append(st())
            seen.append(st())
            with pytest.raises(ValueError):
                with ac("cpu", enabled=False):
                    raise ValueError("boom")
            seen.append(st())
        seen.append(st())
    assert len(seen_o) == len(seen_t)
    assert all(_same(o, t) for o, t in zip(seen_o, seen_t)), (seen_o, seen_t)
    x = onion.ones(2, 2)
    with onion.autocast("cpu"):
        with onion.autocast("cpu", enabled=False):
            assert onion.mm(x, x).dtype == onion.float32
        assert onion.mm(x, x).dtype == onion.bfloat16
    assert onion.mm(x, x).dtype == onion.float32


def test_state_is_per_thread_and_decorator():
    seen = {}

    def other():
        seen["enabled"] = onion.is_autocast_enabled("cpu")
        seen["dtype"] = onion.mm(onion.ones(2, 2), onion.ones(2, 2)).dtype

    with onion.autocast("cpu"):
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert seen == {"enabled": False, "dtype": onion.float32}

    @onion.autocast("cpu", dtype=onion.float16)
    def f(a):
        return onion.mm(a, a), onion.get_autocast_dtype("cpu")

    out, dt = f(onion.ones(2, 2))
    assert out.dtype == onion.float16 and dt == onion.float16
    assert not onion.is_autocast_enabled("cpu") and onion.get_autocast_dtype("cpu") == onion.bfloat16


def test_set_autocast_enabled_and_amp_aliases():
    assert onion.amp.autocast is onion.autocast
    onion.set_autocast_enabled("cpu", True)
    try:
        assert onion.is_autocast_enabled("cpu")
        assert onion.mm(onion.ones(2, 2), onion.ones(2, 2)).dtype == onion.bfloat16
    finally:
        onion.set_autocast_enabled("cpu", False)
    assert not onion.is_autocast_enabled("cpu")
    with pytest.warns(FutureWarning, match=r"onion.amp.autocast\('cpu', args...\)"):
        ctx = onion.cpu.amp.autocast()
    with ctx:
        assert onion.is_autocast_enabled("cpu") and onion.get_autocast_dtype("cpu") == onion.bfloat16


def test_weight_cast_cache_as_pytorch():
    """A float32 leaf requiring grad is cast once per region (same cast tensor, so one ToCopyBackward0 node);
    a tensor that does not require grad is cast each time; the cache empties when the outer region exits."""
    results = {}
    for lib, ac in ((onion, onion.autocast), (torch, torch.autocast)):
        w = lib.ones(3, 3, requires_grad=True)
        x = lib.ones(3, 3)
        with ac("cpu"):
            a = lib.mm(x, w)
            b = lib.mm(x, w)
            c = lib.mm(w, x)
            same_w = a.grad_fn.next_functions[1][0] is b.grad_fn.next_functions[1][0]
            same_wc = a.grad_fn.next_functions[1][0] is c.grad_fn.next_functions[0][0]
        with ac("cpu"):
            d = lib.mm(x, w)
        new_region = d.grad_fn.next_functions[1][0] is not a.grad_fn.next_functions[1][0]
        with ac("cpu", cache_enabled=False):
            e, f = lib.mm(x, w), lib.mm(x, w)
        uncached = e.grad_fn.next_functions[1][0] is not f.grad_fn.next_functions[1][0]
        results[lib.__name__] = (same_w, same_wc, new_region, uncached)
    assert results["onion"] == results["torch"] == (True, True, True, True)


def test_custom_fwd_cast_inputs():
    class MyMM(onion.autograd.Function):
        @staticmethod
        @onion.amp.custom_fwd(device_type="cpu", cast_inputs=onion.float32)
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            ctx.inside = onion.is_autocast_enabled("cpu")
            return a.mm(b)

        @staticmethod
        @onion.amp.custom_bwd(device_type="cpu")
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            ctx.bwd_enabled = onion.is_autocast_enabled("cpu")
            return grad.mm(b.t()), a.t().mm(grad)

    class TMyMM(torch.autograd.Function):
        @staticmethod
        @torch.amp.custom_fwd(device_type="cpu", cast_inputs=torch.float32)
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a.mm(b)

        @staticmethod
        @torch.amp.custom_bwd(device_type="cpu")
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            return grad.mm(b.t()), a.t().mm(grad)

    a = onion.ones(2, 2, dtype=onion.bfloat16, requires_grad=True)
    ta = torch.ones(2, 2, dtype=torch.bfloat16, requires_grad=True)
    with onion.autocast("cpu"):
        out = MyMM.apply(a, onion.ones(2, 2))
    with torch.autocast("cpu"):
        tout = TMyMM.apply(ta, torch.ones(2, 2))
    assert out.dtype == onion.float32 and tout.dtype == torch.float32
    out.sum().backward()
    tout.sum().backward()
    assert a.grad.dtype == onion.bfloat16 and ta.grad.dtype == torch.bfloat16
    assert out.grad_fn is not None
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        onion.amp.custom_fwd(device_type=1)


def test_bad_input():
    with pytest.raises(RuntimeError, match="at start of device string: foo") as eo:
        onion.autocast("foo")
    with pytest.raises(RuntimeError, match="at start of device string: foo"):
        torch.autocast("foo")
    assert "Expected one of cpu, cuda" in str(eo.value)
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        onion.autocast(1)
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        torch.autocast(1)
    for odt, tdt in ((onion.float64, torch.float64), (onion.int32, torch.int32), (onion.float32, torch.float32)):
        with pytest.warns(UserWarning, match="CPU Autocast only supports dtypes of onion.bfloat16"):
            o = onion.autocast("cpu", dtype=odt)
        with pytest.warns(UserWarning, match="CPU Autocast only supports dtypes of torch.bfloat16"):
            t = torch.autocast("cpu", dtype=tdt)
        assert o._enabled is t._enabled is False
        with o:
            assert not onion.is_autocast_enabled("cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cuda_ok = torch.cuda.is_available()
    if not cuda_ok:
        with pytest.warns(UserWarning, match="CUDA is not available"):
            assert onion.autocast("cuda")._enabled is False
    # device types without autocast: PyTorch's errors, word for word (tests/amp/test_autocast_devices.py has more)
    for call in (lambda T: T.autocast("meta"), lambda T: T.autocast("meta", enabled=False),
                 lambda T: T.get_autocast_dtype("lazy"), lambda T: T.is_autocast_enabled("meta"),
                 lambda T: T.autocast("hip"), lambda T: T.autocast("meta", dtype=T.bfloat16)):
        with pytest.raises(RuntimeError) as te:
            call(torch)
        with pytest.raises(RuntimeError, match=re.escape(str(te.value))):
            call(onion)
    with pytest.raises(RuntimeError, match="at start of device string: foo"):
        onion.is_autocast_enabled("foo")


# ---- an MLP trained under autocast(bfloat16) ------------------------------------------------------------

def _train(lib, ac, data, steps=50, lr=0.05):
    x, y, w1, w2 = (lib.tensor(a) for a in data)
    w1.requires_grad_(True)
    w2.requires_grad_(True)
    losses = []
    for _ in range(steps):
        with ac("cpu", dtype=lib.bfloat16):
            h = lib.relu(lib.mm(x, w1))
            out = lib.mm(h, w2)
            loss = ((out.float() - y) ** 2).mean()
        loss.backward()
        with lib.no_grad():
            w1 -= lr * w1.grad
            w2 -= lr * w2.grad
            w1.grad = None
            w2.grad = None
        losses.append(float(loss))
    return np.array(losses)


def test_mlp_bfloat16_training_matches_pytorch():
    rng = np.random.default_rng(1234)
    data = (rng.standard_normal((32, 784), dtype=np.float32),
            rng.standard_normal((32, 10), dtype=np.float32),
            (rng.standard_normal((784, 128)) / np.sqrt(784)).astype(np.float32),
            (rng.standard_normal((128, 10)) / np.sqrt(128)).astype(np.float32))
    lo = _train(onion, onion.autocast, data)
    lt = _train(torch, torch.autocast, data)
    assert lt[-1] < lt[0]
    np.testing.assert_allclose(lo, lt, rtol=2e-2)
