"""opcheck on operators made with ``custom_op``: passes on correct ones, names the failing check on broken
ones, and gives the verdicts ``torch.library.opcheck`` gives the same operators written with torch's
``custom_op`` (written once against a library ``L``).  Each operator is destroyed after its test."""

import re
import warnings

import numpy as np
import pytest

import onion
from onion.library import opcheck
from onion.testing._internal.optests import DEFAULT_TEST_UTILS, OpCheckError

from conftest import torch
from opcheck_libs import tensor, verdicts

LIBS = [pytest.param(onion, id="onion"), pytest.param("torch", id="torch", marks=pytest.mark.oracle)]
ALL_SUCCESS = {name: "SUCCESS" for name in DEFAULT_TEST_UTILS}


class _Ops:
    """Makes custom operators in a namespace of the test's own and destroys them after it."""

    def __init__(self, ns):
        self.ns = ns
        self.made: list = []

    def custom_op(self, L, name, fn, mutates_args=()):
        op = L.library.custom_op(f"{self.ns}::{name}", fn, mutates_args=mutates_args)
        self.made.append(op)
        return op


@pytest.fixture
def ops(request):
    made = _Ops("opcheck_co_" + re.sub(r"[^0-9A-Za-z]+", "_", request.node.name).strip("_"))
    try:
        yield made
    finally:
        while made.made:
            _destroy(made.made.pop())


def _destroy(op):
    if hasattr(op, "_destroy"):         # onion's CustomOpDef
        op._destroy()
        return
    from torch._library.custom_ops import OPDEFS
    op._lib._destroy()
    OPDEFS.pop(op._qualname, None)


def _lib(L):
    return torch if L == "torch" else L


def _mul3(L, ops, backward_factor=3.0, fake=True):
    def mul3(x: L.Tensor) -> L.Tensor:
        return L.from_numpy(x.detach().numpy() * 3)
    op = ops.custom_op(L, "mul3", mul3)
    if fake:
        op.register_fake(lambda x: L.empty_like(x))

    def backward(ctx, g):
        return g * backward_factor
    op.register_autograd(backward, setup_context=lambda ctx, inputs, output: None)
    return op


def _inc(L, ops):
    def inc(x: L.Tensor, y: L.Tensor) -> None:
        x.add_(y)
    return ops.custom_op(L, "inc", inc, mutates_args=("x",))


def _hidden_write(L, ops):
    def hidden_write(x: L.Tensor) -> L.Tensor:
        x.add_(1)
        return x.clone()
    op = ops.custom_op(L, "hidden_write", hidden_write)
    op.register_fake(lambda x: L.empty_like(x))
    return op


def _split_sum(L, ops):
    def split_sum(xs: list[L.Tensor]) -> tuple[L.Tensor, L.Tensor]:
        total = L.stack(xs).sum(0)
        return total, total * 2
    op = ops.custom_op(L, "split_sum", split_sum)
    op.register_fake(lambda xs: (L.empty_like(xs[0]), L.empty_like(xs[0])))
    return op


def _cases(L, ops):
    x = tensor(L, (2, 3), dtype="float64")
    y = tensor(L, (2, 3), seed=1, dtype="float64")
    return {
        "mul3": (_mul3(L, ops), (x.clone().requires_grad_(),)),
        "mul3_no_grad": (ops.made[-1], (x,)),
        "inc": (_inc(L, ops), (x.clone(), y)),
        "hidden_write": (_hidden_write(L, ops), (x.clone(),)),
        "split_sum": (_split_sum(L, ops), ([x, y],)),
    }


EXPECTED = {
    "mul3": ALL_SUCCESS, "mul3_no_grad": ALL_SUCCESS, "inc": ALL_SUCCESS, "split_sum": ALL_SUCCESS,
    "hidden_write": {**ALL_SUCCESS, "test_schema": "RuntimeError"},
}


@pytest.mark.parametrize("L", LIBS)
def test_custom_op_verdicts(L, ops):
    L = _lib(L)
    check = opcheck if L is onion else torch.library.opcheck
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = {k: verdicts(check(op, args, raise_exception=False)) for k, (op, args) in _cases(L, ops).items()}
    assert found == EXPECTED


def test_custom_op_failure_messages(ops):
    op = _hidden_write(onion, ops)
    with pytest.raises(OpCheckError, match=re.escape(f"opcheck(op, ...): test_schema failed with {ops.ns}::"
                                                     f"hidden_write: Argument x is not defined as mutable but "
                                                     f"was mutated")):
        opcheck(op, (tensor(onion, (3,)),))


def test_custom_op_wrong_backward(ops):
    # torch.library.opcheck does not differentiate numerically (it passes this operator); onion's does
    op = _mul3(onion, ops, backward_factor=2.0)
    x = tensor(onion, (2, 3), dtype="float64", requires_grad=True)
    results = opcheck(op, (x,), raise_exception=False)
    assert {k for k, v in results.items() if v != "SUCCESS"} == {"test_autograd_registration"}
    assert f"{ops.ns}::mul3: the gradient its autograd kernel gives for 'x' disagrees with finite differences" \
        in str(results["test_autograd_registration"])


@pytest.mark.parametrize("L", LIBS)
def test_custom_op_without_fake(L, ops):
    L = _lib(L)
    op = _mul3(L, ops, fake=False)
    check = opcheck if L is onion else torch.library.opcheck
    found = verdicts(check(op, (tensor(L, (3,)),), raise_exception=False))
    # custom_op's own fake stand-in raises "There was no fake impl registered for ..." (a RuntimeError)
    assert found == {**ALL_SUCCESS, "test_faketensor": "RuntimeError", "test_aot_dispatch_dynamic": "RuntimeError"}


def test_custom_op_gradients_equal_builtin_math(ops):
    op = _mul3(onion, ops)
    x = tensor(onion, (2, 3), dtype="float64", requires_grad=True)
    (g_op,) = onion.autograd.grad((op(x) * x).sum(), x)
    (g_builtin,) = onion.autograd.grad((x * 3 * x).sum(), x)
    np.testing.assert_allclose(np.asarray(g_op), np.asarray(g_builtin), rtol=1e-12)
