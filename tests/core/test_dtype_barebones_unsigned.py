"""uint16/uint32/uint64, PyTorch's limited-support unsigned types, against torch 2.13:
the dtype objects, promotion (which raises with any other dtype), and what tensors of them can do."""
import itertools

import numpy as np
import pytest

import onion
from onion.core.dtype import BAREBONES_UNSIGNED_DTYPES, EVERY_DTYPE
from onion.core.promotion import DIMENSIONED, WRAPPED, ZERO_DIM, can_cast, promote_types, result_type_of

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle


def to_torch(d):
    return getattr(torch, d.name)


def outcome(fn):
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001 - the exception type and text are what is compared
        return type(e).__name__, str(e)


@pytest.mark.parametrize("d", BAREBONES_UNSIGNED_DTYPES, ids=str)
def test_dtype_attributes(d):
    t = to_torch(d)
    assert (d.itemsize, d.is_signed, d.is_floating_point, d.is_complex) == \
        (t.itemsize, t.is_signed, t.is_floating_point, t.is_complex)
    assert repr(d) == repr(t).replace("torch", "onion") and getattr(onion, d.name) is d
    assert d.np == np.dtype(d.name) and onion.tensor([1], dtype=d).numpy().dtype == d.np


def test_promote_types_and_can_cast_with_every_dtype():
    for a, b in itertools.product(EVERY_DTYPE, repeat=2):
        if a in BAREBONES_UNSIGNED_DTYPES or b in BAREBONES_UNSIGNED_DTYPES:
            got = outcome(lambda: promote_types(a, b))
            want = outcome(lambda: torch.promote_types(to_torch(a), to_torch(b)))
            assert got[0] == want[0], (a, b)
            assert got[1] == want[1] if got[0] != "ok" else got[1].name == str(want[1])[6:], (a, b)
            assert can_cast(a, b) == torch.can_cast(to_torch(a), to_torch(b)), (a, b)


def test_result_type_with_python_numbers():
    u = onion.uint64
    assert result_type_of(((u, DIMENSIONED), (onion.int64, WRAPPED))) is u                  # x + 1
    assert result_type_of(((u, DIMENSIONED), (onion.float64, WRAPPED))) is onion.float32     # x + 1.0
    assert result_type_of(((u, DIMENSIONED), (onion.int64, ZERO_DIM))) is u                  # x + tensor(1)
    with pytest.raises(RuntimeError, match="attempted to promote UInt64 and Long"):
        result_type_of(((u, DIMENSIONED), (onion.int64, DIMENSIONED)))
    with pytest.raises(RuntimeError, match="attempted to promote UInt16 and Bool"):
        promote_types(onion.uint16, onion.bool)


CASES = [
    "lib.zeros(3, dtype=lib.uint32)", "lib.ones(2, 2, dtype=lib.uint16)", "lib.full((2,), 5, dtype=lib.uint64)",
    "lib.tensor([0, 2**64 - 1], dtype=lib.uint64)", "lib.tensor([1.5, 7.0]).to(lib.uint32)",
    "x.to(lib.float32)", "x.long()", "x.clone()", "x[1]", "lib.cat([x, x])", "x.reshape(3, 1).t().contiguous()",
    "lib.zeros_like(x)", "lib.empty(3, dtype=lib.uint64).copy_(lib.tensor([1.0, 2.0, 3.0]))",
    "x.fill_(3)", "x.to(lib.int64) + x", "x.float() + x", "x + 0.5", "x.neg()", "x.abs()", "x < 2",
    "lib.tensor([1, 2], dtype=lib.uint16).to(lib.uint64)",
]


@pytest.mark.parametrize("expr", CASES)
def test_tensor_operations_match_torch(expr):
    def run(lib):
        x = lib.tensor([1, 2, 3], dtype=lib.uint64)
        r = eval(expr, {"lib": lib, "x": x})
        return str(r.dtype).split(".")[1], r.tolist()
    assert outcome(lambda: run(onion)) == outcome(lambda: run(torch))


def test_printing():
    for d in BAREBONES_UNSIGNED_DTYPES:
        o = repr(onion.tensor([[1, 2], [3, 40000]], dtype=d))
        t = repr(torch.tensor([[1, 2], [3, 40000]], dtype=to_torch(d)))
        assert o == t.replace("torch.", "onion.")
    assert repr(onion.tensor([2**64 - 1], dtype=onion.uint64)) == \
        repr(torch.tensor([2**64 - 1], dtype=torch.uint64)).replace("torch.", "onion.")


def test_from_numpy():
    for d in BAREBONES_UNSIGNED_DTYPES:
        a = np.array([1, 2**(8 * d.itemsize) - 1], dtype=d.np)
        o, t = onion.from_numpy(a), torch.from_numpy(a)
        assert o.dtype is d and o.tolist() == t.tolist()
