"""A double reaches float16 and bfloat16 through float32, as in c10 (``Half`` and ``BFloat16`` are made from a
float): values just above a float32 tie round twice.  ``tensor``, ``.to``, ``copy_``, ``full``, ``fill_`` and arithmetic with a number (or alpha) give
PyTorch's elements, without NumPy's overflow warnings."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import onion
from conftest import torch

pytestmark = pytest.mark.oracle

# 1 + 2**-8 + 2**-40 (bfloat16's tie in float32) and 1 + 2**-11 + 2**-40 (float16's), overflow, a tiny, NaN
VALUES = [1 + 2 ** -8 + 2 ** -40, 1 + 2 ** -11 + 2 ** -40, 1e39, -1e-30, float("nan"), 70000.0]

WAYS = {
    "tensor(list)": lambda L, dt: L.tensor(VALUES, dtype=dt),
    "tensor(float64 array)": lambda L, dt: L.tensor(np.array(VALUES), dtype=dt),
    "from_numpy().to": lambda L, dt: L.from_numpy(np.array(VALUES)).to(dt),
    "complex128 .to": lambda L, dt: L.from_numpy(np.array(VALUES, dtype=np.complex128)).real.to(dt),
    "full": lambda L, dt: L.stack([L.full((), v, dtype=dt) for v in VALUES[:2]]),
    "fill_": lambda L, dt: L.stack([L.zeros((), dtype=dt).fill_(v) for v in VALUES[:2]]),
    "copy_": lambda L, dt: L.empty(len(VALUES), dtype=dt).copy_(L.tensor(VALUES, dtype=L.float64)),
    # a Python number or a float64 0-d tensor meets a reduced-float tensor: cast to its dtype first
    "add number": lambda L, dt: L.stack([L.zeros(2, dtype=dt) + v for v in VALUES[:2]]),
    "sub 0-d float64": lambda L, dt: L.stack([L.zeros(2, dtype=dt).sub(L.tensor(v, dtype=L.float64))
                                              for v in VALUES[:2]]),
    "maximum 0-d float64": lambda L, dt: L.stack([L.maximum(L.zeros(2, dtype=dt), L.tensor(v, dtype=L.float64))
                                                  for v in VALUES[:2]]),
    "add alpha": lambda L, dt: L.stack([L.zeros(2, dtype=dt).add(1, alpha=v) for v in VALUES[:2]]),
}


@pytest.mark.parametrize("way", sorted(WAYS))
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_doubles_round_through_float32(way, dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = WAYS[way](onion, getattr(onion, dtype))
    theirs = WAYS[way](torch, getattr(torch, dtype))
    assert str(ours.tolist()) == str(theirs.tolist())
