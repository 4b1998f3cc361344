"""CUDA kernels of the random operators, drawing from the device's generator (CuPy's, seeded by
``onion.cuda.manual_seed``) so that the numbers are made on the GPU.

The checks (argument ranges, dtypes, PyTorch's messages) are the CPU kernels' own; only the drawing
differs.  PyTorch's CUDA stream of numbers (Philox with per-kernel offsets) is not reproduced: seeded
draws repeat from run to run in onion, but do not equal PyTorch's CUDA draws.  Registered as an
extension registers its kernels (``Library("aten", "IMPL", "CUDA")``), when a CUDA backend is installed.
"""
from __future__ import annotations

import math

import numpy as np

from ..aten import iterator as _it
from ..aten.native import random as _r
from ..backends.base import BACKENDS
from ..core import dtype as _dt

_U64 = (1 << 64) - 1


def _rng(impl, generator):
    if generator is not None:
        dev = getattr(generator, "device", None)
        kind = getattr(dev, "type", "cpu")
        if kind != "cuda":
            raise RuntimeError(f"Expected a 'cuda' device type for generator but found '{kind}'")
    backend = BACKENDS["cuda"]
    return backend, backend.rng(impl.device.index or 0)


def _draw_dtype(dt):
    return np.float64 if dt is _dt.float64 else np.float32


def _store(impl, values) -> None:
    """Write device ``values`` (flat, one per element) into the tensor, cast to its dtype."""
    arr = impl._array
    _it.xp_copy(arr, values.reshape(arr.shape))


def _no_complex(impl, name):
    if impl.dtype.is_complex:
        raise NotImplementedError(f'"{name}" not implemented for \'{impl.dtype.scalar_type_name}\' on CUDA in onion')


def uniform_(ks, self, from_, to, generator):
    impl = _r._begin_inplace(self)
    _no_complex(impl, "uniform_kernel_cuda")
    _r._float_digits(impl.dtype, "check_uniform_bounds")
    _r._check_uniform(impl.dtype, from_, to)
    n = impl._array.size
    if n:
        b, g = _rng(impl, generator)
        u = g.random(n, dtype=_draw_dtype(impl.dtype))
        _store(impl, u * (to - from_) + from_)
    return _r._finish(self)


def normal_(ks, self, mean, std, generator):
    impl = _r._begin_inplace(self)
    _r._check_normal_std(std)
    _no_complex(impl, "normal_kernel_cuda")
    _r._float_digits(impl.dtype, "normal_kernel_cuda")
    n = impl._array.size
    if n:
        b, g = _rng(impl, generator)
        _store(impl, g.standard_normal(n, dtype=_draw_dtype(impl.dtype)) * std + mean)
    return _r._finish(self)


def log_normal_(ks, self, mean, std, generator):
    impl = _r._float_inplace(self, "log_normal_cuda")
    if not std > 0.0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_r._g(std)}")
    n = impl._array.size
    if n:
        b, g = _rng(impl, generator)
        _store(impl, b.xp.exp(g.standard_normal(n, dtype=_draw_dtype(impl.dtype)) * std + mean))
    return _r._finish(self)


def exponential_(ks, self, lambd, generator):
    impl = _r._begin_inplace(self)
    if not (lambd > 0 and not math.isinf(lambd)):
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_r._g(lambd)}")
    if impl.dtype.category != 2:
        raise NotImplementedError(f'"exponential_cuda" not implemented for \'{impl.dtype.scalar_type_name}\'')
    n = impl._array.size
    if n:
        b, g = _rng(impl, generator)
        _store(impl, g.standard_exponential(n, dtype=_draw_dtype(impl.dtype)) / lambd)
    return _r._finish(self)


def bernoulli__float(ks, self, p, generator):
    impl = _r._begin_inplace(self)
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_r._g(p)}")
    _r._bernoulli_dtype_check(impl.dtype, "bernoulli_scalar_cuda_")
    n = impl._array.size
    if n:
        b, g = _rng(impl, generator)
        _store(impl, g.random(n, dtype=np.float64) < p)
    return _r._finish(self)


def bernoulli__Tensor(ks, self, p, generator):
    impl = _r._begin_inplace(self)
    pi = p._impl
    if pi.dtype.category != 2:
        raise NotImplementedError(f'"bernoulli_tensor_cuda_p_" not implemented for \'{pi.dtype.scalar_type_name}\'')
    _r._bernoulli_dtype_check(impl.dtype, "bernoulli_tensor_cuda_self_")
    shape = tuple(impl._array.shape)
    _r._check_expandable(tuple(pi._array.shape), shape)
    n = impl._array.size
    if n:
        b, g = _rng(impl, generator)
        probs = b.xp.broadcast_to(b.asarray(pi._array, impl.device), shape)
        if not bool(((probs >= 0) & (probs <= 1)).all()):
            _r._check_probabilities(np.array([2.0]))        # PyTorch's message
        u = g.random(shape, dtype=np.float64 if pi.dtype is _dt.float64 else np.float32)
        _store(impl, u < probs)
    return _r._finish(self)


def bernoulli_out(ks, self, generator, out):
    _r._check_copy_device(self, out)
    _it.resize_out(out, tuple(self._impl._array.shape))
    return bernoulli__Tensor(ks, out, self, generator)


def _random_range(impl, from_, to):
    """(low, number of values) of random_ / random_.from / random_.to for the tensor's dtype, checked and
    adjusted (a floating dtype's bounds moved to values it holds) as the CPU kernel does."""
    dt = impl.dtype
    if to is not None:
        if not from_ < to:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={from_} >= to={to}")
        if dt.category == 2:
            _r._float_digits(dt, "random_update_from_to")
            from_, to = _r._update_from(from_, dt), _r._update_to(to, dt)
            if not from_ < to:
                raise RuntimeError("random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, "
                                   f"but got from={from_} >= to={to}")
        _r._check_from_to_in_range(from_, to - 1, dt)
        return from_, to - from_
    if from_ != -(1 << 63):
        if dt.category == 2:
            to_inc = min(1 << _r._float_digits(dt, "random_update_from_to"), (1 << 63) - 1)
            from_ = _r._update_from(from_, dt)
            if not from_ < to_inc:
                raise RuntimeError("random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' "
                                   f"casted to dtype, but got from={from_} > to_inc={to_inc}")
        else:
            to_inc = _r._INT_RANGE[dt.name][1]
        _r._check_from_to_in_range(from_, to_inc, dt)
        return from_, to_inc - from_ + 1
    if dt.name not in ("int64", "float64", "float32", "bfloat16"):
        raise RuntimeError("random_full_64_bits_range_kernel_cuda handles only int64, double, float and bfloat16")
    return from_, 1 << 64


def random__from(ks, self, from_, to, generator):
    impl = _r._begin_inplace(self)
    _r._random_dtype_check(impl.dtype, "random_from_to_kernel_cuda")
    low, span = _random_range(impl, from_, to)
    n = impl._array.size
    if n:
        b, g = _rng(impl, generator)
        xp = b.xp
        if span < (1 << 62):
            vals = g.integers(0, span, n, dtype=np.int64) + low if -(1 << 62) < low < (1 << 62) else \
                (g.integers(0, span, n, dtype=np.int64).astype(np.uint64) + np.uint64(low & _U64)).view(np.int64)
        else:                                   # a span past int64: 64 random bits, wrapped as C++'s uint64
            bits = (g.integers(0, 1 << 32, n, dtype=np.int64).astype(np.uint64) << np.uint64(32)) | \
                g.integers(0, 1 << 32, n, dtype=np.int64).astype(np.uint64)
            if span != 1 << 64:
                bits = bits % np.uint64(span)
            vals = (bits + np.uint64(low & _U64)).view(np.int64)
        _store(impl, vals if impl.dtype.category != 2 else vals.astype(xp.float64))
    return _r._finish(self)


def random__to(ks, self, to, generator):
    return random__from(ks, self, 0, to, generator)


def random_(ks, self, generator):
    return random__from(ks, self, 0, None, generator)


def randperm_generator_out(ks, n, generator, out):
    _it.refuse_barebones_unsigned("randperm", out._impl)
    _r._check_randperm(n, out._impl.dtype)
    _it.resize_out(out, (n,))
    impl = out._impl
    if n:
        b, g = _rng(impl, generator)
        _store(impl, b.xp.argsort(g.random(n, dtype=np.float64)))
    return _r._finish(out)


# --- the factories: PyTorch's CompositeExplicitAutograd bodies call the in-place kernels directly, so the
# CUDA key gets its own (an empty tensor on the device, then the kernel above)
def _new(size, dtype, device, default=None):
    return _r._new(size, dtype, device, default)


def rand_generator(ks, size, generator, dtype, layout, device, pin_memory):
    return uniform_(ks, _new(size, dtype, device), 0.0, 1.0, generator)


def rand(ks, size, dtype, layout, device, pin_memory):
    return rand_generator(ks, size, None, dtype, layout, device, pin_memory)


def randn_generator(ks, size, generator, dtype, layout, device, pin_memory):
    return normal_(ks, _new(size, dtype, device), 0.0, 1.0, generator)


def randn(ks, size, dtype, layout, device, pin_memory):
    return randn_generator(ks, size, None, dtype, layout, device, pin_memory)


def normal_float_float(ks, mean, std, size, generator, dtype, layout, device, pin_memory):
    return normal_(ks, _new(size, dtype, device), mean, std, generator)


def rand_like_generator(ks, self, generator, dtype, layout, device, pin_memory, memory_format):
    return uniform_(ks, _r._like(self, dtype, device, memory_format), 0.0, 1.0, generator)


def rand_like(ks, self, dtype, layout, device, pin_memory, memory_format):
    return rand_like_generator(ks, self, None, dtype, layout, device, pin_memory, memory_format)


def randn_like_generator(ks, self, generator, dtype, layout, device, pin_memory, memory_format):
    return normal_(ks, _r._like(self, dtype, device, memory_format), 0.0, 1.0, generator)


def randn_like(ks, self, dtype, layout, device, pin_memory, memory_format):
    return randn_like_generator(ks, self, None, dtype, layout, device, pin_memory, memory_format)


def randint_low_generator(ks, low, high, size, generator, dtype, layout, device, pin_memory):
    return random__from(ks, _new(size, dtype, device, _dt.int64), low, high, generator)


def randint_low(ks, low, high, size, dtype, layout, device, pin_memory):
    return randint_low_generator(ks, low, high, size, None, dtype, layout, device, pin_memory)


def randint_generator(ks, high, size, generator, dtype, layout, device, pin_memory):
    return randint_low_generator(ks, 0, high, size, generator, dtype, layout, device, pin_memory)


def randint(ks, high, size, dtype, layout, device, pin_memory):
    return randint_low_generator(ks, 0, high, size, None, dtype, layout, device, pin_memory)


def randint_like_low_generator_dtype(ks, self, low, high, generator, dtype, layout, device, pin_memory,
                                     memory_format):
    return random__from(ks, _r._like(self, dtype, device, memory_format), low, high, generator)


def randint_like_low_dtype(ks, self, low, high, dtype, layout, device, pin_memory, memory_format):
    return randint_like_low_generator_dtype(ks, self, low, high, None, dtype, layout, device, pin_memory,
                                            memory_format)


def randint_like_generator(ks, self, high, generator, dtype, layout, device, pin_memory, memory_format):
    return randint_like_low_generator_dtype(ks, self, 0, high, generator, dtype, layout, device, pin_memory,
                                            memory_format)


def randint_like(ks, self, high, dtype, layout, device, pin_memory, memory_format):
    return randint_like_low_generator_dtype(ks, self, 0, high, None, dtype, layout, device, pin_memory,
                                            memory_format)


def bernoulli(ks, self, generator):
    return bernoulli__Tensor(ks, _r._like(self, None, None, "contiguous_format"), self, generator)


def randperm_generator(ks, n, generator, dtype, layout, device, pin_memory):
    dt = dtype if dtype is not None else _dt.int64
    out = _r.empty_tensor(_r._check_size((n,)), dt, _r.canonical(device))
    _r._check_randperm(n, dt)
    return randperm_generator_out(ks, n, generator, out)


def randperm(ks, n, dtype, layout, device, pin_memory):
    return randperm_generator(ks, n, None, dtype, layout, device, pin_memory)


KERNELS = {
    "rand": rand, "rand.generator": rand_generator, "randn": randn, "randn.generator": randn_generator,
    "normal.float_float": normal_float_float, "rand_like": rand_like, "rand_like.generator": rand_like_generator,
    "randn_like": randn_like, "randn_like.generator": randn_like_generator,
    "randint": randint, "randint.generator": randint_generator, "randint.low": randint_low,
    "randint.low_generator": randint_low_generator, "randint_like": randint_like,
    "randint_like.generator": randint_like_generator, "randint_like.low_dtype": randint_like_low_dtype,
    "randint_like.low_generator_dtype": randint_like_low_generator_dtype, "bernoulli": bernoulli,
    "randperm": randperm, "randperm.generator": randperm_generator,
    "uniform_": uniform_, "normal_": normal_, "log_normal_": log_normal_, "exponential_": exponential_,
    "bernoulli_.float": bernoulli__float, "bernoulli_.Tensor": bernoulli__Tensor, "bernoulli.out": bernoulli_out,
    "random_.from": random__from, "random_.to": random__to, "random_": random_,
    "randperm.generator_out": randperm_generator_out,
}


def register():
    """A ``Library`` holding these kernels for the CUDA key (``_destroy()`` undoes it)."""
    from ..dispatch.library import Library
    lib = Library("aten", "IMPL", "CUDA")
    for name, fn in KERNELS.items():
        lib.impl_kernel(name, fn)
    return lib
