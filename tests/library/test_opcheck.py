"""opcheck: passes on operators registered correctly, and names the check and the reason on broken ones.

Operators are registered with ``Library.define`` + ``impl`` + ``_register_fake`` (+ an autograd kernel at
``Autograd``), in a namespace of the test's own that is destroyed after it.  The broken kinds: an undeclared
mutation, an undeclared alias, a fake implementation with the wrong shape / dtype / strides, one that is
missing or raises, autograd inside a backend kernel, and a wrong backward formula.  The same operators
defined through ``torch.library`` get the same verdicts from ``torch.library.opcheck`` (where they differ,
the test says why).
"""
from __future__ import annotations

import pytest

import onion
from onion._subclasses.fake_tensor import UnsupportedOperatorException
from onion.library import opcheck
from onion.testing._internal.optests import ALL_TEST_UTILS, DEFAULT_TEST_UTILS, OpCheckError
from onion.testing._internal.optests.fake_tensor import MetadataMismatchError

from conftest import torch
from opcheck_libs import define, library_scope, tensor, verdicts


@pytest.fixture
def libs(request):
    yield from library_scope(request)


ALL_SUCCESS = {name: "SUCCESS" for name in DEFAULT_TEST_UTILS}


def _sin_backward_right(L, saved, g):
    (x,) = saved
    return g * x.cos()


def _sin_backward_wrong(L, saved, g):
    (x,) = saved
    return g * x.sin()


# id -> builder(L, lib) -> (operator, args): each written once against onion or torch
def _good(L, lib):
    op = define(L, lib, "good(Tensor x, Tensor y) -> Tensor", lambda x, y: x * y + 1,
                lambda x, y: L.empty_like(x))
    return op, (tensor(L, (2, 3)), tensor(L, (2, 3), seed=1))


def _mutates(L, lib):
    def kernel(x):
        x.add_(1)
        return x.clone()
    op = define(L, lib, "mutates(Tensor x) -> Tensor", kernel, lambda x: L.empty_like(x))
    return op, (tensor(L, (3,)),)


def _aliases(L, lib):
    op = define(L, lib, "aliases(Tensor x) -> Tensor", lambda x: x.view(-1), lambda x: x.new_empty(x.numel()))
    return op, (tensor(L, (2, 3)),)


def _returns_input(L, lib):
    op = define(L, lib, "returns_input(Tensor x) -> Tensor", lambda x: x, lambda x: L.empty_like(x))
    return op, (tensor(L, (2, 3)),)


def _fake_shape(L, lib):
    op = define(L, lib, "fake_shape(Tensor x) -> Tensor", lambda x: x * 2, lambda x: x.new_empty(3, 3))
    return op, (tensor(L, (2, 3)),)


def _fake_dtype(L, lib):
    op = define(L, lib, "fake_dtype(Tensor x) -> Tensor", lambda x: x * 2,
                lambda x: L.empty_like(x, dtype=L.float64))
    return op, (tensor(L, (2, 3)),)


def _fake_strides(L, lib):
    op = define(L, lib, "fake_strides(Tensor x) -> Tensor", lambda x: x * 2,
                lambda x: L.empty_like(x).t().contiguous().t())
    return op, (tensor(L, (2, 3)),)


def _fake_device(L, lib):
    op = define(L, lib, "fake_device(Tensor x) -> Tensor", lambda x: x * 2,
                lambda x: L.empty(x.shape, dtype=x.dtype, device="meta"))
    return op, (tensor(L, (2, 3)),)


def _no_fake(L, lib):
    op = define(L, lib, "no_fake(Tensor x) -> Tensor", lambda x: L.from_numpy(x.detach().numpy() * 2))
    return op, (tensor(L, (2, 3)),)


def _inplace(L, lib):
    def kernel(x, y):
        x.add_(y)
    op = define(L, lib, "inplace(Tensor(a!) x, Tensor y) -> ()", kernel, lambda x, y: None)
    return op, (tensor(L, (2, 3)), tensor(L, (2, 3), seed=1))


def _view_declared(L, lib):
    op = define(L, lib, "view_declared(Tensor(a) x) -> Tensor(a)", lambda x: x.view(-1), lambda x: x.view(-1))
    return op, (tensor(L, (2, 3)),)


def _list_input(L, lib):
    def kernel(xs):
        return L.stack(xs).sum(0)
    op = define(L, lib, "list_input(Tensor[] xs) -> Tensor", kernel, lambda xs: L.empty_like(xs[0]))
    return op, ([tensor(L, (4,), seed=s) for s in range(3)],)


def _tuple_output(L, lib):
    op = define(L, lib, "tuple_output(Tensor x) -> (Tensor, Tensor)", lambda x: (x + 1, x * 2),
                lambda x: (L.empty_like(x), L.empty_like(x)))
    return op, (tensor(L, (2, 3)),)


def _autograd_in_backend(L, lib):
    # built-in operators called from the CPU kernel record autograd there: PyTorch's check flags it
    op = define(L, lib, "autograd_in_backend(Tensor x, Tensor y) -> Tensor", lambda x, y: x * y + 1,
                lambda x, y: L.empty_like(x))
    return op, (tensor(L, (2, 3), requires_grad=True), tensor(L, (2, 3), seed=1))


def _with_autograd(L, lib):
    op = define(L, lib, "with_autograd(Tensor x) -> Tensor", lambda x: x.sin(), lambda x: L.empty_like(x),
                autograd=((0,), _sin_backward_right))
    return op, (tensor(L, (2, 3), dtype="float64", requires_grad=True),)


def _composite_implicit(L, lib):
    op = define(L, lib, "composite_implicit(Tensor x) -> Tensor", lambda x: x * 2 + 1,
                key="CompositeImplicitAutograd")
    return op, (tensor(L, (2, 3), dtype="float64", requires_grad=True),)


def _composite_explicit(L, lib):
    op = define(L, lib, "composite_explicit(Tensor x) -> Tensor", lambda x: x * 2 + 1,
                key="CompositeExplicitAutograd")
    return op, (tensor(L, (2, 3)),)


def _scalar_args(L, lib):
    op = define(L, lib, "scalar_args(Tensor x, float alpha, *, int n=2) -> Tensor",
                lambda x, alpha, n=2: x * alpha + n, lambda x, alpha, n=2: L.empty_like(x))
    return op, (tensor(L, (2, 3)), 0.5)


def _out_variant(L, lib):
    def kernel(x, *, out):
        out.copy_(x * 2)
        return out
    op = define(L, lib, "doubled.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)", kernel,
                lambda x, *, out: out)
    return op, (tensor(L, (2, 3)),), {"out": L.empty(2, 3)}


def _optional_input(L, lib):
    def kernel(x, bias=None):
        return x * 2 if bias is None else x * 2 + bias
    op = define(L, lib, "maybe_bias(Tensor x, Tensor? bias=None) -> Tensor", kernel,
                lambda x, bias=None: L.empty_like(x))
    return op, (tensor(L, (2, 3)), None)


CASES = {
    "good": _good, "mutates": _mutates, "aliases": _aliases, "returns_input": _returns_input,
    "fake_shape": _fake_shape, "fake_dtype": _fake_dtype, "fake_strides": _fake_strides, "no_fake": _no_fake,
    "fake_device": _fake_device,
    "inplace": _inplace, "view_declared": _view_declared, "list_input": _list_input,
    "tuple_output": _tuple_output, "autograd_in_backend": _autograd_in_backend, "with_autograd": _with_autograd,
    "composite_implicit": _composite_implicit, "composite_explicit": _composite_explicit,
    "scalar_args": _scalar_args, "out_variant": _out_variant, "optional_input": _optional_input,
}

# where onion's verdict differs from torch's, and why
DIFFERS = {
    # onion's aot_dispatch check replays the traced graph through the same dispatcher, so the kernel's own
    # autograd runs again and the gradients agree; AOTAutograd traces below autograd and finds none
    ("autograd_in_backend", "test_aot_dispatch_dynamic"): ("SUCCESS", "AssertionError"),
}


def _run(L, build, lib):
    op, args, *kwargs = build(L, lib)
    check = opcheck if L is onion else torch.library.opcheck
    return verdicts(check(op, args, *kwargs, raise_exception=False))


@pytest.mark.oracle
@pytest.mark.parametrize("case", sorted(CASES))
def test_verdicts_match_torch(case, libs):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # both warn about aliasing outputs and about backward fallbacks
        ours = _run(onion, CASES[case], libs.lib(onion))
        # PyTorch turns the aliasing warning of its AOT check into an error when the CI variable is set
        # (functorch config error_on_custom_op_aliasing); compare with what its users get by default
        with torch._functorch.config.patch(error_on_custom_op_aliasing=False):
            theirs = _run(torch, CASES[case], libs.lib(torch))
    for (c, name), (o, t) in DIFFERS.items():
        if c == case:
            assert (ours[name], theirs[name]) == (o, t)
            ours.pop(name)
            theirs.pop(name)
    assert ours == theirs


@pytest.mark.parametrize("case", ["good", "inplace", "list_input", "tuple_output", "with_autograd",
                                  "composite_implicit", "composite_explicit", "scalar_args"])
def test_correct_operators_pass(case, libs):
    op, args = CASES[case](onion, libs.lib(onion))
    before = [a.clone() for a in args if isinstance(a, onion.Tensor)]
    assert opcheck(op, args) == ALL_SUCCESS
    assert opcheck(op, args, test_utils="ALL") == {name: "SUCCESS" for name in ALL_TEST_UTILS}
    # opcheck works on copies: the caller's tensors are as they were
    assert all(onion.equal(a.detach(), b.detach()) for a, b in zip([a for a in args if isinstance(a, onion.Tensor)], before))


def _failure(op, args, name, **kw):
    """The exception of check ``name`` (the others as expected), and what opcheck raises for it."""
    results = opcheck(op, args, raise_exception=False, **kw)
    assert results[name] != "SUCCESS", results
    with pytest.raises(OpCheckError) as info:
        opcheck(op, args, test_utils=name, **kw)
    assert str(info.value).startswith(f"opcheck(op, ...): {name} failed with ")
    assert isinstance(info.value.__cause__, type(results[name]))
    return results, results[name], str(info.value)


def test_undeclared_mutation(libs):
    op, args = _mutates(onion, libs.lib(onion))
    results, exc, text = _failure(op, args, "test_schema")
    assert isinstance(exc, RuntimeError)
    assert f"{op.name()}: Argument x is not defined as mutable but was mutated (its values changed" in text
    assert {k: v for k, v in results.items() if k != "test_schema"} == \
        {k: "SUCCESS" for k in DEFAULT_TEST_UTILS if k != "test_schema"}


def test_mutation_seen_by_version_counter(libs):
    # the values come back the same, but the kernel wrote x in place: still a mutation the schema hides
    def kernel(x):
        x.mul_(1)
        return x + 1
    op = define(onion, libs.lib(onion), "rewrites(Tensor x) -> Tensor", kernel, lambda x: onion.empty_like(x))
    _, exc, text = _failure(op, (tensor(onion, (3,)),), "test_schema")
    assert "Argument x is not defined as mutable but was mutated (its version counter moved" in text


def test_mutated_list_element(libs):
    def kernel(xs):
        xs[1].zero_()
        return xs[0] + 1
    op = define(onion, libs.lib(onion), "list_mut(Tensor[] xs) -> Tensor", kernel,
                lambda xs: onion.empty_like(xs[0]))
    _, _, text = _failure(op, ([tensor(onion, (3,)), tensor(onion, (3,), seed=1)],), "test_schema")
    assert "Argument xs is not defined as mutable but was mutated" in text


def test_declared_mutation_that_does_not_happen_is_fine(libs):
    op = define(onion, libs.lib(onion), "maybe(Tensor(a!) x) -> ()", lambda x: None, lambda x: None)
    assert opcheck(op, (tensor(onion, (3,)),)) == ALL_SUCCESS


def test_undeclared_alias(libs):
    op, args = _aliases(onion, libs.lib(onion))
    results, exc, text = _failure(op, args, "test_schema")
    assert f"{op.name()}: Argument x is not defined to alias output but was aliasing" in text
    fake = results["test_faketensor"]
    assert isinstance(fake, MetadataMismatchError)
    assert str(fake) == (f"When comparing the output of {op} on FakeTensor and concrete Tensors, found mismatch "
                         f"in outputs_alias_inputs check False != True")


def test_declared_view(libs):
    # the schema allows the alias and the fake makes one too; tracing for a compiler refuses it, as PyTorch's
    # functionalization does
    op, args = _view_declared(onion, libs.lib(onion))
    results, exc, text = _failure(op, args, "test_aot_dispatch_dynamic")
    assert "Found a custom (non-ATen) operator whose output has alias annotations: " in text
    assert {k for k, v in results.items() if v != "SUCCESS"} == {"test_aot_dispatch_dynamic"}


def test_outputs_aliasing_each_other(libs):
    def kernel(x):
        y = x * 2
        return y, y[1:]
    op = define(onion, libs.lib(onion), "pair(Tensor x) -> (Tensor, Tensor)", kernel,
                lambda x: (onion.empty_like(x), x.new_empty(x.shape[0] - 1)))
    _, _, text = _failure(op, (tensor(onion, (4,)),), "test_schema")
    assert f"{op.name()}: Outputs 0 and 1 alias unexpectedly" in text


def test_returning_an_input_under_its_own_alias_set(libs):
    # declared as an alias but not as a write: returning the very input is still refused (PyTorch's rule)
    op = define(onion, libs.lib(onion), "same(Tensor(a) x) -> Tensor(a)", lambda x: x, lambda x: x)
    _, _, text = _failure(op, (tensor(onion, (3,)),), "test_schema")
    assert "Dispatcher operators below autograd are not allowed to directly return inputs. However, we found " \
           "that `outputs[0] is x`" in text


@pytest.mark.parametrize("case, detail", [
    ("fake_shape", "found mismatched tensor metadata: Shapes onion.Size([2, 3]) and onion.Size([3, 3]) are not "
                   "equal!"),
    ("fake_dtype", "found mismatched tensor metadata: Dtypes onion.float32 and onion.float64 are not equal!"),
    ("fake_strides", "found mismatched tensor metadata: Stride mismatch! Strides are (3, 1) and (1, 2) "
                     "(mismatched at 0)!"),
    ("fake_device", "found mismatched tensor metadata: Devices cpu and meta are not equal!"),
])
def test_wrong_fake(case, detail, libs):
    op, args = CASES[case](onion, libs.lib(onion))
    results, exc, text = _failure(op, args, "test_faketensor")
    assert isinstance(exc, MetadataMismatchError)
    assert str(exc) == f"When comparing the output of {op} on FakeTensor and concrete Tensors, {detail}"
    # the traced graph replays the real kernel: a wrong fake does not change the values
    assert results["test_aot_dispatch_dynamic"] == "SUCCESS"


def test_missing_fake(libs):
    op, args = _no_fake(onion, libs.lib(onion))
    results, exc, text = _failure(op, args, "test_faketensor")
    assert isinstance(exc, UnsupportedOperatorException)
    assert f"{op} has no fake implementation (and no Meta kernel), so it cannot run under FakeTensorMode" in text
    assert isinstance(results["test_aot_dispatch_dynamic"], UnsupportedOperatorException)
    # traced on real tensors, the operator needs no fake
    assert opcheck(op, args, test_utils="test_aot_dispatch_static") == {"test_aot_dispatch_static": "SUCCESS"}


def test_fake_that_raises(libs):
    def fake(x):
        raise ValueError("no shapes today")
    op = define(onion, libs.lib(onion), "bad_fake(Tensor x) -> Tensor", lambda x: x * 2, fake)
    _, exc, text = _failure(op, (tensor(onion, (3,)),), "test_faketensor")
    assert f"{op}: its fake implementation raised ValueError: no shapes today" in text
    assert isinstance(exc.__cause__, ValueError)


@pytest.mark.filterwarnings("ignore:.*an autograd kernel was not registered to the Autograd key")
def test_autograd_inside_a_backend_kernel(libs):
    op, args = _autograd_in_backend(onion, libs.lib(onion))
    _, exc, text = _failure(op, args, "test_autograd_registration")
    assert isinstance(exc, AssertionError)
    assert f"{op.name()}: at least one output of this operator has requires_grad=True but the operator does not " \
           f"have an autograd kernel defined at an autograd key" in text
    # without inputs that require grad there is nothing to check
    plain = tuple(a.detach() for a in args)
    assert opcheck(op, plain, test_utils="test_autograd_registration") == \
        {"test_autograd_registration": "SUCCESS"}


def test_kernel_without_autograd_on_data_only(libs):
    # a kernel that computes outside autograd (NumPy) and has no autograd kernel: PyTorch's check passes it
    op, args = _no_fake(onion, libs.lib(onion))
    x = args[0].requires_grad_()
    assert opcheck(op, (x,), test_utils="test_autograd_registration") == {"test_autograd_registration": "SUCCESS"}


def test_wrong_gradient_formula(libs):
    op = define(onion, libs.lib(onion), "sin_wrong(Tensor x) -> Tensor", lambda x: x.sin(),
                lambda x: onion.empty_like(x), autograd=((0,), _sin_backward_wrong))
    x = tensor(onion, (2, 3), dtype="float64", requires_grad=True)
    results, exc, text = _failure(op, (x,), "test_autograd_registration")
    assert f"{op.name()}: the gradient its autograd kernel gives for 'x' disagrees with finite differences" in text
    assert {k for k, v in results.items() if v != "SUCCESS"} == {"test_autograd_registration"}
    # only float64 inputs are differentiated numerically
    x32 = tensor(onion, (2, 3), requires_grad=True)
    assert opcheck(op, (x32,), test_utils="test_autograd_registration") == {"test_autograd_registration": "SUCCESS"}


def test_gradient_check_names_the_argument(libs):
    # the backward is right for a (2 * g) and wrong for b (3 * g)
    op = define(onion, libs.lib(onion), "lin(Tensor a, Tensor b) -> Tensor", lambda a, b: a * 2 + b * 2,
                lambda a, b: onion.empty_like(a), autograd=((), lambda L, saved, g: (g * 2, g * 3)))
    a, b = (tensor(onion, (3,), seed=s, dtype="float64", requires_grad=True) for s in (0, 1))
    _, _, text = _failure(op, (a, b), "test_autograd_registration")
    assert "gives for 'b' disagrees" in text


def test_opcheck_arguments(libs):
    op, args = _good(onion, libs.lib(onion))
    with pytest.raises(ValueError, match="if you specify one of rtol/atol, you must specify both"):
        opcheck(op, args, rtol=1e-3)
    with pytest.raises(ValueError, match=r"expected test_utils to be subset of \('test_schema', "):
        opcheck(op, args, test_utils=("test_schema", "test_nothing"))
    with pytest.raises(ValueError, match="op must be instance of .*OpOverload"):
        opcheck(lambda x: x, args)
    # a packet with one overload stands for it; the tolerances reach the comparisons
    assert opcheck(op.overloadpacket, args, rtol=1e-2, atol=1e-2) == ALL_SUCCESS
    assert list(opcheck(op, args, test_utils="test_faketensor")) == ["test_faketensor"]


def test_packet_with_overloads_is_refused(libs):
    lib = libs.lib(onion)
    define(onion, lib, "two(Tensor x) -> Tensor", lambda x: x + 1, lambda x: onion.empty_like(x))
    define(onion, lib, "two.scaled(Tensor x, float s) -> Tensor", lambda x, s: x * s, lambda x, s: onion.empty_like(x))
    with pytest.raises(RuntimeError, match="opcheck can only test operators without overloads"):
        opcheck(getattr(onion.ops, lib.ns).two, (tensor(onion, (3,)),))


def test_builtin_operator(libs):
    x = tensor(onion, (2, 3), dtype="float64", requires_grad=True)
    assert opcheck(onion.ops.aten.sin.default, (x,)) == ALL_SUCCESS
    assert opcheck(onion.ops.aten.add_.Tensor, (x.detach(), x.detach())) == ALL_SUCCESS


def test_fake_inputs_are_skipped(libs):
    from onion._subclasses.fake_tensor import FakeTensorMode
    op, args = _no_fake(onion, libs.lib(onion))
    meta = onion.empty(2, 3, device="meta")
    assert opcheck(op, (meta,), test_utils="ALL") == {name: "SUCCESS" for name in ALL_TEST_UTILS}
    fake = FakeTensorMode().from_tensor(args[0])
    assert opcheck(op, (fake,)) == ALL_SUCCESS


def test_aot_check_compares_values(libs):
    # a kernel whose traced replay differs from eager (global state): the aot check compares the values
    counter = [0]

    def kernel(x):
        counter[0] += 1
        return x + counter[0]
    op = define(onion, libs.lib(onion), "stateful(Tensor x) -> Tensor", kernel, lambda x: onion.empty_like(x))
    results = opcheck(op, (tensor(onion, (3,)),), test_utils="test_aot_dispatch_static", raise_exception=False)
    exc = results["test_aot_dispatch_static"]
    assert isinstance(exc, AssertionError)
    assert "Outputs of the operator are different in eager-mode PyTorch vs AOTDispatcher tracing" in str(exc)
    assert "Tensor-likes are not close!" in str(exc)


def test_aot_check_compares_what_the_operator_writes(libs):
    # the written argument is part of what eager and the traced replay must agree on
    counter = [0]

    def kernel(x):
        counter[0] += 1
        x.add_(counter[0])
    op = define(onion, libs.lib(onion), "writes_state(Tensor(a!) x) -> ()", kernel, lambda x: None)
    results = opcheck(op, (tensor(onion, (3,)),), test_utils="test_aot_dispatch_static", raise_exception=False)
    assert "Tensor-likes are not close!" in str(results["test_aot_dispatch_static"])


@pytest.mark.oracle
def test_schema_check_mode_records_as_torch():
    """On built-in operators the mode records the same calls, mutations and aliases as PyTorch's."""
    from torch._subclasses.schema_check_mode import SchemaCheckMode as TorchSchemaCheckMode
    from onion.testing._internal.optests import SchemaCheckMode

    def program(L, x, y, z):
        x.add_(1)
        x.view(-1)
        x.sin()
        L.split(x, 1)
        x.transpose(0, 1)
        L.add(x, y, out=z)
        x.unsqueeze(0).mul_(2)
        L.max(x, 1)

    found = []
    for L, mode in ((onion, SchemaCheckMode), (torch, TorchSchemaCheckMode)):
        x, y, z = tensor(L, (2, 3)), tensor(L, (2, 3), seed=1), L.empty(2, 3)
        with mode() as m:
            program(L, x, y, z)
        found.append((m.ops, [tuple(t) for t in m.mutated], [tuple(t) for t in m.aliasing]))
    assert found[0] == found[1]


def test_tolerances_reach_the_comparisons(libs):
    # each call drifts by 1e-4: beyond float32's default tolerance, within atol=1e-3
    counter = [0]

    def kernel(x):
        counter[0] += 1
        return x + counter[0] * 1e-4
    op = define(onion, libs.lib(onion), "drifts(Tensor x) -> Tensor", kernel, lambda x: onion.empty_like(x))
    args = (tensor(onion, (3,)),)
    strict = opcheck(op, args, test_utils="test_aot_dispatch_static", raise_exception=False)
    assert isinstance(strict["test_aot_dispatch_static"], AssertionError)
    assert opcheck(op, args, test_utils="test_aot_dispatch_static", rtol=0.0, atol=1e-3) == \
        {"test_aot_dispatch_static": "SUCCESS"}
