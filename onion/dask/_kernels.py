"""Kernels the Dask backend adds on PrivateUse2, where the xp-generic ones do not apply.

- random fills (``normal_``, ``uniform_``, ``bernoulli_.float``): drawn chunk by chunk by Dask's
  generator (``onion.dask.manual_seed``), so a tensor larger than memory is never materialised;
- operators that need a whole dimension or the whole array: ``sort`` (each row along ``dim`` in one chunk,
  NumPy's stable sort per chunk), ``_unique2`` (Dask's ``unique``), ``nonzero`` (Dask's ``argwhere``, which
  computes the input: the result's size depends on its values, as on CUDA);
- a backend fallback: any other operator without a dask kernel raises a RuntimeError naming the operator
  and the dask backend (instead of the dispatcher's generic message).
"""
from __future__ import annotations

import dask.array as da
import numpy as np

from ..core import dtype as _dt
from ..dispatch.library import Library

_RNG = [None]


def manual_seed(seed: int) -> None:
    """Seed the generator dask tensors' random fills draw from."""
    _RNG[0] = da.random.default_rng(int(seed))


def _rng():
    if _RNG[0] is None:
        _RNG[0] = da.random.default_rng()
    return _RNG[0]


def _chunks(impl):
    return impl._array.chunks


def _fill(self, values):
    impl = self._impl
    impl.check_writable()
    from ..aten.iterator import check_internal_overlap
    check_internal_overlap(impl)
    impl._array[...] = values.astype(impl.dtype.np)
    impl.bump_version()
    return self


def _check_generator(generator):
    if generator is not None:
        raise RuntimeError(f"Expected a 'dask' device type for generator but found '{generator.device.type}'")


def _check_float(impl, kernel):
    if not impl.dtype.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{impl.dtype.scalar_type_name}\'')


def normal_(ks, self, mean=0.0, std=1.0, generator=None):
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    impl = self._impl
    _check_float(impl, "normal_kernel_cpu")
    _check_generator(generator)
    return _fill(self, _rng().normal(mean, std, size=impl._array.shape, chunks=_chunks(impl)))


def uniform_(ks, self, from_=0.0, to=1.0, generator=None):
    impl = self._impl
    _check_float(impl, "check_uniform_bounds")
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={from_} > to={to}")
    _check_generator(generator)
    return _fill(self, _rng().uniform(from_, to, size=impl._array.shape, chunks=_chunks(impl)))


def bernoulli__float(ks, self, p=0.5, generator=None):
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    _check_generator(generator)
    impl = self._impl
    return _fill(self, _rng().random(size=impl._array.shape, chunks=_chunks(impl)) < p)


def _factory(size, dtype, device, draw):
    from ..aten.tensor_new import wrap
    from ..core.dtype import get_default_dtype
    dt = dtype or get_default_dtype()
    if not dt.is_floating_point:
        raise NotImplementedError(f'"normal_kernel_cpu" not implemented for \'{dt.scalar_type_name}\'')
    from ..backends.dask import _chunks_for
    shape = tuple(int(s) for s in size)
    return wrap(draw(shape, _chunks_for(shape, dt.np)).astype(dt.np), dt, device)


def randn(ks, size, dtype=None, layout=None, device=None, pin_memory=None):
    return _factory(size, dtype, device, lambda s, c: _rng().standard_normal(size=s, chunks=c))


def randn_generator(ks, size, generator, dtype=None, layout=None, device=None, pin_memory=None):
    _check_generator(generator)
    return randn(ks, size, dtype, layout, device, pin_memory)


def rand(ks, size, dtype=None, layout=None, device=None, pin_memory=None):
    return _factory(size, dtype, device, lambda s, c: _rng().random(size=s, chunks=c))


def rand_generator(ks, size, generator, dtype=None, layout=None, device=None, pin_memory=None):
    _check_generator(generator)
    return rand(ks, size, dtype, layout, device, pin_memory)


def sort_stable(ks, self, stable=None, dim=-1, descending=False):
    from ..aten.tensor_new import wrap
    impl = self._impl
    a = impl._array
    nd = a.ndim
    if nd == 0:
        return wrap(a, impl.dtype, impl.device), wrap(da.zeros((), dtype=np.int64), _dt.int64, impl.device)
    d = dim + nd if dim < 0 else dim
    if not 0 <= d < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})")
    whole = a.rechunk({d: -1})

    def order(block):
        if descending:      # stable descending: reverse of a stable sort of the reversed block, reversed back
            r = np.flip(block, d)
            idx = np.argsort(r, axis=d, kind="stable")
            idx = block.shape[d] - 1 - idx
            return np.flip(idx, d)
        return np.argsort(block, axis=d, kind="stable")
    idx = whole.map_blocks(lambda b: order(b).astype(np.int64), dtype=np.int64)
    vals = da.map_blocks(lambda b, i: np.take_along_axis(b, i, axis=d), whole, idx, dtype=a.dtype)
    return wrap(vals, impl.dtype, impl.device), wrap(idx, _dt.int64, impl.device)


def _unique2(ks, self, sorted=True, return_inverse=False, return_counts=False):
    from ..aten.tensor_new import wrap
    impl = self._impl
    a = impl._array.reshape(-1)
    u = da.unique(a)
    u.compute_chunk_sizes()     # the number of distinct values is only known from the values
    dev = impl.device
    if return_inverse:
        inv = da.searchsorted(u, a).reshape(impl._array.shape).astype(np.int64)
    else:
        inv = da.zeros((0,), dtype=np.int64)
    if return_counts:
        counts = da.bincount(da.searchsorted(u, a), minlength=u.shape[0]).astype(np.int64)
        counts.compute_chunk_sizes()
    else:
        counts = da.zeros((0,), dtype=np.int64)
    return wrap(u, impl.dtype, dev), wrap(inv, _dt.int64, dev), wrap(counts, _dt.int64, dev)


def nonzero(ks, self):
    from ..aten.tensor_new import wrap
    impl = self._impl
    idx = da.argwhere(impl._array)
    idx.compute_chunk_sizes()   # the result's size depends on the values: computed now
    return wrap(idx.astype(np.int64), _dt.int64, impl.device)


def _unsupported(op, *args, **kwargs):
    raise RuntimeError(f"{op.name()}: the dask backend "
                       f"(PrivateUse2) has no kernel for this operator. Move the tensor to the CPU "
                       f"(tensor.to('cpu')) to run it there.")


def register() -> list:
    m = Library("aten", "IMPL", "PrivateUse2")
    for name, fn in (("normal_", normal_), ("uniform_", uniform_), ("bernoulli_.float", bernoulli__float),
                     ("sort.stable", sort_stable),
                     ("randn", randn), ("randn.generator", randn_generator), ("rand", rand),
                     ("rand.generator", rand_generator), ("_unique2", _unique2), ("nonzero", nonzero)):
        m.impl_kernel(name, fn)
    return [m, unsupported_fallback()]


def unsupported_fallback():
    """The backend fallback that names an operator the dask backend has no kernel for (a Library: dropping
    it with ``_destroy()`` takes the fallback away, and the dispatcher's own message comes back)."""
    fb = Library("_", "IMPL", "PrivateUse2")
    fb.fallback(_unsupported)
    return fb
