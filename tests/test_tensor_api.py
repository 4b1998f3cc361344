"""The public Tensor surface against PyTorch: repr, conversions, NumPy interop, metadata."""
import numpy as np
import pytest

import onion

from conftest import default_dtype, torch  # (torch: a stand-in without PyTorch)


@pytest.mark.oracle
@pytest.mark.parametrize("data", [[1.0, 2.5], [[1, 2], [3, 4]], [True, False], 3.0, [1 + 2j, 3j], [], [[1e-5, 1e9]]])
def test_tensor_repr_and_dtype_inference(data):
    o, t = onion.tensor(data), torch.tensor(data)
    assert o.dtype.name == str(t.dtype).replace("torch.", "")
    assert repr(o) == repr(t).replace("torch.", "onion.")
    assert o.shape == tuple(t.shape) and o.stride() == t.stride()


@pytest.mark.oracle
def test_repr_with_dtype_and_grad():
    assert repr(onion.tensor([1, 2], dtype=onion.int32)) == "tensor([1, 2], dtype=onion.int32)"
    assert repr(onion.ones(2, requires_grad=True)) == "tensor([1., 1.], requires_grad=True)"
    assert repr(onion.ones(2, 3, device="meta")) == repr(torch.ones(2, 3, device="meta"))
    assert repr(onion.ones(2).shape) == "onion.Size([2])"


def test_item_tolist_numpy():
    o = onion.tensor([[1.5, 2.0]])
    assert o.tolist() == [[1.5, 2.0]] and o[0, 1].item() == 2.0
    assert isinstance(onion.tensor(3).item(), int) and isinstance(onion.tensor(True).item(), bool)
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    f = onion.from_numpy(a)
    f[0, 0] = 100.0
    assert a[0, 0] == 100.0                       # shares memory
    assert np.array_equal(np.asarray(f), a)
    assert f.numpy() is not None and f.is_contiguous() and f.stride() == (3, 1)
    with pytest.raises(RuntimeError, match="a Tensor with 6 elements cannot be converted to Scalar"):
        f.item()


@pytest.mark.oracle
def test_from_numpy_strided_shares_storage():
    a = np.arange(12, dtype=np.int64).reshape(3, 4)[:, ::2]
    o, t = onion.from_numpy(a), torch.from_numpy(a)
    assert o.stride() == t.stride() and o.shape == tuple(t.shape)
    v = o.t()
    assert v.stride() == t.t().stride()
    v[1, 0] = -1
    assert a[0, 1] == -1


@pytest.mark.oracle
def test_to_and_device():
    o = onion.tensor([1.5, -2.5])
    assert o.to(onion.int32).tolist() == torch.tensor([1.5, -2.5]).to(torch.int32).tolist()
    m = o.to("meta")
    assert m.device == onion.device("meta") and m.shape == o.shape and m.is_meta
    assert o.to(onion.float32) is o
    assert repr(onion.device("cpu")) == repr(torch.device("cpu"))
    assert str(onion.device("cuda", 1)) == str(torch.device("cuda", 1))


def test_dtype_names_and_default():
    assert onion.float32 is onion.float and onion.get_default_dtype() is onion.float32
    with default_dtype("float64"):
        assert onion.tensor([1.0]).dtype is onion.float64
        assert onion.ones(1).dtype is onion.float64


@pytest.mark.oracle
def test_result_type_matches_torch():
    assert onion.result_type(onion.ones(2, dtype=onion.int32), 2.5).name == \
        str(torch.result_type(torch.ones(2, dtype=torch.int32), 2.5)).replace("torch.", "")
    assert onion.promote_types(onion.uint8, onion.int8) is onion.int16
    assert onion.can_cast(onion.float32, onion.int32) is False
