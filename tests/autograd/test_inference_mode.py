"""Inference mode, after PyTorch's own test/autograd/test_autograd_inference_mode.py.

Each of PyTorch's cases is restated here as a scenario written once against a
module ``m``; it records what it sees (is_inference, requires_grad, is_view,
is_leaf, versions, and for a call that raises: the exception type and text)
and runs on onion and on torch, and the two records must be equal.  Some
scenarios also check PyTorch's expectations directly, so a test still says
what it expects when read alone.

The rules being tested: tensors made inside the mode are inference tensors
(no version counter, no autograd, in-place updates only inside the mode); a
view of an inference tensor is itself an inference tensor and no view for
autograd; a view of a normal tensor made inside the mode (or under no_grad)
is a view that keeps ``requires_grad`` from its base but records no history,
so modifying it or its base in place later with grad mode on is an error that
names the mode the view was made in (PyTorch's CreationMeta).
"""
from __future__ import annotations

import pytest

from conftest import onion, torch

pytestmark = pytest.mark.oracle


def attempt(record, fn):
    """Run ``fn``; record its exception (type name and text) or ``"ok"``."""
    try:
        fn()
    except Exception as e:          # noqa: BLE001 - the comparison is the test
        record.append(("raises", type(e).__name__, str(e)))
        return False
    record.append("ok")
    return True


def compare(scenario, *args):
    o, t = scenario(onion, *args), scenario(torch, *args)
    assert o == t
    return o


def facts(t):
    return (t.is_inference(), t.requires_grad, t._is_view(), t.is_leaf)


# PyTorch also uses transpose_ (an in-place view op) and view_as, which onion does not have: mul_ and
# view(size) stand in for them
INPLACE = {"add_": lambda x: x.add_(2), "mul_": lambda x: x.mul_(3)}


# ------------------------------------------------------------------ the mode itself
def _context_manager(m):
    seen = [m.is_inference_mode_enabled()]
    with m.inference_mode():
        seen.append(m.is_inference_mode_enabled())
        with m.inference_mode(False):
            seen.append(m.is_inference_mode_enabled())
        seen.append(m.is_inference_mode_enabled())
    seen.append(m.is_inference_mode_enabled())
    return seen


def test_context_manager_nests_and_restores():
    assert compare(_context_manager) == [False, True, False, True, False]


def _decorator(m, requires_grad):
    @m.inference_mode()
    def square(x):
        return m.is_inference_mode_enabled(), x * x

    enabled, d = square(m.ones(1, 2, 3, requires_grad=requires_grad))
    return enabled, m.is_inference(d), d.requires_grad


@pytest.mark.parametrize("requires_grad", [True, False])
def test_decorator(requires_grad):
    assert compare(_decorator, requires_grad) == (True, True, False)


def _tensor_creation(m):
    with m.inference_mode():
        made = [m.ones(1, 2, 3), m.ones(1, 2, 3, requires_grad=True), m.ones(1, 2, 3).requires_grad_(False)]
        return [(m.is_inference(t), t.requires_grad) for t in made]


def test_factories_make_inference_tensors_and_keep_requires_grad():
    assert compare(_tensor_creation) == [(True, False), (True, True), (True, False)]


def _existing_autograd_session(m):
    s = m.ones(1, 2, 3, requires_grad=True)
    a = s.clone()
    out = a * a                         # saves a outside the mode
    with m.inference_mode():
        a.add_(2)                       # a is a normal tensor: its version counter still moves
    record = [m.is_inference(a)]
    attempt(record, lambda: out.backward(m.ones_like(out)))
    return record


def test_inplace_in_inference_mode_still_bumps_the_version_of_a_normal_tensor():
    record = compare(_existing_autograd_session)
    assert record[0] is False
    assert record[1][2].startswith("one of the variables needed for gradient computation has been modified by "
                                   "an inplace operation")


# ------------------------------------------------------------------ inference tensors inside the mode
def _inf_tensor_in_mode(m, requires_grad, kind):
    with m.inference_mode():
        c = m.ones(1, 2, 3, requires_grad=requires_grad)
        if kind == "functional":
            out = c * c
        elif kind == "view":
            out = c.view(-1)
        else:
            INPLACE[kind](c)
            out = c
        return m.is_inference(out), out.requires_grad, out._is_view()


@pytest.mark.parametrize("kind", ["functional", "view", "add_", "mul_"])
@pytest.mark.parametrize("requires_grad", [True, False])
def test_inference_tensor_inside_the_mode(requires_grad, kind):
    is_inf, req, is_view = compare(_inf_tensor_in_mode, requires_grad, kind)
    assert is_inf and not is_view
    assert req == (requires_grad and kind in INPLACE)       # in place keeps the flag; new results do not


# ------------------------------------------------------------------ inference tensors outside the mode
def _inf_tensor_outside(m, requires_grad, kind):
    with m.inference_mode():
        c = m.ones(1, 2, 3, requires_grad=requires_grad)
    record = []
    if kind == "functional":
        record.append(facts(c * c))
    elif kind == "view":
        out = c.view(-1)
        record.append(facts(out))
        record.append(out._base is None)
    else:
        attempt(record, lambda: INPLACE[kind](c))
        record.append(m.is_inference(c))
    return record


@pytest.mark.parametrize("kind", ["functional", "view", "add_", "mul_"])
@pytest.mark.parametrize("requires_grad", [True, False])
def test_inference_tensor_outside_the_mode(requires_grad, kind):
    record = compare(_inf_tensor_outside, requires_grad, kind)
    if kind == "functional":
        assert record == [(False, False, False, True)]
    elif kind == "view":
        assert record == [(True, False, False, True), True]      # a view of it is no view (PyTorch)
    elif not requires_grad:
        assert record[0][2].startswith("Inplace update to inference tensor outside InferenceMode")


# ------------------------------------------------------------------ normal tensors changed in place inside the mode
def _normal_inplace_in_mode(m, requires_grad, kind, then):
    s = m.ones(1, 2, 3, requires_grad=requires_grad)
    a = s.clone()
    fn = INPLACE[kind]
    record = []
    with m.inference_mode():
        fn(a)
        record.append((m.is_inference(a), a.requires_grad))
        if then == "inside":
            fn(a)
            record.append((m.is_inference(a), a.requires_grad))
            v = a.view(-1)
            record.append((m.is_inference(v), v.requires_grad))
    if then == "outside":
        for _ in range(2):
            attempt(record, lambda: fn(a))
            record.append((m.is_inference(a), a.requires_grad, a.grad_fn is not None))
        v = a.view(-1)
        record.append((m.is_inference(v), v.requires_grad))
    return record


@pytest.mark.parametrize("then", ["inside", "outside"])
@pytest.mark.parametrize("kind", ["add_", "mul_"])
@pytest.mark.parametrize("requires_grad", [True, False])
def test_normal_tensor_changed_in_place_in_the_mode_stays_normal(requires_grad, kind, then):
    record = compare(_normal_inplace_in_mode, requires_grad, kind, then)
    assert all(r[0] is False for r in record if isinstance(r, tuple))
    assert all(r[1] == requires_grad for r in record if isinstance(r, tuple))


# ------------------------------------------------------------------ views of normal tensors made inside the mode
def _normal_view_in_mode(m, requires_grad):
    s = m.ones(1, 2, 3, requires_grad=requires_grad)
    a = s.clone()
    record = []
    with m.inference_mode():
        out = a.view(-1)
        record.append(facts(out))
        tmp = out.view(-1)                          # view of a view
        record.append(facts(tmp))
        tmp.add_(2)                                 # in place inside the mode: allowed, not recorded
        record.append((m.is_inference(tmp), tmp.requires_grad, a._version == tmp._version))
    return record


@pytest.mark.parametrize("requires_grad", [True, False])
def test_view_of_normal_tensor_in_the_mode_is_a_view_and_keeps_requires_grad(requires_grad):
    record = compare(_normal_view_in_mode, requires_grad)
    assert record[0] == (False, requires_grad, True, True)
    assert record[2] == (False, requires_grad, True)


def _normal_view_used_outside(m, requires_grad):
    s = m.ones(1, 2, 3, requires_grad=requires_grad)
    a = s.clone()
    with m.inference_mode():
        out = a.view(-1)
    tmp = out * out                                 # computed outside: keeps requires_grad, as PyTorch
    record = [facts(out), (m.is_inference(tmp), tmp.requires_grad)]
    if requires_grad:
        # the view has no history, so no gradient edge leads back to `a` through it
        record.append([fn is None for fn, _ in tmp.grad_fn.next_functions])
    attempt(record, lambda: out.add_(2))
    again = out.view(2, 3)
    record.append((m.is_inference(again), again.requires_grad))
    return record


@pytest.mark.parametrize("requires_grad", [True, False])
def test_view_made_in_the_mode_used_outside(requires_grad):
    record = compare(_normal_view_used_outside, requires_grad)
    assert record[1] == (False, requires_grad)
    if requires_grad:
        assert record[3][2].startswith("A view was created in inference mode and is being modified inplace in "
                                       "normal mode.")
    else:
        assert "ok" in record


def _mix_functional(m, requires_grad):
    s = m.ones(1, 2, 3, requires_grad=requires_grad)
    with m.inference_mode():
        c = m.ones(1, 2, 3, requires_grad=requires_grad)
    out = c.add(s)                                  # add saves nothing: mixing is fine
    record = [(m.is_inference(out), out.requires_grad)]
    if requires_grad:
        out.backward(m.ones_like(out))
        record.append(c.grad.tolist())              # an inference leaf that requires grad gets its gradient
        attempt(record, lambda: c * s)              # mul saves c: refused
    return record


@pytest.mark.parametrize("requires_grad", [True, False])
def test_mixing_inference_and_normal_tensors_in_functional_ops(requires_grad):
    record = compare(_mix_functional, requires_grad)
    if requires_grad:
        assert record[2][2].startswith("Inference tensors cannot be saved for backward")


def _mix_inplace(m, requires_grad):
    s = m.ones(1, 2, 3, requires_grad=requires_grad)
    a = s.clone()
    with m.inference_mode():
        c = m.ones(1, 2, 3)
    record = [m.is_inference(c)]
    attempt(record, lambda: a.mul_(c))
    attempt(record, lambda: m.mul(s, s, out=c))
    return record


@pytest.mark.parametrize("requires_grad", [True, False])
def test_mixing_inference_and_normal_tensors_in_inplace_ops(requires_grad):
    record = compare(_mix_inplace, requires_grad)
    if requires_grad:
        assert record[1][2].startswith("Inference tensors cannot be saved for backward")
        assert "out=... arguments don't support automatic differentiation" in record[2][2]
    else:
        assert record[1] == "ok"
        assert record[2][2].startswith("Inplace update to inference tensor outside InferenceMode is not allowed")


def _mix_view(m, requires_grad):
    s = m.ones(1, 2, 3, requires_grad=requires_grad)
    with m.inference_mode():
        c = m.ones(1, 2, 3)
    tmp1 = c.view(s.shape)          # a view of c: an inference tensor
    tmp2 = s.view(c.shape)          # a view of s: a normal one
    return (m.is_inference(tmp1), tmp1.requires_grad), (m.is_inference(tmp2), tmp2.requires_grad)


@pytest.mark.parametrize("requires_grad", [True, False])
def test_mixing_inference_and_normal_tensors_in_view_ops(requires_grad):
    assert compare(_mix_view, requires_grad) == ((True, False), (False, requires_grad))


# ------------------------------------------------------------------ in place on a view made in the mode (rebase)
def _direct_rebase(m, requires_grad, kind):
    s = m.ones(1, 2, 3, requires_grad=requires_grad)
    a = s.clone()
    with m.inference_mode():
        view_out = a.view(a.shape)
    record = []
    attempt(record, lambda: INPLACE[kind](view_out))
    return record


@pytest.mark.parametrize("kind", ["add_", "mul_"])
@pytest.mark.parametrize("requires_grad", [True, False])
def test_inplace_on_a_view_made_in_the_mode(requires_grad, kind):
    record = compare(_direct_rebase, requires_grad, kind)
    if requires_grad:
        assert record[0][2].startswith("A view was created in inference mode and is being modified inplace")
    else:
        assert record == ["ok"]


def _indirect_rebase(m, requires_grad, kind):
    s = m.ones(1, 2, 3, requires_grad=requires_grad)
    a = s.clone()
    with m.inference_mode():
        view_out = a.view(-1)
    INPLACE[kind](a)                # the base changes in normal mode
    record = []
    attempt(record, lambda: view_out.grad_fn)
    attempt(record, lambda: view_out * 2)       # any use that reads the view's history
    return record


@pytest.mark.parametrize("kind", ["add_", "mul_"])
@pytest.mark.parametrize("requires_grad", [True, False])
def test_base_changed_in_place_after_a_view_made_in_the_mode(requires_grad, kind):
    record = compare(_indirect_rebase, requires_grad, kind)
    if requires_grad:
        assert record[0][2].startswith("A view was created in inference mode and its base or another view of its "
                                       "base has been modified inplace in normal mode.")
    else:
        assert record == ["ok", "ok"]


# ------------------------------------------------------------------ the same rules for no_grad views
def _no_grad_view(m, where):
    a = m.ones(3, requires_grad=True).clone()
    with m.no_grad():
        v = a[:2]
    record = [facts(v)]
    if where == "direct":
        attempt(record, lambda: v.add_(1))
    elif where == "indirect":
        a.add_(1)
        attempt(record, lambda: v.grad_fn)
    elif where == "leaf base":
        leaf = m.ones(3, requires_grad=True)
        with m.no_grad():
            w = leaf[:2]
        record.append(facts(w))
        attempt(record, lambda: w.mul_(2))
        y = w * 3
        record.append((y.requires_grad, [fn is None for fn, _ in y.grad_fn.next_functions]))
    elif where == "inside no_grad":
        with m.no_grad():
            attempt(record, lambda: v.add_(1))
        attempt(record, lambda: v.grad_fn)      # the base's version moved: the history is stale
    return record


@pytest.mark.parametrize("where", ["direct", "indirect", "leaf base", "inside no_grad"])
def test_views_made_under_no_grad(where):
    record = compare(_no_grad_view, where)
    assert record[0] == (False, True, True, True)


def _view_of_view_after_the_mode(m, mode):
    a = m.ones(3, requires_grad=True).clone()
    with (m.inference_mode() if mode == "inference" else m.no_grad()):
        v = a[:2]
    w = v[:1]                       # made in normal mode from a view made in the mode: the stricter meta stays
    record = [facts(w), type(w.grad_fn).__name__]
    attempt(record, lambda: w.add_(1))
    a.mul_(2)
    attempt(record, lambda: w.grad_fn)
    return record


@pytest.mark.parametrize("mode", ["inference", "no_grad"])
def test_view_of_a_view_made_in_the_mode(mode):
    record = compare(_view_of_view_after_the_mode, mode)
    assert record[1] == "SliceBackward0"
    assert "is a view of a view which was created in" in record[2][2]


def _modes_nested(m):
    """A view made under no_grad inside inference_mode(False) inside inference_mode; then modified outside."""
    a = m.ones(3, requires_grad=True).clone()
    with m.inference_mode():
        with m.inference_mode(False):
            v1 = a[:1]                              # grad mode on again: an ordinary view
            with m.no_grad():
                v2 = a[1:]
    record = [facts(v1), facts(v2)]
    attempt(record, lambda: v1.mul_(2))
    attempt(record, lambda: v2.mul_(2))
    return record


def test_view_creation_follows_the_innermost_mode():
    record = compare(_modes_nested)
    assert record[2] == "ok"
    assert record[3][2].startswith("A view was created in no_grad mode")


def _gradients_still_flow(m):
    """Views made normally before and after an inference block still carry their gradients."""
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    a = x * 2
    before = a[:2]
    with m.inference_mode():
        _ = a[1:]                   # a view made in the mode and dropped changes nothing
    after = a[1:]
    (before.sum() + 3 * after.sum()).backward()
    return x.grad.tolist()


def test_gradients_through_normal_views_are_unaffected():
    assert compare(_gradients_still_flow) == [2.0, 8.0, 6.0]


def _is_inference_of_a_non_tensor(m):
    record = []
    attempt(record, lambda: m.is_inference("abc"))
    return record


def test_is_inference_refuses_a_non_tensor():
    assert compare(_is_inference_of_a_non_tensor)[0][1] == "TypeError"


# ------------------------------------------------------------------ views returned by a custom Function
def _custom_function_view(m, where):
    class FirstTwo(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x[:2]                # a view made inside forward

        @staticmethod
        def backward(ctx, g):
            grad = m.zeros(3)
            grad[:2].copy_(g)
            return grad

    x = m.ones(3, requires_grad=True)
    a = x.clone()
    o = FirstTwo.apply(a)
    record = [facts(o), type(o.grad_fn).__name__]
    if where == "direct":
        attempt(record, lambda: o.mul_(2))
    elif where == "indirect":
        a.mul_(2)
        attempt(record, lambda: o.grad_fn)
    elif where == "view of it":
        w = o[:1]
        attempt(record, lambda: w.mul_(2))
    else:
        (o * 2).sum().backward()
        record.append(x.grad.tolist())
    return record


@pytest.mark.parametrize("where", ["direct", "indirect", "view of it", "backward"])
def test_view_returned_by_a_custom_function(where):
    record = compare(_custom_function_view, where)
    if where != "backward":
        assert "This view was created inside a custom Function" in record[2][2]
    else:
        assert record[2] == [2.0, 2.0, 0.0]


def _derived_requires_grad(m, mode):
    """A view made in the mode requires grad through its base: clearing the flag does not change that."""
    x = m.ones(3, requires_grad=True)
    with (m.inference_mode() if mode == "inference" else m.no_grad()):
        v = x[:2]
    record = []
    attempt(record, lambda: v.numpy())
    attempt(record, lambda: v.requires_grad_(False))
    record.append((v.requires_grad, v.detach().requires_grad, v.clone().requires_grad))
    return record


@pytest.mark.parametrize("mode", ["inference", "no_grad"])
def test_view_made_in_the_mode_requires_grad_through_its_base(mode):
    record = compare(_derived_requires_grad, mode)
    assert record[2] == (True, False, True)


def _inference_tensor_flags(m):
    with m.inference_mode():
        c = m.ones(2, 3)
        inside = c.clone().requires_grad_().requires_grad          # allowed inside the mode
    record = [inside]
    attempt(record, lambda: c.requires_grad_())
    attempt(record, lambda: setattr(c, "requires_grad", True))
    attempt(record, lambda: c.requires_grad_(False))
    record.append((c.requires_grad, c.detach().is_inference(), c.clone().is_inference(), c.t().is_inference()))
    return record


def test_inference_tensor_cannot_start_requiring_grad_outside_the_mode():
    record = compare(_inference_tensor_flags)
    assert record[1][2] == "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed."
    assert record[4] == (False, True, False, True)


def _custom_function_returns_its_input(m, leaf):
    class Identity(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x                    # an input returned as-is

        @staticmethod
        def backward(ctx, g):
            return g * 3

    x = m.ones(3, requires_grad=True)
    a = x if leaf else x.clone()
    o = Identity.apply(a)
    record = [o is a, facts(o), type(o.grad_fn).__name__]
    attempt(record, lambda: o.mul_(2))
    (Identity.apply(a) * 1).sum().backward()
    record.append(x.grad.tolist())
    return record


@pytest.mark.parametrize("leaf", [True, False])
def test_input_returned_as_is_by_a_custom_function(leaf):
    record = compare(_custom_function_returns_its_input, leaf)
    assert record[1] == (False, True, True, False)
    assert "This view was created inside a custom Function (or because an input was returned as-is)" in record[3][2]
    assert record[4] == [3.0, 3.0, 3.0]
