"""Dispatch keys and keysets with PyTorch's names and relative order.

A runtime key is a bit position; a keyset is a plain Python int so that the hot
path (union, mask, highest key) is integer arithmetic.  ``DispatchKeySet`` is the
user-facing wrapper that prints like PyTorch.
"""
from __future__ import annotations

import enum


class DispatchKey(enum.IntEnum):
    """Runtime keys (lowest priority first), then alias keys (registration only)."""

    CPU = 0
    CUDA = 1
    PrivateUse1 = 2
    Meta = 3
    BackendSelect = 4
    Python = 5
    Functionalize = 6
    Conjugate = 7           # the conj() view bit: a boxed fallback resolves it (onion/aten/math_bits.py)
    Negative = 8            # the _neg_view() bit (x.conj().imag), resolved the same way
    ADInplaceOrView = 9
    AutogradOther = 10
    AutogradCPU = 11
    AutogradCUDA = 12
    AutogradPrivateUse1 = 13
    AutogradMeta = 14
    AutocastCPU = 15
    AutocastCUDA = 16
    FuncTorchBatched = 17
    PythonTLSSnapshot = 18
    PreDispatch = 19
    # alias keys: never in a keyset, only used to register kernels
    CompositeImplicitAutograd = 100
    CompositeExplicitAutograd = 101
    CompositeExplicitAutogradNonFunctional = 102
    Autograd = 103
    Undefined = 200

    def __str__(self) -> str:
        return self.name


K = DispatchKey
NUM_RUNTIME_KEYS = 20
RUNTIME_KEYS = tuple(DispatchKey(i) for i in range(NUM_RUNTIME_KEYS))
ALIAS_KEYS = (K.CompositeImplicitAutograd, K.CompositeExplicitAutograd,
              K.CompositeExplicitAutogradNonFunctional, K.Autograd)


def bit(key: DispatchKey) -> int:
    return 1 << int(key)


BACKEND_KEYS = (K.CPU, K.CUDA, K.PrivateUse1, K.Meta)
AUTOGRAD_KEYS = (K.AutogradOther, K.AutogradCPU, K.AutogradCUDA, K.AutogradPrivateUse1, K.AutogradMeta)
AUTOCAST_KEYS = (K.AutocastCPU, K.AutocastCUDA)

BACKEND_MASK = sum(bit(k) for k in BACKEND_KEYS)
AUTOGRAD_MASK = sum(bit(k) for k in AUTOGRAD_KEYS)
AUTOCAST_MASK = sum(bit(k) for k in AUTOCAST_KEYS)
FULL = (1 << NUM_RUNTIME_KEYS) - 1

AUTOGRAD_OF_BACKEND = {K.CPU: K.AutogradCPU, K.CUDA: K.AutogradCUDA,
                       K.PrivateUse1: K.AutogradPrivateUse1, K.Meta: K.AutogradMeta}
AUTOCAST_OF_BACKEND = {K.CPU: K.AutocastCPU, K.CUDA: K.AutocastCUDA}
BACKEND_OF_AUTOGRAD = {v: k for k, v in AUTOGRAD_OF_BACKEND.items()}


def mask_below(key: int) -> int:
    """Keys strictly below ``key``: what a kernel redispatches to."""
    return (1 << int(key)) - 1


# What an autograd kernel passes on: everything below the lowest Autograd key.
AFTER_AUTOGRAD = mask_below(K.AutogradOther)
AFTER_ADINPLACE = mask_below(K.ADInplaceOrView)
AFTER_PYTHON = mask_below(K.Python)
AFTER_BACKEND_SELECT = mask_below(K.BackendSelect)

# Which runtime keys each alias key covers.
ALIAS_COVERS = {
    K.Autograd: AUTOGRAD_MASK,
    K.CompositeExplicitAutograd: BACKEND_MASK,
    K.CompositeExplicitAutogradNonFunctional: BACKEND_MASK,
    K.CompositeImplicitAutograd: BACKEND_MASK | AUTOGRAD_MASK,
}


def keys_of(ks: int) -> list:
    """Runtime keys in a keyset, lowest first."""
    return [k for k in RUNTIME_KEYS if ks >> int(k) & 1]


def highest_key(ks: int) -> DispatchKey:
    return RUNTIME_KEYS[ks.bit_length() - 1] if ks else K.Undefined


def tensor_keyset(backend: DispatchKey, inference: bool = False) -> int:
    """The keyset a fresh tensor of ``backend`` carries (as PyTorch gives it)."""
    ks = bit(backend)
    if backend in AUTOCAST_OF_BACKEND:
        ks |= bit(AUTOCAST_OF_BACKEND[backend])
    if not inference:
        ks |= bit(K.ADInplaceOrView) | bit(AUTOGRAD_OF_BACKEND[backend])
    return ks


class DispatchKeySet:
    """An immutable set of runtime keys; prints like PyTorch's."""

    __slots__ = ("repr_int",)

    def __init__(self, keys=0):
        if isinstance(keys, DispatchKeySet):
            value = keys.repr_int
        elif isinstance(keys, int) and not isinstance(keys, DispatchKey):
            value = keys
        else:
            if isinstance(keys, (DispatchKey, str)):
                keys = [keys]
            value = 0
            for k in keys:
                k = DispatchKey[k] if isinstance(k, str) else DispatchKey(k)
                if k in ALIAS_COVERS:
                    value |= ALIAS_COVERS[k]
                elif int(k) < NUM_RUNTIME_KEYS:
                    value |= bit(k)
                else:
                    raise ValueError(f"{k.name} is not a runtime dispatch key")
        self.repr_int = value

    def __or__(self, other):
        return DispatchKeySet(self.repr_int | DispatchKeySet(other).repr_int)

    def __and__(self, other):
        return DispatchKeySet(self.repr_int & DispatchKeySet(other).repr_int)

    def __sub__(self, other):
        return DispatchKeySet(self.repr_int & ~DispatchKeySet(other).repr_int)

    def __eq__(self, other):
        return isinstance(other, DispatchKeySet) and other.repr_int == self.repr_int

    def __hash__(self):
        return hash(self.repr_int)

    def __contains__(self, key):
        return bool(self.repr_int >> int(key) & 1) if int(key) < NUM_RUNTIME_KEYS else False

    def has(self, key) -> bool:
        return key in self

    def __iter__(self):
        return iter(keys_of(self.repr_int))

    def __len__(self):
        return bin(self.repr_int).count("1")

    def empty(self) -> bool:
        return self.repr_int == 0

    def highestPriorityTypeId(self) -> DispatchKey:
        return highest_key(self.repr_int)

    highest_priority_type_id = highestPriorityTypeId

    def remove(self, key) -> "DispatchKeySet":
        return DispatchKeySet(self.repr_int & ~bit(key))

    def add(self, key) -> "DispatchKeySet":
        return DispatchKeySet(self.repr_int | bit(key))

    def __repr__(self):
        return "DispatchKeySet(" + ", ".join(k.name for k in keys_of(self.repr_int)) + ")"

    __str__ = __repr__
