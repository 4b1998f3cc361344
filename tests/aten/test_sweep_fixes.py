"""What the full OpInfo sweep (letters f-z, every dtype) found onion doing otherwise than PyTorch, each case
checked against torch."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from conftest import check_same, onion, torch

pytestmark = pytest.mark.oracle

_SPECIAL = [-1.0, 0.0, 0.5, 2.0, np.inf, -np.inf, np.nan]


@pytest.mark.parametrize("name", ["igamma", "igammac"])
@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16"])
def test_igamma_nan_with_limits(name, dtype):
    # PyTorch decides x == 0, a == +inf and x == +inf before a NaN in the other argument:
    # igamma(nan, 0) = 0, igamma(nan, inf) = 1, igamma(inf, nan) = 0 (igammac the complement)
    a, x = map(list, zip(*itertools.product(_SPECIAL, _SPECIAL)))
    check_same(lambda: getattr(onion, name)(onion.tensor(a, dtype=getattr(onion, dtype)),
                                            onion.tensor(x, dtype=getattr(onion, dtype))),
               lambda: getattr(torch, name)(torch.tensor(a, dtype=getattr(torch, dtype)),
                                            torch.tensor(x, dtype=getattr(torch, dtype))))
