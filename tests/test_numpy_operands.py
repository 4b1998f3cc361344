"""NumPy scalars and arrays as operands of Tensor's arithmetic, on either side, against PyTorch.

What a torch user sees: NumPy defers to a tensor (``__array_priority__``), so ``np.float64(2) * x``
is a tensor that keeps autograd; a NumPy array on the right makes NumPy run the ufunc, which converts
the tensor as ``numpy()`` does (refused when it requires grad) and wraps the result back into a tensor
(``__array_wrap__``); a reflected operator answers NotImplemented for what it cannot take.
"""
from __future__ import annotations

import operator
import warnings

import numpy as np
import pytest
from conftest import assert_close, outcome, same_exc_type

import onion

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

OPS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.pow]
NP_SCALARS = {"float64": np.float64(2.5), "float32": np.float32(2.5), "int64": np.int64(3), "int32": np.int32(3)}
NP_ARRAYS = {"f64 array": np.array([1.5, 2.0]), "0-d array": np.array(2.0), "i64 array": np.array([1, 2])}


def _pair(requires_grad, dtype="float32"):
    data = np.array([1.0, 2.0], dtype=dtype)
    o = onion.tensor(data, requires_grad=requires_grad)
    t = torch.tensor(data, requires_grad=requires_grad)
    return o, t


def _same(ro, rt):
    __tracebackhide__ = True
    if rt[0] == "err":
        assert ro[0] == "err", f"torch raised {rt[1]!r}; onion returned {ro[1]!r}"
        same_exc_type(ro[1], rt[1])
        return
    assert ro[0] == "ok", f"onion raised {ro[1]!r}; torch returned {rt[1]!r}"
    assert isinstance(ro[1], onion.Tensor), f"onion returned {type(ro[1]).__name__}, torch a Tensor"
    assert ro[1].requires_grad == rt[1].requires_grad
    assert_close(ro[1].detach(), rt[1].detach())


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("name", list(NP_SCALARS))
@pytest.mark.parametrize("op", OPS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("side", ["left", "right"])
def test_numpy_scalar_operand(side, op, name, requires_grad):
    o, t = _pair(requires_grad)
    s = NP_SCALARS[name]
    if side == "left":
        ro, rt = outcome(lambda: op(s, o)), outcome(lambda: op(s, t))
    else:
        ro, rt = outcome(lambda: op(o, s)), outcome(lambda: op(t, s))
    _same(ro, rt)


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("name", list(NP_ARRAYS))
@pytest.mark.parametrize("op", OPS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("side", ["left", "right"])
def test_numpy_array_operand(side, op, name, requires_grad):
    """An array on the right: NumPy computes and wraps (float64), or refuses a tensor that requires grad;
    on the left: the reflected operator gives up and Python raises TypeError (torch.Tensor.__rtruediv__
    goes through NumPy as well)."""
    o, t = _pair(requires_grad)
    a = NP_ARRAYS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)     # torch's __array_wrap__ signature, NumPy 2
        if side == "left":
            ro, rt = outcome(lambda: op(a, o)), outcome(lambda: op(a, t))
        else:
            ro, rt = outcome(lambda: op(o, a)), outcome(lambda: op(t, a))
    _same(ro, rt)


def test_numpy_scalar_keeps_autograd():
    """The issue's example, with the gradient it must give."""
    x = onion.tensor([1.0, 2.0], requires_grad=True)
    y = np.float64(2.0) * x
    assert isinstance(y, onion.Tensor) and y.requires_grad
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_array_conversion_refuses_requires_grad():
    o, t = _pair(True)
    ro, rt = outcome(lambda: o + np.ones(2)), outcome(lambda: t + np.ones(2))
    _same(ro, rt)
    assert str(ro[1]) == str(rt[1])     # "Can't call numpy() on Tensor that requires grad. ..."
    ro, rt = outcome(lambda: np.asarray(o)), outcome(lambda: np.asarray(t))
    _same(ro, rt)
    assert np.asarray(o.detach()).tolist() == [1.0, 2.0]
    assert o.detach().__array__(np.float64).dtype == np.float64


def test_meta_tensor_does_not_convert():
    ro = outcome(lambda: onion.ones(2, device="meta").__array__())
    rt = outcome(lambda: torch.ones(2, device="meta").__array__())
    _same(ro, rt)


@pytest.mark.parametrize("ufunc", [np.sin, np.negative, np.add, np.equal], ids=lambda f: f.__name__)
def test_ufunc_result_is_a_tensor(ufunc):
    o, t = _pair(False)
    args_o = (o,) * ufunc.nin
    args_t = (t,) * ufunc.nin
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        ro, rt = ufunc(*args_o), ufunc(*args_t)
    assert isinstance(ro, onion.Tensor)
    assert_close(ro, rt)                # bool results come back as uint8, as in PyTorch


@pytest.mark.parametrize("dunder", ["__rsub__", "__rtruediv__", "__rpow__"])
@pytest.mark.parametrize("other", ["a", None, [1.0, 2.0], object()], ids=["str", "None", "list", "object"])
def test_reflected_operator_unknown_type_is_not_implemented(dunder, other):
    assert getattr(onion.Tensor, dunder)(onion.ones(2), other) is NotImplemented
    assert getattr(torch.Tensor, dunder)(torch.ones(2), other) is NotImplemented


def test_reflected_operator_called_on_a_number():
    """``Tensor.__rsub__(5.0, t)``: self is not a tensor; PyTorch answers NotImplemented.  (Its
    ``__rtruediv__`` and ``__rpow__`` called so are accidents of their Python bodies: AttributeError and
    ``pow(t, 5.0)``; onion answers NotImplemented for those too.)"""
    assert onion.Tensor.__rsub__(5.0, onion.ones(2)) is NotImplemented
    assert torch.Tensor.__rsub__(5.0, torch.ones(2)) is NotImplemented


@pytest.mark.parametrize("expr", ["'a' - x", "None / x", "'a' ** x", "[1] - x"])
def test_reflected_operator_error_is_python_s(expr):
    ro = outcome(lambda: eval(expr, {"x": onion.ones(2)}))
    rt = outcome(lambda: eval(expr, {"x": torch.ones(2)}))
    _same(ro, rt)
    assert str(ro[1]).replace("onion", "torch") == str(rt[1])    # "unsupported operand type(s) for -: ..."


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("other", [np.array([1.0, 3.0]), np.array([1, 2], dtype=np.int32), np.array(1.0),
                                   np.array(["a", "b"]), np.float64(1.0)],
                         ids=["f64 array", "i32 array", "0-d array", "str array", "np.float64"])
@pytest.mark.parametrize("op", [operator.eq, operator.ne], ids=["==", "!="])
@pytest.mark.parametrize("side", ["left", "right"])
def test_compare_with_numpy(side, op, other, requires_grad):
    """``t == array`` compares elementwise (the array becomes a tensor; no grad needed); ``t != array``
    is Python's identity answer in PyTorch, whose ``__ne__`` does not convert arrays."""
    o, t = _pair(requires_grad)
    if side == "left":
        ro, rt = outcome(lambda: op(other, o)), outcome(lambda: op(other, t))
    else:
        ro, rt = outcome(lambda: op(o, other)), outcome(lambda: op(t, other))
    if rt[0] == "ok" and not isinstance(rt[1], torch.Tensor):
        assert ro == rt
        return
    assert ro[0] == "ok" and isinstance(ro[1], onion.Tensor)
    assert_close(ro[1], rt[1])
