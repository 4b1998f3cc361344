"""A view made in grad mode of a tensor without grad follows its base when the base later gains
history through an in-place op (PyTorch: every view made in grad mode is a differentiable view).
Compared with PyTorch; before the fix onion's gradient silently missed the view's share."""
import pytest

import onion

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle


def _name(fn):
    return None if fn is None else fn.name()


def base_gains_history(lib):
    a = lib.zeros(3)
    v = a[:2]
    x = lib.ones(3, requires_grad=True)
    a.add_(x)
    seen = (v.requires_grad, _name(v.grad_fn), v.is_leaf)
    ((v * 2).sum() + x.sum()).backward()
    return seen, x.grad.tolist()


def grad_fn_read_first_through_a_view_of_a_view(lib):
    a = lib.arange(4.0)
    v = a[1:].view(3)[::2]
    x = lib.full((4,), 3.0, requires_grad=True)
    a.mul_(x)
    seen = (_name(v.grad_fn), v.requires_grad)
    v.sum().backward()
    return seen, x.grad.tolist()


def base_without_history(lib):
    a = lib.zeros(3)
    v = a[:2]
    return v.requires_grad, v.grad_fn, v.is_leaf


def view_made_in_no_grad(lib):
    a = lib.zeros(3)
    with lib.no_grad():
        w = a[:2]
    return w.requires_grad, w._is_view()


def view_of_a_view_then_in_place_on_the_view(lib):
    a = lib.zeros(4)
    v = a[:3]
    x = lib.ones(3, requires_grad=True)
    v.mul_(2).add_(x)          # the base gains history through its view
    w = a[1:]                  # a new view after that: made with history at once
    (a.sum() + 2 * w.sum()).backward()
    return a.requires_grad, v.requires_grad, x.grad.tolist()


@pytest.mark.parametrize("program", [base_gains_history, grad_fn_read_first_through_a_view_of_a_view,
                                     base_without_history, view_made_in_no_grad,
                                     view_of_a_view_then_in_place_on_the_view])
def test_same_as_torch(program):
    assert program(onion) == program(torch)


def test_requires_grad_on_such_a_view_is_its_own():
    """A view of a tensor without grad may be made to require grad itself (it is a leaf), as in torch."""
    for lib in (onion, torch):
        v = lib.zeros(3)[:2]
        v.requires_grad_()
        assert v.requires_grad and v.is_leaf and v.grad_fn is None
