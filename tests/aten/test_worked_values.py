"""Kernel results known in advance, checked without PyTorch.

These are the cases where comparing with PyTorch would test the machine rather
than onion: what a BLAS does with alpha == 0, or how far a float32 sum may drift
with the order of its additions.  Each answer here is worked out by hand (or
bounded by an error analysis that holds for any summation tree), so it is the
same on every CPU.
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import float32_sum_reference, odt, onion, to_np


# ------------------------------------------------------------------ addmm with alpha == 0
def _nan_operands(name):
    """self with NaN at [1, 1]; mat1 with NaN at [0, 0] (so row 0 of mat1 @ mat2 is NaN); mat2 ones."""
    nan = float("nan")
    return (np.array([[1.0, 2.0], [3.0, nan]]), np.array([[nan, 1.0], [1.0, 1.0]]), np.ones((2, 2)))


@pytest.mark.parametrize("name", ("float32", "float64", "complex64", "complex128", "float16", "bfloat16"))
def test_addmm_zero_alpha(name):
    """alpha == 0: in the dtypes BLAS computes, onion follows gemm's contract (with alpha zero the
    matrices are not referenced), so the NaN in mat1 does not reach the result; float16/bfloat16
    go through a plain kernel that does compute the product (0 * NaN = NaN).  PyTorch leaves the
    case undocumented and its answer depends on the BLAS it was built with."""
    s_np, a_np, b_np = _nan_operands(name)
    dt = odt(name)
    s, a, b = (onion.tensor(x).to(dt) for x in (s_np, a_np, b_np))
    for beta in (1, 2, 0.5, 0):
        r = onion.addmm(s, a, b, beta=beta, alpha=0)
        assert r.dtype is dt and tuple(r.shape) == (2, 2)
        got = to_np(r)
        # beta * self, except that beta == 0 does not read self at all (NaN in it is dropped)
        expected = np.zeros((2, 2)) if beta == 0 else s_np * beta
        np.testing.assert_array_equal(got[1], expected[1], err_msg=f"{name} beta={beta}")
        if name in ("float16", "bfloat16"):
            assert np.isnan(got[0]).all(), (name, beta, got)
        else:
            np.testing.assert_array_equal(got[0], expected[0], err_msg=f"{name} beta={beta}")


# ------------------------------------------------------------------ float32 sums over long axes
def test_float32_sum_of_one_large_and_many_small_terms():
    """2**24 followed by 5000 ones sums to 16782216 exactly, a float32.  Added one at a time to
    2**24 every one is lost (2**24 + 1 rounds back to 2**24 under round-half-even), so a sequential
    float32 sum is off by 5000; a summation tree adds the ones among themselves first and stays
    within the tree bound (about 128 here).  onion must, along contiguous and strided axes."""
    n = 5000
    col = np.ones(n + 1, np.float32)
    col[0] = 2.0 ** 24
    exact = 2 ** 24 + n
    assert float(np.float32(exact)) == exact
    # the case separates the two: a sequential float32 sum loses every small term
    assert float(np.cumsum(col, dtype=np.float32)[-1]) == 2 ** 24
    _, bound = float32_sum_reference(col)
    assert bound < n / 10

    mat = np.stack([col, col, col], axis=1)                  # (5001, 3): the long axis is strided
    cases = [
        ("1-d", onion.tensor(col), None),
        ("1-d dim 0", onion.tensor(col), 0),
        ("strided dim 0", onion.tensor(mat), 0),
        ("contiguous rows", onion.tensor(np.ascontiguousarray(mat.T)), 1),
        ("transposed view", onion.tensor(mat).t(), 1),
        ("all of a matrix", onion.tensor(mat), None),
    ]
    for label, x, dim in cases:
        terms = to_np(x)
        for op in ("sum", "mean"):
            r = getattr(onion, op)(x) if dim is None else getattr(onion, op)(x, dim)
            assert r.dtype is onion.float32, (label, op)
            ref, bound = float32_sum_reference(terms, dim, mean=op == "mean")
            err = np.abs(to_np(r).astype(np.float64) - ref)
            assert (err <= bound).all(), (label, op, to_np(r), ref, bound)


# ------------------------------------------------------------------ mm in float16 / bfloat16
@pytest.mark.parametrize("name,eps", (("bfloat16", 2.0 ** -8), ("float16", 2.0 ** -11)))
@pytest.mark.parametrize("n", (4, 16))      # 4x4: the dtype's own dot; 16x16: float32 BLAS, then one rounding
def test_half_mm_sums_in_float32_and_rounds_once(name, eps, n):
    """Each row of ``a`` is 1, then two half-ulps of 1 (``eps``), then zeros.  Summed in the half dtype, each
    addition of ``eps`` is a tie that rounds back to 1; summed in float32 and rounded once (PyTorch's opmath)
    the row gives 1 + 2 * eps, which the half dtype holds exactly.  Both of fast_mm's roads must give it."""
    a = np.zeros((n, n))
    a[:, 0] = 1.0
    a[:, 1:3] = eps
    b = np.ones((n, n))
    got = onion.mm(onion.tensor(a, dtype=odt(name)), onion.tensor(b, dtype=odt(name)))
    assert got.dtype == odt(name)
    np.testing.assert_array_equal(to_np(got.float()), np.full((n, n), 1.0 + 2 * eps, dtype=np.float32))


# ------------------------------------------------------------------ where on CPU: the bits of the chosen items
@pytest.mark.parametrize("name", ("float32", "float64", "float16", "bfloat16", "int8", "int64", "uint8", "bool",
                                  "complex64", "complex128"))
@pytest.mark.parametrize("other", ("tensor", "zero", "negative zero", "seven"))
def test_where_copies_each_chosen_item_bit_for_bit(name, other):
    """``where(mask, x, y)`` copies x's or y's item as it is: a NaN keeps its payload and -0.0 its sign (the
    CPU kernel moves the items as integers of their size, which must give NumPy's ``where`` exactly)."""
    rng = np.random.default_rng(3)
    dt = odt(name)
    mask = rng.random((6, 7)) > 0.4
    x = onion.tensor(rng.standard_normal((6, 7)) * 50).to(dt)
    if dt.is_floating_point:
        xa = to_np(x).copy()
        raw = xa.view(f"u{xa.itemsize}")
        xa[0, 1] = -0.0                                                     # a negative zero
        raw[0, 2] = np.array(np.nan, xa.dtype).view(f"u{xa.itemsize}") | 1  # a quiet NaN with a payload
        x = onion.from_numpy(xa)
    if other == "tensor":
        y = onion.tensor(rng.standard_normal((6, 7)) * 50).to(dt)
    else:
        value = {"zero": 0, "negative zero": -0.0, "seven": 7}[other]
        if value == 0 and dt is onion.bool or (not dt.is_floating_point and not dt.is_complex and value == -0.0):
            value = 0
        y = onion.tensor(value).to(dt)
    got = onion.where(onion.from_numpy(mask), x, y)
    want = np.where(mask, to_np(x), to_np(y))
    assert to_np(got).tobytes() == want.tobytes()
