"""The CPU random number generator: PyTorch's mt19937 stream, drawn in blocks through NumPy.

PyTorch's CPU generator is a 32-bit Mersenne Twister seeded with the reference ``init_genrand``
(the low 32 bits of the seed); 64-bit draws join two consecutive 32-bit draws, the first as the high
half.  NumPy's ``MT19937`` bit generator runs the same recurrence and tempering, so once its 624-word
key is set to PyTorch's it yields PyTorch's stream, a whole array per call.  What PyTorch keeps next
to the engine (the seed it was made from, the cached second Box-Muller sample) lives here, and
``get_state``/``set_state`` use PyTorch's byte layout (``CPUGeneratorImplState``, 5056 bytes), so
states move between the two libraries.
"""
from __future__ import annotations

import os
import time

import numpy as np

from . import loops
from .device import canonical

DEFAULT_RNG_SEED = 67280421310721          # PyTorch's default_rng_seed_val
_N = 624                                   # MERSENNE_STATE_N
_U64 = (1 << 64) - 1

# CPUGeneratorImplState: the legacy THGeneratorState POD followed by the float normal cache.
STATE_DTYPE = np.dtype({
    "names": ["the_initial_seed", "left", "seeded", "next", "state", "normal_x", "normal_y", "normal_rho",
              "normal_is_valid", "next_float_normal_sample", "is_next_float_normal_sample_valid"],
    "formats": ["<u8", "<i4", "<i4", "<u8", ("<u8", (_N,)), "<f8", "<f8", "<f8", "<i4", "<f4", "u1"],
    "offsets": [0, 8, 12, 16, 24, 24 + 8 * _N, 32 + 8 * _N, 40 + 8 * _N, 48 + 8 * _N, 52 + 8 * _N,
                56 + 8 * _N],
    "itemsize": 64 + 8 * _N,
})
STATE_SIZE = STATE_DTYPE.itemsize          # 5056, as sizeof(CPUGeneratorImplState)


def nondeterministic_seed() -> int:
    """A fresh seed from the OS (PyTorch's getNonDeterministicRandom reads /dev/urandom too)."""
    try:
        return int.from_bytes(os.urandom(8), "little") & ((1 << 63) - 1)
    except NotImplementedError:     # pragma: no cover - no OS randomness
        return time.time_ns() & ((1 << 63) - 1)


class Generator:
    """``torch.Generator``: one mt19937 stream.  Only CPU generators hold a stream here."""

    __slots__ = ("_device", "_bg", "_draw", "_low", "_unseeded", "_seed", "_fresh_next", "next_double_normal_sample",
                 "next_float_normal_sample", "__weakref__")

    def __init__(self, device="cpu"):
        dev = canonical(device)
        if dev.type != "cpu":
            raise RuntimeError(f"{dev.type.upper()} device type not an accelerator.")
        self._device = dev
        self._bg = self._draw = self._low = None
        self._reseed(DEFAULT_RNG_SEED)

    def _engine(self):
        """The mt19937 stream (a NumPy ``MT19937``), made and seeded on first use: ``numpy.random`` and
        the seeding cost about a tenth of ``import onion``, and most programs seed before they draw."""
        bg = self._bg
        if bg is None:
            from numpy.random import MT19937, Generator as NumpyGenerator
            bg = self._bg = MT19937(0)
            self._draw = NumpyGenerator(bg).integers     # full-range integers are the raw stream
        if self._unseeded:
            from numpy.random import RandomState
            key = RandomState(self._seed & 0xFFFFFFFF).get_state()[1]     # init_genrand, as mt19937(seed)
            bg.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": _N}}
            self._unseeded = False
        return bg

    # --- seeding ------------------------------------------------------------------------------
    def _reseed(self, seed: int) -> None:
        seed &= _U64
        self._unseeded = True           # the stream is seeded from ``_seed`` when next used
        self._seed = seed
        self._fresh_next = 0            # PyTorch's next_ while the first block is still to be made
        self.next_double_normal_sample = None
        self.next_float_normal_sample = None

    def manual_seed(self, seed) -> "Generator":
        if not isinstance(seed, (int, np.integer)):
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        seed = int(seed)
        if not -(1 << 63) <= seed < (1 << 64):
            raise ValueError("Overflow when unpacking long long")
        self._reseed(seed)
        return self

    def seed(self) -> int:
        s = nondeterministic_seed()
        self._reseed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    @property
    def device(self):
        return self._device

    def get_offset(self) -> int:
        raise RuntimeError("CPU Generator does not use offset")

    def set_offset(self, offset) -> "Generator":
        raise RuntimeError("CPU Generator does not use offset")

    # --- state in PyTorch's layout --------------------------------------------------------------
    def get_state(self):
        from . import dtype as _dt
        from .device import CPU
        from .dispatch_key import K, tensor_keyset
        from .tensor import make_tensor
        from .tensor_impl import make_impl
        st = self._engine().state["state"]
        pos = int(st["pos"])
        rec = np.zeros((), STATE_DTYPE)
        rec["the_initial_seed"] = self._seed
        rec["left"] = _N + 1 - pos if pos < _N else 1
        rec["seeded"] = 1
        rec["next"] = pos if pos < _N else self._fresh_next
        rec["state"] = st["key"].astype(np.uint64)
        if self.next_double_normal_sample is not None:
            rec["normal_is_valid"] = 1
            rec["normal_y"] = self.next_double_normal_sample
        if self.next_float_normal_sample is not None:
            rec["is_next_float_normal_sample_valid"] = 1
            rec["next_float_normal_sample"] = self.next_float_normal_sample
        data = np.frombuffer(rec.tobytes(), np.uint8).copy()
        return make_tensor(make_impl(data, _dt.uint8, CPU, tensor_keyset(K.CPU)))

    def set_state(self, new_state) -> "Generator":
        from .tensor import Tensor
        from . import dtype as _dt
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
        impl = new_state._impl
        if impl.device.type != "cpu" or impl.dtype is not _dt.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        n = impl._array.size
        if n != STATE_SIZE:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {STATE_SIZE} but found the input RNG "
                               f"state size to be {n}")
        rec = np.frombuffer(np.ascontiguousarray(impl._array).reshape(-1).tobytes(), STATE_DTYPE)[0]
        left, nxt = int(rec["left"]), int(rec["next"]) & 0xFFFFFFFF
        if not (rec["seeded"] and 0 < left <= _N and nxt <= _N):
            raise RuntimeError("Invalid mt19937 state")
        key = (rec["state"] & 0xFFFFFFFF).astype(np.uint32)
        # the engine reads state[next] and twists when left runs out; NumPy's pos covers both
        pos = _N if left == 1 else nxt
        self._engine().state = {"bit_generator": "MT19937", "state": {"key": key, "pos": pos}}
        self._seed = int(rec["the_initial_seed"])
        self._fresh_next = nxt if left == 1 else _N
        self.next_double_normal_sample = float(rec["normal_y"]) if rec["normal_is_valid"] else None
        self.next_float_normal_sample = float(rec["next_float_normal_sample"]) \
            if rec["is_next_float_normal_sample_valid"] else None
        return self

    def clone_state(self) -> "Generator":
        """A new generator at this one's point of the stream (torch.Generator.clone_state)."""
        g = Generator(self._device)
        g.restore_state(self.snapshot())
        return g

    def snapshot(self) -> tuple:
        """Everything that defines the stream, for fork_rng's save and restore."""
        return (self._engine().state, self._seed, self._fresh_next, self.next_double_normal_sample,
                self.next_float_normal_sample)

    def restore_state(self, saved) -> None:
        (bg_state, self._seed, self._fresh_next, self.next_double_normal_sample,
         self.next_float_normal_sample) = saved
        self._unseeded = False
        self._engine().state = bg_state

    # --- raw draws --------------------------------------------------------------------------------
    def random(self, n: int) -> np.ndarray:
        """``n`` consecutive 32-bit draws (uint32 array), as n calls of CPUGeneratorImpl::random().
        (NumPy's full-range uint32 integers are the engine's outputs, one each, unbuffered.)"""
        if n <= 0:
            return np.empty(0, np.uint32)
        self._fresh_next = _N
        self._engine()
        return self._draw(0, 1 << 32, size=n, dtype=np.uint32)

    def random_low(self, n: int, bits: int) -> np.ndarray:
        """The low ``bits`` bits (1 to 31) of ``n`` consecutive 32-bit draws (uint32 array): ``random(n)`` masked,
        in one pass.  NumPy's legacy bounded sampler masks each draw and rejects values above the bound,
        which at a bound of 2^bits - 1 never happens, so it takes exactly one draw per value."""
        if n <= 0:
            return np.empty(0, np.uint32)
        self._fresh_next = _N
        bg = self._engine()
        if self._low is None:
            from numpy.random import RandomState
            self._low = RandomState(bg).randint
        return self._low(0, 1 << bits, size=n, dtype=np.uint32)

    def normal_uniform_halves(self, halves, two_pi: float) -> None:
        """The next ``16 m`` draws as normal_fill's float32 uniforms, each block of 16 split into halves,
        into ``halves`` ((2, m, 8) float32): ``1 - u`` of the first eight, ``two_pi * u`` of the last eight
        (u: the low 24 bits times 2^-24).  The compiled loop (``loops``) runs the engine on a copy of its key,
        which then goes back."""
        self._fresh_next = _N
        bg = self._engine()
        st = bg.state["state"]
        key = st["key"]         # a copy of the engine's key: the loop advances it
        pos = loops.mt19937_uniform_halves(key, int(st["pos"]), halves, two_pi)
        bg.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": pos}}

    def random64(self, n: int) -> np.ndarray:
        """``n`` 64-bit draws: each two 32-bit draws, the first the high half, as random64() and NumPy's
        full-range uint64 integers both join them."""
        if n <= 0:
            return np.empty(0, np.uint64)
        self._fresh_next = _N
        self._engine()
        return self._draw(0, (1 << 64) - 1, size=n, dtype=np.uint64, endpoint=True)

    def __getstate__(self):
        return self.snapshot(), str(self._device)

    def __setstate__(self, state):
        self._device = canonical(state[1])
        self._bg = self._draw = self._low = None
        self.restore_state(state[0])

    def __repr__(self):
        return f"<onion._C.Generator object at {hex(id(self))}>"


default_generator = Generator()
default_generator.manual_seed(nondeterministic_seed())       # PyTorch seeds its default CPU generator so


def get_generator_or_default(gen) -> Generator:
    return default_generator if gen is None else gen
