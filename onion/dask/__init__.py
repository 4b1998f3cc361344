"""``onion.dask``: tensors that outgrow one machine, on Dask (the ``dask`` device, PrivateUse2).

``import onion.dask`` registers the backend; then ``onion.ones(10**6, 4096, device="dask")`` is a chunked
``dask.array`` that nothing computes until a value is needed.  Where a value is needed:

- ``compute(*tensors)``: CPU tensors with the values (one Dask computation for all of them);
- ``persist(*tensors)``: computes them and keeps the chunks in memory (the cluster's when there is one),
  so that later graphs start from the values; returns the same tensors;
- ``.item()``, ``.tolist()``, printing, ``.to("cpu")``, ``.numpy(force=True)`` compute one tensor
  (``.numpy()`` without ``force`` refuses, as for every device but the CPU in PyTorch).  Printing computes
  the whole tensor (onion's printer reads a NumPy array): print a slice of one larger than memory.

Scheduling: Dask's local threaded scheduler by default; ``use_cluster(client_or_address)`` (a
``dask.distributed.Client``, a ``LocalCluster`` or a scheduler address) sends computations to a cluster,
as a setter or as a ``with`` block.  A cluster that is gone, or does not answer within ``set_timeout``
seconds, gives a RuntimeError, never a hang.  Chunks: ``set_chunk_size`` / ``chunk_size`` (Dask's
"auto" by default).  The design of storage, in-place operators and views: onion/backends/dask.py.
"""
from __future__ import annotations

import contextlib

from ..backends import dask as _backend
from ..backends.dask import DEVICE_TYPE, chunk_size, get_chunk_size, set_chunk_size
from ._kernels import manual_seed

__all__ = ["is_available", "manual_seed", "from_dask", "to_dask", "compute", "persist", "use_cluster", "client", "set_timeout", "set_chunk_size",
           "get_chunk_size", "chunk_size", "DEVICE_TYPE"]

_STATE = {"client": None, "owned": False, "timeout": None}


def is_available() -> bool:
    """Whether Dask (dask.array) is installed: the ``dask`` device can be used."""
    try:
        import dask.array  # noqa: F401
    except ImportError:         # pragma: no cover - this module imports dask.array already
        return False
    return True


def client():
    """The ``dask.distributed.Client`` computations go to, or None (Dask's local threaded scheduler)."""
    return _STATE["client"]


def set_timeout(seconds) -> None:
    """How long a computation on a cluster may take before it is abandoned with an error (None: no limit)."""
    _STATE["timeout"] = seconds


class _ClusterUse:
    """What ``use_cluster`` returns: already in effect; as a ``with`` block, undone at its end."""

    def __init__(self, before):
        self._before = before

    def __enter__(self):
        return _STATE["client"]

    def __exit__(self, *exc):
        if _STATE["owned"] and _STATE["client"] is not None:
            _STATE["client"].close()
        _STATE.update(self._before)
        return False


def use_cluster(target=None, *, timeout=None):
    """Send computations to a Dask cluster: a ``Client``, a cluster object (``LocalCluster``), a scheduler
    address ("tcp://host:8786"), or None for Dask's local threaded scheduler again."""
    before = dict(_STATE)
    owned = False
    if target is None:
        c = None
    else:
        from distributed import Client
        if isinstance(target, Client):
            c = target
        else:
            c = Client(target, set_as_default=False, timeout=timeout or "10s")
            owned = True
    _STATE.update(client=c, owned=owned)
    if timeout is not None:
        _STATE["timeout"] = timeout
    return _ClusterUse(before)


def _cluster_error(c, why) -> RuntimeError:
    addr = getattr(getattr(c, "scheduler", None), "address", None) or "?"
    return RuntimeError(f"dask backend: the dask.distributed cluster (scheduler {addr}) {why}; the computation "
                        f"was abandoned. Give onion.dask.use_cluster a running cluster, or None for the local "
                        f"scheduler.")


def _compute_arrays(arrays) -> tuple:
    import dask
    c = _STATE["client"]
    if c is None:
        return dask.compute(*arrays)
    if c.status not in ("running", "connecting"):
        raise _cluster_error(c, f"is not running (client status '{c.status}')")
    try:
        futures = c.compute(list(arrays))
        return tuple(c.gather(futures, errors="raise", asynchronous=False)
                     if _STATE["timeout"] is None else [f.result(timeout=_STATE["timeout"]) for f in futures])
    except (TimeoutError, OSError, dask.distributed.CancelledError if hasattr(dask, "distributed") else OSError) as e:
        raise _cluster_error(c, f"did not complete the computation ({type(e).__name__}: {e})") from None
    except Exception as e:  # noqa: BLE001 - a closed client raises its own kinds; say what happened
        if c.status not in ("running", "connecting"):
            raise _cluster_error(c, f"went away during the computation ({type(e).__name__}: {e})") from None
        raise


def _register() -> list:
    """PrivateUse2's kernels (the generated ones, CUDA's xp-generic kernels mirrored, come with the backend's
    registration) and onion/dask's own."""
    from ..aten import tensor_new
    from ..core.dispatch_key import K, tensor_keyset
    tensor_new._FRESH.setdefault(K.PrivateUse2, tensor_keyset(K.PrivateUse2))
    tensor_new._FRESH_INFERENCE.setdefault(K.PrivateUse2, tensor_keyset(K.PrivateUse2, inference=True))
    from . import _kernels
    _backend.COMPUTE[0] = _compute_arrays
    return _kernels.register()


_LIBS = _register()     # the Library objects (kept alive: a dropped Library unregisters its kernels)


def _dask_impls(tensors):
    from ..core.tensor import Tensor
    for t in tensors:
        if not isinstance(t, Tensor) or t.device.type != DEVICE_TYPE:
            raise TypeError(f"onion.dask expects tensors on the dask device, got "
                            f"{t.device if isinstance(t, Tensor) else type(t).__name__}")
    return [t._impl for t in tensors]


def from_dask(array, *, requires_grad: bool = False):
    """A dask tensor over a ``dask.array`` array (no copy, nothing computed): ``da.random``, ``da.from_zarr``..."""
    import dask.array as da

    from ..aten.tensor_new import wrap
    from ..core.device import device
    from ..core.dtype import from_numpy_dtype
    if not isinstance(array, da.Array):
        raise TypeError(f"from_dask expects a dask.array.Array, got {type(array).__name__}")
    t = wrap(da.Array(array.dask, array.name, array.chunks, meta=array._meta), from_numpy_dtype(array.dtype),
             device(DEVICE_TYPE))
    if requires_grad:
        t.requires_grad_(True)
    return t


def to_dask(tensor):
    """The ``dask.array`` array of a dask tensor's current value (a new array object over its graph)."""
    import dask.array as da
    a = _dask_impls([tensor])[0]._array
    return da.Array(a.dask, a.name, a.chunks, meta=a._meta)


def compute(*tensors):
    """The values of dask tensors as CPU tensors, computed together (shared work is done once)."""
    import numpy as np

    from ..aten.tensor_new import wrap_cpu
    impls = _dask_impls(tensors)
    values = _compute_arrays([i._array for i in impls])
    out = tuple(wrap_cpu(np.array(v, dtype=i.dtype.np, copy=True).reshape(i._array.shape), i.dtype)
                for v, i in zip(values, impls))
    return out[0] if len(out) == 1 else out


def persist(*tensors):
    """Compute dask tensors and keep their chunks (in memory, or on the cluster): later graphs start from
    the values.  The tensors keep their identity (autograd, views); returns them."""
    import dask

    from ..backends.dask import _rebind
    impls = _dask_impls(tensors)
    c = _STATE["client"]
    arrays = [i._array for i in impls]
    if c is None:
        done = dask.persist(*arrays)
    else:
        if c.status not in ("running", "connecting"):
            raise _cluster_error(c, f"is not running (client status '{c.status}')")
        done = c.persist(arrays)
    for a, p in zip(arrays, done):
        _rebind(a, p)
    return tensors[0] if len(tensors) == 1 else tensors


@contextlib.contextmanager
def _no_cluster():   # pragma: no cover - helper for tests
    before = dict(_STATE)
    _STATE.update(client=None, owned=False)
    try:
        yield
    finally:
        _STATE.update(before)
