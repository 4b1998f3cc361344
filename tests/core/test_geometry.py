"""onion.core.geometry (contiguous strides, dim wrapping) against PyTorch."""
import pytest

import onion
from onion.core.geometry import contiguous_strides, wrap_dim

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("sizes", [(), (0,), (5,), (2, 3), (2, 0, 3), (1, 4, 1), (3, 1, 0, 2), (4, 5, 6, 7)], ids=str)
def test_contiguous_strides_match_empty(sizes):
    assert contiguous_strides(sizes) == torch.empty(sizes).stride()
    assert onion.empty(sizes).stride() == torch.empty(sizes).stride()
    assert onion.empty(sizes, device="meta").stride() == torch.empty(sizes).stride()


def _outcome(fn):
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - the exception is the outcome compared
        return type(e).__name__, str(e)


@pytest.mark.parametrize("shape", [(), (3,), (2, 3)], ids=str)
@pytest.mark.parametrize("dim", [-3, -2, -1, 0, 1, 2])
def test_size_and_stride_wrap_like_torch(shape, dim):
    o, t = onion.ones(shape), torch.ones(shape)
    assert _outcome(lambda: o.size(dim)) == _outcome(lambda: t.size(dim))
    assert _outcome(lambda: o.stride(dim)) == _outcome(lambda: t.stride(dim))


def test_size_takes_an_int():
    for m in (onion, torch):
        with pytest.raises(TypeError, match=r"size\(\): argument 'dim' \(position 1\) must be int, not str"):
            m.ones(2).size("a")
        with pytest.raises(TypeError, match=r"stride\(\): argument 'dim' \(position 1\) must be int, not float"):
            m.ones(2).stride(1.5)


@pytest.mark.parametrize("dim", [-2, -1, 0, 1])
def test_operators_wrap_a_scalar_dim(dim):
    """Operators accept -1 and 0 on a 0-dim tensor (maybe_wrap_dim's wrap_scalar); size() does not."""
    expected = _outcome(lambda: torch.ones(()).sum(dim).item())
    assert _outcome(lambda: onion.ones(()).sum(dim).item()) == expected
    assert _outcome(lambda: wrap_dim(dim, 0)) == (0 if dim in (-1, 0) else expected)
