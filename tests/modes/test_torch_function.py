"""``__torch_function__`` on subclasses and other objects, ``TorchFunctionMode``, the ``Disable*`` guards and
``onion.overrides``, compared with PyTorch (the cases of its test_overrides.py that need no compiler, in our
words)."""
from __future__ import annotations

import threading
import warnings

import pytest

import onion
from conftest import torch

pytestmark = pytest.mark.oracle


def both(fn):
    """``fn(lib)`` for torch and onion: the two answers (the caller compares them)."""
    return fn(torch), fn(onion)


def _error(fn):
    try:
        fn()
    except Exception as e:      # noqa: BLE001 - the outcome is what is compared
        return type(e).__name__, str(e)
    return None


def _names(lib, text: str) -> str:
    return text.replace("torch.", "onion.") if lib is torch else text


# --- subclasses ----------------------------------------------------------------------------------------------
def test_plain_subclass_results_keep_the_class():
    def run(lib):
        class A(lib.Tensor):
            pass
        a = lib.tensor([[1.0, 5.0], [3.0, 2.0]]).as_subclass(A)
        m = lib.max(a, dim=0)
        return [type(r).__name__ for r in (
            a + 1, lib.add(a, a), a.sum(), lib.ones(2, 2) + a, a[0], a.T, a.detach(), a.clone(), m.values,
            m[1], lib.cat([a, a]), lib.stack([lib.ones(2), a[0]]), a.t(), lib.nn.functional.relu(a))] + \
            [type(m).__name__, type(a.unbind(0)).__name__, type(a.numpy()).__name__, a.tolist(),
             type(a.sum().item()).__name__, a.shape == (2, 2), str(a.dtype).split(".")[1], a.grad]
    assert run(torch) == run(onion)


def test_precedence_a_child_class_before_its_parent():
    def run(lib):
        calls = []

        class A(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                calls.append(("A", [t.__name__ for t in types]))
                return super().__torch_function__(func, types, args, kwargs)

        class B(A):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                calls.append(("B", [t.__name__ for t in types]))
                return super().__torch_function__(func, types, args, kwargs)
        x = lib.ones(2)
        a, b = x.as_subclass(A), x.as_subclass(B)
        out = [type(lib.add(a, b)).__name__, type(a.mul(b)).__name__, type(b + a).__name__]
        return calls, out
    assert run(torch) == run(onion)


def test_not_implemented_from_every_override_is_a_type_error():
    def run(lib):
        class A(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return NotImplemented
        a = lib.ones(2).as_subclass(A)
        return [_error(f) for f in (lambda: lib.add(a, 1), lambda: a.add(1), lambda: a + 1)]
    t, o = run(torch), run(onion)
    assert [(k, _names(torch, m)) for k, m in t] == o
    assert o[0] == ("TypeError", "Multiple dispatch failed for 'onion.add'; all __torch_function__ handlers returned "
                                 "NotImplemented:\n\n  - tensor subclass <class 'test_torch_function."
                                 "test_not_implemented_from_every_override_is_a_type_error.<locals>.run.<locals>.A'>"
                                 "\n\nFor more information, try re-running with TORCH_LOGS=not_implemented")


def test_an_object_that_is_no_tensor_can_override():
    def run(lib):
        class Diagonal:
            """Stands for a diagonal matrix without being a tensor."""

            def __init__(self, n, value):
                self.n, self.value = n, value

            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                if func.__name__ == "mean":
                    return args[0].value / args[0].n
                return (func.__name__, [t.__name__ for t in types])
        d = Diagonal(4, 2.0)
        return lib.mean(d), lib.add(lib.ones(2), d), lib.mm(d, d)
    assert run(torch) == run(onion) == (0.5, ("add", ["Diagonal"]), ("mm", ["Diagonal"]))


def test_plain_method_override_warns():
    def run(lib):
        class B(lib.Tensor):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                return 5
        b = lib.ones(2).as_subclass(B)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = lib.add(b, 1)
        return r, [str(x.message).split(" (Triggered")[0] for x in w], [x.category for x in w]
    assert run(torch) == run(onion)


def test_disable_torch_function_subclass():
    def run(lib):
        class A(lib.Tensor):
            pass
        a = lib.ones(2).as_subclass(A)
        with lib._C.DisableTorchFunctionSubclass():
            inside = type(lib.add(a, a)).__name__, lib._C._is_torch_function_enabled()
        return inside, type(lib.add(a, a)).__name__, lib._C._is_torch_function_enabled()
    assert run(torch) == run(onion) == (("Tensor", False), "A", True)


def test_disabled_impl_opts_a_subclass_out():
    def run(lib):
        class A(lib.Tensor):
            __torch_function__ = lib._C._disabled_torch_function_impl
        a = lib.ones(2).as_subclass(A)
        return type(a + a).__name__, type(a.sum()).__name__, lib.overrides.has_torch_function((a,))
    assert run(torch) == run(onion) == ("Tensor", "Tensor", False)


def test_has_and_handle_torch_function_for_python_functions():
    def run(lib):
        ov = lib.overrides

        def quux(a):
            if ov.has_torch_function((a,)):
                return ov.handle_torch_function(quux, (a,), a)
            return a + 1

        class A(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return ("A saw", func.__name__)

        class N(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return NotImplemented
        x = lib.ones(1)
        return (quux(x).tolist(), quux(x.as_subclass(A)), ov.has_torch_function((x,)),
                ov.has_torch_function((1, x)), ov.has_torch_function_unary(x.as_subclass(A)),
                ov.has_torch_function_variadic(x, x.as_subclass(A)), _error(lambda: quux(x.as_subclass(N))))
    t, o = run(torch), run(onion)
    assert t[:-1] == o[:-1]
    assert t[-1][0] == o[-1][0] == "TypeError"
    assert "no implementation found for" in o[-1][1] and "quux' on types that implement __torch_function__" in o[-1][1]


# --- modes -------------------------------------------------------------------------------------------------------
def test_mode_sees_functions_methods_operators_and_factories():
    def run(lib):
        calls = []

        class M(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                calls.append((func.__name__, types, len(args), sorted(kwargs or {})))
                return func(*args, **(kwargs or {}))
        x = lib.ones(2, 2)
        with M():
            y = x + 1
            lib.add(x, x)
            x.sum(dim=0)
            lib.mm(x, x)
            lib.ones(3)
            lib.tensor([1.0])
            x[0]
        return calls, type(y).__name__, y.tolist()
    assert run(torch) == run(onion)


def test_mode_results_replace_the_call_everywhere():
    def run(lib):
        class A(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, *args, **kwargs):
                return -1
        x = lib.ones(1)
        with A():
            return [lib.randn(3), lib.add(x, x), x.neg(), x * 2, lib.tensor([1]), lib.as_tensor([1]), lib.zeros(2)]
    assert run(torch) == run(onion) == [-1] * 7


def test_modes_go_before_subclasses_and_fall_through_on_not_implemented():
    def run(lib):
        class Sub(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return "sub"

        class First(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                return -40

        class Pass(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                return NotImplemented
        s = lib.ones(2).as_subclass(Sub)
        with First():
            first = lib.neg(s), lib.mm(s, s)
        with Pass():
            passed = lib.neg(s)
            err = _error(lambda: lib.neg(lib.ones(1)))
        return first, passed, err[0], "mode object" in err[1]
    assert run(torch) == run(onion) == ((-40, -40), "sub", "TypeError", True)


def test_mode_not_implemented_then_the_default_override_calls_the_mode_again():
    def run(lib):
        called = []

        class A(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                called.append([t.__name__ for t in types])
                if any(t is not lib.Tensor for t in types):
                    return NotImplemented
                return func(*args, **(kwargs or {}))

        class B(lib.Tensor):
            pass
        b = lib.ones(1).as_subclass(B)
        with A():
            r = lib.neg(b)
        return type(r).__name__, called
    assert run(torch) == run(onion) == ("B", [["B"], []])


def test_nested_modes_run_innermost_first_and_the_stack_is_restored():
    def run(lib):
        out = []
        ov = lib.overrides

        class A(ov.TorchFunctionMode):
            def __init__(self, msg):
                self.msg = msg

            def __torch_function__(self, func, types, args=(), kwargs=None):
                out.append(self.msg)
                return func(*args, **(kwargs or {}))
        with A("layer1") as a:
            with A("layer2") as b:
                lib.empty([])
                stack = ov._get_current_function_mode_stack() == [a, b]
                current = ov._get_current_function_mode() is b
            with a:
                lib.empty([])
        with lib._C.DisableTorchFunction():
            with A("off"):
                lib.empty([])
        return out, stack, current, ov._get_current_function_mode_stack()
    assert run(torch) == run(onion) == (["layer2", "layer1", "layer1", "layer1"], True, True, [])


def test_a_mode_raising_leaves_the_stack_as_it_was():
    def run(lib):
        class ErrorA(RuntimeError):
            pass

        class A(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, *args, **kwargs):
                raise ErrorA()
        raised = False
        try:
            with A():
                lib.empty([])
        except ErrorA:
            raised = True
        return raised, lib._C._len_torch_function_stack(), type(lib.ones(1) + 1).__name__
    assert run(torch) == run(onion) == (True, 0, "Tensor")


def test_reentrant_mode_idiom():
    def run(lib):
        log = []

        class A(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                log.append(func.__name__)
                if func is lib.sub:
                    with self:
                        x, y = args
                        return lib.add(x, y, alpha=-1)
                return func(*args, **(kwargs or {}))
        x, y = lib.ones(1), lib.full((1,), 3.0)
        with A():
            r = lib.sub(x, y)
        return log, r.tolist()
    assert run(torch) == run(onion) == (["sub", "add"], [-2.0])


def test_disable_subclass_keeps_the_mode_disable_all_does_not():
    def run(lib):
        called = []

        class A(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                called.append(func.__name__)
                return func(*args, **(kwargs or {}))

        class B(lib.Tensor):
            pass
        x = lib.ones(5).as_subclass(B)
        with A():
            with lib._C.DisableTorchFunctionSubclass():
                r1 = type(lib.sum(x)).__name__
            with lib._C.DisableTorchFunction():
                r2 = type(lib.sum(x)).__name__
        return r1, r2, called
    assert run(torch) == run(onion) == ("Tensor", "Tensor", ["sum"])


def test_a_mode_on_another_thread_does_not_see_this_threads_calls():
    def run(lib):
        seen = []
        entered, done = threading.Event(), threading.Event()

        class M(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                seen.append((threading.current_thread().name, func.__name__))
                return func(*args, **(kwargs or {}))

        def other():
            with M():
                entered.set()
                done.wait(10)
                lib.neg(lib.ones(1))
        t = threading.Thread(target=other, name="other")
        t.start()
        entered.wait(10)
        r = lib.ones(2) + lib.ones(2)          # this thread: no mode
        done.set()
        t.join()
        return seen, r.tolist()
    assert run(torch) == run(onion) == ([("other", "ones"), ("other", "neg")], [2.0, 2.0])


def test_mode_defined_with_a_classmethod_is_refused():
    class A(onion.overrides.TorchFunctionMode):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))
    x = onion.tensor(5.0)
    with pytest.raises(RuntimeError, match="classmethod is not supported, please make it a plain method"):
        with A():
            x + x


def test_plain_calls_are_back_on_the_fast_path_after_the_last_mode():
    from onion._generated import python_functions, tensor_methods

    class M(onion.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))
    fast = (python_functions._T, tensor_methods._T, python_functions._small_ints, onion.Tensor.__getitem__)
    with M():
        assert python_functions._T is not onion.Tensor and onion.Tensor.__getitem__ is not fast[3]
        assert isinstance(onion.ones(1), python_functions._T)       # the stand-in still answers isinstance
    assert (python_functions._T, tensor_methods._T, python_functions._small_ints, onion.Tensor.__getitem__) == fast


def test_base_torch_function_mode_passes_through():
    def run(lib):
        class M(lib.overrides.BaseTorchFunctionMode):
            pass
        with M():
            return (lib.ones(2) * 3).tolist()
    assert run(torch) == run(onion) == [3.0, 3.0]
