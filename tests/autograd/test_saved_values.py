"""What a node saves: only the inputs a live edge's formula reads (PyTorch's should_compute_output),
readable as ``grad_fn._saved_<name>`` as PyTorch exposes them."""
import pytest

import onion

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle


def _saved(lib, which, name):
    a = lib.tensor([1.0, 2.0], requires_grad=which in ("a", "both"))
    b = lib.tensor([3.0, 4.0], requires_grad=which in ("b", "both"))
    out = a * b
    v = getattr(out.grad_fn, name)
    return None if v is None else v.tolist()


@pytest.mark.parametrize("which", ["a", "b", "both"])
@pytest.mark.parametrize("name", ["_saved_self", "_saved_other"])
def test_mul_saves_only_what_a_live_edge_needs(which, name):
    assert _saved(onion, which, name) == _saved(torch, which, name)


def test_saved_result_and_backward_still_match():
    for lib in (onion, torch):
        x = lib.tensor([0.5, 1.5], requires_grad=True)
        y = x.exp()
        assert y.grad_fn._saved_result.tolist() == pytest.approx([1.6487212707, 4.4816890703])
    xo = onion.tensor([1.0, 2.0], requires_grad=True)
    (xo * onion.tensor([3.0, 4.0])).sum().backward()
    assert xo.grad.tolist() == [3.0, 4.0]
