"""Dispatch keys and keysets with PyTorch's names and relative order.

A runtime key is a bit position; a keyset is a plain Python int so that the hot
path (union, mask, highest key) is integer arithmetic.  ``DispatchKeySet`` is the
user-facing wrapper that prints like PyTorch.
"""
from __future__ import annotations

import enum

# PyTorch 2.13's backends, in the order its per-backend keys repeat them.
BACKEND_NAMES = ("CPU", "CUDA", "HIP", "XLA", "MPS", "IPU", "XPU", "HPU", "VE", "Lazy", "MTIA", "MAIA",
                 "PrivateUse1", "PrivateUse2", "PrivateUse3", "Meta")
_AUTOCAST_NAMES = ("AutocastCPU", "AutocastMTIA", "AutocastMAIA", "AutocastXPU", "AutocastIPU", "AutocastHPU",
                   "AutocastXLA", "AutocastMPS", "AutocastCUDA", "AutocastPrivateUse1")


def _per_backend(prefix: str) -> tuple:
    return tuple(prefix + b for b in BACKEND_NAMES)


# Every runtime key of PyTorch 2.13, lowest priority first: the order of
# ``torch._C._dispatch_keyset_full()``.  Position = bit in a keyset.
RUNTIME_KEY_NAMES = (
    BACKEND_NAMES + ("FPGA", "Vulkan", "Metal") + _per_backend("Quantized") + ("CustomRNGKeyId", "MkldnnCPU")
    + _per_backend("Sparse") + _per_backend("SparseCsr") + _per_backend("NestedTensor")
    + ("BackendSelect", "Fake", "Python", "FuncTorchDynamicLayerBackMode", "Functionalize", "Conjugate",
       "Negative", "ZeroTensor", "ADInplaceOrView", "AutogradOther")
    + _per_backend("Autograd") + ("AutogradNestedTensor", "Tracer") + _AUTOCAST_NAMES
    + ("FuncTorchBatched", "BatchedNestedTensor", "FuncTorchVmapMode", "Batched", "VmapMode", "FuncTorchGradWrapper",
       "DeferredInit", "PythonTLSSnapshot", "FuncTorchDynamicLayerFrontMode", "TESTING_ONLY_GenericWrapper",
       "TESTING_ONLY_GenericMode", "PreDispatch", "PythonDispatcher"))
NUM_RUNTIME_KEYS = len(RUNTIME_KEY_NAMES)

# Alias keys (registration only) keep PyTorch's enum values; the functionality keys that name a per-backend
# family (``Dense``, ``AutogradFunctionality``) and ``Undefined`` are never bits either.
_ALIAS_VALUES = (("Autograd", 150), ("CompositeImplicitAutograd", 151), ("FuncTorchBatchedDecomposition", 152),
                 ("CompositeImplicitAutogradNestedTensor", 153), ("CompositeExplicitAutograd", 154),
                 ("CompositeExplicitAutogradNonFunctional", 155))
_OTHER_VALUES = (("Undefined", 200), ("Dense", 201), ("Quantized", 202), ("Sparse", 203), ("SparseCsr", 204),
                 ("NestedTensor", 205), ("AutogradFunctionality", 206))


class _Key(enum.IntEnum):
    def __str__(self) -> str:
        return self.name


DispatchKey = _Key("DispatchKey", [(n, i) for i, n in enumerate(RUNTIME_KEY_NAMES)]
                   + list(_ALIAS_VALUES) + list(_OTHER_VALUES), module=__name__)
DispatchKey.__doc__ = "Runtime keys (bit positions, lowest priority first), alias keys, then Undefined."

K = DispatchKey
RUNTIME_KEYS = tuple(DispatchKey(i) for i in range(NUM_RUNTIME_KEYS))
ALIAS_KEYS = tuple(DispatchKey[n] for n, _ in _ALIAS_VALUES)


def bit(key: DispatchKey) -> int:
    return 1 << int(key)


def _mask(names) -> int:
    return sum(1 << int(DispatchKey[n]) for n in names)


# The keys onion's tensors and thread-local state use (each a runtime key of its own).
BACKEND_KEYS = tuple(DispatchKey[n] for n in BACKEND_NAMES)
AUTOGRAD_KEYS = tuple(DispatchKey[n] for n in ("AutogradOther",) + _per_backend("Autograd") + ("AutogradNestedTensor",))
AUTOCAST_KEYS = tuple(DispatchKey[n] for n in _AUTOCAST_NAMES)

DENSE_MASK = _mask(BACKEND_NAMES)
BACKEND_MASK = DENSE_MASK       # the backend keys a tensor's device gives it
AUTOGRAD_MASK = _mask(k.name for k in AUTOGRAD_KEYS)
AUTOCAST_MASK = _mask(_AUTOCAST_NAMES)
NESTED_MASK = _mask(_per_backend("NestedTensor"))
FULL = (1 << NUM_RUNTIME_KEYS) - 1

AUTOGRAD_OF_BACKEND = {DispatchKey[b]: DispatchKey["Autograd" + b] for b in BACKEND_NAMES}
AUTOCAST_OF_BACKEND = {DispatchKey[n[len("Autocast"):]]: DispatchKey[n] for n in _AUTOCAST_NAMES}
BACKEND_OF_AUTOGRAD = {v: k for k, v in AUTOGRAD_OF_BACKEND.items()}


def mask_below(key: int) -> int:
    """Keys strictly below ``key``: what a kernel redispatches to."""
    return (1 << int(key)) - 1


# What an autograd kernel passes on: everything below the lowest Autograd key.
AFTER_AUTOGRAD = mask_below(K.AutogradOther)
AFTER_ADINPLACE = mask_below(K.ADInplaceOrView)
AFTER_PYTHON = mask_below(K.Python)
AFTER_BACKEND_SELECT = mask_below(K.BackendSelect)

# Which runtime keys each alias key covers (PyTorch's getRuntimeDispatchKeySet).
_EXPLICIT = mask_below(K.NestedTensorCPU)           # every backend-like key: dense, quantized, sparse, sparse csr
_NOT_FUNCTIONAL = _mask(("XLA", "Lazy", "QuantizedXLA", "QuantizedLazy", "SparseCsrXLA", "SparseCsrLazy")
                        + _per_backend("Sparse"))
ALIAS_COVERS = {
    K.Autograd: AUTOGRAD_MASK,
    K.CompositeExplicitAutograd: _EXPLICIT,
    K.CompositeExplicitAutogradNonFunctional: _EXPLICIT & ~_NOT_FUNCTIONAL,
    K.CompositeImplicitAutograd: _EXPLICIT | NESTED_MASK | AUTOGRAD_MASK,
    K.CompositeImplicitAutogradNestedTensor: NESTED_MASK | bit(K.AutogradNestedTensor),
    K.FuncTorchBatchedDecomposition: bit(K.FuncTorchBatched),
}

# Backends that share AutogradOther (PyTorch's autogradother_backends).
AUTOGRADOTHER_BACKENDS = (_mask(("FPGA", "Vulkan", "Metal", "CustomRNGKeyId", "MkldnnCPU") + _per_backend("Quantized")
                                + _per_backend("Sparse") + _per_backend("SparseCsr")))


def backend_mask_of_autograd(key) -> int:
    """The backend keys whose own kernel makes a CompositeImplicitAutograd kernel unused at autograd ``key``."""
    if key is K.AutogradOther:
        return AUTOGRADOTHER_BACKENDS
    if key is K.AutogradNestedTensor:
        return NESTED_MASK
    backend = BACKEND_OF_AUTOGRAD.get(key)
    return bit(backend) if backend is not None else 0


def keys_of(ks: int) -> list:
    """Runtime keys in a keyset, lowest first."""
    return [k for k in RUNTIME_KEYS if ks >> int(k) & 1]


def highest_key(ks: int) -> DispatchKey:
    return RUNTIME_KEYS[ks.bit_length() - 1] if ks else K.Undefined


_PER_BACKEND_PREFIXES = ("Quantized", "Sparse", "SparseCsr", "NestedTensor", "Autograd")


def is_per_backend(key) -> bool:
    """A key of a per-backend family (``CPU``, ``SparseCUDA``, ``AutogradMeta``), as PyTorch numbers them."""
    name = key.name
    if name in BACKEND_NAMES:
        return True
    return any(name.startswith(p) and name[len(p):] in BACKEND_NAMES for p in _PER_BACKEND_PREFIXES)


def dump_order(key) -> tuple:
    """Where PyTorch's ``_dispatch_dump`` lists a key: its functionality keys, then the per-backend keys,
    then the alias keys (the numeric order of PyTorch's DispatchKey enum)."""
    v = int(key)
    if v >= NUM_RUNTIME_KEYS:
        return (2, v)
    return (1 if is_per_backend(key) else 0, v)


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
