"""The per-thread dispatch state (onion/core/tls.py): snapshots in a ContextVar, per thread, restored by guards.

Worked values only (no PyTorch): what each thread, task and guard sees.
"""
from __future__ import annotations

import asyncio
import contextvars
import threading

import onion
from onion.core import tls
from onion.core.dispatch_key import AUTOGRAD_MASK, K


def _in_thread(fn):
    out = []
    t = threading.Thread(target=lambda: out.append(fn()))
    t.start()
    t.join()
    return out[0]


def test_a_new_thread_starts_from_the_defaults():
    with onion.inference_mode():
        inside = (onion.is_grad_enabled(), onion.is_inference_mode_enabled())
        other = _in_thread(lambda: (onion.is_grad_enabled(), onion.is_inference_mode_enabled(),
                                    tls.state() is tls.DEFAULT))
    assert inside == (False, True)
    assert other == (True, False, True)
    assert tls.state() is tls.DEFAULT


def test_a_change_in_one_thread_is_not_seen_by_another():
    started, release = threading.Event(), threading.Event()
    seen = []

    def worker():
        onion.set_grad_enabled(False)
        started.set()
        release.wait()
        seen.append(onion.is_grad_enabled())

    t = threading.Thread(target=worker)
    t.start()
    started.wait()
    main_during = onion.is_grad_enabled()
    release.set()
    t.join()
    assert (main_during, seen) == (True, [False])


def test_states_are_interned_so_transitions_do_not_pile_up():
    st = tls.state()
    for _ in range(100):
        with onion.no_grad():
            pass
    assert tls.state() is st
    assert st.with_grad(False).with_grad(True) is st
    assert st.below_autograd.exclude == st.exclude | AUTOGRAD_MASK
    assert st.below_autograd is st.below_autograd
    autocast_cpu = 1 << int(K.AutocastCPU)
    with onion.autocast("cpu"):
        on = tls.state()
    assert not on.exclude & autocast_cpu
    below = on.excluding(autocast_cpu)      # what an Autocast kernel runs its operator under
    assert below is not on and below.exclude == on.exclude | autocast_cpu and below.include == on.include
    assert below.grad_enabled is on.grad_enabled and below.inference_mode is on.inference_mode
    assert on.excluding(autocast_cpu) is below is on.with_exclude(on.exclude | autocast_cpu)


def test_guards_restore_on_exceptions():
    before = tls.state()
    try:
        with onion.inference_mode():
            with onion.enable_grad():
                raise ValueError("boom")
    except ValueError:
        pass
    assert tls.state() is before


def test_a_recording_kernel_restores_the_state_when_the_op_fails():
    a = onion.ones(2, requires_grad=True)
    before = tls.state()
    try:
        onion.add(a, onion.ones(3))
    except RuntimeError:
        pass
    assert tls.state() is before


def test_asyncio_tasks_keep_their_own_grad_mode():
    async def disabled(flag):
        with onion.no_grad():
            flag.set()
            await asyncio.sleep(0)
            return onion.is_grad_enabled()

    async def other(flag):
        await flag.wait()
        return onion.is_grad_enabled()

    async def main():
        flag = asyncio.Event()
        return await asyncio.gather(disabled(flag), other(flag))

    assert asyncio.run(main()) == [False, True]


def test_a_copied_context_run_elsewhere_does_not_write_back():
    ctx = contextvars.copy_context()
    assert _in_thread(lambda: ctx.run(lambda: (onion.set_grad_enabled(False), onion.is_grad_enabled())[1])) is False
    assert onion.is_grad_enabled()
