"""The high-level custom-op API (``onion.library.custom_op`` and the free registration functions), ported from
the registration parts of PyTorch's test/test_custom_ops.py that need no torch.compile, plus the cases issue 11
asks for; the same operators written in PyTorch 2.13 give the same values, gradients and errors."""
import re
import typing

import numpy as np
import pytest

import onion
from conftest import torch
from onion import Tensor
from onion._library import custom_ops as _custom_ops
from onion._subclasses.fake_tensor import DynamicOutputShapeException, FakeTensor, FakeTensorMode
from onion.library import custom_op
from onion.modes.python_dispatch import TorchDispatchMode

NS = "_onion_testing"


@pytest.fixture(autouse=True)
def _cleanup():
    yield
    for qualname in [q for q in _custom_ops.OPDEF_TO_LIB if q.startswith(NS + "::")]:
        _custom_ops.OPDEF_TO_LIB.pop(qualname)._destroy()
    from onion.dispatch.dispatcher import dispatcher
    assert not [n for n in dispatcher.ops if n.startswith(NS + "::")], "a test left an operator defined"


def _numpy_add(x, y):
    return onion.from_numpy(x.numpy() + y)


def test_basic_and_register_kernel():
    @custom_op(f"{NS}::add", mutates_args=())
    def add(x: Tensor, y: float) -> Tensor:
        return _numpy_add(x, y)

    x = onion.tensor([1.0, 2.0, 3.0])
    assert add(x, 0.5).tolist() == [1.5, 2.5, 3.5]
    assert onion.ops._onion_testing.add.default(x, 0.5).tolist() == [1.5, 2.5, 3.5]
    assert onion.ops._onion_testing.add(x, y=0.5).tolist() == [1.5, 2.5, 3.5]
    assert add(x, 2).tolist() == [3.0, 4.0, 5.0]          # an int for a float argument, converted
    calls = []

    @add.register_kernel("cpu")
    def _(x, y):
        calls.append(y)
        return _numpy_add(x, 2 * y)

    assert add(x, 1.0).tolist() == [3.0, 4.0, 5.0] and calls == [1.0]
    with add.set_kernel_enabled("cpu", enabled=False):     # the function given to custom_op runs instead
        assert add(x, 1.0).tolist() == [2.0, 3.0, 4.0]
    assert add(x, 1.0).tolist() == [3.0, 4.0, 5.0]
    with pytest.raises(TypeError, match="Expected a value of type 'float' for argument 'y'"):
        add(x, "one")


def test_no_grad_skips_autograd():
    @custom_op(f"{NS}::add", mutates_args=())
    def add(x: Tensor, y: float) -> Tensor:
        return _numpy_add(x.detach(), y)

    called = []
    add.register_autograd(lambda ctx, grad: pytest.fail("backward must not run"),
                          setup_context=lambda ctx, inputs, output: called.append(1))
    x = onion.randn(3, requires_grad=True)
    with onion.no_grad():
        y = add(x, 2.0)
    assert called == [] and not y.requires_grad
    x.requires_grad_(False)
    add(x, 2.0)
    assert called == []
    x.requires_grad_(True)
    y = add(x, 2.0)
    assert called == [1] and y.requires_grad


def test_manual_schema_and_mutation():
    @custom_op(f"{NS}::add", mutates_args=(), schema="(Tensor x, float y) -> Tensor")
    def add(x, y):
        return _numpy_add(x, y)

    assert add(onion.zeros(2), 1.5).tolist() == [1.5, 1.5]

    @custom_op(f"{NS}::sin_", mutates_args=["x"], schema="(Tensor(a!) x) -> ()")
    def sin_(x):
        np.sin(x.numpy(), out=x.numpy())

    x = onion.tensor([0.0, 1.0, 2.0])
    v = x._version
    assert sin_(x) is None                        # a schema returning () gives None
    assert np.allclose(x.numpy(), np.sin([0.0, 1.0, 2.0])) and x._version == v + 1

    with pytest.raises(ValueError, match=r"the op mutates \{'x'\}"):
        @custom_op(f"{NS}::bad_", mutates_args=(), schema="(Tensor(a!) x) -> ()")
        def bad_(x):
            pass
    assert not hasattr(onion.ops._onion_testing, "bad_")


def test_mutates_args_bump_versions():
    @custom_op(f"{NS}::f", mutates_args={"y", "z", "w"})
    def f(x: Tensor, y: typing.Optional[Tensor], z: list[Tensor], w: list[typing.Optional[Tensor]]) -> None:
        return None

    x, y = onion.randn(3), onion.randn(3)
    z = [onion.randn(3), onion.randn(3)]
    w = [onion.randn(3), None, onion.randn(3)]
    before = [t._version for t in (x, y, *z, w[0], w[2])]
    assert f(x, y, z, w) is None
    after = [t._version for t in (x, y, *z, w[0], w[2])]
    assert after[0] == before[0] and all(a == b + 1 for a, b in zip(after[1:], before[1:]))
    f(x, None, z, w)                              # an optional mutated argument may be None


def test_kwarg_only_tensors_refused():
    for ann in (Tensor, typing.Optional[Tensor], list[Tensor]):
        with pytest.raises(NotImplementedError, match="kwarg-only Tensor args"):
            def foo(x: Tensor, *, y: int, z: ann) -> Tensor: ...
            custom_op(f"{NS}::foo", foo, mutates_args=())
    assert not hasattr(onion.ops._onion_testing, "foo")        # nothing half-registered


def test_default_values_reach_the_kernel():
    seen = []

    @custom_op(f"{NS}::f", mutates_args=())
    def f(x: Tensor, a: typing.Optional[int] = None, b: float = 3.14, c: bool = True, d: int = 3, e: str = "foo",
          g: onion.dtype = onion.float32, h: onion.dtype = onion.int32) -> Tensor:
        seen.extend([a, b, c, d, e, g, h])
        return x.clone()

    f(onion.randn(3))
    assert seen == [None, 3.14, True, 3, "foo", onion.float32, onion.int32]


def test_mutated_name_missing():
    with pytest.raises(ValueError, match=r"\{'y'\} in mutates_args were not found"):
        @custom_op(f"{NS}::sin_", mutates_args={"y"}, device_types="cpu")
        def sin_(x: Tensor) -> None: ...
    assert not hasattr(onion.ops._onion_testing, "sin_")


@pytest.mark.parametrize("mode", ["function", "qualname", "opoverload"])
def test_register_fake_entry_points(mode):
    @custom_op(f"{NS}::add", mutates_args=())
    def add(x: Tensor, y: float) -> Tensor:
        return _numpy_add(x, y)

    op = {"function": add, "qualname": f"{NS}::add", "opoverload": onion.ops._onion_testing.add.default}[mode]
    called = []

    @onion.library.register_fake(op)
    def _(x, y):
        called.append(1)
        return onion.empty_like(x)

    with FakeTensorMode():
        z = add(onion.randn(3), 3.14)
    assert type(z) is FakeTensor and z.shape == (3,) and called == [1]
    m = add(onion.empty(2, 5, device="meta"), 1.0)      # the fake implementation is the Meta kernel too
    assert m.device.type == "meta" and m.shape == (2, 5)


def test_missing_fake_error():
    @custom_op(f"{NS}::add", mutates_args=())
    def add(x: Tensor, y: float) -> Tensor:
        return _numpy_add(x, y)

    with FakeTensorMode(), pytest.raises(RuntimeError) as e:
        add(onion.randn(3), 1.0)
    assert str(e.value) == (f"There was no fake impl registered for <CustomOpDef({NS}::add)>. This is necessary for "
                            f"torch.compile/export/fx tracing to work. Please use `add.register_fake` to add an fake "
                            f"impl.")


def test_fake_signature_checked_at_registration():
    @custom_op(f"{NS}::f", mutates_args=())
    def f(x: Tensor, y: int = 2, *, z: float = 1.0) -> Tensor:
        return x * y * z

    cases = {
        "takes 1 positional argument(s) but the schema has 2": lambda x: x,
        "positional argument 'a' is named 'y' in the schema": lambda x, a=2, *, z=1.0: x,
        "argument 'y' has a default in the schema": lambda x, y, *, z=1.0: x,
        "keyword-only argument 'z' of the schema is missing": lambda x, y=2: x,
        "argument 'z' is keyword-only in the schema but positional": lambda x, y=2, z=1.0: x,
        "keyword-only argument 'k' is not in the schema": lambda x, y=2, *, z=1.0, k: x,
    }
    for text, fn in cases.items():
        with pytest.raises(TypeError, match=f"register_fake\\({NS}::f\\).*{re.escape(text)}"):
            f.register_fake(fn)
        with pytest.raises(TypeError, match=re.escape(text)):
            onion.library.register_fake(f"{NS}::f", fn)
    assert f._abstract_fn is None
    f.register_fake(lambda x, y=2, *, z=1.0: onion.empty_like(x))      # matching: accepted
    f.register_fake(lambda *args, **kwargs: onion.empty_like(args[0]))  # generic: accepted
    with FakeTensorMode():
        assert f(onion.randn(4)).shape == (4,)


@pytest.mark.parametrize("call", ["decorator", "function"])
@pytest.mark.parametrize("mode", ["function", "qualname", "opoverload"])
@pytest.mark.parametrize("device_types", ["cpu", None])
def test_library_register_kernel(mode, call, device_types):
    @custom_op(f"{NS}::add", mutates_args=(), device_types="cuda")
    def add(x: Tensor, y: float) -> Tensor:
        raise AssertionError("the CUDA kernel must not run on CPU tensors")

    op = {"function": add, "qualname": f"{NS}::add", "opoverload": onion.ops._onion_testing.add.default}[mode]
    called = []

    def add_cpu(x, y):
        called.append(1)
        return _numpy_add(x, y)

    if call == "decorator":
        onion.library.register_kernel(op, device_types)(add_cpu)
    else:
        onion.library.register_kernel(op, device_types, add_cpu)
    assert add(onion.zeros(3), 3.0).tolist() == [3.0] * 3 and called == [1]


@pytest.mark.parametrize("call", ["decorator", "function"])
@pytest.mark.parametrize("device_types", [("cpu", "cuda"), "cpu", None])
def test_library_register_kernel_low_level(call, device_types):
    with onion.library._scoped_library(NS, "FRAGMENT") as lib:
        lib.define("add9(Tensor x, float y) -> Tensor")
        called = []

        def add_cpu(x, y):
            called.append(1)
            return _numpy_add(x, y)

        if call == "decorator":
            onion.library.register_kernel(f"{NS}::add9", device_types, lib=lib)(add_cpu)
        else:
            onion.library.register_kernel(onion.ops._onion_testing.add9.default, device_types, add_cpu, lib=lib)
        assert onion.ops._onion_testing.add9.default(onion.zeros(2), 1.0).tolist() == [1.0, 1.0] and called == [1]


def _sin_backward(ctx, grad):
    (x,) = ctx.saved_tensors
    return grad * x.cos()


def _save_input(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])


@pytest.mark.parametrize("mode", ["method", "function", "qualname", "opoverload"])
def test_register_autograd_entry_points(mode):
    @custom_op(f"{NS}::numpy_sin", mutates_args=())
    def numpy_sin(x: Tensor) -> Tensor:
        return onion.from_numpy(np.sin(x.detach().numpy()))

    if mode == "method":
        numpy_sin.register_autograd(_sin_backward, setup_context=_save_input)
    else:
        op = {"function": numpy_sin, "qualname": f"{NS}::numpy_sin",
              "opoverload": onion.ops._onion_testing.numpy_sin.default}[mode]
        onion.library.register_autograd(op, _sin_backward, setup_context=_save_input)
    x = onion.randn(3, requires_grad=True)
    y = numpy_sin(x)
    assert type(y.grad_fn).__name__ == f"GeneratedBackwardFor_{NS}_numpy_sin_defaultBackward"
    (gx,) = onion.autograd.grad(y, x, onion.ones_like(y))
    assert np.allclose(gx.numpy(), np.cos(x.detach().numpy()))


@pytest.mark.parametrize("mode", ["qualname", "opoverload"])
def test_register_autograd_low_level(mode):
    with onion.library._scoped_library(NS, "FRAGMENT") as lib:
        lib.define("sin5(Tensor x) -> Tensor")
        lib.impl("sin5", lambda x: onion.from_numpy(np.sin(x.detach().numpy())), "CPU")
        op = f"{NS}::sin5" if mode == "qualname" else onion.ops._onion_testing.sin5.default
        onion.library.register_autograd(op, _sin_backward, setup_context=_save_input, lib=lib)
        x = onion.randn(3, requires_grad=True)
        (gx,) = onion.autograd.grad(onion.ops._onion_testing.sin5(x), x, onion.ones(3))
        assert np.allclose(gx.numpy(), np.cos(x.detach().numpy()))


def test_register_autograd_keyword_only_and_defaults():
    with onion.library._scoped_library(NS, "FRAGMENT") as lib:
        lib.define("foo(Tensor w, int x=2, *, int y=3, int z) -> Tensor")
        lib.impl("foo", lambda w, x=2, *, y=3, z: w * x * y * z, "CPU")
        seen = []

        def setup_context(ctx, inputs, keyword_only_inputs, output):
            seen.append((len(inputs), inputs[1], dict(keyword_only_inputs)))
            ctx.c = keyword_only_inputs["y"] * keyword_only_inputs["z"] * inputs[1]

        onion.library.register_autograd(f"{NS}::foo", lambda ctx, grad: grad * ctx.c,
                                        setup_context=setup_context, lib=lib)
        w = onion.randn(3, requires_grad=True)
        onion.ops._onion_testing.foo(w, z=42).sum().backward()
        assert seen == [(2, 2, {"y": 3, "z": 42})]
        assert w.grad.tolist() == [2.0 * 3 * 42] * 3

        lib.define("bar(Tensor x, *, Tensor y) -> Tensor")
        with pytest.raises(NotImplementedError, match="kwarg-only Tensor args"):
            onion.library.register_autograd(f"{NS}::bar", lambda ctx, grad: grad, lib=lib)


def test_no_autograd_formula_error():
    @custom_op(f"{NS}::g", mutates_args=())
    def g(x: Tensor) -> Tensor:
        return x.sin()

    y = g(onion.randn(3, requires_grad=True))
    with pytest.raises(RuntimeError, match=f"Trying to backward through {NS}.g.default but no autograd formula"):
        y.sum().backward()


def test_register_autograd_refuses_mutating_ops():
    @custom_op(f"{NS}::sin_", mutates_args={"x"})
    def sin_(x: Tensor) -> None:
        pass

    with pytest.raises(RuntimeError, match="Cannot register autograd formula for non-functional operator"):
        sin_.register_autograd(lambda ctx, grad: grad)


def test_replacement_and_overloads():
    @custom_op(f"{NS}::f", mutates_args=())
    def f(x: Tensor) -> Tensor:
        return x.sin()

    x = onion.randn(3)
    assert np.allclose(f(x).numpy(), np.sin(x.numpy()))

    @custom_op(f"{NS}::f", mutates_args=())
    def f(x: Tensor) -> Tensor:  # noqa: F811 - the redefinition replaces the operator
        return x.cos()

    assert np.allclose(f(x).numpy(), np.cos(x.numpy()))
    called = []

    @custom_op(f"{NS}::f.overload", mutates_args=())
    def f1(x: Tensor, y: Tensor) -> Tensor:
        called.append(1)
        return x.clone()

    onion.ops._onion_testing.f(x, x)
    assert called == [1] and sorted(onion.ops._onion_testing.f.overloads()) == ["default", "overload"]


def test_disallows_output_aliasing():
    bodies = [lambda x: x.view(-1), lambda x: x, lambda x: x.detach()]
    for body in bodies:
        f = custom_op(f"{NS}::f", body, mutates_args=(), schema="(Tensor x) -> Tensor")
        with pytest.raises(RuntimeError, match="may not alias"):
            f(onion.randn(3))

    @custom_op(f"{NS}::g", mutates_args={"x"}, device_types="cpu")
    def numpy_sin_inplace(x: Tensor) -> Tensor:
        np.sin(x.numpy(), out=x.numpy())
        return x

    with pytest.raises(RuntimeError, match="may not alias"):
        numpy_sin_inplace(onion.randn(3))

    @custom_op(f"{NS}::h", mutates_args=())
    def two(x: Tensor) -> tuple[Tensor, Tensor]:
        y = x.clone()
        return y, y

    with pytest.raises(RuntimeError, match="may not alias"):
        two(onion.randn(3))


def test_issue_cases_list_input_tuple_output_meta_error():
    @custom_op(f"{NS}::weighted_sum", mutates_args=())
    def weighted_sum(tensors: list[Tensor], weights: list[float]) -> Tensor:
        return sum(t * w for t, w in zip(tensors, weights))

    a, b = onion.tensor([1.0, 2.0]), onion.tensor([10.0, 20.0])
    assert weighted_sum([a, b], [0.5, 0.25]).tolist() == [3.0, 6.0]

    @custom_op(f"{NS}::split2", mutates_args=())
    def split2(x: Tensor) -> tuple[Tensor, Tensor]:
        return x[:1].clone(), x[1:].clone()

    p, q = split2(onion.tensor([1.0, 2.0, 3.0]))
    assert p.tolist() == [1.0] and q.tolist() == [2.0, 3.0]

    @custom_op(f"{NS}::cpu_only", mutates_args=(), device_types="cpu")
    def cpu_only(x: Tensor) -> Tensor:
        return x.clone()

    with pytest.raises(RuntimeError, match="There was no fake impl registered"):
        cpu_only(onion.empty(2, device="meta"))      # custom_op's Meta kernel runs the (missing) fake impl
    with onion.library._scoped_library(NS, "FRAGMENT") as lib:
        lib.define("cpu_only2(Tensor x) -> Tensor")
        lib.impl("cpu_only2", lambda x: x.clone(), "CPU")
        # PyTorch 2.13's Meta backend fallback names the operator and what to register
        with pytest.raises(NotImplementedError, match=f"{NS}::cpu_only2: attempted to run this operator with Meta "
                                                      f"tensors, but there was no fake impl or Meta kernel"):
            onion.ops._onion_testing.cpu_only2(onion.empty(2, device="meta"))


def test_get_ctx_new_dynamic_size():
    @custom_op(f"{NS}::nonzero_count", mutates_args=())
    def nonzero_count(x: Tensor) -> Tensor:
        return onion.from_numpy(np.flatnonzero(x.numpy()))

    @nonzero_count.register_fake
    def _(x):
        n = onion.library.get_ctx().new_dynamic_size()
        return x.new_empty(n)

    assert onion.library.get_ctx() is None
    assert nonzero_count(onion.tensor([0.0, 1.0, 2.0])).tolist() == [1, 2]
    with FakeTensorMode(), pytest.raises(DynamicOutputShapeException):
        nonzero_count(onion.randn(3))
    with pytest.raises(RuntimeError, match="meta Tensors"):
        nonzero_count(onion.empty(3, device="meta"))


def test_modes_see_one_call_and_make_fx_keeps_it():
    @custom_op(f"{NS}::mul3", mutates_args=())
    def mul3(x: Tensor) -> Tensor:
        return x * 3

    mul3.register_fake(lambda x: onion.empty_like(x))
    seen = []

    class Record(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    x = onion.ones(2)
    with Record():
        y = mul3(x)
    assert seen == [f"{NS}.mul3.default"] and y.tolist() == [3.0, 3.0]
    from onion.fx.experimental.proxy_tensor import make_fx
    gm = make_fx(lambda x: mul3(x) + 1, tracing_mode="fake")(onion.ones(2))
    targets = [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]
    assert targets == [f"{NS}.mul3.default", "aten.add.Tensor"]


def test_inference_mode_and_version_counter():
    @custom_op(f"{NS}::fill_", mutates_args={"x"})
    def fill_(x: Tensor, v: float) -> None:
        x.numpy()[...] = v

    with onion.inference_mode():
        t = onion.zeros(2)
        fill_(t, 2.0)
    assert t.tolist() == [2.0, 2.0]


def test_free_define_and_impl():
    with onion.library._scoped_library(NS, "FRAGMENT") as lib:
        onion.library.define(f"{NS}::twice", "(Tensor x) -> Tensor", lib=lib)
        onion.library.impl(f"{NS}::twice", "cpu", lambda x: x * 2, lib=lib)
        onion.library.impl(f"{NS}::twice", "meta", lambda x: onion.empty_like(x), lib=lib)
        assert onion.ops._onion_testing.twice(onion.ones(2)).tolist() == [2.0, 2.0]
        assert onion.ops._onion_testing.twice(onion.ones(2, device="meta")).device.type == "meta"
        onion.library.define(f"{NS}::thrice", "(Tensor x) -> Tensor", lib=lib)

        @onion.library.impl(f"{NS}::thrice", "default", lib=lib)
        def _(x):
            return x * 3
        assert onion.ops._onion_testing.thrice(onion.ones(1)).tolist() == [3.0]
        onion.library.define(f"{NS}::composite", "(Tensor x) -> Tensor", lib=lib)
        onion.library.impl(lib, "composite", "CompositeImplicitAutograd")(lambda x: x.sin() * 2)
        x = onion.randn(3, requires_grad=True)
        onion.ops._onion_testing.composite(x).sum().backward()     # autograd through the composite
        assert np.allclose(x.grad.numpy(), 2 * np.cos(x.detach().numpy()))
        with pytest.raises(ValueError, match="expected schema to look like"):
            onion.library.define(f"{NS}::bad", "Tensor x -> Tensor", lib=lib)
        with pytest.raises(ValueError, match="namespace::name"):
            onion.library.define("no_namespace", "(Tensor x) -> Tensor", lib=lib)
        with pytest.raises(RuntimeError, match="same name and overload name multiple times"):
            onion.library.define(f"{NS}::twice", "(Tensor x) -> Tensor", lib=lib)
    assert not hasattr(onion.ops._onion_testing, "twice")


def test_bad_schema_and_bad_annotation_register_nothing():
    with pytest.raises(RuntimeError, match=r"column \d+"):
        custom_op(f"{NS}::f", lambda x: x, mutates_args=(), schema="(Tensor x, int y -> Tensor")
    with pytest.raises(ValueError, match="Parameter y has unsupported type"):
        def f(x: Tensor, y: dict) -> Tensor: ...
        custom_op(f"{NS}::f", f, mutates_args=())
    with pytest.raises(ValueError, match="namespace::name"):
        custom_op("f", lambda x: x, mutates_args=(), schema="(Tensor x) -> Tensor")
    assert not hasattr(onion.ops._onion_testing, "f")


def test_register_torch_dispatch_for_a_mode():
    @custom_op(f"{NS}::f", mutates_args=())
    def f(x: Tensor) -> Tensor:
        return x + 1

    class Passthrough(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    calls = []

    @f.register_torch_dispatch(Passthrough)
    def _(mode, func, types, args, kwargs):
        calls.append((type(mode), str(func)))
        return args[0] * 10

    x = onion.ones(2)
    with Passthrough():
        y = f(x)
    assert y.tolist() == [10.0, 10.0] and calls == [(Passthrough, f"{NS}.f.default")]
    assert f(onion.ones(2)).tolist() == [2.0, 2.0]


# --- the same operators in PyTorch 2.13 -------------------------------------------------------------------
# (PyTorch's side is registered with Library + register_autograd, what its custom_op does underneath: calling a
# torch custom_op imports torch._dynamo, which costs seconds)

def _mul_sin_setup_context(ctx, inputs, output):
    x, ys, k = inputs
    ctx.save_for_backward(x, ys[0])
    ctx.k = k


def _mul_sin_backward(ctx, g1, g2):
    x, y0 = ctx.saved_tensors
    c = g1 * (x * y0 * ctx.k).cos() * ctx.k
    return c * y0 + g2, [c * x, g2], None


def _torch_op(lib, name, schema, kernel, backward, setup_context=None):
    lib.define(name + schema)
    lib.impl(name, kernel, "CPU")
    torch.library.register_autograd(f"{NS}::{name}", backward, setup_context=setup_context, lib=lib)
    return getattr(torch.ops._onion_testing, name).default


@pytest.mark.oracle
def test_same_values_and_gradients_as_pytorch_and_builtins():
    @custom_op(f"{NS}::mul_sin", mutates_args=())
    def op_o(x: Tensor, ys: list[Tensor], k: float) -> tuple[Tensor, Tensor]:
        return (x * ys[0] * k).sin(), x + ys[1]

    op_o.register_autograd(_mul_sin_backward, setup_context=_mul_sin_setup_context)
    rng = np.random.default_rng(0)
    data = [rng.standard_normal(4) for _ in range(3)]
    with torch.library._scoped_library(NS, "FRAGMENT") as tlib:
        op_t = _torch_op(tlib, "mul_sin", "(Tensor x, Tensor[] ys, float k) -> (Tensor, Tensor)",
                         lambda x, ys, k: ((x * ys[0] * k).sin(), x + ys[1]), _mul_sin_backward,
                         _mul_sin_setup_context)
        xo = [onion.tensor(d, requires_grad=True) for d in data]
        xt = [torch.tensor(d, requires_grad=True) for d in data]
        ao, bo = op_o(xo[0], [xo[1], xo[2]], 1.5)
        at, bt = op_t(xt[0], [xt[1], xt[2]], 1.5)
        assert np.allclose(ao.detach().numpy(), at.detach().numpy())
        assert np.allclose(bo.detach().numpy(), bt.detach().numpy())
        (ao.sum() * 2 + bo.sum()).backward()
        (at.sum() * 2 + bt.sum()).backward()
        for o, t in zip(xo, xt):
            assert np.allclose(o.grad.numpy(), t.grad.numpy())
    # the same math with built-in operators
    xb = [onion.tensor(d, requires_grad=True) for d in data]
    ((xb[0] * xb[1] * 1.5).sin().sum() * 2 + (xb[0] + xb[2]).sum()).backward()
    for o, b in zip(xo, xb):
        assert np.allclose(o.grad.numpy(), b.grad.numpy())


@pytest.mark.oracle
@pytest.mark.parametrize("grads", ["too_few", "non_none_for_number"])
def test_wrong_gradients_same_error_as_pytorch(grads):
    backward = (lambda ctx, g: g) if grads == "too_few" else (lambda ctx, g: (g, g, g))

    @custom_op(f"{NS}::wrong_grads", mutates_args=())
    def f(x: Tensor, y: Tensor, a: float) -> Tensor:
        return x * y * a

    f.register_autograd(backward)
    with pytest.raises(RuntimeError) as got:
        f(onion.randn(3, requires_grad=True), onion.randn(3), 2.0).sum().backward()
    with torch.library._scoped_library(NS, "FRAGMENT") as tlib:
        op_t = _torch_op(tlib, "wrong_grads", "(Tensor x, Tensor y, float a) -> Tensor", lambda x, y, a: x * y * a,
                         backward)
        with pytest.raises(RuntimeError) as expected:
            op_t(torch.randn(3, requires_grad=True), torch.randn(3), 2.0).sum().backward()
    assert str(got.value) == str(expected.value)


def test_register_torch_dispatch_for_a_subclass():
    class Wrapper(onion.Tensor):
        __torch_function__ = onion._C._disabled_torch_function_impl

        @staticmethod
        def __new__(cls, elem):
            r = onion.Tensor._make_wrapper_subclass(cls, elem.size(), dtype=elem.dtype, device=elem.device)
            r.elem = elem
            return r

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            raise AssertionError("the registered rule runs instead")

    @custom_op(f"{NS}::f", mutates_args=())
    def f(x: Tensor) -> Tensor:
        return x + 1

    @onion.library.register_torch_dispatch(f"{NS}::f", Wrapper)
    def _(cls, func, types, args, kwargs):
        assert cls is Wrapper and types == (Wrapper,)
        return Wrapper(args[0].elem * 10)

    y = f(Wrapper(onion.ones(2)))
    assert type(y) is Wrapper and y.elem.tolist() == [10.0, 10.0]


def test_factory_op_picks_the_backend_from_its_device_argument():
    @custom_op(f"{NS}::make", mutates_args=(), device_types="cpu")
    def make(n: int, device: onion.device) -> Tensor:
        return onion.arange(n, dtype=onion.float32)

    assert make(3, onion.device("cpu")).tolist() == [0.0, 1.0, 2.0]
    assert make(2, "cpu").tolist() == [0.0, 1.0]                 # a device string, converted
    with pytest.raises(RuntimeError, match="does not have a kernel registered for meta"):
        make(2, "meta")
    with pytest.raises(ValueError, match="required to have a `device: torch.device` argument"):
        @custom_op(f"{NS}::make2", mutates_args=(), device_types="cpu")
        def make2(n: int) -> Tensor:
            return onion.zeros(n)
    assert not hasattr(onion.ops._onion_testing, "make2")


def test_tags_and_schema_of_the_operator():
    @custom_op(f"{NS}::f", mutates_args=(), tags=("pointwise",))
    def f(x: Tensor, *, alpha: float = 1.0) -> Tensor:
        return x * alpha

    op = onion.ops._onion_testing.f.default
    assert str(op._schema) == f"{NS}::f(Tensor x, *, float alpha=1.0) -> Tensor"
    assert op.tags == ("pt2_compliant_tag", "pointwise")
    assert f(onion.ones(1), alpha=2.0).tolist() == [2.0]
    assert repr(f) == f"<CustomOpDef({NS}::f)>"


def test_define_and_impl_forms_of_pytorch_tests():
    with onion.library._scoped_library(NS, "FRAGMENT") as lib:
        with pytest.raises(ValueError, match="expected schema to look like"):
            onion.library.define(f"{NS}::foo", "foo(Tensor x) -> Tensor", lib=lib)

        @onion.library.define(lib, "legacy(Tensor x) -> Tensor")         # the older decorator form
        def _(x):
            return onion.from_numpy(np.sin(x.numpy()))
        x = onion.randn(3)
        assert np.allclose(onion.ops._onion_testing.legacy(x).numpy(), np.sin(x.numpy()))

        for name, types in (("foo1", "default"), ("foo2", ["cpu"]), ("foo3", ["cpu", "cuda"]), ("foo4", "CPU")):
            onion.library.define(f"{NS}::{name}", "(Tensor x) -> Tensor", lib=lib)
            onion.library.impl(f"{NS}::{name}", types, lambda x: onion.from_numpy(np.sin(x.numpy())), lib=lib)
            assert np.allclose(getattr(onion.ops._onion_testing, name)(x).numpy(), np.sin(x.numpy()))
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
        onion.library.impl("blah::blah", "somethingsomething")


def test_profiler_names_the_custom_op_once():
    @custom_op(f"{NS}::mul3", mutates_args=())
    def mul3(x: Tensor) -> Tensor:
        return x * 3

    x = onion.ones(2)
    with onion.profiler.profile() as prof:
        mul3(x)
    events = [(e.name, e.cpu_parent.name if e.cpu_parent is not None else None) for e in prof.events()]
    assert events[:2] == [(f"{NS}::mul3", None), ("aten::mul", f"{NS}::mul3")]


def test_register_autograd_list_output_and_needs_input_grad():
    @custom_op(f"{NS}::scale_all", mutates_args=())
    def scale_all(xs: list[Tensor], k: float) -> list[Tensor]:
        return [x * k for x in xs]

    seen = []

    def backward(ctx, grads):
        seen.append((type(grads).__name__, ctx.needs_input_grad))
        return [g * ctx.k for g in grads], None

    def setup_context(ctx, inputs, output):
        ctx.k = inputs[1]

    scale_all.register_autograd(backward, setup_context=setup_context)
    a, b = onion.ones(2, requires_grad=True), onion.ones(2)
    out = scale_all([a, b], 3.0)
    assert isinstance(out, list) and [o.tolist() for o in out] == [[3.0, 3.0], [3.0, 3.0]]
    (out[0].sum() + out[1].sum()).backward()
    assert a.grad.tolist() == [3.0, 3.0] and seen == [("list", ([True, False], False))]


def test_register_autocast():
    seen = []

    @custom_op(f"{NS}::mm", mutates_args=())
    def mm(x: Tensor, y: Tensor) -> Tensor:
        seen.append((x.dtype, y.dtype))
        return x @ y

    mm.register_autocast("cpu", onion.float16)
    a, b = onion.ones(2, 2), onion.ones(2, 2, dtype=onion.float64)
    assert mm(a, a).dtype == onion.float32
    with onion.autocast("cpu"):
        out = mm(a, a)
        mm(a, b.float()).dtype
        mm(a, b.to(onion.float32))
        mm(b, b)                         # float64 is left alone
    assert out.dtype == onion.float16
    assert seen == [(onion.float32, onion.float32), (onion.float16, onion.float16), (onion.float16, onion.float16),
                    (onion.float16, onion.float16), (onion.float64, onion.float64)]
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        mm.register_autocast(onion.device("cpu"), onion.float16)


def test_impl_abstract_is_register_fake():
    @custom_op(f"{NS}::f", mutates_args=())
    def f(x: Tensor) -> Tensor:
        return x.clone()

    with pytest.warns(FutureWarning, match="renamed to `onion.library.register_fake`"):
        onion.library.impl_abstract(f"{NS}::f", lambda x: onion.empty_like(x))
    with FakeTensorMode():
        assert f(onion.randn(2)).shape == (2,)


def test_torch_dispatch_rule_lives_with_its_library():
    class Passthrough(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    class Other(Passthrough):
        pass

    x = onion.ones(2)
    with onion.library._scoped_library(NS, "FRAGMENT") as lib:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: x + 1, "CPU")
        onion.library.register_torch_dispatch(f"{NS}::f", Passthrough, lambda mode, func, types, args, kwargs: x * 7,
                                              lib=lib)
        with Passthrough():
            assert onion.ops._onion_testing.f(x).tolist() == [7.0, 7.0]
        with Other():                       # a rule is for its exact type
            assert onion.ops._onion_testing.f(x).tolist() == [2.0, 2.0]
        with onion.library._scoped_library(NS, "FRAGMENT") as inner:
            onion.library.register_torch_dispatch(f"{NS}::f", Other, lambda *a: x * 5, lib=inner)
            with Other():
                assert onion.ops._onion_testing.f(x).tolist() == [5.0, 5.0]
            with Passthrough():             # the rules in force before stay
                assert onion.ops._onion_testing.f(x).tolist() == [7.0, 7.0]
        with Other():                       # inner's rule went with inner
            assert onion.ops._onion_testing.f(x).tolist() == [2.0, 2.0]
        with Passthrough():
            assert onion.ops._onion_testing.f(x).tolist() == [7.0, 7.0]
    with onion.library._scoped_library(NS, "FRAGMENT") as lib:      # defined again: no rule left
        onion.library.define(f"{NS}::f", "(Tensor x) -> Tensor", lib=lib)
        onion.library.impl(f"{NS}::f", "cpu", lambda x: x + 1, lib=lib)
        with Passthrough():
            assert onion.ops._onion_testing.f(x).tolist() == [2.0, 2.0]
