"""The test harness itself (tests/conftest.py): the state check, the torch stand-in, the sum bound."""
import numpy as np
import pytest

import conftest
import onion
from conftest import _compare_state, _NoTorch, TorchMissing, float32_sum_reference, global_state
from onion.library import Library


def test_state_check_sees_a_registration_and_its_undoing():
    before = global_state()
    lib = Library("onion_harness", "DEF")
    try:
        lib.define("noop(Tensor x) -> Tensor")
        lib.impl("noop", lambda x: x, "CPU")
        during = global_state()
        changed = {k for k in before if during[k] != before[k]}
        assert changed == {"operators", "kernels", "library namespaces (DEF)"}
        with pytest.raises(pytest.fail.Exception, match="left global state changed"):
            _compare_state(before, during, "here")
    finally:
        lib._destroy()
    _compare_state(before, global_state(), "after _destroy")


def test_state_check_sees_default_dtype_and_grad_mode():
    before = global_state()
    with conftest.default_dtype("float64"):
        assert global_state()["onion default dtype"] is onion.float64
    with onion.no_grad():
        assert global_state()["onion thread-local state"] != before["onion thread-local state"]
    _compare_state(before, global_state(), "after the blocks")


def test_torch_stand_in_cannot_pass_for_an_error_of_torch():
    """Helpers that compare the two libraries' errors catch Exception; the stand-in's error is not one."""
    fake = _NoTorch()
    assert not fake
    with pytest.raises(TorchMissing, match="must be marked @pytest.mark.oracle"):
        try:
            fake.ones(2)
        except Exception:           # noqa: BLE001 - what conftest.outcome does
            pytest.fail("the stand-in's error was caught as an ordinary exception")
    with pytest.raises(AttributeError):
        fake.__test__               # pytest's probes see a plain missing attribute


def test_float32_sum_reference_worked_values():
    exact, bound = float32_sum_reference([1.0, 2.0, 3.0, 4.0])
    assert exact == 10.0
    assert bound == pytest.approx((3 * 10.0 + 10.0) * 2.0 ** -24)    # min(n - 1, depth) u sum|x| + u |sum|
    exact, bound = float32_sum_reference(np.array([[1.0, -1.0], [2.0, 4.0]]), axis=0, mean=True)
    np.testing.assert_array_equal(exact, [1.5, 1.5])
    assert bound.shape == (2,) and (bound > 0).all()
