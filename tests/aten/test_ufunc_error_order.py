"""Which error an elementwise ``out=`` call reports when several apply: PyTorch checks the cast to the
``out`` dtype (TensorIterator) before its kernel's dtype dispatch says a dtype is not implemented."""
import pytest

import onion

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle


def _error(lib, fn):
    try:
        fn(lib)
    except Exception as e:  # noqa: BLE001 - the type and text are what is compared
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("call", [
    lambda L: L.div(L.ones(2, dtype=L.complex64), L.ones(2, dtype=L.complex64), rounding_mode="trunc",
                    out=L.empty(2, dtype=L.int32)),
    lambda L: L.div(L.ones(2, dtype=L.complex64), L.ones(2, dtype=L.complex64), rounding_mode="floor",
                    out=L.empty(2, dtype=L.complex64)),
    lambda L: L.pow(L.ones(2, dtype=L.bool), L.ones(2, dtype=L.bool), out=L.empty(2, dtype=L.float32)),
    lambda L: L.lt(L.ones(2, dtype=L.complex64), L.ones(2, dtype=L.complex64), out=L.empty(2, dtype=L.int32)),
    lambda L: L.exp(L.ones(2, dtype=L.int32), out=L.empty(2, dtype=L.int32)),
])
def test_out_dtype_is_checked_before_not_implemented(call):
    want = _error(torch, call)
    assert want is not None
    assert _error(onion, call) == want
