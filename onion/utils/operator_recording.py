"""``onion.utils.record_operators()``: the operators and dtypes a program dispatches, as a selection.

PyTorch's tracing-based selective build records the operators a model runs and writes the
selected-operators YAML that the build reads; this is the same for ``python -m onion.codegen --select``.
Cost when off: none on the per-call path.  As ``onion.profiler`` does, starting clears every operator's
kernel caches and sets ``dispatcher.recorder``; the cache misses that follow (only those ask it) cache
kernels wrapped to record, and stopping clears the caches again so that the plain kernels come back.
Each operator call is recorded where it enters the dispatcher (not its redispatches), so composites and
the operators they call, and the operators backward runs, are all recorded.
"""
from __future__ import annotations

import contextlib
import threading

from ..dispatch.dispatcher import dispatcher as _dispatcher

_LOCK = threading.Lock()


def _tensor_dtypes(values, out: set) -> None:
    for v in values:
        impl = getattr(v, "_impl", None)
        if impl is not None:
            out.add(impl.dtype)
        elif isinstance(v, (list, tuple)):
            _tensor_dtypes(v, out)


class OperatorRecording:
    """What one ``record_operators`` block saw: ``operators`` maps ``add.Tensor`` to the dtypes (onion
    dtypes) of its tensor arguments (of its results, for an operator without tensor arguments)."""

    def __init__(self, path=None):
        self.path = path
        self.operators: dict = {}

    def _wrap(self, op, fn):
        if not op.name.startswith("aten::"):
            return fn                        # custom operators are not codegen's to select
        name = op.qualified_name[len("aten::"):]
        seen = self.operators.setdefault(name, set())

        def recording(ks, *args):
            got: set = set()
            _tensor_dtypes(args, got)
            result = fn(ks, *args)
            if not got:                      # a factory: the dtype it made
                _tensor_dtypes(result if isinstance(result, (list, tuple)) else (result,), got)
            seen.update(got)
            return result
        return recording

    def selection(self) -> dict:
        """{operator: sorted dtype names}."""
        return {n: sorted(str(d).replace("onion.", "") for d in dts) for n, dts in sorted(self.operators.items())}

    def write(self, path) -> None:
        """Write PyTorch's selected-operators YAML (``operators`` and ``kernel_metadata``)."""
        from ..codegen.selection import write_selection
        write_selection(str(path), self.operators, self.selection())


def _clear_caches() -> None:
    for h in list(_dispatcher.ops.values()):
        h.dispatch_cache.clear()
        h.redispatch_cache.clear()


@contextlib.contextmanager
def record_operators(path=None, *, dtypes: bool = True):
    """Record every aten operator (and dtype) dispatched inside the block; on exit write the selection to
    ``path`` (if given).  Yields the ``OperatorRecording``.  ``dtypes=False`` writes no ``kernel_metadata``
    (the build then keeps every dtype of the recorded operators)."""
    rec = OperatorRecording(path)
    with _LOCK:
        if _dispatcher.recorder is not None:
            raise RuntimeError("record_operators: a recording is already running")
        _dispatcher.recorder = rec._wrap
        _clear_caches()
    try:
        yield rec
    finally:
        with _LOCK:
            _dispatcher.recorder = None
            _clear_caches()
        if not dtypes:
            for v in rec.operators.values():
                v.clear()
        if path is not None:
            rec.write(path)


__all__ = ["record_operators", "OperatorRecording"]
