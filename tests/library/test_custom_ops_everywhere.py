"""Custom operators go everywhere a built-in goes, as in PyTorch.

Operators registered through the Library-level entry points (``Library("ns", "FRAGMENT").define``, a CPU
kernel through ``impl``, a fake through ``_register_fake``): a dispatch mode sees one call ``ns.op.default``,
the profiler one row ``ns::op``, ``make_fx`` one node computed by the fake implementation; ``no_grad`` and
``inference_mode`` apply; a CPU-only operator on a Meta tensor raises NotImplementedError naming it.  One
operator of each shape -- writing a ``Tensor(a!)`` and returning ``()``, taking ``Tensor[]``, returning a
tuple, CPU-only -- is checked with ``opcheck``, with the verdicts ``torch.library.opcheck`` gives the same
operators.  Each is written once against a library ``L`` (onion or torch) and compared.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import onion
from onion.library import opcheck
from onion.testing._internal.optests import DEFAULT_TEST_UTILS

from conftest import torch
from opcheck_libs import define, library_scope, tensor, verdicts

LIBS = [pytest.param(onion, id="onion"), pytest.param("torch", id="torch", marks=pytest.mark.oracle)]
ALL_SUCCESS = {name: "SUCCESS" for name in DEFAULT_TEST_UTILS}


@pytest.fixture
def libs(request):
    yield from library_scope(request)


def _lib(L):
    return torch if L == "torch" else L


def _scale_backward(L, saved, g):
    return (g * 3,)


def _scale(L, lib, calls=None):
    """``scale(x) = 3 x``: CPU kernel, a fake that counts its calls, and an autograd kernel."""
    def fake(x):
        if calls is not None:
            calls.append(tuple(x.shape))
        return L.empty_like(x)
    return define(L, lib, "scale(Tensor x) -> Tensor", lambda x: x * 3, fake, autograd=((), _scale_backward))


def _add_into(L, lib):
    def kernel(out, x):
        out.add_(x)
    return define(L, lib, "add_into(Tensor(a!) out, Tensor x) -> ()", kernel, lambda out, x: None)


def _sum_list(L, lib):
    return define(L, lib, "sum_list(Tensor[] xs) -> Tensor", lambda xs: L.stack(xs).sum(0),
                  lambda xs: L.empty_like(xs[0]))


def _min_max(L, lib):
    def kernel(x):
        return x.min(0).values.clone(), x.max(0).values.clone()

    def fake(x):
        return x.new_empty(x.shape[1:]), x.new_empty(x.shape[1:])
    return define(L, lib, "min_max(Tensor x) -> (Tensor, Tensor)", kernel, fake)


def _cpu_only(L, lib):
    return define(L, lib, "cpu_only(Tensor x) -> Tensor", lambda x: L.from_numpy(x.numpy() + 1))


# --- modes, profiler, make_fx ---------------------------------------------------------------------------------

@pytest.mark.parametrize("L", LIBS)
def test_mode_sees_one_call(L, libs):
    L = _lib(L)
    from importlib import import_module
    TorchDispatchMode = import_module(f"{L.__name__}.utils._python_dispatch").TorchDispatchMode
    lib = libs.lib(L)
    ops = {"scale": _scale(L, lib), "add_into": _add_into(L, lib), "sum_list": _sum_list(L, lib),
           "min_max": _min_max(L, lib)}
    seen = []

    class Record(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    x = tensor(L, (2, 3))
    with Record():
        y = ops["scale"](x)
        ops["add_into"](y, x)
        s = ops["sum_list"]([x, y])
        lo, hi = ops["min_max"](s)
    ns = lib.ns
    assert seen == [f"{ns}.scale.default", f"{ns}.add_into.default", f"{ns}.sum_list.default",
                    f"{ns}.min_max.default"]
    # scale: 3x; add_into: 4x; sum_list: 5x; min_max over dim 0
    np.testing.assert_allclose(np.asarray(lo), np.minimum(*(np.asarray(x) * 5)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(hi), np.maximum(*(np.asarray(x) * 5)), rtol=1e-6)


@pytest.mark.oracle
def test_mode_sees_the_same_calls_as_torch(libs):
    """The whole sequence, backward included, is the one torch's mode sees (names without the namespace)."""
    def run(L):
        from importlib import import_module
        TorchDispatchMode = import_module(f"{L.__name__}.utils._python_dispatch").TorchDispatchMode
        op = _scale(L, libs.lib(L))
        seen = []

        class Record(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                seen.append(str(func).replace(libs.ns + ".", "ns."))
                return func(*args, **(kwargs or {}))

        x = tensor(L, (3,), requires_grad=True)
        with Record():
            op(x).sum().backward()
        return seen, np.asarray(x.grad)
    ours, our_grad = run(onion)
    theirs, their_grad = run(torch)
    assert [c for c in ours if c.startswith("ns.")] == [c for c in theirs if c.startswith("ns.")] == \
        ["ns.scale.default"]
    np.testing.assert_array_equal(our_grad, their_grad)
    np.testing.assert_array_equal(our_grad, np.full(3, 3.0, np.float32))



@pytest.mark.parametrize("L", LIBS)
def test_profiler_names_it_as_one_row(L, libs):
    L = _lib(L)
    lib = libs.lib(L)
    scale, min_max = _scale(L, lib), _min_max(L, lib)
    x = tensor(L, (2, 3))
    with L.profiler.profile(activities=[L.profiler.ProfilerActivity.CPU]) as prof:
        lo, hi = min_max(scale(x))
    counts = {e.key: e.count for e in prof.key_averages()}
    assert counts[f"{lib.ns}::scale"] == 1
    assert counts[f"{lib.ns}::min_max"] == 1
    # the operators its kernel calls nest inside the custom operator's event (torch has the autograd
    # Function's own event between them); no event claims the user's kernel is a NumPy function
    def owner(e):
        while e.cpu_parent is not None and not e.cpu_parent.name.startswith(("aten::", lib.ns)):
            e = e.cpu_parent
        return e.cpu_parent.name if e.cpu_parent is not None else None
    assert [e.name for e in prof.events() if owner(e) == f"{lib.ns}::scale" and e.name != "Fn"] == ["aten::mul"]
    assert not any("lambda" in e.name for e in prof.events())


@pytest.mark.parametrize("L", LIBS)
def test_make_fx_keeps_one_node_from_the_fake(L, libs):
    L = _lib(L)
    from importlib import import_module
    make_fx = import_module(f"{L.__name__}.fx.experimental.proxy_tensor").make_fx
    lib = libs.lib(L)
    calls: list = []
    scale, add_into, sum_list, min_max = _scale(L, lib, calls), _add_into(L, lib), _sum_list(L, lib), \
        _min_max(L, lib)

    def f(x, y):
        z = scale(x)
        add_into(z, y)
        lo, hi = min_max(sum_list([z, y]))
        return lo + hi

    x, y = tensor(L, (2, 3)), tensor(L, (2, 3), seed=1)
    gm = make_fx(f, tracing_mode="fake")(x, y)
    targets = [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]
    ns = lib.ns
    assert [t for t in targets if t.startswith(ns)] == [f"{ns}.scale.default", f"{ns}.add_into.default",
                                                        f"{ns}.sum_list.default", f"{ns}.min_max.default"]
    assert calls == [(2, 3)]        # the fake implementation ran, the CPU kernel did not
    node = next(n for n in gm.graph.nodes if str(n.target) == f"{ns}.scale.default")
    assert tuple(node.meta["val"].shape) == (2, 3)
    assert type(node.meta["val"]).__name__ == "FakeTensor"
    np.testing.assert_allclose(np.asarray(gm(x, y)), np.asarray(f(x, y)), rtol=1e-6)


@pytest.mark.oracle
def test_make_fx_graph_matches_torch(libs):
    from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx
    from onion.fx.experimental.proxy_tensor import make_fx as onion_make_fx

    def nodes(L, make_fx):
        lib = libs.lib(L)
        scale, min_max = _scale(L, lib), _min_max(L, lib)

        def f(x):
            lo, hi = min_max(scale(x))
            return lo * hi
        gm = make_fx(f, tracing_mode="fake")(tensor(L, (2, 3)))
        return [(n.op, str(n.target).replace(lib.ns, "ns")) for n in gm.graph.nodes]
    assert nodes(onion, onion_make_fx) == nodes(torch, torch_make_fx)


# --- grad modes ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("L", LIBS)
def test_no_grad_and_inference_mode_apply(L, libs):
    L = _lib(L)
    lib = libs.lib(L)
    scale = _scale(L, lib)
    x = tensor(L, (3,), requires_grad=True)
    y = scale(x)
    assert y.requires_grad and type(y.grad_fn).__name__ != "NoneType"
    with L.no_grad():
        y = scale(x)
    assert not y.requires_grad and y.grad_fn is None
    with L.inference_mode():
        y = scale(x)
        assert not y.requires_grad and y.is_inference()
        z = _add_into(L, lib)
        out = L.zeros(3)
        z(out, x.detach())
    assert out.is_inference()
    np.testing.assert_allclose(np.asarray(out), np.asarray(x.detach()), rtol=0)
    y = scale(x)
    y.sum().backward()
    np.testing.assert_array_equal(np.asarray(x.grad), np.full(3, 3.0, np.float32))


@pytest.mark.parametrize("L", LIBS)
def test_written_argument_version_moves_once(L, libs):
    L = _lib(L)
    add_into = _add_into(L, libs.lib(L))
    out, x = L.zeros(3), tensor(L, (3,))
    view = out[1:]
    add_into(out, x)
    assert (out._version, view._version, x._version) == (1, 1, 0)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(x))


@pytest.mark.parametrize("L", LIBS)
def test_autocast_passes_it_through(L, libs):
    # no autocast kernel: the operator runs on the dtypes it is given (autocast falls through), while the
    # built-in operators its kernel calls are cast as usual
    L = _lib(L)
    lib = libs.lib(L)
    mm = define(L, lib, "my_mm(Tensor a, Tensor b) -> (Tensor, Tensor)", lambda a, b: (a * 1, L.mm(a, b)),
                lambda a, b: (L.empty_like(a), a.new_empty(a.shape[0], b.shape[1])))
    a, b = tensor(L, (2, 3)), tensor(L, (3, 4), seed=1)
    with L.autocast("cpu", dtype=L.bfloat16):
        same, product = mm(a, b)
    assert (same.dtype, product.dtype) == (L.float32, L.bfloat16)


# --- a CPU-only operator on Meta -------------------------------------------------------------------------------

def _meta_error(L, libs):
    op = _cpu_only(L, libs.lib(L))
    with pytest.raises(NotImplementedError) as info:
        op(L.empty(2, 3, device="meta"))
    return str(info.value).replace(libs.ns, "ns")


_META_FALLBACK = "ns::cpu_only: attempted to run this operator with Meta tensors, but there was no fake impl or " \
                 "Meta kernel registered."


def test_cpu_only_operator_on_meta(libs):
    text = _meta_error(onion, libs)
    if text.startswith("ns::cpu_only: "):
        # the Meta backend fallback answers, as PyTorch 2.13's does
        assert text.startswith(_META_FALLBACK)
    else:
        # without a Meta fallback: the dispatcher's error, listing the keys with kernels
        assert text.startswith("Could not run 'ns::cpu_only' with arguments from the 'Meta' backend. ")
        assert "'ns::cpu_only' is only available for these backends: [CPU, " in text
        assert text.endswith("Kernels are registered for: [CPU].")


@pytest.mark.oracle
def test_cpu_only_operator_on_meta_against_torch(libs):
    # PyTorch 2.13 answers from its Meta backend fallback; the first sentence (what went wrong, for which
    # operator) is the same in onion's, the advice that follows names onion's API
    ours, theirs = _meta_error(onion, libs), _meta_error(torch, libs)
    assert theirs.startswith(_META_FALLBACK)
    if ours.startswith("ns::cpu_only: "):
        assert ours.startswith(_META_FALLBACK)
    else:   # before onion's Meta fallback: the dispatcher's error, same exception type, names the operator
        assert ours.startswith("Could not run 'ns::cpu_only' with arguments from the 'Meta' backend")


# --- every Library-level entry point, checked with opcheck -------------------------------------------------------

def _entry_points(L, lib):
    """(operator, args) per kind of registration, float64 so the gradient check runs where it can."""
    x = tensor(L, (2, 3), dtype="float64")
    y = tensor(L, (2, 3), seed=1, dtype="float64")
    return {
        "mutates_returns_nothing": (_add_into(L, lib), (x.clone(), y)),
        "tensor_list": (_sum_list(L, lib), ([x, y, x * 2],)),
        "tuple_return": (_min_max(L, lib), (x,)),
        "cpu_only": (_cpu_only(L, lib), (x,)),
        "autograd_kernel": (_scale(L, lib), (x.clone().requires_grad_(),)),
    }


EXPECTED = {
    "mutates_returns_nothing": ALL_SUCCESS,
    "tensor_list": ALL_SUCCESS,
    "tuple_return": ALL_SUCCESS,
    "cpu_only": {**ALL_SUCCESS, "test_faketensor": "UnsupportedOperatorException",
                 "test_aot_dispatch_dynamic": "UnsupportedOperatorException"},
    "autograd_kernel": ALL_SUCCESS,
}


def test_entry_points_pass_opcheck(libs):
    for name, (op, args) in _entry_points(onion, libs.lib(onion)).items():
        assert verdicts(opcheck(op, args, raise_exception=False)) == EXPECTED[name], name
    # the CPU-only operator on Meta inputs: nothing to compare against, every check skips itself
    op = getattr(onion.ops, libs.ns).cpu_only.default
    assert opcheck(op, (onion.empty(2, 3, device="meta"),)) == ALL_SUCCESS


@pytest.mark.oracle
def test_entry_points_verdicts_match_torch(libs):
    ours = {k: verdicts(opcheck(op, args, raise_exception=False))
            for k, (op, args) in _entry_points(onion, libs.lib(onion)).items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = {k: verdicts(torch.library.opcheck(op, args, raise_exception=False))
                  for k, (op, args) in _entry_points(torch, libs.lib(torch)).items()}
    assert ours == theirs == EXPECTED
