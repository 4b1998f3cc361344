"""TorchDispatchMode as PyTorch has it: what a mode sees, the stack, the Python key's place, the errors.

Most tests run one small program under a recording mode in both libraries and compare the records line
by line: operator, ``types``, arguments (tensors as ``T<shape>``, everything else by ``repr`` with the
library's name taken out).  The mode cases of PyTorch's test/test_python_dispatch.py that need neither
tensor subclasses nor torch.compile are restated here in onion's terms.
"""
from __future__ import annotations

import threading

import pytest

import onion
from onion._C import DispatchKey
from onion.core.dispatch_key import BACKEND_NAMES
from onion.utils._mode_utils import no_dispatch
from onion.utils._python_dispatch import (TorchDispatchMode, _disable_current_modes, _get_current_dispatch_mode,
                                          _get_current_dispatch_mode_stack, _pop_mode, _pop_mode_temporarily,
                                          is_in_torch_dispatch_mode)

from conftest import dispatch_trace, torch


# --- recording -----------------------------------------------------------------------------------------

def _fmt(v, tensor_type) -> str:
    if isinstance(v, tensor_type):
        return f"T{list(v.shape)}:{str(v.dtype).split('.')[-1]}"
    if isinstance(v, (list, tuple)):
        inner = ", ".join(_fmt(x, tensor_type) for x in v)
        return f"[{inner}]" if isinstance(v, list) else f"({inner}{',' if len(v) == 1 else ''})"
    return repr(v).replace("torch.", "LIB.").replace("onion.", "LIB.")


def _record_line(func, types, args, kwargs, tensor_type) -> str:
    parts = [_fmt(a, tensor_type) for a in args] + [f"{k}={_fmt(v, tensor_type)}" for k, v in kwargs.items()]
    return f"{func}{tuple(t.__name__ for t in types)}({', '.join(parts)})"


def _mode_base(lib):
    if lib is onion:
        return TorchDispatchMode
    from torch.utils._python_dispatch import TorchDispatchMode as TorchMode
    return TorchMode


def recorder(lib):
    """A pass-through mode of ``lib`` that records each call it sees."""
    base = _mode_base(lib)

    class Recorder(base):
        def __init__(self):
            super().__init__()
            self.log = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            self.log.append(_record_line(func, types, args, kwargs, lib.Tensor))
            return func(*args, **kwargs)

    return Recorder()


def record(lib, program):
    x = lib.ones(2, 3)
    with recorder(lib) as rec:
        program(lib, x)
    return rec.log


PROGRAMS = {
    "tensor + python int": lambda L, x: x + 1,
    "tensor * python float": lambda L, x: x * 2.5,
    "python ** tensor": lambda L, x: 2 ** x,
    "tensor / int, clamp(min=)": lambda L, x: (x / 2).clamp(min=0),
    "add alpha given and defaulted": lambda L, x: (L.add(x, x, alpha=2), L.add(x, x, alpha=1)),
    "ones as varargs, tuple and Size": lambda L, x: (L.ones(2, 3), L.ones((2, 3)), L.ones(x.shape), L.ones([])),
    "zeros with dtype": lambda L, x: L.zeros(2, dtype=L.float64),
    "empty with memory_format": lambda L, x: L.empty(2, memory_format=L.contiguous_format),
    "empty([])": lambda L, x: L.empty([]),
    "full, arange, randn": lambda L, x: (L.full((2,), 3.0), L.arange(3), L.randn(3)),
    "factory on meta": lambda L, x: L.zeros(2, device="meta"),
    "OpOverload call fills nothing": lambda L, x: L.ops.aten.ones.default([2]),
    "like and new_ factories": lambda L, x: (L.empty_like(x), L.full_like(x, 2), L.zeros_like(x, dtype=L.int64),
                                             x.new_zeros(3), x.new_ones((2,))),
    "detach": lambda L, x: x.detach(),
    "tensor() and as_tensor() of data": lambda L, x: (L.tensor(3.0), L.tensor([1.0, 2.0]), L.as_tensor([1, 2])),
    "tensor() of a tensor": lambda L, x: L.tensor(x),
    "to(dtype), double()": lambda L, x: (x.to(L.float64), x.double()),
    "to(device) passes the tensor's options": lambda L, x: x.to("meta"),
    "layout given": lambda L, x: L.ones(2, layout=L.strided),
    "clone, contiguous": lambda L, x: (x.clone(), x.clone(memory_format=L.contiguous_format), x.contiguous()),
    "int lists as lists": lambda L, x: (x.view(3, 2), x.view(-1), x.permute(1, 0), x.expand(4, 2, 3),
                                        x.sum((0,)), x.mean([1])),
    "positional defaults left out": lambda L, x: (x.sum(0), x.sum(0, keepdim=True), x.sum(dtype=L.float64),
                                                  L.ops.aten.sum.dim_IntList(x, [0], False)),
    "indexing and shape ops": lambda L, x: (x[0], x.t(), x.unsqueeze(0), x.transpose(0, 1), x.squeeze()),
    "in-place with a number": lambda L, x: x.clone().fill_(1).add_(2),
    "masked_fill": lambda L, x: x.masked_fill(x > 0, 1.0),
    "reductions with two returns": lambda L, x: (x.max(0), x.argmax()),
    "tensor lists": lambda L, x: (L.cat([x, x]), L.stack([x]), x.split(1)),
    "kwarg-only defaults left out (addmv)": lambda L, x: (
        L.addmv(L.ones(2), L.ones(2, 3), L.ones(3)), L.addmv(L.ones(2), L.ones(2, 3), L.ones(3), beta=1),
        L.addmv(L.ones(2), L.ones(2, 3), L.ones(3), beta=2), L.addmv(L.ones(2), L.ones(2, 3), L.ones(3), alpha=2)),
    # autograd.grad rather than .backward(): PyTorch's AccumulateGrad takes a lone gradient by detach() (it
    # reads the reference count), where onion clones it
    "autograd: forward and backward": lambda L, x: (lambda a: L.autograd.grad((a * 3).sum(), [a]))(
        x.clone().requires_grad_()),
    # a saved output is detached through the mode when saved and when unpacked, types (Tensor,)
    "autograd: saved outputs": lambda L, x: (lambda a: L.autograd.grad((a.exp() * a).sum(), [a]))(
        x.clone().requires_grad_()),
    "autograd: saved output, create_graph": lambda L, x: (lambda a: L.autograd.grad(
        a.relu().sum(), [a], create_graph=True))(x.clone().requires_grad_()),
}


@pytest.mark.oracle
@pytest.mark.filterwarnings("ignore:To copy construct from a tensor")
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_mode_sees_what_pytorch_mode_sees(name):
    program = PROGRAMS[name]
    assert record(onion, program) == record(torch, program)


@pytest.mark.oracle
def test_types_are_empty_for_plain_tensors():
    for lib in (onion, torch):
        seen = []
        base = _mode_base(lib)

        class Types(base):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                seen.append(types)
                return func(*args, **(kwargs or {}))

        with Types():
            lib.ones(2) + lib.ones(2)
        assert seen == [(), (), ()]


def test_tracer_from_the_documentation(capsys):
    class Tracer(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            print(func)
            return func(*args, **(kwargs or {}))

    with Tracer():
        a = onion.randn(3)
        b = onion.randn(3)
        c = a + b
    assert capsys.readouterr().out == "aten.randn.default\naten.randn.default\naten.add.Tensor\n"
    assert onion.allclose(c, a + b)


# --- the Python key's place -------------------------------------------------------------------------------

def _dispatch_keys_named(lib, names):
    ks = lib._C._dispatch_tls_local_exclude_set()
    has = ks.has if hasattr(ks, "has") else ks.__contains__
    return [n for n in names if has(getattr(lib._C.DispatchKey, n))]


@pytest.mark.oracle
def test_keys_above_python_excluded_while_the_mode_runs():
    names = [k.name for k in DispatchKey if int(k) < 100 and hasattr(torch._C.DispatchKey, k.name)]
    seen = {}
    for lib in (onion, torch):
        base = _mode_base(lib)

        class Keys(base):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                seen[lib.__name__] = (_dispatch_keys_named(lib, names),
                                      str(lib._C._dispatch_tls_local_include_set()))
                return func(*args, **(kwargs or {}))

        with Keys():
            lib.ones(2, requires_grad=True) * 2
    # PyTorch's exclude set holds the Autograd functionality without backend bits: compare at that level
    per_backend = tuple(n for n in names if n.startswith("Autograd") and n[len("Autograd"):] in BACKEND_NAMES)
    assert all(k in seen["onion"][0] for k in per_backend)
    assert [k for k in seen["onion"][0] if k not in per_backend] == seen["torch"][0]
    assert seen["onion"][1] == seen["torch"][1]
    assert "ADInplaceOrView" in seen["onion"][0]
    assert "Python" not in seen["onion"][1]      # the only mode is popped while it runs


def test_autograd_redispatch_reaches_the_mode_once():
    a = onion.ones(3).requires_grad_()
    b = onion.ones(3)

    class Pass(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    with Pass():
        with dispatch_trace(1) as buf:
            out = a + b
    # PythonTLSSnapshot (the highest key, included with the mode) keeps the state on entry, then autograd,
    # then the Python key hands the call to the mode, whose call goes to the kernel
    assert buf.getvalue().splitlines() == ["[call] op=[aten::add.Tensor], key=[PythonTLSSnapshot]",
                                           " [redispatch] op=[aten::add.Tensor], key=[AutogradCPU]",
                                           "  [redispatch] op=[aten::add.Tensor], key=[Python]",
                                           "   [call] op=[aten::add.Tensor], key=[CPU]"]
    assert out.grad_fn is not None and out.tolist() == [2.0, 2.0, 2.0]


@pytest.mark.oracle
def test_python_tls_snapshot_is_a_fallback_as_torch():
    """PyTorch registers a backend fallback (not a fallthrough) at PythonTLSSnapshot, as at Python."""
    for lib in (torch, onion):
        rows = {line.split(":")[0]: line for line in lib._C._dispatch_dump_table("aten::add.Tensor").splitlines()}
        assert "fallthrough" not in rows["PythonTLSSnapshot"] and "fallback" in rows["PythonTLSSnapshot"]


def _key_names(ks) -> set:
    """The names in a keyset's repr, restricted to the keys onion has (PyTorch has more)."""
    names = set(str(ks)[len("DispatchKeySet("):-1].replace(" ", "").split(",")) - {""}
    return {n for n in names if n in DispatchKey.__members__}


@pytest.mark.oracle
def test_restore_python_tls_snapshot_as_torch():
    """``_RestorePythonTLSSnapshot`` inside ``__torch_dispatch__`` (of a mode, or of a subclass with no mode)
    puts back the keys the call entered the dispatcher with, so the operator called there records autograd;
    outside a dispatched call it raises."""
    def run(lib, pd):
        seen = []

        def inside(func, args, kwargs):
            C = lib._C
            before = (str(C._dispatch_tls_local_include_set()), str(C._dispatch_tls_local_exclude_set()))
            with C._RestorePythonTLSSnapshot():
                inc, exc = C._dispatch_tls_local_include_set(), C._dispatch_tls_local_exclude_set()
                r = func(*args, **(kwargs or {}))
            after = (str(C._dispatch_tls_local_include_set()), str(C._dispatch_tls_local_exclude_set()))
            seen.append((str(func), sorted(_key_names(inc)), sorted(_key_names(exc)), r.grad_fn is not None,
                         before == after))
            return r

        class Mode(pd.TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                return inside(func, args, kwargs)

        class Sub(lib.Tensor):
            __torch_function__ = lib._C._disabled_torch_function_impl

            @classmethod
            def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
                with lib._C._DisableTorchDispatch():
                    args = [a.as_subclass(lib.Tensor) if isinstance(a, Sub) else a for a in args]
                    return inside(func, args, kwargs)

        x = lib.ones(2, requires_grad=True)
        with Mode():
            x * 2
        s = lib.Tensor._make_subclass(Sub, lib.ones(2))
        s.neg()
        try:
            with lib._C._RestorePythonTLSSnapshot():
                pass
        except RuntimeError as e:
            seen.append(str(e))
        return seen
    import onion.utils._python_dispatch as opd
    import torch.utils._python_dispatch as tpd
    t, o = run(torch, tpd), run(onion, opd)
    assert t == o
    assert o[0][3] is True and "Python" in o[0][1] and o[0][4] is True
    assert o[1][0] == "aten.neg.default" and len(o) == 3
    assert o[-1] == "Accessing torch dispatch state outside of '__torch_dispatch__' is not allowed."


@pytest.mark.oracle
def test_with_keyset_kernels_get_the_keyset_pytorch_hands_them():
    logs = {}
    for lib in (onion, torch):
        L = lib.library.Library("modes_test_ks", "DEF")
        try:
            L.define("baz(Tensor x) -> Tensor")
            log = logs[lib.__name__] = []
            ops = lib.ops.modes_test_ks

            def cpu(ks, x, log=log, lib=lib):
                log.append(("cpu", str(ks)))
                return x * 2

            def autograd(ks, x, log=log, ops=ops, lib=lib):
                log.append(("autograd", str(ks)))
                if lib is onion:
                    return ops.baz.default.redispatch(ks - lib._C.DispatchKeySet(lib._C.DispatchKey.Autograd), x)
                with lib._C._AutoDispatchBelowAutograd():
                    return ops.baz.default.redispatch(ks & lib._C._after_autograd_keyset, x)

            L.impl("baz", cpu, "CPU", with_keyset=True)
            L.impl("baz", autograd, "AutogradCPU", with_keyset=True)
            ops.baz(lib.ones(2))
            with recorder(lib):
                ops.baz(lib.ones(2, requires_grad=True))
        finally:
            L._destroy()
    assert logs["onion"] == logs["torch"]
    assert logs["onion"][0] == ("autograd", "DispatchKeySet(CPU, AutogradCPU)")


def test_conjugate_resolved_above_the_mode():
    x = onion.tensor([1 + 1j, 2 - 1j]).conj()
    with recorder(onion) as rec:
        y = x.exp()
    assert rec.log[0].startswith("aten.clone.default") and rec.log[-1].startswith("aten.exp.default")
    assert onion.allclose(y, x.resolve_conj().exp())


# --- the stack ------------------------------------------------------------------------------------------------

class _Pass(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def test_current_mode_and_stack():
    assert _get_current_dispatch_mode() is None and _get_current_dispatch_mode_stack() == []
    with _Pass() as m1:
        assert _get_current_dispatch_mode() is m1
        assert _get_current_dispatch_mode_stack() == [m1]
    with m1:
        with _Pass() as m2:
            assert _get_current_dispatch_mode() is m2
            assert _get_current_dispatch_mode_stack() == [m1, m2]
    assert _get_current_dispatch_mode_stack() == []


def test_running_mode_is_popped_inside_its_own_dispatch():
    seen = []

    class Inner(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(("inner", [type(m).__name__ for m in _get_current_dispatch_mode_stack()],
                         is_in_torch_dispatch_mode()))
            return func(*args, **(kwargs or {}))

    class Outer(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(("outer", [type(m).__name__ for m in _get_current_dispatch_mode_stack()],
                         is_in_torch_dispatch_mode()))
            return func(*args, **(kwargs or {}))

    with Outer():
        with Inner():
            onion.ones(1).neg()
    # each call: the inner mode first (outer still pushed), then the outer one (nothing left)
    assert seen == [("inner", ["Outer"], True), ("outer", [], True)] * 2
    assert not is_in_torch_dispatch_mode()


def test_nested_modes_each_see_each_call():
    x, y = onion.randn([]), onion.randn([])
    with recorder(onion) as outer:
        with recorder(onion) as inner:
            onion.empty([])
            x + y
    expected = ["aten.empty.memory_format()([], device=device(type='cpu'), pin_memory=False)",
                "aten.add.Tensor()(T[]:float32, T[]:float32)"]
    assert inner.log == expected and outer.log == expected


def test_same_mode_entered_twice_sees_each_call_twice():
    with recorder(onion) as rec:
        with rec:
            onion.empty([])
    assert rec.log == ["aten.empty.memory_format()([], device=device(type='cpu'), pin_memory=False)"] * 2


def test_nested_modes_innermost_raises_first():
    class Boom(RuntimeError):
        pass

    class A(TorchDispatchMode):
        def __init__(self, msg):        # no super().__init__(): PyTorch allows it
            self.msg = msg

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            raise Boom(self.msg)

    with pytest.raises(Boom, match="layer2"):
        with A("layer1"):
            with A("layer2"):
                onion.empty([])
    assert _get_current_dispatch_mode_stack() == []


def test_mode_created_separately_then_entered():
    class Boom(RuntimeError):
        pass

    class A(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            raise Boom()

    mode = A()
    with pytest.raises(Boom):
        with mode:
            onion.empty([])


def test_raise_inside_dispatch_restores_stack_and_keys():
    before = (onion._C._dispatch_tls_local_include_set(), onion._C._dispatch_tls_local_exclude_set())

    class RandnFails(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func.__name__ == "randn.default":
                raise RuntimeError("no randn here")
            return func(*args, **(kwargs or {}))

    with RandnFails() as mode:
        with pytest.raises(RuntimeError, match="no randn here"):
            onion.randn(())
        # still the innermost mode, with the Python keys on and nothing else left excluded
        assert _get_current_dispatch_mode() is mode
        assert DispatchKey.Python in onion._C._dispatch_tls_local_include_set()
        assert onion._C._dispatch_tls_local_exclude_set() == before[1]
        assert onion.zeros(()).item() == 0.0
    assert (onion._C._dispatch_tls_local_include_set(), onion._C._dispatch_tls_local_exclude_set()) == before


def test_mode_on_another_thread_does_not_see_this_threads_calls():
    entered, done = threading.Event(), threading.Event()
    other_log = []

    def worker():
        with recorder(onion) as rec:
            entered.set()
            done.wait(10)
            onion.ones(1).neg()
        other_log.extend(rec.log)

    t = threading.Thread(target=worker)
    t.start()
    try:
        assert entered.wait(10)
        assert _get_current_dispatch_mode_stack() == []      # this thread's stack is its own
        with recorder(onion) as mine:
            onion.ones(2) + onion.ones(2)
    finally:
        done.set()
        t.join(10)
    assert mine.log == ["aten.ones.default()([2], device=device(type='cpu'), pin_memory=False)"] * 2 + \
        ["aten.add.Tensor()(T[2]:float32, T[2]:float32)"]
    assert other_log == ["aten.ones.default()([1], device=device(type='cpu'), pin_memory=False)",
                         "aten.neg.default()(T[1]:float32)"]


def test_pop_mode_temporarily_and_disable_current_modes():
    with recorder(onion) as outer:
        with recorder(onion) as inner:
            with _pop_mode_temporarily() as popped:
                assert popped is inner and _get_current_dispatch_mode() is outer
                onion.ones(1)
            with _disable_current_modes() as modes:
                assert modes == [inner, outer] and _get_current_dispatch_mode_stack() == []
                onion.ones(1)
            assert _get_current_dispatch_mode_stack() == [outer, inner]
    assert len(inner.log) == 0 and len(outer.log) == 1


@pytest.mark.oracle
def test_pop_from_empty_stack():
    with pytest.raises(RuntimeError) as ours:
        _pop_mode()
    from torch.utils._python_dispatch import _pop_mode as torch_pop
    with pytest.raises(RuntimeError) as theirs:
        torch_pop()
    assert str(ours.value) == str(theirs.value)


def test_no_dispatch_hides_calls_from_the_mode():
    with recorder(onion) as with_nd:
        onion.ones([2, 3])
        with no_dispatch():
            onion.ones([2, 3])
        with onion._C._DisableTorchDispatch():
            onion.ones([2, 3])
    with recorder(onion) as without:
        onion.ones([2, 3])
    assert with_nd.log == without.log


def test_every_tensor_a_mode_sees_was_made_under_it():
    seen = set()

    def tensors(v):
        if isinstance(v, (list, tuple)):
            return [t for x in v for t in tensors(x)]
        if isinstance(v, dict):
            return tensors(list(v.values()))
        return [v] if isinstance(v, onion.Tensor) else []

    class Check(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            for t in tensors((args, kwargs)):
                assert t in seen, f"{func} got a tensor no operator under the mode made"
            r = func(*args, **(kwargs or {}))
            seen.update(tensors(r))
            return r

    with Check():
        x = onion.randn(3, requires_grad=True)
        (x * x).sum().backward()
    assert x.grad is not None and onion.allclose(x.grad, 2 * x.detach())


# --- what a mode may return, and how it may be written ------------------------------------------------------------

@pytest.mark.oracle
def test_not_implemented_from_the_only_mode():
    errors = []
    for lib in (onion, torch):
        class Polite(_mode_base(lib)):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                return NotImplemented

        with pytest.raises(TypeError) as e:
            with Polite():
                lib.ones(2)
        errors.append(str(e.value).split("; ")[1].split(":")[0])
        assert "Multiple dispatch failed for '" in str(e.value) and "mode object" in str(e.value)
    assert errors[0] == errors[1] == "all __torch_dispatch__ handlers returned NotImplemented"


@pytest.mark.oracle
def test_classmethod_dispatch_is_rejected():
    messages = []
    for lib in (onion, torch):
        class A(_mode_base(lib)):
            @classmethod
            def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
                return func(*args, **(kwargs or {}))

        x = lib.tensor(5.0)
        with pytest.raises(RuntimeError) as e:
            with A():
                x + x
        messages.append(str(e.value))
    assert messages[0] == messages[1]
    assert "classmethod is not supported, please make it a plain method" in messages[0]


WRONG_RETURNS = [(3, "add"), ("arf", "add"), ((1, 2), "add"), (3, "max.dim"), (None, "max.dim")]


@pytest.mark.oracle
@pytest.mark.parametrize("value,op", WRONG_RETURNS, ids=[f"{v!r}-{o}" for v, o in WRONG_RETURNS])
def test_wrong_return_type(value, op):
    messages = []
    for lib in (onion, torch):
        class Wrong(_mode_base(lib)):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                return value

        x = lib.ones(2, 2)
        with pytest.raises(RuntimeError) as e:
            with Wrong():
                x + 1 if op == "add" else x.max(0)
        messages.append(str(e.value))
    assert messages[0] == messages[1]


def test_pass_through_mode_gives_the_eager_results():
    def program():
        x = onion.arange(6.0).view(2, 3).requires_grad_()
        y = (x * 2 + 1).exp().sum(1)
        y.sum().backward()
        return y.detach(), x.grad

    eager = program()
    with _Pass():
        moded = program()
    for a, b in zip(eager, moded):
        assert a.tolist() == b.tolist()
