"""The argument parser and the hand-written bindings refuse bad arguments as PyTorch does.

Each case runs the same call in both libraries (``check_same``): same exception type,
or the same result.  The fuzz tier (tests/fuzz) finds such cases across every
operator; these pin the ones fixed in the parser, with the message where it matters.
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import check_same, onion, torch  # (torch: a stand-in without PyTorch)

pytestmark = pytest.mark.oracle


def both(fn):
    """``fn(lib)`` for onion and for torch, as check_same wants them."""
    return (lambda: fn(onion)), (lambda: fn(torch))


CASES = {
    # ints beyond int64: ValueError for an int argument, TypeError for an element of an int list
    "dim 2**63": lambda L: L.ones(3, 3).argmax(dim=2 ** 63),
    "dim -2**63-1": lambda L: L.ones(3, 3).argmax(-(2 ** 63) - 1),
    "view 2**64": lambda L: L.ones(3, 3).view(2 ** 64),
    "view (9, 2**63)": lambda L: L.ones(3, 3).view(9, 2 ** 63),
    "zeros (2**63,)": lambda L: L.zeros((2 ** 63,)),
    # factory sizes as one sequence (the bindings' fast path) and what it leaves to the parser
    "ones(())": lambda L: L.ones(()), "zeros([2, 3])": lambda L: L.zeros([2, 3]),
    "empty(Size)": lambda L: L.empty(L.Size([2, 0])).shape, "rand((2, 3)).shape": lambda L: L.rand((2, 3)).shape,
    "ones((2, 3.0))": lambda L: L.ones((2, 3.0)), "ones((2,), (3,))": lambda L: L.ones((2,), (3,)),
    "zeros([-1])": lambda L: L.zeros([-1]), "ones([True, 2])": lambda L: L.ones([True, 2]),
    # plain ints after self (the bindings' ints fast path), and what it leaves to the parser
    "transpose(0, -1)": lambda L: L.arange(6.0).view(2, 3).transpose(0, -1),
    "transpose(True, 0)": lambda L: L.ones(2, 3).transpose(True, 0),
    "transpose(0, 2**63)": lambda L: L.ones(2, 3).transpose(0, 2 ** 63),
    "transpose(0)": lambda L: L.ones(2, 3).transpose(0),
    "unsqueeze(np.int64(1))": lambda L: L.ones(2, 3).unsqueeze(np.int64(1)).shape,
    "softmax(-1)": lambda L: L.arange(6.0).view(2, 3).softmax(-1),
    "argmax(1)": lambda L: L.tensor([[1.0, 3.0], [4.0, 2.0]]).argmax(1),
    "flatten(1)": lambda L: L.ones(2, 3, 4).flatten(1).shape, "flatten(0, 1)": lambda L: L.ones(2, 3, 4).flatten(0, 1).shape,
    "cumsum(0) fn": lambda L: L.cumsum(L.arange(4.0), 0), "select fn": lambda L: L.select(L.arange(6.0).view(2, 3), 1, -1),
    "argsort(1)": lambda L: L.tensor([[3.0, 1.0, 2.0]]).argsort(1), "tril(-1)": lambda L: L.ones(3, 3).tril(-1),
    "softmax(-1, float64)": lambda L: L.ones(2, 3).softmax(-1, L.float64),
    "amax dim (2**64,)": lambda L: L.amax(L.ones(3, 3), dim=(2 ** 64,)),
    "select 2**63": lambda L: L.ones(3, 3).select(0, 2 ** 63),
    "diagonal offset 2**64": lambda L: L.diagonal(L.ones(3, 3), offset=2 ** 64),
    "size(2**63)": lambda L: L.ones(3).size(2 ** 63),
    "index 2**64": lambda L: L.ones(3)[2 ** 64],
    # Scalars beyond int64 / uint64: OverflowError
    "add 2**64": lambda L: L.ones(3).add(2 ** 64),
    "alpha 2**64": lambda L: L.add(L.ones(3), L.ones(3), alpha=2 ** 64),
    "full 2**64": lambda L: L.full((2,), 2 ** 64),
    "alpha -2**63-1": lambda L: L.add(L.ones(3), L.ones(3), alpha=-(2 ** 63) - 1),
    # bools: not ints, except after the first element of an int list
    "size(True)": lambda L: L.ones(3).size(True),
    "view(9, True)": lambda L: L.ones(3, 3).view(9, True),
    "view(True, 9)": lambda L: L.ones(3, 3).view(True, 9),
    "argmax(dim=True)": lambda L: L.ones(3, 3).argmax(dim=True),
    "requires_grad_(2)": lambda L: L.ones(3).requires_grad_(2),
    "ones(requires_grad='a')": lambda L: L.ones(3, requires_grad="a"),
    "ones(requires_grad=None)": lambda L: L.ones(3, requires_grad=None),
    # NumPy bools are Scalars (unpacked as doubles)
    "add np.True_": lambda L: L.ones(3, dtype=L.bool).add(np.True_),
    "alpha np.True_": lambda L: L.ones(3).add(L.ones(3), alpha=np.True_),
    # memory_format must be one
    "clone(memory_format='channels_last')": lambda L: L.ones(3).clone(memory_format="channels_last"),
    "empty_like(memory_format=1)": lambda L: L.empty_like(L.ones(3), memory_format=1),
    "float(memory_format=dtype)": lambda L: L.ones(3).float(memory_format=L.float32),
    "float('extra')": lambda L: L.ones(3).float("extra"),
    # tensor() / as_tensor() / numel() argument types
    "tensor(dtype='float32')": lambda L: L.tensor([1.0], dtype="float32"),
    "tensor(dtype=float)": lambda L: L.tensor([1.0], dtype=float),
    "tensor(requires_grad=1)": lambda L: L.tensor([1.0], requires_grad=1),
    "as_tensor positional dtype": lambda L: L.as_tensor([1.0], L.float64),
    "numel('abc')": lambda L: L.numel("abc"),
    # Tensor.to: PyTorch's three signatures
    "to(dtype, dtype)": lambda L: L.ones(3).to(L.float32, L.int32),
    "to(dtype, 'cpu')": lambda L: L.ones(3).to(L.float64, "cpu"),
    "to([1])": lambda L: L.ones(3).to([1]),
    "to(memory_format=1)": lambda L: L.ones(3).to(L.float64, memory_format=1),
    "to('cpu', float64, True)": lambda L: L.ones(3).to("cpu", L.float64, True),
    "to(other)": lambda L: L.ones(3).to(L.ones(2, dtype=L.int32)),
    # reflected operators: a non-number operand gets Python's TypeError
    "None ** t": lambda L: None ** L.ones(3),
    "'a' - t": lambda L: "a" - L.ones(3),
    "object() / t": lambda L: object() / L.ones(3),
    # indexing: several ellipses as torch 2.13 takes them
    "t[..., ...]": lambda L: L.ones(2, 3)[..., ...],
    "t[..., 0, ...]": lambda L: L.ones(2, 3, 4)[..., 0, ...],
    # abs / neg out= of another dtype (TensorIterator's unary_op wants the same dtype)
    "abs int out=float": lambda L: L.abs(L.ones(3, dtype=L.int64), out=L.empty(3)),
    "neg float out=double": lambda L: L.neg(L.ones(3), out=L.empty(3, dtype=L.float64)),
    "abs complex out=float": lambda L: L.abs(L.ones(3, dtype=L.complex64), out=L.empty(3)),
    "abs complex out=complex": lambda L: L.abs(L.ones(3, dtype=L.complex64), out=L.empty(3, dtype=L.complex64)),
    # out= that is an expanded view: TensorIterator-built kernels refuse it before resizing
    "arange out=expanded": lambda L: L.arange(0, 3, out=L.ones(1).expand(3)),
    "linspace out=expanded": lambda L: L.linspace(0, 1, 3, out=L.ones(1).expand(3)),
    "add_ on expanded": lambda L: L.ones(1).expand(3).add_(1),
    "fill_ on expanded": lambda L: L.ones(1).expand(3).fill_(2),
    "add out=expanded": lambda L: L.add(L.ones(3), 1, out=L.ones(1).expand(3)),
    "mean out=expanded": lambda L: L.mean(L.ones(3, 3), 1, out=L.ones(1).expand(3)),
    "mm out=expanded": lambda L: L.mm(L.ones(3, 3), L.ones(3, 3), out=L.ones(1).expand(3, 3)),
    # linspace's Tensor overloads
    "linspace 1-D start": lambda L: L.linspace(L.ones(2), 4, 4),
    "linspace 0-dim bounds": lambda L: L.linspace(L.tensor(0.0), L.tensor(2.0), 3),
    "linspace float steps": lambda L: L.linspace(0, 4, 4.5),
    # arange's odd steps
    "arange NaN step": lambda L: L.arange(0, 4, float("nan")),
    "arange inf step int64": lambda L: L.arange(0, 4, float("inf"), out=L.empty(4, dtype=L.int64)),
    # detach_ of a view
    "detach_ of a slice": lambda L: L.ones(3)[:2].detach_(),
    "permute huge dim": lambda L: L.ones(3, 3).permute(-1, -(2 ** 40)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_as_torch(name):
    fo, ft = both(CASES[name])
    check_same(fo, ft)


@pytest.mark.parametrize("op", ["sum", "prod", "amax", "amin", "argmax", "argmin", "bmm"])
def test_expanded_out_accepted_where_torch_accepts(op):
    """PyTorch's reductions and bmm do not check their out= for internal overlap: an expanded out= is
    written (what its shared elements end up holding is unspecified, in PyTorch as here)."""
    def call(L):
        x = L.ones(2, 3, 3)
        o = L.zeros(1, dtype=L.int64 if op.startswith("arg") else L.float32)
        if op == "bmm":
            return L.bmm(x, x, out=o.expand(2, 3, 3)).shape
        return getattr(L, op)(x[0], 1, out=o.expand(3)).shape
    assert tuple(call(onion)) == tuple(call(torch))


@pytest.mark.parametrize("call,text", [
    (lambda: onion.ones(3).requires_grad_(2),
     "requires_grad_(): argument 'requires_grad' (position 1) must be bool, not int"),
    (lambda: onion.ones(3).size(True), "size(): argument 'dim' (position 1) must be int, not bool"),
    (lambda: onion.ones(3).clone(memory_format="channels_last"), "clone(): argument 'memory_format' must be "),
    (lambda: onion.numel("abc"), "numel(): argument 'input' (position 1) must be Tensor, not str"),
    (lambda: onion.tensor([1.0], dtype="float32"), "tensor(): argument 'dtype' must be onion.dtype, not str"),
    (lambda: onion.ones(3).add(onion.ones(3), alpha=None), "add(): argument 'alpha' must be Number, not NoneType"),
    (lambda: onion.ones(3).to(onion.float64, "cpu"), "to() received an invalid combination of arguments - got "
                                                      "(onion.dtype, str), but expected one of:"),
    (lambda: onion.ones(3, 3).view(2 ** 64), "view(): argument 'size' failed to unpack the object at pos 1"),
])
def test_messages_name_the_function_and_the_argument(call, text):
    with pytest.raises(Exception) as info:
        call()
    assert text in str(info.value)


@pytest.mark.parametrize("call", [
    lambda m: m.Tensor.add(1, m.ones(1)),
    lambda m: m.Tensor.view(1, 2),
    lambda m: m.Tensor.exp("x"),
    lambda m: m.Tensor.sum(None),
    lambda m: m.Tensor.mul(2.5, m.ones(2)),
], ids=["add", "view", "exp", "sum", "mul"])
def test_unbound_method_with_another_self_is_a_type_error(call):
    """A Tensor method called unbound with a non-tensor self: PyTorch's methods are TensorBase descriptors."""
    errors = []
    for m in (onion, torch):
        with pytest.raises(TypeError) as info:
            call(m)
        errors.append(str(info.value))
    assert errors[0] == errors[1]
