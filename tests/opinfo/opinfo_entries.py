"""Which of PyTorch's OpInfo entries onion takes part in, and how each variant is called on onion.

An entry joins by existing: its torch function, method or in-place method is looked up by identity in
torch's namespaces and the onion object of the same name is used; a Python lambda that never names
``torch`` (``lambda x: x.T``) runs on onion tensors as it is.  Nothing here is per operator except
EXCLUDED (entries another issue takes) and the known differences in opinfo_known.py.
"""
from __future__ import annotations

import dataclasses
import functools
import types
from typing import Any, Callable, Optional

import torch

import onion
from opinfo_convert import names_torch

# Namespaces and entries that are not tensor operators of this project's scope (their own issues).
EXCLUDED_PREFIXES = ("nn.", "linalg.", "fft.", "special.", "masked.", "signal.", "_refs.", "sparse.",
                     "jiterator_", "_scaled_mm", "_flash_attention", "_efficient_attention")


@dataclasses.dataclass(frozen=True)
class Entry:
    """One OpInfo entry and the onion callables for its variants (None where onion has none)."""
    op: Any
    key: str
    function: Optional[Callable]
    method: Optional[Callable]
    inplace: Optional[Callable]

    @property
    def dtypes(self):
        return sorted(self.op.supported_dtypes("cpu"), key=str)


@functools.lru_cache(maxsize=None)
def _torch_names():
    by_id = {}
    for n in dir(torch):
        v = getattr(torch, n, None)
        if callable(v):
            by_id.setdefault(id(v), ("function", n))
    for n in dir(torch.Tensor):
        v = getattr(torch.Tensor, n, None)
        if callable(v):
            by_id.setdefault(id(v), ("method", n))
    return by_id


def onion_callable(fn) -> Optional[Callable]:
    """The onion counterpart of a torch callable from an OpInfo entry, or None."""
    if fn is None:
        return None
    hit = _torch_names().get(id(fn))
    if hit is not None:
        kind, name = hit
        if kind == "method" and not any(name in k.__dict__ for k in onion.Tensor.__mro__):
            return None             # not Tensor's own (``Tensor.__ror__`` would be type's ``X | Tensor``)
        return getattr(onion if kind == "function" else onion.Tensor, name, None)
    if isinstance(fn, torch._ops.OpOverload):      # torch.ops.aten.slice.Tensor -> onion.ops.aten.slice.Tensor
        packet = getattr(onion.ops.aten, fn._schema.name.split("::")[-1], None)
        return getattr(packet, fn._overloadname, None) if packet is not None else None
    if isinstance(fn, torch._ops.OpOverloadPacket):     # aten._softmax_backward_data -> onion.ops.aten's packet
        return getattr(onion.ops.aten, fn._qualified_op_name.split("::")[-1], None)
    if callable(fn) and not names_torch(fn) and all(_onion_has(n) for n in _code_names(fn.__code__)):
        return fn
    return _seeded_wrapper_lambda(fn) or _rebound_lambda(fn)


def _seeded_wrapper_lambda(fn) -> Optional[Callable]:
    """An OpInfo lambda ``wrapper_set_seed(torch.x, ...)`` (PyTorch's random operators: seed 42, call, restore
    the state) as the same lambda over onion's ``x`` and ``onion.random``, or None when onion lacks ``x``."""
    code = getattr(fn, "__code__", None)
    if code is None or "wrapper_set_seed" not in code.co_names or fn.__closure__:
        return None
    def onion_wrapper_set_seed(op, *args, **kwargs):
        o_op = onion_callable(op)
        with onion.random.fork_rng():
            onion.manual_seed(42)
            return o_op(*args, **kwargs)
    g = dict(fn.__globals__, wrapper_set_seed=onion_wrapper_set_seed)
    wrapped = types.FunctionType(code, g, fn.__name__, fn.__defaults__)
    targets = list(_wrapped_torch_ops(code, fn.__globals__))
    if not targets or not all(is_seeded(t) and onion_callable(t) is not None for t in targets):
        return None
    return wrapped


def entry_is_seeded(op) -> bool:
    """An OpInfo entry of a random operator (its variants wrap or are nondeterministic_seeded operators)."""
    for fn in (op.op, op.method_variant, op.inplace_variant):
        code = getattr(fn, "__code__", None)
        if code is not None and "wrapper_set_seed" in code.co_names:
            if any(is_seeded(t) for t in _wrapped_torch_ops(code, fn.__globals__)):
                return True
        elif fn is not None and is_seeded(fn):
            return True
    return False


def is_seeded(torch_fn) -> bool:
    """Whether an overload of the aten operator behind a torch callable is tagged nondeterministic_seeded."""
    packet = getattr(torch.ops.aten, getattr(torch_fn, "__name__", ""), None)
    if packet is None:
        return False
    return any(torch.Tag.nondeterministic_seeded in getattr(packet, o).tags for o in packet.overloads())


def _wrapped_torch_ops(code, globs):
    """The torch callables a lambda names as ``torch.a.b`` (read from its bytecode's attribute chains)."""
    import dis
    chain = None
    for ins in dis.get_instructions(code):
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME") and ins.argval == "torch":
            chain = globs["torch"]
        elif chain is not None and ins.opname in ("LOAD_ATTR", "LOAD_METHOD"):
            chain = getattr(chain, ins.argval, None)
        else:
            if chain is not None and callable(chain) and chain is not globs["torch"]:
                yield chain
            chain = None


def _onion_wrapper_set_seed(f, *args, **kwargs):
    """PyTorch's wrapper_set_seed for onion: seed 42, call, restore the generator's state (a lambda inside it
    may draw random numbers, as svd_lowrank's does)."""
    with onion.random.fork_rng():
        onion.manual_seed(42)
        return f(*args, **kwargs)


def _rebound_lambda(fn) -> Optional[Callable]:
    """A lambda that calls ``torch.X`` (``lambda x: torch.zero_(x.clone())``, ``wrapper_set_seed(torch.Tensor.item,
    ...)``), run with ``torch`` standing for onion, when every name it uses is one onion has."""
    code = getattr(fn, "__code__", None)
    if code is None or code.co_name != "<lambda>" or fn.__closure__ or code.co_freevars:
        return None
    names = set(_code_names(code)) - {"torch", "wrapper_set_seed"}
    if not all(_onion_has(n) for n in names):
        return None
    import types
    return types.FunctionType(code, {"torch": onion, "wrapper_set_seed": _onion_wrapper_set_seed,
                                     "__builtins__": __builtins__}, fn.__name__, fn.__defaults__)


def _code_names(code):
    yield from code.co_names
    for c in code.co_consts:
        if hasattr(c, "co_names"):
            yield from _code_names(c)


def _onion_has(name: str) -> bool:
    """A name a lambda uses is one onion has (a Tensor method or attribute, or a builtin)."""
    import builtins
    return hasattr(onion.Tensor, name) or hasattr(onion, name) or hasattr(builtins, name)


def entry_key(op) -> str:
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


@functools.lru_cache(maxsize=None)
def entries() -> tuple[Entry, ...]:
    from torch.testing._internal.common_methods_invocations import op_db
    found = []
    for op in op_db:
        if op.name.startswith(EXCLUDED_PREFIXES):
            continue
        fn = onion_callable(op.op)
        method = onion_callable(op.method_variant)
        inplace = onion_callable(op.inplace_variant)
        if fn is None and method is None:
            continue
        found.append(Entry(op, entry_key(op), fn, method, inplace))
    return tuple(found)


# PyTorch's own test names whose skips and expected failures on CPU also apply to a check here.
TORCH_TESTS = {
    "values": ("test_variant_consistency_eager", "test_compare_cpu"),
    "out": ("test_out", "test_out_warning"),
    "method": ("test_variant_consistency_eager",),
    "inplace": ("test_variant_consistency_eager",),
    "meta": ("test_meta_outplace", "test_dispatch_meta_outplace"),
    "grad": ("test_fn_grad",),
    "noncontiguous": ("test_noncontiguous_samples",),
}


def torch_excludes(op, check: str, dtype) -> Optional[str]:
    """The reason when PyTorch's own suite skips or expects failure of this check on CPU."""
    for info in getattr(op, "decorators", ()) or ():
        if not hasattr(info, "is_active"):      # a plain decorator (precisionOverride): no skip
            continue
        for test_name in TORCH_TESTS[check]:
            try:
                active = info.is_active(info.cls_name or "TestCommon", test_name, "cpu", dtype, {})
            except TypeError:
                active = info.is_active(info.cls_name or "TestCommon", test_name, "cpu", dtype)
            if active and info.test_name == test_name and any(_skips(d) for d in info.decorators):
                return f"PyTorch's OpInfo skips or xfails {test_name} for {entry_key(op)} ({dtype})"
    return None


def _skips(decorator) -> bool:
    """unittest.expectedFailure or a unittest skip (not a tolerance override or a dtype precision change)."""
    import unittest
    return decorator is unittest.expectedFailure or "skip" in getattr(decorator, "__qualname__", "")
