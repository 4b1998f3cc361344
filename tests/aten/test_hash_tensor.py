"""hash_tensor against torch 2.13: values per dtype, dims, out=, Meta, and its errors in PyTorch's order."""
import pytest

import onion

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle


def outcome(lib, fn):
    try:
        r = fn(lib)
    except Exception as e:  # noqa: BLE001 - the exception type and text are what is compared
        return type(e).__name__, str(e)
    return str(r.dtype).split(".")[1], tuple(r.shape), r.stride(), (None if r.device.type == "meta" else r.tolist())


CASES = {
    "float": lambda L: L.hash_tensor(L.tensor([1.0, 2.0, -3.5])),
    "float16": lambda L: L.hash_tensor(L.tensor([0.5, float("nan")], dtype=L.float16)),
    "bfloat16": lambda L: L.hash_tensor(L.tensor([[0.5, 2.0], [1.0, -1.0]], dtype=L.bfloat16), 1),
    "int8_negative": lambda L: L.hash_tensor(L.tensor([[-1, 2], [3, 4]], dtype=L.int8), 1),
    "bool": lambda L: L.hash_tensor(L.tensor([True, True, True])),
    "dims_keepdim": lambda L: L.hash_tensor(L.arange(24.0).reshape(2, 3, 4), [0, 2], keepdim=True),
    "transposed": lambda L: L.hash_tensor(L.arange(12).reshape(3, 4).t(), 0, keepdim=True),
    "zero_dim": lambda L: L.hash_tensor(L.tensor(3.0), 0),
    "method": lambda L: L.tensor([5, 6]).hash_tensor(),
    "empty_result": lambda L: L.hash_tensor(L.zeros(0, 3), 1),
    "empty_complex_result": lambda L: L.hash_tensor(L.zeros(0, 3, dtype=L.complex64), 1),
    "out_resized": lambda L: L.hash_tensor(L.ones(2, 3), 1, out=L.empty(0, dtype=L.uint64)),
    "meta": lambda L: L.hash_tensor(L.zeros(3, 4, device="meta"), -1, keepdim=True),
    "meta_complex": lambda L: L.hash_tensor(L.zeros(3, dtype=L.complex64, device="meta")),
    "meta_bad_mode": lambda L: L.hash_tensor(L.zeros(3, device="meta"), mode=1),
    "err_numel0_no_dim": lambda L: L.hash_tensor(L.zeros(0)),
    "err_numel0_dim": lambda L: L.hash_tensor(L.zeros(0, 3), 0),
    "err_mode": lambda L: L.hash_tensor(L.zeros(3), mode=1),
    "err_out_dtype_first": lambda L: L.hash_tensor(L.zeros(3), mode=1, out=L.empty(0, dtype=L.int64)),
    "err_complex": lambda L: L.hash_tensor(L.zeros(3, dtype=L.complex64)),
    "err_uint32": lambda L: L.hash_tensor(L.zeros(3, dtype=L.uint32)),
    "err_dim_range": lambda L: L.hash_tensor(L.zeros(3), dim=3),
    "err_dim_repeat": lambda L: L.hash_tensor(L.zeros(3, 2), dim=(0, 0)),
}


@pytest.mark.parametrize("name", CASES)
def test_hash_tensor_matches_torch(name):
    fn = CASES[name]
    assert outcome(onion, fn) == outcome(torch, fn)


def test_worked_value_and_no_grad():
    # 1.0, 2.0, 3.0 as float64 bit patterns: 0x3FF0.., 0x4000.., 0x4008.. XOR to 0x3FF8000000000000
    x = onion.tensor([1.0, 2.0, 3.0], requires_grad=True)
    r = onion.hash_tensor(x)
    assert r.item() == 0x3FF8000000000000 and not r.requires_grad and r.grad_fn is None
