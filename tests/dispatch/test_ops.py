"""``onion.ops.aten.*`` bind (args, kwargs) to the schema as ``torch.ops.aten.*`` do."""
import numpy as np
import pytest

import onion
from conftest import torch  # (a stand-in without PyTorch)

A = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=np.float32)
B = np.array([[0.5, -1.0, 2.0], [3.0, 0.25, -4.0]], dtype=np.float32)


def _both(fn):
    """fn(ops, a, b) on onion and on torch; the results as NumPy arrays."""
    got = fn(onion.ops, onion.tensor(A), onion.tensor(B))
    want = fn(torch.ops, torch.tensor(A), torch.tensor(B))
    return np.asarray(got.tolist()), np.asarray(want.tolist())


@pytest.mark.oracle
@pytest.mark.parametrize("call", [
    lambda ops, a, b: ops.aten.add.Tensor(self=a, other=b),
    lambda ops, a, b: ops.aten.add.Tensor(other=b, self=a, alpha=3),
    lambda ops, a, b: ops.aten.add.Tensor(a, other=b, alpha=-2),
    lambda ops, a, b: ops.aten.add(self=a, other=b),                 # the packet binds keywords too
    lambda ops, a, b: ops.aten.add(a, other=b, alpha=2),
    lambda ops, a, b: ops.aten.sub.Tensor(self=b, other=a),
    lambda ops, a, b: ops.aten.sum.dim_IntList(self=a, dim=[1]),      # keepdim and dtype from defaults
    lambda ops, a, b: ops.aten.sum.dim_IntList(a, [0], keepdim=True),
    lambda ops, a, b: ops.aten.mm.default(self=a, mat2=b.t()),
], ids=["self-other", "any-order", "mixed", "packet", "packet-mixed", "sub", "defaults", "kwarg-only", "mm"])
def test_keywords_bind_by_schema_name(call):
    got, want = _both(call)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want)


@pytest.mark.oracle
@pytest.mark.parametrize("call", [
    lambda ops, a, b: ops.aten.add.Tensor(a, b, 2),            # alpha is keyword-only
    lambda ops, a, b: ops.aten.add.Tensor(a, self=a),          # self twice, other missing
    lambda ops, a, b: ops.aten.add.Tensor(a, bogus=b),         # no such argument
    lambda ops, a, b: ops.aten.add.Tensor(other=b),            # self missing
], ids=["alpha-positional", "self-twice", "unknown", "missing"])
def test_bad_bindings_are_refused_by_both(call):
    with pytest.raises(RuntimeError):
        call(torch.ops, torch.tensor(A), torch.tensor(B))
    with pytest.raises(TypeError):
        call(onion.ops, onion.tensor(A), onion.tensor(B))


def test_redispatch_takes_keywords():
    a, b = onion.tensor(A), onion.tensor(B)
    ks = onion._C.DispatchKeySet(onion._C.DispatchKey.CPU)
    got = onion.ops.aten.add.Tensor.redispatch(ks, self=a, other=b, alpha=2)
    np.testing.assert_allclose(np.asarray(got.tolist()), A + 2 * B)
