"""A resized ``out=`` of an elementwise operator takes the layout the functional result would have
(TensorIterator resizes its outputs with the strides it computed from the inputs); on Meta, PyTorch's
reference wrappers resize row-major.  Compared with PyTorch."""
import numpy as np
import pytest

import onion

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

LAYOUTS = {
    "transposed": lambda lib, dev: lib.arange(12.0, device=dev).reshape(3, 4).t(),
    "permuted": lambda lib, dev: lib.arange(24.0, device=dev).reshape(2, 3, 4).permute(2, 0, 1),
    "contiguous": lambda lib, dev: lib.arange(12.0, device=dev).reshape(3, 4),
    "stepped": lambda lib, dev: lib.arange(24.0, device=dev).reshape(3, 8)[:, ::2],
}
CALLS = {
    "sin": lambda lib, x, out: lib.sin(x, out=out),
    "add_scalar": lambda lib, x, out: lib.add(x, 1, out=out),
    "mul_self": lambda lib, x, out: lib.mul(x, x, out=out),
    "exp": lambda lib, x, out: lib.exp(x, out=out),
}


@pytest.mark.parametrize("device", ["cpu", "meta"])
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("call", sorted(CALLS))
def test_resized_out_strides(call, layout, device):
    got = {}
    for lib in (onion, torch):
        x = LAYOUTS[layout](lib, device)
        out = lib.empty(0, device=device)
        r = CALLS[call](lib, x, out)
        assert r is out
        got[lib.__name__] = (tuple(out.shape), out.stride())
        if device == "cpu":
            got[lib.__name__ + " values"] = np.array(out.tolist())
    assert got["onion"] == got["torch"]
    if device == "cpu":
        np.testing.assert_allclose(got["onion values"], got["torch values"], rtol=1e-6)
