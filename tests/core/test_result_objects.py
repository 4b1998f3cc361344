"""The objects every call makes (a result's TensorImpl and Tensor, a recorded op's node) are made by the
class call with no Python ``__init__``: CPython's cheapest allocation.  A Python ``__init__`` added to
one of these classes would slow every operator without failing anything else, so it is pinned here,
with what ``make_impl`` (the constructor's replacement) fills in."""
from __future__ import annotations

import numpy as np
import pytest

import onion
from onion.autograd.graph import AccumulateGrad, GeneratedNode, Node
from onion.core.device import CPU
from onion.core.dispatch_key import K, tensor_keyset
from onion.core.tensor import Tensor, make_tensor
from onion.core.tensor_impl import LazyViewImpl, TensorImpl, ViewImpl, WrappedNumberImpl, make_impl


@pytest.mark.parametrize("cls", (Tensor, TensorImpl, ViewImpl, LazyViewImpl, WrappedNumberImpl, GeneratedNode,
                                 AccumulateGrad))
def test_made_without_python_init(cls):
    assert cls.__init__ is object.__init__


def test_generated_nodes_are_numbered_by_their_recording_kernel():
    a = onion.ones(2, requires_grad=True)
    first = (a * 2).grad_fn
    second = (a + 1).grad_fn
    assert isinstance(first, GeneratedNode) and isinstance(second, GeneratedNode)
    assert second._sequence_nr > first._sequence_nr        # the engine runs later nodes first
    assert type(first).__name__ == "MulBackward0" and type(second).__name__ == "AddBackward0"
    # a hand-written node is numbered by Node.__init__, from the same counter
    third = Node()
    assert first._sequence_nr < second._sequence_nr < third._sequence_nr


def test_make_impl_fills_every_slot():
    arr = np.arange(6, dtype=np.float32).reshape(2, 3)
    impl = make_impl(arr, onion.float32, CPU, tensor_keyset(K.CPU))
    assert (impl._array is arr and impl.dtype is onion.float32 and impl.device is CPU
            and impl.keyset == tensor_keyset(K.CPU))
    assert impl.requires_grad is False and impl._base is None and impl._inference is False
    assert impl.grad_fn is None and impl.version == 0
    t = make_tensor(impl)
    assert type(t) is Tensor and t._impl is impl
    assert t.shape == (2, 3) and t.stride() == (3, 1) and t.tolist() == [[0, 1, 2], [3, 4, 5]]


def test_leaf_accumulator_is_shared_while_a_graph_holds_it():
    """The accumulator is held weakly by its leaf (as PyTorch's weak_ptr): one object while a graph uses it,
    and made again (with ``variable`` set) once every graph is gone."""
    a = onion.ones(2, requires_grad=True)
    y1, y2 = a * 2, a * 3
    acc = y1.grad_fn.next_functions[0][0]
    assert acc is y2.grad_fn.next_functions[0][0] and acc.variable is a
    del y1, y2, acc
    again = (a * 4).grad_fn.next_functions[0][0]
    assert isinstance(again, AccumulateGrad) and again.variable is a
