"""The structured kernels' CPU shortcuts give what their general paths give, bit for bit.

sum() and mean() of every dim skip the dim bookkeeping, mm of float32/float64
matrices calls ndarray.dot, and ``functional`` makes the result tensor inline;
each is checked here against the general path or the NumPy call it replaces,
without PyTorch.
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import odt, onion, to_np


def _rand(shape, name, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(odt(name).np)


@pytest.mark.parametrize("name", ("float32", "float64"))
@pytest.mark.parametrize("nkp", ((4, 4, 4), (2, 3, 5), (64, 784, 128), (128, 64, 10), (7, 1, 3), (1, 5, 6), (6, 5, 1)))
def test_mm_equals_matmul(name, nkp):
    """Each layout NumPy's matmul hands to BLAS (C or F order, a matrix times its own transpose)."""
    n, k, p = nkp
    a_np, b_np = _rand((n, k), name, 1), _rand((k, p), name, 2)
    for a_in in (a_np, np.asfortranarray(a_np)):
        for b_in in (b_np, np.asfortranarray(b_np)):
            a, b = onion.from_numpy(a_in), onion.from_numpy(b_in)
            got = to_np(onion.mm(a, b))
            assert got.flags.c_contiguous
            np.testing.assert_array_equal(got, np.matmul(a_in, b_in))
    a = onion.from_numpy(a_np)
    np.testing.assert_array_equal(to_np(onion.mm(a, a.t())), np.matmul(a_np, a_np.T))
    np.testing.assert_array_equal(to_np(onion.mm(a.t(), a)), np.matmul(a_np.T, a_np))


@pytest.mark.parametrize("name", ("float32", "float64", "float16", "bfloat16", "int32", "bool", "complex64"))
@pytest.mark.parametrize("shape", ((), (5,), (3, 4), (2, 300, 3)))
def test_full_sum_equals_sum_over_every_dim(name, shape):
    x = onion.from_numpy(_rand(shape, name, 3))
    every = list(range(len(shape)))
    for keepdim in (False, True):
        fast = x.sum(dim=None, keepdim=keepdim) if keepdim else x.sum()
        general = x.sum(every, keepdim=keepdim) if every else x.sum(dim=(), keepdim=keepdim)
        assert fast.dtype is general.dtype and tuple(fast.shape) == tuple(general.shape)
        np.testing.assert_array_equal(to_np(fast), to_np(general))
        if x.dtype.is_floating_point or x.dtype.is_complex:
            m = x.mean(dim=None, keepdim=keepdim) if keepdim else x.mean()
            np.testing.assert_array_equal(to_np(m), to_np(x.mean(every, keepdim=keepdim) if every else
                                                         x.mean(dim=(), keepdim=keepdim)))


def test_full_sum_out_of_another_dtype_computes_in_it():
    x_np = _rand((1000,), "float32", 4)
    x = onion.from_numpy(x_np)
    out = onion.empty((), dtype=onion.float64)
    assert onion.sum(x, dim=None, out=out) is out
    assert to_np(out) == np.add.reduce(x_np.astype(np.float64))
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
        onion.mean(x, dim=None, out=onion.empty((), dtype=onion.int64))


def test_results_inside_inference_mode_are_inference_tensors():
    m = onion.ones(3, 3)
    with onion.inference_mode():
        for r in (m.sum(), m.sum(0), m.mean(), onion.mm(m, m), onion.ones(2), onion.zeros(2), onion.ones_like(m)):
            assert r.is_inference()
    for r in (m.sum(), onion.mm(m, m), onion.ones(2), onion.zeros(2)):
        assert not r.is_inference()
