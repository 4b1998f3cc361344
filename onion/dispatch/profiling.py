"""The recorder behind ``onion.profiler``: operator and kernel events from the dispatcher.

Design (cost when off): the profiler never adds a check to the per-call path.  Every
operator entry indexes its ``KernelCache`` (keyset -> kernel) and calls what it finds;
only a cache *miss* reaches ``OperatorHandle.lookup``, which already asks the Dispatcher
whether tracing is on.  Starting the profiler sets ``dispatcher.profiler`` and clears every
operator's two caches; the misses that follow cache *wrapped* kernels (the top-level call's
kernel gets an operator event, a backend key's kernel a kernel event), so while profiling a
call costs one wrapper, and stopping clears the caches again so that the plain kernels come
back.  (PyTorch runs RecordFunction callbacks from ``Dispatcher::call`` behind a global
"any callbacks?" check; swapping cached kernels is cheaper in Python: no check at all.)
Autograd node events come the same way (``onion.autograd.profiler``): starting wraps each node
class's own ``apply`` and stopping puts the originals back, so the engine is never touched.  ``profile_memory`` counts the new
buffers each backend kernel returns, inside the kernel wrapper.
"""
from __future__ import annotations

import os
import threading
import time
import traceback
import weakref

from ..core.dispatch_key import BACKEND_KEYS, K

_BACKEND_KEYS = frozenset(int(k) for k in BACKEND_KEYS)
_COMPOSITE_EXPLICIT_KEYS = frozenset(int(k) for k in (K.CompositeExplicitAutograd,
                                                        K.CompositeExplicitAutogradNonFunctional))
_PYTHON_BIT = 1 << int(K.Python)
_BACKEND_NAMES = {int(K.CPU): "cpu", int(K.CUDA): "cuda", int(K.PrivateUse1): "privateuse1", int(K.Meta): "meta"}
_XP = {int(K.CPU): "numpy", int(K.CUDA): "cupy", int(K.PrivateUse1): "numpy", int(K.Meta): "meta"}
# backend key -> an object timing its kernels on the device (``kernel_timer_start() -> token``,
# ``kernel_timer_stop(token)``, ``kernel_timer_us(token)``): the CUDA backend registers one (CUDA events)
DEVICE_TIMERS: dict = {}

ACTIVE: list = [None]          # the recording Recorder, or None (read on cache misses and per backward())


class RawEvent:
    """One recorded interval; ``kind`` is ``"op"``, ``"kernel"``, ``"user"`` or ``"autograd"``."""

    __slots__ = ("name", "kind", "start_ns", "end_ns", "tid", "parent", "children", "handle", "python",
                 "input_shapes", "input_types", "stack", "mem", "id", "seq_nr", "kernels", "op", "depth",
                 "device")

    def __init__(self, name, kind, parent, tid, handle=None):
        self.name = name
        self.kind = kind
        self.parent = parent
        self.tid = tid
        self.handle = handle
        self.python = False
        self.children = []
        self.input_shapes = None
        self.input_types = None
        self.stack = None
        self.mem = 0
        self.id = 0
        self.seq_nr = -1
        self.kernels = []
        self.op = None
        self.end_ns = None
        self.device = None          # (timer, token) of a kernel timed on its device
        self.depth = 0 if parent is None else parent.depth + 1
        self.start_ns = time.perf_counter_ns()


def _shape_of(a):
    impl = getattr(a, "_impl", None)
    if impl is not None:
        return list(a.shape), str(impl.dtype).replace("onion.", "")
    if isinstance(a, (list, tuple)) and a and all(x is None or hasattr(x, "_impl") for x in a):
        return [list(x.shape) if x is not None else [] for x in a], "TensorList"
    return [], "Scalar" if isinstance(a, (int, float, complex, bool)) else ""


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _user_stack() -> list:
    """The caller's Python frames outside onion's package, innermost first (as PyTorch's ``stack``)."""
    out = []
    for fs in reversed(traceback.extract_stack()):
        if fs.filename.startswith(_PACKAGE_DIR):
            continue
        out.append(f"{fs.filename}({fs.lineno}): {fs.name}")
    return out


class Recorder:
    def __init__(self, record_shapes=False, with_stack=False, profile_memory=False):
        self.record_shapes = record_shapes
        self.with_stack = with_stack
        self.profile_memory = profile_memory
        self.events: list = []
        self._local = threading.local()
        self.t0_ns = time.perf_counter_ns()
        self.wall0_us = time.time_ns() / 1000.0
        self._buffers: dict = {}

    # --- the stack of open events (per thread) ---------------------------------------------------
    def top(self):
        return getattr(self._local, "top", None)

    def begin(self, name, kind, handle=None):
        parent = getattr(self._local, "top", None)
        ev = RawEvent(name, kind, parent, threading.get_ident(), handle)
        ev.id = len(self.events) + 1
        self.events.append(ev)
        if parent is not None:
            parent.children.append(ev)
        self._local.top = ev
        return ev

    def end(self, ev):
        ev.end_ns = time.perf_counter_ns()
        self._local.top = ev.parent

    # --- memory -----------------------------------------------------------------------------------
    def _record_alloc(self, nbytes):
        top = self.top()
        if top is not None:
            top.mem += nbytes

    def record_outputs(self, ev, args, result):
        """``profile_memory``: each new buffer a backend kernel returns counts once, as an allocation
        of that kernel (and so of its operator); when the buffer dies later in the profile, a release of
        whatever event is open then.  (Tensors hold their NumPy arrays directly, so the buffers are
        told apart by their owning arrays; outputs that are views of an input allocate nothing.)"""
        outs = result if isinstance(result, (tuple, list)) else (result,)
        inputs = None
        for t in outs:
            impl = getattr(t, "_impl", None)
            arr = getattr(impl, "_array", None)
            if arr is None or not hasattr(arr, "nbytes"):
                continue
            root = arr if arr.base is None else arr.base
            key = id(root)
            if key in self._buffers:
                continue
            if inputs is None:
                inputs = set()
                for a in args:
                    for x in (a if isinstance(a, (list, tuple)) else (a,)):
                        xa = getattr(getattr(x, "_impl", None), "_array", None)
                        if xa is not None:
                            inputs.add(id(xa if xa.base is None else xa.base))
            if key in inputs:
                continue
            try:
                self._buffers[key] = weakref.finalize(root, self._on_free, key, root.nbytes)
            except TypeError:
                continue
            ev.mem += root.nbytes

    def _on_free(self, key, nbytes):
        self._buffers.pop(key, None)
        if ACTIVE[0] is self:
            self._record_alloc(-nbytes)

    def forget_buffers(self):
        for fin in self._buffers.values():
            fin.detach()
        self._buffers = {}


def _clear_caches(dispatcher):
    for h in dispatcher.ops.values():
        h.dispatch_cache.clear()
        h.redispatch_cache.clear()


def start(rec: Recorder, dispatcher) -> None:
    if ACTIVE[0] is not None:
        raise RuntimeError("Profiler is already enabled on this thread: stop the running profiler before "
                           "starting another one")
    ACTIVE[0] = rec
    dispatcher.profiler = rec
    _clear_caches(dispatcher)


def stop(rec: Recorder, dispatcher) -> None:
    if ACTIVE[0] is not rec:
        return
    ACTIVE[0] = None
    dispatcher.profiler = None
    rec.forget_buffers()
    _clear_caches(dispatcher)
    # events left open (an exception escaped a record_function block) end now
    now = time.perf_counter_ns()
    for ev in rec.events:
        if ev.end_ns is None:
            ev.end_ns = now


# --- the wrappers OperatorHandle.lookup caches while profiling ---------------------------------------
def profiled_kernel(op, fn, key: int, redispatch: bool, entry=None):
    """``fn`` wrapped for the recording profiler: a top-level call records an operator event, a backend
    key's kernel a kernel event (both when a top-level call lands on a backend kernel directly)."""
    wrapped = fn
    reg = getattr(entry, "registration", None)
    # a custom operator's kernel is the user's Python function, not a backend function: its own operators
    # record themselves (as in PyTorch, where it shows no kernel event of its own)
    if key in _BACKEND_KEYS and (reg is None or int(reg.key) in _BACKEND_KEYS) and op.name.startswith("aten::"):
        wrapped = _kernel_wrapper(op, fn, key)
    elif key in _BACKEND_KEYS and int(reg.key) in _COMPOSITE_EXPLICIT_KEYS:
        wrapped = _composite_kernel_wrapper(op, fn, key)
    if not redispatch:
        wrapped = _op_wrapper(op, wrapped)
    return wrapped


def _op_wrapper(op, fn):
    name = op.name

    def profiled_op(ks, *args):
        rec = ACTIVE[0]
        if rec is None:
            return fn(ks, *args)
        top = rec.top()
        if top is not None and top.handle is op and top.python:
            # a TorchDispatchMode / subclass redispatching the operator it was handed: counted once
            return fn(ks, *args)
        ev = rec.begin(name, "op", op)
        ev.python = bool(ks & _PYTHON_BIT)
        if rec.record_shapes:
            pairs = [_shape_of(a) for a in args]
            ev.input_shapes = [p[0] for p in pairs]
            ev.input_types = [p[1] for p in pairs]
        if rec.with_stack:
            ev.stack = _user_stack()
        try:
            return fn(ks, *args)
        finally:
            rec.end(ev)
    return profiled_op


_KERNEL_NAMES: dict = {}


def kernel_name(op, fn, key: int) -> str:
    """The backend function that runs: a ufunc's NumPy function, or the ``*_impl`` a structured kernel
    calls, else the registered kernel's own name."""
    cached = _KERNEL_NAMES.get((id(fn), key))
    if cached is not None:
        return cached
    xp = _XP.get(key, "numpy")
    name = None
    formula = _find_formula(fn, 3)
    if formula is not None:
        plain = getattr(formula, "plain", "")
        fname = getattr(getattr(formula, "fn", None), "__name__", "")
        if isinstance(plain, str) and plain:
            name = plain
        elif fname and not fname.startswith(("<", "_")) and fname != "fn":
            name = fname
        else:
            name = getattr(formula, "name", None) or None
    if name is None:
        code = getattr(fn, "__code__", None)
        impls = [n for n in (code.co_names if code else ()) if n.endswith("_impl")]
        name = impls[0] if impls else getattr(fn, "__name__", op.name.split("::")[-1])
    result = f"{xp}.{name}"
    _KERNEL_NAMES[(id(fn), key)] = result
    return result


def _find_formula(fn, depth: int):
    """The ``UfuncFormula`` a ufunc kernel closes over (directly or through its helpers)."""
    for cell in (getattr(fn, "__closure__", None) or ()):
        try:
            v = cell.cell_contents
        except ValueError:
            continue
        if type(v).__name__ == "UfuncFormula":
            return v
        f = getattr(v, "formula", None)
        if type(f).__name__ == "UfuncFormula":
            return f
    if depth > 0:
        for cell in (getattr(fn, "__closure__", None) or ()):
            try:
                v = cell.cell_contents
            except ValueError:
                continue
            if callable(v) and getattr(v, "__closure__", None):
                found = _find_formula(v, depth - 1)
                if found is not None:
                    return found
    return None


def _first_dtype(args):
    for a in args:
        impl = getattr(a, "_impl", None)
        if impl is not None:
            return str(impl.dtype).replace("onion.", "")
        if isinstance(a, (list, tuple)):
            for x in a:
                impl = getattr(x, "_impl", None)
                if impl is not None:
                    return str(impl.dtype).replace("onion.", "")
    return None


def _kernel_wrapper(op, fn, key: int):
    # a backend running kernels asynchronously on a device (CUDA) also times each one there: two events
    # recorded on the stream around the launch, read when the profile becomes events
    timer = DEVICE_TIMERS.get(key)
    base = kernel_name(op, fn, key)
    backend = _BACKEND_NAMES.get(key, "cpu")

    def profiled_backend_kernel(ks, *args):
        rec = ACTIVE[0]
        if rec is None:
            return fn(ks, *args)
        dt = _first_dtype(args)
        owner = rec.top()
        ev = rec.begin(f"{base} <{dt}>" if dt else base, "kernel", op)
        ev.input_types = [backend]
        while owner is not None and owner.kind != "op":
            owner = owner.parent
        if owner is not None:
            ev.op = owner
            owner.kernels.append(ev)
        token = timer.kernel_timer_start() if timer is not None else None
        try:
            result = fn(ks, *args)
            if rec.profile_memory:
                rec.record_outputs(ev, args, result)
            return result
        finally:
            if token is not None:
                timer.kernel_timer_stop(token)
                ev.device = (timer, token)
            rec.end(ev)
    return profiled_backend_kernel


def _composite_kernel_wrapper(op, fn, key: int):
    """A CompositeExplicitAutograd kernel serving a backend key: when it computes the result itself (no
    operator called inside, and a new buffer out rather than a view of an input) it was the backend kernel
    launch, so it gets a kernel event (``numpy.sum <float32>``); one that only calls other operators or
    makes a view launches nothing of its own, and its operators' kernels have their events."""
    base = f"{_XP.get(key, 'numpy')}.{op.name.split('::')[-1].split('.')[0]}"
    backend = _BACKEND_NAMES.get(key, "cpu")

    def profiled_composite_kernel(ks, *args):
        rec = ACTIVE[0]
        if rec is None:
            return fn(ks, *args)
        n = len(rec.events)
        start = time.perf_counter_ns()
        result = fn(ks, *args)
        end = time.perf_counter_ns()
        if len(rec.events) != n or not _makes_new_buffer(args, result):
            return result
        owner = rec.top()
        ev = RawEvent(_composite_kernel_name(base, args, result), "kernel", owner, threading.get_ident(), op)
        ev.start_ns, ev.end_ns = start, end
        ev.id = n + 1
        ev.input_types = [backend]
        rec.events.append(ev)
        if owner is not None:
            owner.children.append(ev)
        while owner is not None and owner.kind != "op":
            owner = owner.parent
        if owner is not None:
            ev.op = owner
            owner.kernels.append(ev)
        if rec.profile_memory:
            rec.record_outputs(ev, args, result)
        return result
    return profiled_composite_kernel


def _roots(values) -> set:
    out = set()
    for v in values:
        for x in (v if isinstance(v, (list, tuple)) else (v,)):
            arr = getattr(getattr(x, "_impl", None), "_array", None)
            if arr is not None and hasattr(arr, "base"):
                out.add(id(arr if arr.base is None else arr.base))
    return out


def _makes_new_buffer(args, result) -> bool:
    outs = _roots((result,) if not isinstance(result, (tuple, list)) else result)
    return bool(outs - _roots(args))


def _composite_kernel_name(base, args, result) -> str:
    dt = _first_dtype(args) or _first_dtype(result if isinstance(result, (tuple, list)) else (result,))
    return f"{base} <{dt}>" if dt else base
