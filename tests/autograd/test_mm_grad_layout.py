"""mm/addmm gradients keep a column-major input's layout (PyTorch's mm_mat1_backward/mm_mat2_backward
compute them transposed then), with the same values; compared with PyTorch, real and complex."""
import itertools

import numpy as np
import pytest

import onion

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle


def _matrix(lib, rows, cols, layout, dtype, seed):
    rng = np.random.default_rng(seed)
    shape = (rows, cols) if layout == "row" else (cols, rows)
    data = rng.standard_normal(shape)
    if dtype == "complex128":
        data = data + 1j * rng.standard_normal(shape)
    t = lib.tensor(data.tolist(), dtype=getattr(lib, dtype))
    return (t if layout == "row" else t.t()).requires_grad_()


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("op", ["mm", "addmm"])
@pytest.mark.parametrize("l1,l2", list(itertools.product(["row", "col"], repeat=2)))
def test_gradient_layout_and_values(op, l1, l2, dtype):
    got = {}
    for lib in (onion, torch):
        a, b = _matrix(lib, 4, 3, l1, dtype, 1), _matrix(lib, 3, 5, l2, dtype, 2)
        if op == "mm":
            out = lib.mm(a, b)
        else:
            alpha = 2 - 1j if dtype == "complex128" else 2.0
            out = lib.addmm(lib.ones(4, 5, dtype=getattr(lib, dtype)), a, b, alpha=alpha)
        g = lib.ones(4, 5, dtype=getattr(lib, dtype))
        ga, gb = lib.autograd.grad(out, (a, b), g)
        got[lib.__name__] = ([ga.stride(), gb.stride()], np.array(ga.tolist()), np.array(gb.tolist()))
    assert got["onion"][0] == got["torch"][0]
    np.testing.assert_allclose(got["onion"][1], got["torch"][1], rtol=1e-12)
    np.testing.assert_allclose(got["onion"][2], got["torch"][2], rtol=1e-12)
