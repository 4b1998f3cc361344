"""Grad modes, inference mode and the dispatch trace; ``autograd.Function``; memory of a training loop.

Modes are compared with PyTorch as context managers and decorators, across
exceptions and threads; ``autograd.Function`` with the LegendrePolynomial3
example from PyTorch's docs and each ctx feature; the training loop checks
that a step leaves nothing behind (tracemalloc after 20 and after 200 steps).
"""
from __future__ import annotations

import gc
import threading
import tracemalloc

import numpy as np
import pytest

from conftest import assert_close, dispatch_trace, onion, torch


def data(*shape, seed=0):
    return np.round(np.random.default_rng(seed).uniform(-2, 2, shape), 3)


def both(fn):
    """fn(m) on onion and torch; the two results."""
    return fn(onion), fn(torch)


# ------------------------------------------------------------------ 5. grad modes
def _mode_states(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    with m.no_grad():
        seen.append((m.is_grad_enabled(), (x * 2).requires_grad))
        with m.enable_grad():
            seen.append((m.is_grad_enabled(), (x * 2).requires_grad))
        with m.set_grad_enabled(True):
            seen.append((m.is_grad_enabled(), (x * 2).requires_grad))
        seen.append((m.is_grad_enabled(), (x * 2).requires_grad))
    with m.set_grad_enabled(False):
        seen.append((m.is_grad_enabled(), (x * 2).requires_grad))
    seen.append((m.is_grad_enabled(), (x * 2).requires_grad))
    with m.inference_mode():
        seen.append((m.is_grad_enabled(), m.is_inference_mode_enabled(), (x * 2).requires_grad))
        with m.inference_mode(False):
            seen.append((m.is_grad_enabled(), m.is_inference_mode_enabled(), (x * 2).requires_grad))
    seen.append((m.is_grad_enabled(), m.is_inference_mode_enabled()))
    return seen


@pytest.mark.oracle
def test_context_managers_match_torch():
    so, st = both(_mode_states)
    assert so == st


def _decorators(m):
    seen = []

    @m.no_grad()
    def a():
        seen.append(("a", m.is_grad_enabled()))

    @m.no_grad
    def b():
        seen.append(("b", m.is_grad_enabled()))

    @m.enable_grad()
    def c():
        seen.append(("c", m.is_grad_enabled()))

    @m.set_grad_enabled(False)
    def d():
        seen.append(("d", m.is_grad_enabled()))

    @m.inference_mode()
    def e():
        seen.append(("e", m.is_grad_enabled(), m.is_inference_mode_enabled()))

    @m.inference_mode
    def f():
        seen.append(("f", m.is_grad_enabled(), m.is_inference_mode_enabled()))

    @m.inference_mode(False)
    def g():
        seen.append(("g", m.is_grad_enabled(), m.is_inference_mode_enabled()))

    seen.append(("start", m.is_grad_enabled()))
    a(); b(); c(); d(); e(); f(); g()  # noqa: E702
    with m.no_grad():
        c()
        g()
    seen.append(("end", m.is_grad_enabled(), m.is_inference_mode_enabled()))
    return seen, a.__name__, f.__name__


@pytest.mark.oracle
def test_decorators_match_torch():
    so, st = both(_decorators)
    assert so == st
    assert so[1:] == ("a", "f")


@pytest.mark.oracle
def test_set_grad_enabled_as_a_function():
    for m in (onion, torch):
        previous = m.is_grad_enabled()
        m.set_grad_enabled(False)
        try:
            assert not m.is_grad_enabled()
            assert not (m.ones(1, requires_grad=True) * 2).requires_grad
        finally:
            m.set_grad_enabled(previous)
        assert m.is_grad_enabled() is previous


@pytest.mark.oracle
@pytest.mark.parametrize("mode", ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "decorator"])
def test_modes_restored_on_exception(mode):
    def run(m):
        make = {"no_grad": m.no_grad, "enable_grad": m.enable_grad,
                "set_grad_enabled": lambda: m.set_grad_enabled(False),
                "inference_mode": m.inference_mode, "decorator": m.no_grad}[mode]
        with m.no_grad() if mode == "enable_grad" else m.enable_grad():
            before = (m.is_grad_enabled(), m.is_inference_mode_enabled(), onion._C._dispatch_tls_local_exclude_set()
                      if m is onion else None, onion._C._dispatch_tls_local_include_set() if m is onion else None)
            with pytest.raises(ValueError):
                if mode == "decorator":
                    @make()
                    def boom():
                        raise ValueError("boom")
                    boom()
                else:
                    with make():
                        raise ValueError("boom")
            after = (m.is_grad_enabled(), m.is_inference_mode_enabled(), onion._C._dispatch_tls_local_exclude_set()
                     if m is onion else None, onion._C._dispatch_tls_local_include_set() if m is onion else None)
        return before, after
    (bo, ao), (bt, at) = both(run)
    assert bo == ao and bt == at
    assert bo[:2] == bt[:2]


def _thread_states(m):
    out = {}

    def worker(key):
        out[key] = (m.is_grad_enabled(), m.is_inference_mode_enabled(),
                    (m.ones(2, requires_grad=True) * 2).requires_grad)

    with m.no_grad():
        t = threading.Thread(target=worker, args=("in_no_grad",))
        t.start()
        t.join()
    with m.inference_mode():
        t = threading.Thread(target=worker, args=("in_inference",))
        t.start()
        t.join()

    def disabler():
        m.set_grad_enabled(False)
        out["disabler"] = m.is_grad_enabled()
    t = threading.Thread(target=disabler)
    t.start()
    t.join()
    out["main_after"] = m.is_grad_enabled()
    return out


@pytest.mark.oracle
def test_grad_mode_is_per_thread():
    so, st = both(_thread_states)
    assert so == st
    assert so["in_no_grad"] == (True, False, True)


@pytest.mark.oracle
def test_inference_tensors_match_torch():
    def run(m):
        x = m.tensor(data(3), requires_grad=True)
        with m.inference_mode():
            t = m.ones(3)
            y = x * 2
            v = t[1:]
            inside = (t.is_inference(), y.is_inference(), y.requires_grad, v.is_inference(), x.is_inference())
        n = m.ones(3)
        outside = (t.is_inference(), n.is_inference(), (t + n).is_inference(), (t + x).requires_grad,
                   (t + x).is_inference())
        with m.no_grad():
            nog = m.ones(3)
        return inside, outside, nog.is_inference()
    so, st = both(run)
    assert so == st


def _saved_inference(m):
    with m.inference_mode():
        t = m.ones(3)
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    return x * t


def _saved_inference_exp(m):
    with m.inference_mode():
        t = m.ones(3)
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    return (x + t).exp() * t


def _inference_inplace_outside(m):
    with m.inference_mode():
        t = m.ones(3)
    t.add_(1)


def _inference_version_outside(m):
    with m.inference_mode():
        t = m.ones(3)
    return t._version


@pytest.mark.oracle
@pytest.mark.parametrize("fn", [_saved_inference, _saved_inference_exp])
def test_inference_tensor_saved_for_backward_errors_like_torch(fn):
    with pytest.raises(RuntimeError) as et:
        fn(torch)
    with pytest.raises(RuntimeError) as eo:
        fn(onion)
    assert str(eo.value) == str(et.value)
    assert str(eo.value).startswith("Inference tensors cannot be saved for backward.")


@pytest.mark.oracle
def test_inference_tensor_used_where_not_saved_is_fine():
    res = []
    for m in (onion, torch):
        with m.inference_mode():
            t = m.ones(3) * 3
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        (x + t).sum().backward()
        y = t.clone()
        assert not y.is_inference()
        (x * y).sum().backward()
        res.append(x.grad)
    assert_close(res[0], res[1])


@pytest.mark.oracle
@pytest.mark.parametrize("fn", [_inference_inplace_outside, _inference_version_outside])
def test_inference_tensor_inplace_and_version_outside_inference_mode(fn):
    with pytest.raises(RuntimeError) as et:
        fn(torch)
    try:
        fn(onion)
    except RuntimeError as e:
        assert str(e) == str(et.value)
        return
    pytest.xfail("onion lets an inference tensor be updated in place / report a version outside inference mode; "
                 "PyTorch raises (inference tensors have no version counter): TensorImpl.bump_version / "
                 f"Tensor._version in onion/core are where the check belongs. torch: {et.value}")


def same_error(run):
    """``run(torch)`` and ``run(onion)`` both raise RuntimeError with the same text."""
    with pytest.raises(RuntimeError) as et:
        run(torch)
    with pytest.raises(RuntimeError) as eo:
        run(onion)
    assert str(eo.value) == str(et.value)


def _trace(fn):
    with dispatch_trace(1) as s:
        fn()
    return [ln.strip() for ln in s.getvalue().splitlines() if ln.strip()]


def test_dispatch_trace_autograd_then_cpu():
    a = onion.tensor([1.0, 2.0]).requires_grad_()
    b = onion.tensor([3.0, 4.0])
    lines = _trace(lambda: a + b)
    assert lines == ["[call] op=[aten::add.Tensor], key=[AutogradCPU]",
                     "[redispatch] op=[aten::add.Tensor], key=[CPU]"]


def test_dispatch_trace_no_grad_still_passes_autograd():
    """no_grad is a flag read by the autograd kernel: the key is still visited."""
    a = onion.tensor([1.0, 2.0]).requires_grad_()
    with onion.no_grad():
        lines = _trace(lambda: a + a)
    assert [ln.split("key=")[1] for ln in lines] == ["[AutogradCPU]", "[CPU]"]


def test_dispatch_trace_inference_mode_only_cpu():
    a = onion.tensor([1.0, 2.0]).requires_grad_()
    b = onion.tensor([3.0, 4.0])
    with onion.inference_mode():
        lines = _trace(lambda: a + b)
        with onion.inference_mode(False):
            lines2 = _trace(lambda: a + b)
    assert lines == ["[call] op=[aten::add.Tensor], key=[CPU]"]
    assert [ln.split("key=")[1] for ln in lines2] == ["[AutogradCPU]", "[CPU]"]


def test_dispatch_trace_inference_tensor_outside_mode():
    """An inference tensor carries no autograd keys; mixed with a normal tensor the call goes through autograd."""
    with onion.inference_mode():
        t = onion.ones(2)
    assert [ln.split("key=")[1] for ln in _trace(lambda: t * t)] == ["[CPU]"]
    x = onion.ones(2)
    assert [ln.split("key=")[1] for ln in _trace(lambda: t * x)] == ["[AutogradCPU]", "[CPU]"]


# ------------------------------------------------------------------ 6. autograd.Function
def legendre(m):
    class LegendrePolynomial3(m.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return 0.5 * (5 * input ** 3 - 3 * input)

        @staticmethod
        def backward(ctx, grad_output):
            (input,) = ctx.saved_tensors
            return grad_output * 1.5 * (5 * input ** 2 - 1)
    return LegendrePolynomial3


@pytest.mark.oracle
def test_legendre_polynomial3_matches_torch():
    res = []
    for m in (onion, torch):
        P3 = legendre(m)
        x = m.tensor(data(5), dtype=m.float64, requires_grad=True)
        y = P3.apply(x)
        assert y.grad_fn.name() == "LegendrePolynomial3Backward"
        assert y.grad_fn.next_functions[0][0].name().endswith("AccumulateGrad")
        assert not y.is_leaf and y.requires_grad
        (y * y).sum().backward()
        res.append((y.detach(), x.grad))
    assert_close(res[0][0], res[1][0])
    assert_close(res[0][1], res[1][1])


@pytest.mark.oracle
def test_legendre_in_a_model_and_gradcheck():
    """The docs' fit: y = a + b * P3(c + d * x); gradients of all four parameters."""
    res = []
    for m in (onion, torch):
        P3 = legendre(m)
        x = m.linspace(-1.0, 1.0, 20, dtype=m.float64)
        target = x.sin()
        params = [m.tensor(v, dtype=m.float64, requires_grad=True) for v in (0.0, -1.0, 0.0, 0.3)]
        a, b, c, d = params
        loss = ((a + b * P3.apply(c + d * x) - target) ** 2).sum()
        loss.backward()
        res.append([p.grad for p in params])
    for go, gt in zip(*res):
        assert_close(go, gt)
    P3 = legendre(onion)
    assert onion.autograd.gradcheck(P3.apply, (onion.tensor(data(4), dtype=onion.float64, requires_grad=True),))
    assert onion.autograd.gradgradcheck(P3.apply, (onion.tensor(data(3), dtype=onion.float64, requires_grad=True),))


@pytest.mark.oracle
def test_needs_input_grad_and_non_tensor_args():
    def run(m):
        seen = {}

        class Scale(m.autograd.Function):
            @staticmethod
            def forward(ctx, x, y, k):
                seen["fwd"] = (ctx.needs_input_grad, m.is_grad_enabled())
                ctx.k = k
                ctx.save_for_backward(x, y)
                return x * y * k

            @staticmethod
            def backward(ctx, g):
                x, y = ctx.saved_tensors
                seen["bwd"] = ctx.needs_input_grad
                return (g * y * ctx.k if ctx.needs_input_grad[0] else None,
                        g * x * ctx.k if ctx.needs_input_grad[1] else None, None)
        x = m.tensor(data(3), dtype=m.float64, requires_grad=True)
        y = m.tensor(data(3, seed=1), dtype=m.float64)
        Scale.apply(x, y, 2.5).sum().backward()
        return seen, x.grad
    (so, go), (st, gt) = both(run)
    assert so == st == {"fwd": ((True, False, False), False), "bwd": (True, False, False)}
    assert_close(go, gt)


@pytest.mark.oracle
def test_saved_output_and_inplace_error():
    def make(m):
        class Exp(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                r = x.exp()
                ctx.save_for_backward(r)
                return r

            @staticmethod
            def backward(ctx, g):
                (r,) = ctx.saved_tensors
                return g * r
        return Exp
    res = []
    for m in (onion, torch):
        x = m.tensor(data(3), dtype=m.float64, requires_grad=True)
        y = make(m).apply(x)
        (y * 2).sum().backward()
        res.append(x.grad)
    assert_close(res[0], res[1])
    msgs = []
    for m in (onion, torch):
        x = m.tensor(data(3), requires_grad=True)
        y = make(m).apply(x)
        y.add_(1)
        with pytest.raises(RuntimeError) as e:
            y.sum().backward()
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


@pytest.mark.oracle
def test_mark_dirty():
    def run(m):
        class MulTwo_(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.mul_(2)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 2
        leaf = m.tensor(data(3), dtype=m.float64, requires_grad=True)
        a = leaf.clone()
        b = MulTwo_.apply(a)
        same = b is a
        name = a.grad_fn.name()
        version = a._version
        (b * b).sum().backward()
        return same, name, version, b.detach(), leaf.grad
    ro, rt = both(run)
    assert ro[:3] == rt[:3] == (True, "MulTwo_Backward", 2)
    assert_close(ro[3], rt[3])
    assert_close(ro[4], rt[4])


@pytest.mark.oracle
def test_mark_dirty_on_leaf_errors_like_torch():
    def run(m):
        class AddOne_(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.add_(1)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g
        AddOne_.apply(m.tensor([1.0], requires_grad=True))
    same_error(run)


@pytest.mark.oracle
def test_mark_non_differentiable():
    def run(m):
        class SortLike(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                big = x * 3
                flag = x > 0
                ctx.mark_non_differentiable(flag)
                ctx.save_for_backward(flag)
                scaled = x * 2
                ctx.mark_non_differentiable(scaled)
                return big, flag, scaled

            @staticmethod
            def backward(ctx, g_big, g_flag, g_scaled):
                (flag,) = ctx.saved_tensors
                return g_big * 3 + flag.to(g_big.dtype)
        x = m.tensor(data(4), dtype=m.float64, requires_grad=True)
        big, flag, scaled = SortLike.apply(x)
        state = (big.requires_grad, flag.requires_grad, scaled.requires_grad, scaled.grad_fn is None)
        big.sum().backward()
        return state, x.grad
    ro, rt = both(run)
    assert ro[0] == rt[0] == (True, False, False, True)
    assert_close(ro[1], rt[1])


@pytest.mark.oracle
@pytest.mark.parametrize("materialize", [True, False])
def test_set_materialize_grads(materialize):
    def run(m):
        seen = []

        class Two(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(materialize)
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, g1, g2):
                seen.append((g1 is None, g2 is None, None if g2 is None else g2.tolist()))
                total = g1 * 2 if g1 is not None else 0
                return total + (g2 * 3 if g2 is not None else 0)
        x = m.tensor(data(3), dtype=m.float64, requires_grad=True)
        a, b = Two.apply(x)
        a.sum().backward()
        return seen, x.grad
    (so, go), (st, gt) = both(run)
    assert so == st
    assert so[0][1] is (not materialize)
    assert_close(go, gt)


@pytest.mark.oracle
def test_wrong_number_of_gradients_errors_like_torch():
    def run(m):
        class Bad(m.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x * y

            @staticmethod
            def backward(ctx, g):
                return (g,)
        x = m.tensor([1.0], requires_grad=True)
        Bad.apply(x, m.tensor([2.0], requires_grad=True)).sum().backward()
    same_error(run)


def _function_edge_cases(m):
    class NonTensorOut(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, 3

        @staticmethod
        def backward(ctx, g, g_int):
            return g * 2

    class WrongShape(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g[:2]

    class Broadcast(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g.unsqueeze(0).expand(2, 3)

    class WrongDtype(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g.to(m.float32)

    class GradForNonTensor(m.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g * 2, g

    class ExtraNone(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2, None

    class ReturnsNone(m.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return None, g
    return {"non_tensor_output": lambda x: NonTensorOut.apply(x)[0], "wrong_shape": WrongShape.apply,
            "broadcast_grad": Broadcast.apply, "wrong_dtype": WrongDtype.apply,
            "grad_for_non_tensor": lambda x: GradForNonTensor.apply(x, 2.0), "extra_none": ExtraNone.apply,
            "returns_none": lambda x: ReturnsNone.apply(x, x * 1)}


@pytest.mark.oracle
@pytest.mark.parametrize("name", list(_function_edge_cases(onion)))
def test_function_backward_results_validated_like_torch(name):
    """Non-tensor outputs, wrong shapes / dtypes / counts of returned gradients: as PyTorch's engine does."""
    res = []
    for m in (onion, torch):
        x = m.tensor([1.0, 2.0, 3.0], dtype=m.float64, requires_grad=True)
        try:
            _function_edge_cases(m)[name](x).sum().backward()
            res.append((x.grad.tolist(), str(x.grad.dtype).split(".")[-1]))
        except RuntimeError as e:
            res.append(("error", str(e)))
    assert res[0] == res[1]


def test_function_under_no_grad_records_nothing():
    P3 = legendre(onion)
    x = onion.tensor(data(3), dtype=onion.float64, requires_grad=True)
    with onion.no_grad():
        y = P3.apply(x)
    assert y.grad_fn is None and not y.requires_grad


@pytest.mark.oracle
def test_function_returning_input_unchanged():
    def run(m):
        class Ident(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 5
        x = m.tensor(data(3), dtype=m.float64, requires_grad=True)
        y = Ident.apply(x)
        out = (y is x, y.grad_fn.name())
        y.sum().backward()
        return out, x.grad
    ro, rt = both(run)
    assert ro[0] == rt[0] == (False, "IdentBackward")
    assert_close(ro[1], rt[1])


def test_function_double_backward_and_once_differentiable():
    class Cube(onion.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x ** 2
    x = onion.tensor([1.0, -2.0], dtype=onion.float64, requires_grad=True)
    (g,) = onion.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    (gg,) = onion.autograd.grad(g.sum(), x)
    assert g.tolist() == [3.0, 12.0] and gg.tolist() == [6.0, -12.0]

    class Square(onion.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @onion.autograd.once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g
    y = Square.apply(x)
    y.sum().backward()
    assert x.grad.tolist() == [2.0, -4.0]


@pytest.mark.oracle
def test_function_saved_tensors_freed_after_backward():
    def run(m):
        P3 = legendre(m)
        x = m.tensor(data(3), dtype=m.float64, requires_grad=True)
        y = P3.apply(x)
        y.sum().backward()
        y.grad_fn.saved_tensors
    same_error(run)


@pytest.mark.oracle
def test_function_with_two_tensor_inputs_and_hooks():
    def run(m):
        class MulAdd(m.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                ctx.save_for_backward(a, b)
                return a * b + a

            @staticmethod
            def backward(ctx, g):
                a, b = ctx.saved_tensors
                return g * (b + 1), g * a
        a = m.tensor(data(3), dtype=m.float64, requires_grad=True)
        b = m.tensor(data(3, seed=1), dtype=m.float64, requires_grad=True)
        y = MulAdd.apply(a.exp(), b)
        y.register_hook(lambda g: g * 10)
        y.sum().backward()
        return a.grad, b.grad
    ro, rt = both(run)
    for o, t in zip(ro, rt):
        assert_close(o, t)


# ------------------------------------------------------------------ 7. memory of a training loop
def _train(steps, snapshots):
    rng = np.random.default_rng(0)
    x = onion.tensor(rng.standard_normal((32, 8)), dtype=onion.float32)
    y = onion.tensor(rng.standard_normal((32, 1)), dtype=onion.float32)
    w1 = onion.tensor(rng.standard_normal((16, 8)) * 0.3, dtype=onion.float32, requires_grad=True)
    b1 = onion.zeros(16, requires_grad=True)
    w2 = onion.tensor(rng.standard_normal((1, 16)) * 0.3, dtype=onion.float32, requires_grad=True)
    b2 = onion.zeros(1, requires_grad=True)
    params = [w1, b1, w2, b2]
    F = onion.nn.functional
    measured, losses = {}, [None, None]     # first and last only: a growing list would be measured too
    for step in range(1, steps + 1):
        h = F.linear(x, w1, b1).relu()
        pred = F.linear(h, w2, b2)
        loss = ((pred - y) ** 2).mean()
        loss.backward()
        with onion.no_grad():
            for p in params:
                p.sub_(p.grad * 0.05)
                p.grad = None
        losses[0 if step == 1 else 1] = loss.item()
        del h, pred, loss
        if step in snapshots:
            gc.collect()
            measured[step] = tracemalloc.get_traced_memory()[0]
    return measured, losses


def test_training_loop_memory_does_not_grow():
    gc.collect()
    tracemalloc.start()
    try:
        measured, losses = _train(200, {20, 200})
    finally:
        tracemalloc.stop()
    assert losses[-1] < losses[0] * 0.5          # it trains
    growth = measured[200] - measured[20]
    assert growth < 4 * 1024, f"traced memory grew by {growth} bytes between step 20 and step 200"


def test_training_step_leaves_no_garbage_cycles():
    """Reference counting alone frees a step's graph: no cycle needs the collector."""
    gc.collect()
    gc.disable()
    try:
        before = gc.get_count()[0]
        _train(30, set())
        # objects still tracked and unreachable would be found by a collection
        found = gc.collect()
    finally:
        gc.enable()
    del before
    assert found == 0, f"{found} objects were only freed by the cycle collector"


def test_graph_freed_when_output_dropped():
    import weakref
    x = onion.tensor(data(3), dtype=onion.float64, requires_grad=True)
    y = (x.exp() * x).sin()
    ref = weakref.ref(y.grad_fn)
    saved = weakref.ref(y.grad_fn.next_functions[0][0])
    del y
    assert ref() is None and saved() is None


def test_graph_freed_after_backward_and_parameters_keep_no_graph():
    import weakref
    x = onion.tensor(data(3), dtype=onion.float64, requires_grad=True)
    y = (x * x).sum()
    ref = weakref.ref(y.grad_fn)
    y.backward()
    del y
    assert ref() is None
    assert x.grad.grad_fn is None and not x.grad.requires_grad


class _Double(onion.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * 2

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g * 2 + a * 0


def _pattern_inplace_on_view():
    leaf = onion.ones(3, 4, requires_grad=True)
    x = leaf.clone()
    x[0].mul_(2)
    x.sum().backward()


def _pattern_stale_view():
    leaf = onion.ones(3, 4, requires_grad=True)
    x = leaf.clone()
    v = x[:, 1]
    x.add_(1)
    (v * 2).sum().backward()


def _pattern_setitem():
    leaf = onion.ones(3, 4, requires_grad=True)
    z = onion.zeros(3)
    z[1] = leaf[0, 0]
    z.sum().backward()


def _pattern_function():
    leaf = onion.ones(3, 4, requires_grad=True)
    _Double.apply(leaf).sum().backward()


def _pattern_hooks_and_create_graph():
    leaf = onion.ones(3, 4, requires_grad=True)
    h = leaf * 2
    h.register_hook(lambda g: g * 1)
    (g,) = onion.autograd.grad((h * h * h).sum(), leaf, create_graph=True)
    g.sum().backward()


def _pattern_graph_not_run():
    leaf = onion.ones(3, 4, requires_grad=True)
    x = leaf.clone()
    x[1:].exp_()
    (x * x).sum()


@pytest.mark.parametrize("pattern", [_pattern_inplace_on_view, _pattern_stale_view, _pattern_setitem,
                                     _pattern_function, _pattern_hooks_and_create_graph, _pattern_graph_not_run],
                         ids=lambda f: f.__name__[9:])
def test_graphs_are_freed_by_reference_counting(pattern):
    """CopySlices, regenerated view nodes, Function nodes, hooks: no reference cycle is left to the collector."""
    gc.collect()
    gc.disable()
    try:
        pattern()
        found = gc.collect()
    finally:
        gc.enable()
    assert found == 0, f"{found} objects were only freed by the cycle collector"
