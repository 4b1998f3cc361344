"""make_fx and onion.fx: traced graphs hold the operators PyTorch's make_fx records, and replay the eager result.

The programs are written once against a library ``L`` (onion or torch) and traced by each library's
make_fx; the graphs are compared by their nodes (op kind, target name, node name), which pins the
operator sequence a compiler starting from the graph would see, backward formulas included.
"""
from __future__ import annotations

import operator

import numpy as np
import pytest

import onion
from onion.fx import Graph, GraphModule
from onion.fx.experimental.proxy_tensor import make_fx as onion_make_fx

from conftest import torch


def _make_fx(L):
    if L is onion:
        return onion_make_fx
    from torch.fx.experimental.proxy_tensor import make_fx
    return make_fx


def _inputs(L, grad_weights=True):
    rng = np.random.default_rng(0)
    x, w1, w2, y = (rng.standard_normal(s).astype(np.float32) for s in ((4, 3), (3, 5), (5, 2), (4, 2)))
    return (L.tensor(x), L.tensor(w1, requires_grad=grad_weights), L.tensor(w2, requires_grad=grad_weights),
            L.tensor(y))


def _mlp(L):
    def forward(x, w1, w2, y):
        h = L.mm(x, w1).relu()
        d = L.mm(h, w2) - y
        return (d * d).mean()
    return forward


def _mlp_grad(L):
    fwd = _mlp(L)

    def forward_and_grad(x, w1, w2, y):
        return L.autograd.grad(fwd(x, w1, w2, y), (w1, w2))
    return forward_and_grad


def _pow_grad(L):
    def f(x):
        return L.autograd.grad((x ** 2).sum(), x)
    return f


def _linear_relu(L):
    return lambda x, w: L.nn.functional.linear(x, w).relu()


def _max_dim(L):
    def f(x):
        values, indices = L.max(x, 1)
        return values * 2, indices
    return f


def _signature(gm):
    """(op, target, name) per node; operator targets by their overload name (aten.mm.default)."""
    out = []
    for n in gm.graph.nodes:
        target = n.target
        if n.op == "call_function":
            target = "getitem" if target is operator.getitem else str(target)
        out.append((n.op, target, n.name))
    return out


PROGRAMS = {"mlp_forward": (_mlp, lambda L: _inputs(L)),
            "mlp_forward_and_grad": (_mlp_grad, lambda L: _inputs(L)),
            "mlp_forward_no_grad_inputs": (_mlp, lambda L: _inputs(L, grad_weights=False)),
            "pow_grad": (_pow_grad, lambda L: (L.tensor([1.0, -2.0, 3.0], requires_grad=True),)),
            "linear_relu": (_linear_relu, lambda L: (L.ones(2, 3), L.ones(4, 3))),
            "max_dim": (_max_dim, lambda L: (L.tensor([[1.0, 5.0], [7.0, 2.0]]),))}


@pytest.mark.oracle
@pytest.mark.parametrize("name", PROGRAMS)
def test_graph_matches_pytorch_make_fx(name):
    build, inputs = PROGRAMS[name]
    ours = _signature(_make_fx(onion)(build(onion))(*inputs(onion)))
    theirs = _signature(_make_fx(torch)(build(torch))(*inputs(torch)))
    assert ours == theirs


@pytest.mark.parametrize("name", PROGRAMS)
def test_replay_gives_the_eager_result(name):
    build, inputs = PROGRAMS[name]
    fn = build(onion)
    gm = onion_make_fx(fn)(*inputs(onion))
    expected, got = fn(*inputs(onion)), gm(*inputs(onion))
    expected = expected if isinstance(expected, tuple) else (expected,)
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(expected)
    for e, g in zip(expected, got):
        assert e.dtype == g.dtype and e.shape == g.shape
        np.testing.assert_array_equal(e.detach().numpy(), g.detach().numpy())


def test_replay_on_new_inputs_follows_them():
    gm = onion_make_fx(lambda a, b: (a * b + a).sum())(onion.ones(3), onion.ones(3))
    a, b = onion.tensor([1.0, 2.0, 3.0]), onion.tensor([4.0, 5.0, 6.0])
    assert gm(a, b).item() == 1 * 4 + 1 + 2 * 5 + 2 + 3 * 6 + 3


@pytest.mark.oracle
def test_decomposition_table_replaces_an_operator():
    def decomposed(L):
        return {L.ops.aten.relu.default: lambda x: L.clamp_min(x, 0)}
    ours = onion_make_fx(_linear_relu(onion), decomposition_table=decomposed(onion))(onion.ones(2, 3), onion.ones(4, 3))
    theirs = _make_fx(torch)(_linear_relu(torch), decomposition_table=decomposed(torch))(torch.ones(2, 3),
                                                                                          torch.ones(4, 3))
    assert _signature(ours) == _signature(theirs)
    assert "clamp_min" in ours.code and "relu" not in ours.code


@pytest.mark.oracle
def test_captured_tensor_becomes_a_constant_of_the_module():
    def program(L, c):
        return lambda x: x + c
    c_onion, c_torch = onion.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0])
    ours = onion_make_fx(program(onion, c_onion))(onion.zeros(2))
    theirs = _make_fx(torch)(program(torch, c_torch))(torch.zeros(2))
    assert _signature(ours) == _signature(theirs)
    assert "_tensor_constant0 = self._tensor_constant0" in ours.code
    assert ours(onion.tensor([10.0, 20.0])).tolist() == [11.0, 22.0]


def test_code_reads_as_the_forward_it_replays():
    gm = onion_make_fx(lambda x, w: onion.mm(x, w).relu())(onion.ones(2, 2), onion.ones(2, 2))
    assert [line.strip() for line in gm.code.strip().splitlines()] == [
        "def forward(self, x_1, w_1):",
        "mm = onion.ops.aten.mm.default(x_1, w_1);  x_1 = w_1 = None",
        "relu = onion.ops.aten.relu.default(mm);  mm = None",
        "return relu"]


def test_graph_built_by_hand_replays():
    g = Graph()
    a = g.placeholder("a")
    b = g.call_function(onion.ops.aten.mul.Tensor, (a, a))
    c = g.call_function(onion.ops.aten.sum.default, (b,))
    d = g.call_function(onion.ops.aten.pow.Tensor_Scalar, (c, 2))
    g.output(d)
    assert [n.name for n in g.nodes] == ["a", "mul", "sum_1", "pow_1", "output"]
    assert list(a.users) == [b] and b.all_input_nodes == [a]
    assert GraphModule({}, g)(onion.tensor([1.0, 2.0])).item() == 25.0
    with pytest.raises(RuntimeError, match="still has users"):
        g.erase_node(b)
    with pytest.raises(TypeError, match="takes 1 positional"):
        GraphModule({}, g)()


def test_bad_tracing_modes_are_refused():
    with pytest.raises(ValueError, match="unknown tracing_mode"):
        onion_make_fx(lambda x: x, tracing_mode="lazy")
    with pytest.raises(NotImplementedError, match="symbolic"):
        onion_make_fx(lambda x: x, tracing_mode="symbolic")


@pytest.mark.oracle
def test_fake_tracing_records_the_same_graph_without_data():
    build, inputs = PROGRAMS["mlp_forward_and_grad"]
    ours = onion_make_fx(build(onion), tracing_mode="fake")(*inputs(onion))
    theirs = _make_fx(torch)(build(torch), tracing_mode="fake")(*inputs(torch))
    assert _signature(ours) == _signature(theirs)
    from onion._subclasses.fake_tensor import FakeTensor
    for ours_node, their_node in zip(ours.graph.nodes, theirs.graph.nodes):
        if ours_node.op in ("placeholder", "call_function"):
            val, ref = ours_node.meta["val"], their_node.meta["val"]
            assert isinstance(val, FakeTensor)
            assert (tuple(val.shape), val.stride(), str(val.dtype).split(".")[-1], val.device.type) == \
                (tuple(ref.shape), ref.stride(), str(ref.dtype).split(".")[-1], ref.device.type)
    # the graph traced on fake tensors replays on real ones
    expected = build(onion)(*inputs(onion))
    for e, g in zip(expected, ours(*inputs(onion))):
        np.testing.assert_array_equal(e.numpy(), g.detach().numpy())
