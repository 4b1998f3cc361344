"""tanh_backward / sigmoid_backward as operators, against torch's: dtypes and promotion, broadcasting, grad_input=,
Meta, non-contiguous inputs, the errors."""
from __future__ import annotations

import re

import numpy as np
import pytest

import onion
from tests.conftest import torch

pytestmark = pytest.mark.oracle

OPS = ["tanh_backward", "sigmoid_backward"]


def _exact(values, dt):
    """``values`` rounded to ``dt`` once (by torch), so both libraries start from the same numbers."""
    if dt.startswith("complex"):
        return values
    return torch.tensor(values, dtype=getattr(torch, dt)).double().numpy()


def _pair(T, shape_a, shape_b, dt_a, dt_b, seed=0, lo=-0.9, hi=0.9):
    rng = np.random.default_rng(seed)
    a = _exact(rng.standard_normal(shape_a), dt_a)
    b = _exact(rng.uniform(lo, hi, shape_b), dt_b)
    return T.tensor(a, dtype=getattr(T, dt_a)), T.tensor(b, dtype=getattr(T, dt_b))


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dt", ["float16", "bfloat16", "float32", "float64"])
def test_rounding_as_torch_on_many_values(op, dt):
    """PyTorch's CPU kernels round ``1 - y*y`` once (a fused multiply-add) and multiply float16 in Half steps:
    every one of 20000 results is the same bits."""
    o, t = (getattr(T.ops.aten, op)(*_pair(T, (20000,), (20000,), dt, dt, seed=5, lo=-1.2, hi=1.2))
            for T in (onion, torch))
    np.testing.assert_array_equal(np.asarray(o.double().tolist()), t.double().numpy())


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dts", [("float32", "float32"), ("float64", "float64"), ("float16", "float16"),
                                 ("bfloat16", "bfloat16"), ("float32", "float64"), ("float16", "float32"),
                                 ("complex64", "complex64"), ("float32", "complex128")])
def test_values_and_dtypes_as_torch(op, dts):
    res = []
    for T in (onion, torch):
        a, b = _pair(T, (2, 3), (3,), *dts)
        if "complex" in dts[1]:
            b = b + 0.5j
        r = getattr(T.ops.aten, op)(a, b)
        res.append((np.asarray(r.to(T.complex128 if r.is_complex() else T.float64).tolist()), str(r.dtype),
                    tuple(r.shape)))
    (ov, odt, osh), (tv, tdt, tsh) = res
    assert odt.split(".")[1] == tdt.split(".")[1] and osh == tsh
    np.testing.assert_array_equal(ov, tv)


@pytest.mark.parametrize("op", OPS)
def test_grad_input_non_contiguous_and_meta_as_torch(op):
    res = []
    for T in (onion, torch):
        a, b = _pair(T, (4, 3), (3, 4), "float32", "float32")
        b = b.t()                                   # non-contiguous
        out = T.empty(0)
        r = getattr(T.ops.aten, op).grad_input(a, b, grad_input=out)
        assert r is out
        m = getattr(T.ops.aten, op)(a.to("meta"), b.to("meta"))
        res.append((r.tolist(), tuple(r.stride()), tuple(m.shape), tuple(m.stride()), str(m.dtype)))
    assert res[0][:4] == res[1][:4]
    # a float16 out= of a float32 result is refused (PyTorch: no downcast into out)
    for T in (onion, torch):
        a, b = _pair(T, (3,), (3,), "float32", "float32")
        with pytest.raises(RuntimeError, match=re.escape("result type Float can't be cast to the desired output "
                                                         "type Long")):
            getattr(T.ops.aten, op).grad_input(a, b, grad_input=T.empty(3, dtype=T.int64))


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dt", ["bool", "int64", "uint8"])
def test_integer_inputs_raise_as_torch(op, dt):
    with pytest.raises(NotImplementedError) as te:
        getattr(torch.ops.aten, op)(torch.ones(2, dtype=getattr(torch, dt)), torch.ones(2, dtype=getattr(torch, dt)))
    with pytest.raises(NotImplementedError, match=re.escape(str(te.value))):
        getattr(onion.ops.aten, op)(onion.ones(2, dtype=getattr(onion, dt)), onion.ones(2, dtype=getattr(onion, dt)))


@pytest.mark.parametrize("op", OPS)
def test_schemas_and_tags_as_torch(op):
    for ov in ("default", "grad_input"):
        o, t = getattr(getattr(onion.ops.aten, op), ov), getattr(getattr(torch.ops.aten, op), ov)
        assert str(o._schema) == str(t._schema)
        assert "pointwise" in o.tags and "pointwise" in [x.name for x in t.tags]


def test_worked_values():
    g, y = onion.tensor([2.0, 3.0]), onion.tensor(0.5)
    assert onion.ops.aten.tanh_backward(g, y).tolist() == [1.5, 2.25]           # g * (1 - 0.25)
    assert onion.ops.aten.sigmoid_backward(g, y).tolist() == [0.5, 0.75]        # g * 0.5 * 0.5
    c = onion.ops.aten.tanh_backward(onion.tensor([1 + 2j]), onion.tensor([0.5 + 1j]))
    assert c.tolist() == [complex(-0.25, 4.5)]     # (1+2j) * conj(1 - (0.5+1j)**2) = (1+2j) * (1.75+1j)
