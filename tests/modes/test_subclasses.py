"""Tensor subclasses dispatched in Python: ``_make_subclass``, ``_make_wrapper_subclass``, ``as_subclass`` and
``__torch_dispatch__``, compared with PyTorch (the cases of its test_python_dispatch.py that need no compiler,
in our words), plus the examples and the errors for subclasses defined wrongly."""
from __future__ import annotations

import importlib.util
import os
import re

import pytest

import onion
from conftest import torch

pytestmark = pytest.mark.oracle

LIBS = pytest.mark.parametrize("lib", ["torch", "onion"])
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _lib(name):
    return torch if name == "torch" else onion


def _map(fn, obj):
    if isinstance(obj, (list, tuple)):
        return type(obj)(_map(fn, x) for x in obj)
    if isinstance(obj, dict):
        return {k: _map(fn, v) for k, v in obj.items()}
    return fn(obj)


def logging_tensor(lib, log):
    """A wrapper subclass that records each operator and runs it on the tensor it holds (for either library)."""

    class LoggingTensor(lib.Tensor):
        __torch_function__ = lib._C._disabled_torch_function_impl

        @staticmethod
        def __new__(cls, elem):
            r = lib.Tensor._make_wrapper_subclass(cls, elem.size(), strides=elem.stride(), dtype=elem.dtype,
                                                  device=elem.device, requires_grad=elem.requires_grad)
            r.elem = elem.detach() if elem.requires_grad else elem
            return r

        def __repr__(self):
            return super().__repr__(tensor_contents=f"{self.elem}")

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            def unwrap(e):
                return e.elem if isinstance(e, LoggingTensor) else e

            def wrap(e):
                return LoggingTensor(e) if isinstance(e, lib.Tensor) and not isinstance(e, LoggingTensor) else e
            log.append((str(func), [t.__name__ for t in types]))
            return _map(wrap, func(*_map(unwrap, args), **_map(unwrap, kwargs or {})))

    return LoggingTensor


def _run_both(fn):
    """``fn(lib)`` for torch and onion; their answers."""
    return fn(torch), fn(onion)


# --- what __torch_dispatch__ sees ---------------------------------------------------------------------------
def test_logging_tensor_forward_and_grad_log_the_same_operators():
    def run(lib):
        log = []
        LT = logging_tensor(lib, log)
        x = LT(lib.tensor([3.0], requires_grad=True))
        y = x * x
        grad_y = LT(lib.tensor([1.0]))
        (g,) = lib.autograd.grad((y,), (x,), (grad_y,))
        return log, type(g).__name__, g.elem.tolist(), type(y.grad_fn).__name__
    assert run(torch) == run(onion) == (
        [("aten.mul.Tensor", ["LoggingTensor"])] * 3 + [("aten.add.Tensor", ["LoggingTensor"])],
        "LoggingTensor", [6.0], "MulBackward0")


def test_saved_outputs_are_detached_through_torch_dispatch():
    """Autograd saving an output (exp's, relu's) and unpacking it in backward, and ``.data``, detach the subclass
    tensor through its ``__torch_dispatch__`` (PyTorch's ``shallow_copy_and_detach`` of a Python tensor)."""
    def run(lib):
        log = []
        LT = logging_tensor(lib, log)
        x = LT(lib.tensor([0.0, -2.0], requires_grad=True))
        w = LT(lib.tensor([0.5, -3.0]))
        y = (x.exp() * w).relu().sum()
        fwd = [f for f, _ in log]
        log.clear()
        (g,) = lib.autograd.grad((y,), (x,))
        bwd = [f for f, _ in log]
        log.clear()
        d = x.data
        return fwd, bwd, [f for f, _ in log], type(d).__name__, type(g).__name__, g.elem.tolist()
    t, o = run(torch), run(onion)
    assert t == o
    assert o[0] == ["aten.exp.default", "aten.detach.default", "aten.mul.Tensor", "aten.relu.default",
                    "aten.detach.default", "aten.sum.default"]
    assert o[1].count("aten.detach.default") == 2 and o[2] == ["aten.detach.default"]


def test_saved_outputs_under_a_mode_are_detached_once():
    """With a mode pushed the mode sees the detach first and the subclass once, below it, as in PyTorch."""
    def run(lib, pd):
        log = []
        LT = logging_tensor(lib, log)

        class Mode(pd.TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                log.append(("mode " + str(func), [t.__name__ for t in types]))
                return func(*args, **(kwargs or {}))
        x = LT(lib.tensor([1.0, 2.0], requires_grad=True))
        with Mode():
            lib.autograd.grad((x.exp().sum(),), (x,))
        return log
    import onion.utils._python_dispatch as opd
    import torch.utils._python_dispatch as tpd
    assert run(torch, tpd) == run(onion, opd)


def test_out_argument_reaches_dispatch_as_the_out_overload():
    def run(lib):
        log = []
        LT = logging_tensor(lib, log)
        x, y = LT(lib.ones(1)), LT(lib.zeros(1))
        r = lib.abs(x, out=y)
        return log, y.elem.tolist(), r is y
    assert run(torch) == run(onion) == ([("aten.abs.out", ["LoggingTensor"])], [1.0], True)


def test_types_list_only_the_subclasses_and_plain_tensors_mix_in():
    def run(lib):
        log = []
        LT = logging_tensor(lib, log)
        a = LT(lib.ones(2))
        r = lib.add(lib.ones(2), a)        # a plain tensor and a subclass: types holds the subclass only
        r2 = lib.ones(2) * a
        return log, type(r).__name__, type(r2).__name__, r.elem.tolist()
    assert run(torch) == run(onion)


def test_kwarg_defaults_and_python_numbers_as_passed():
    def run(lib):
        seen = []

        class Spy(lib.Tensor):
            __torch_function__ = lib._C._disabled_torch_function_impl

            @staticmethod
            def __new__(cls, elem):
                r = lib.Tensor._make_wrapper_subclass(cls, elem.size(), dtype=elem.dtype)
                r.elem = elem
                return r

            @classmethod
            def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
                seen.append((str(func), len(args), sorted(kwargs or {})))
                out = func(*_map(lambda e: e.elem if isinstance(e, Spy) else e, args), **(kwargs or {}))
                return Spy(out) if isinstance(out, lib.Tensor) else out
        x = Spy(lib.ones(2, 2))
        x.sum(dim=0)
        x.t()
        lib.mm(x, x)
        return seen
    t, o = _run_both(run)
    assert [s[0] for s in t] == [s[0] for s in o]


def test_list_results_of_either_sequence_type():
    def run(lib, seq):
        class A(lib.Tensor):
            __torch_function__ = lib._C._disabled_torch_function_impl

            @staticmethod
            def __new__(cls, elem):
                r = lib.Tensor._make_wrapper_subclass(cls, elem.size(), dtype=elem.dtype)
                r.elem = elem
                return r

            @classmethod
            def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
                assert str(func) == "aten.split.Tensor", func
                return seq(lib.split(args[0].elem, *args[1:]))
        parts = lib.split(A(lib.tensor([0, 1, 2])), 2)
        return type(parts).__name__, [p.tolist() for p in parts]
    for seq in (list, tuple):
        assert run(torch, seq) == run(onion, seq)


def test_subclass_priority_a_child_class_goes_first():
    def run(lib):
        class ErrorA(RuntimeError):
            pass

        class ErrorB(RuntimeError):
            pass

        class A(lib.Tensor):
            @staticmethod
            def __new__(cls, elem):
                return lib.Tensor._make_subclass(cls, elem, elem.requires_grad)

            @classmethod
            def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
                raise ErrorA

        class B(A):
            @staticmethod
            def __new__(cls, elem):
                return lib.Tensor._make_subclass(cls, elem, elem.requires_grad)

            @classmethod
            def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
                raise ErrorB
        out = []
        for x, y in ((A, A), (A, B), (B, A), (B, B)):
            try:
                lib.add(x(lib.empty(1)), y(lib.empty(1)))
            except (ErrorA, ErrorB) as e:
                out.append(type(e).__name__)
        return out
    assert run(torch) == run(onion) == ["ErrorA", "ErrorB", "ErrorB", "ErrorB"]


def test_factory_like_functions_and_new_ones_go_to_the_subclass():
    def run(lib):
        class MyTensor(lib.Tensor):
            __torch_function__ = lib._C._disabled_torch_function_impl

            @staticmethod
            def __new__(cls, n):
                return lib.Tensor._make_wrapper_subclass(cls, (n,))

            @classmethod
            def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
                return MyTensor(3)
        out = [type(MyTensor(2).new_ones(3)).__name__]
        for f in ("empty_like", "ones_like", "rand_like", "randn_like", "zeros_like"):
            out.append(type(getattr(lib, f)(MyTensor(2))).__name__)
        out.append(type(lib.full_like(MyTensor(2), 1.0)).__name__)
        return out
    assert run(torch) == run(onion) == ["MyTensor"] * 7


def test_index_put_where_only_an_index_is_a_subclass():
    def run(lib):
        called = []

        class MyTensor(lib.Tensor):
            __torch_function__ = lib._C._disabled_torch_function_impl

            @staticmethod
            def __new__(cls, elem):
                r = lib.Tensor._make_wrapper_subclass(cls, elem.size(), dtype=elem.dtype)
                r.elem = elem
                return r

            @classmethod
            def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
                called.append(str(func))
                return MyTensor(lib.tensor(3))
        x = lib.zeros(3, 3)
        x.index_put_((MyTensor(lib.tensor(0)),), lib.ones(1))
        return called
    assert run(torch) == run(onion) == ["aten.index_put_.default"]


def test_autograd_runs_above_the_subclass():
    def run(lib):
        log = []
        LT = logging_tensor(lib, log)
        w = LT(lib.tensor([1.0, 2.0], requires_grad=True))
        x = LT(lib.tensor([3.0, 4.0]))
        loss = (w * x).sum()
        g, = lib.autograd.grad(loss, w)
        return (w.is_leaf, w.requires_grad, type(loss.grad_fn).__name__, type(g).__name__, g.elem.tolist(),
                [name for name, _ in log])
    assert run(torch) == run(onion)


# --- the tensors themselves -----------------------------------------------------------------------------------
def test_wrapper_subclass_propagates_geometry_and_keys():
    def run(lib):
        class Wrapper(lib.Tensor):
            @staticmethod
            def __new__(cls, elem):
                return lib.Tensor._make_wrapper_subclass(
                    cls, elem.size(), dtype=elem.dtype, device=elem.device, requires_grad=elem.requires_grad,
                    strides=elem.stride(), storage_offset=elem.storage_offset())

            @classmethod
            def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
                raise RuntimeError("NYI")
        x = lib.arange(24.0, dtype=lib.float64).reshape(4, 6).t().diagonal(offset=2)
        y = Wrapper(x)
        m = lib.Tensor._make_wrapper_subclass(Wrapper, (2, 3), strides=(1, 2), dtype=lib.float64, device="meta",
                                              requires_grad=True, storage_offset=3)
        return (tuple(y.size()), y.stride(), y.storage_offset(), str(y.dtype).split(".")[1], str(y.device),
                y.requires_grad, str(lib._C._dispatch_keys(y)), tuple(m.shape), m.stride(), m.storage_offset(),
                str(m.device), m.is_leaf, m.requires_grad, str(lib._C._dispatch_keys(m)))
    assert run(torch) == run(onion)


def test_wrapper_subclass_allocates_nothing():
    class Big(onion.Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return NotImplemented
    big = onion.Tensor._make_wrapper_subclass(Big, (1000000000000,))      # 4 TB if it allocated
    assert big.shape == (1000000000000,) and big.dtype is onion.float32


def test_make_subclass_shares_memory_and_starts_a_leaf():
    def run(lib):
        class A(lib.Tensor):
            pass
        base = lib.zeros(2)
        s = lib.Tensor._make_subclass(A, base, True)
        base.add_(1)
        r = lib.ones(2, requires_grad=True) * 2
        s2 = lib.Tensor._make_subclass(A, r)
        return (type(s).__name__, s.detach().tolist(), s.requires_grad, s.is_leaf, s2.requires_grad, s2.is_leaf,
                s2.grad_fn is None)
    assert run(torch) == run(onion)


def test_as_subclass_stays_in_the_graph():
    def run(lib):
        class A(lib.Tensor):
            pass
        x = lib.ones(2, requires_grad=True)
        y = x.as_subclass(A)
        (y * 3).sum().backward()
        return type(y).__name__, y.requires_grad, y.is_leaf, type(y.grad_fn).__name__, x.grad.tolist()
    assert run(torch) == run(onion)


def test_repr_names_the_subclass_and_takes_tensor_contents():
    def run(lib):
        LT = logging_tensor(lib, [])

        class P(lib.Tensor):
            pass
        return (repr(LT(lib.ones(1))), str(LT(lib.ones(2, 2))), f"{LT(lib.ones(1))}",
                repr(LT(lib.ones(2, dtype=lib.float64, requires_grad=True))),
                repr(lib.ones(2, dtype=lib.int32).as_subclass(P)), repr(lib.ones(2, requires_grad=True).as_subclass(P)))
    t, o = run(torch), run(onion)
    assert [s.replace("torch.", "onion.") for s in t] == list(o)


def test_saved_tensors_of_a_custom_function_keep_their_class():
    def run(lib):
        seen = []

        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 2

            @staticmethod
            def backward(ctx, grad_output):
                x, = ctx.saved_tensors
                seen.append((type(grad_output).__name__, type(x).__name__))
                return grad_output * 2 * x
        LT = logging_tensor(lib, [])
        x = LT(lib.ones(1, requires_grad=True))
        y = Square.apply(x)
        g, = lib.autograd.grad(y, x, LT(lib.ones(1)))
        return seen, type(g).__name__, g.elem.tolist()
    assert run(torch) == run(onion)


# --- errors -----------------------------------------------------------------------------------------------------
def _error(fn):
    try:
        fn()
    except Exception as e:      # noqa: BLE001 - the outcome is what is compared
        return type(e).__name__, str(e).replace("torch._ops", "onion.ops")
    return None


def test_every_handler_returning_not_implemented_is_a_type_error():
    def run(lib):
        class W(lib.Tensor):
            @classmethod
            def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
                return NotImplemented
        w = lib.Tensor._make_wrapper_subclass(W, (2,))
        return _error(lambda: lib.add(w, w)), _error(lambda: w.neg())
    t, o = run(torch), run(onion)
    assert t == o
    assert o[0][0] == "TypeError" and "Multiple dispatch failed for 'onion.ops.aten.add.Tensor'" in o[0][1]


def test_a_handler_returning_the_wrong_type():
    def run(lib):
        class A(lib.Tensor):
            @staticmethod
            def __new__(cls, elem):
                return lib.Tensor._make_subclass(cls, elem, elem.requires_grad)

            @classmethod
            def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
                return "arf"
        return _error(lambda: A(lib.zeros(1)).neg())
    assert run(torch) == run(onion) == ("RuntimeError", "Unable to cast arf to Tensor")


@LIBS
def test_construction_errors_match(lib):
    mod = _lib(lib)

    class Foo(mod.Tensor):
        pass

    class W(mod.Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return NotImplemented
    cases = [
        lambda: mod.Tensor._make_wrapper_subclass(Foo, (2, 2)),
        lambda: mod.Tensor._make_wrapper_subclass(int, (2, 2)),
        lambda: mod.Tensor._make_wrapper_subclass(W, (2, 3), strides=(1,)),
        lambda: mod.Tensor._make_wrapper_subclass(W, (2, 3), dtype=mod.int64, requires_grad=True),
        lambda: mod.Tensor._make_subclass(int, mod.ones(1)),
        lambda: mod.Tensor._make_subclass(3, mod.ones(1)),
        lambda: mod.Tensor._make_subclass(Foo, 3),
        lambda: mod.Tensor._make_subclass(Foo, mod.ones(1, dtype=mod.int64), True),
    ]
    got = [_error(c) for c in cases]
    expected = [
        ("TypeError", "Foo must define __torch_dispatch__"),
        ("TypeError", "Creating a Tensor subclass from a class that does not inherit from Tensor is not possible. "
                      "Make sure your class inherits from Tensor."),
        ("RuntimeError", "dimensionality of sizes (2) must match dimensionality of strides (1)"),
        ("RuntimeError", "Only Tensors of floating point and complex dtype can require gradients"),
        ("TypeError", "Creating a Tensor subclass from a class that does not inherit from Tensor is not possible. "
                      "Make sure your class inherits from Tensor."),
        ("TypeError", "cls must be a type (got int)"),
        ("TypeError", "_make_subclass(): argument 'data' (position 2) must be Tensor, not int"),
        ("RuntimeError", "Only Tensors of floating point and complex dtype can require gradients"),
    ]
    assert got == expected


def test_torch_dispatch_as_a_plain_method_or_staticmethod_as_torch():
    """PyTorch 2.13 looks ``__torch_dispatch__`` up on the tensor: a plain method is called bound to the first
    overloaded tensor, a staticmethod with the four arguments, a non-callable fails when called."""
    def run(lib):
        seen = []

        class Plain(lib.Tensor):
            __torch_function__ = lib._C._disabled_torch_function_impl

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                seen.append(("plain", str(func), self.tag, [t.__name__ for t in types]))
                return lib.zeros(2) if str(func) != "aten.neg.default" else NotImplemented

        class Static(lib.Tensor):
            __torch_function__ = lib._C._disabled_torch_function_impl

            @staticmethod
            def __torch_dispatch__(func, types, args=(), kwargs=None):
                seen.append(("static", str(func), len(args), [t.__name__ for t in types]))
                return lib.ones(2)

        class NotCallable(lib.Tensor):
            __torch_dispatch__ = 3

        a, b = lib.Tensor._make_wrapper_subclass(Plain, (2,)), lib.Tensor._make_wrapper_subclass(Plain, (2,))
        a.tag, b.tag = "a", "b"
        out = [type(lib.add(a, b)).__name__, type(lib.add(lib.ones(2), b)).__name__, _error(lambda: lib.neg(a))]
        s = lib.Tensor._make_wrapper_subclass(Static, (2,))
        out.append(lib.mul(s, 2).tolist())
        n = lib.Tensor._make_subclass(NotCallable, lib.ones(2))
        out.append(type(n).__name__)
        out.append(_error(lambda: lib.add(n, 1)))
        return seen, out
    t, o = run(torch), run(onion)
    assert t == o
    assert o[0][:2] == [("plain", "aten.add.Tensor", "a", ["Plain"]), ("plain", "aten.add.Tensor", "b", ["Plain"])]
    assert o[1][-1] == ("TypeError", "'int' object is not callable")


def test_a_wrapper_has_no_values_of_its_own():
    class W(onion.Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return NotImplemented
    w = onion.Tensor._make_wrapper_subclass(W, (2,))
    with pytest.raises(RuntimeError, match=re.escape(".numpy() is not supported for tensor subclasses.")):
        w.numpy()
    with pytest.raises(RuntimeError, match="W .*has no values to read here: unwrap it in its __torch_dispatch__"):
        w.tolist()


# --- the examples ---------------------------------------------------------------------------------------------
def _load_example(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", os.path.join(ROOT, "examples", f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_example_logging_tensor(capsys):
    log = _load_example("logging_tensor").main()
    # as PyTorch's: AccumulateGrad takes a first gradient nothing else holds by ``detach``
    assert log == ["aten.mul.Tensor", "aten.add.Tensor", "aten.sum.default", "aten.ones_like.default",
                   "aten.expand.default", "aten.mul.Tensor", "aten.detach.default"]
    assert "loss 7.5 x.grad [0.5, -1.0, 2.0]" in capsys.readouterr().out


def test_example_scaled_tensor_trains_like_plain_tensors(capsys):
    ex = _load_example("scaled_tensor")
    scaled, plain, w, wp = ex.main(steps=12)
    capsys.readouterr()
    assert isinstance(w, ex.ScaledTensor) and w.scale == 0.25 and w.grad is None
    assert all(b < a for a, b in zip(scaled, scaled[1:]))          # the loss decreases every step
    assert scaled[-1] < scaled[0] / 1000
    assert scaled == pytest.approx(plain, rel=1e-12)
    assert w.value().flatten().tolist() == pytest.approx(wp.detach().flatten().tolist(), rel=1e-12)
    # the weights are stored scaled: data = value / scale
    assert w.data_.flatten().tolist() == pytest.approx((w.value() / 0.25).flatten().tolist(), rel=1e-12)
    # doubling the weight touched no data: only the scale changed
    d = w * 2.0
    assert isinstance(d, ex.ScaledTensor) and d.data_ is w.data_ and d.scale == 0.5


# --- with a dispatch mode ------------------------------------------------------------------------------------------
def test_a_dispatch_mode_goes_first_then_the_subclass():
    def run(lib):
        log = []

        class M(lib.utils._python_dispatch.TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                log.append(("mode", str(func), [t.__name__ for t in types]))
                if types:
                    return NotImplemented      # the subclass handles it, then the mode sees its inner call
                return func(*args, **(kwargs or {}))
        LT = logging_tensor(lib, log)
        x = LT(lib.ones(2))
        with M():
            y = x * 2
        return log, type(y).__name__, y.elem.tolist()
    assert run(torch) == run(onion) == (
        [("mode", "aten.mul.Tensor", ["LoggingTensor"]), ("aten.mul.Tensor", ["LoggingTensor"]),
         ("mode", "aten.mul.Tensor", [])], "LoggingTensor", [2.0, 2.0])


def test_mode_and_subclass_both_not_implemented():
    def run(lib):
        class N(lib.Tensor):
            @classmethod
            def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
                return NotImplemented

        class M(lib.utils._python_dispatch.TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                return NotImplemented
        n = lib.Tensor._make_wrapper_subclass(N, (2,))
        with M():
            err = _error(lambda: lib.add(n, 1))
        return err[0], [line.split(" object at")[0] for line in err[1].split("\n")]
    assert run(torch) == run(onion)
