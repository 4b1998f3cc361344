"""Per-operator Python source, written once at registration, for what runs per call.

A custom operator's entry, autograd kernel and backend-kernel wrapper, and the autograd fallback in an
operator's table, are specialised to its schema
(the tensor arguments named, the keyset expression written out), as codegen specialises the built-in
operators, so a call pays for no generic argument binding.
"""
from __future__ import annotations

import linecache

from .operator import keyset_of_list

_counter = [0]


def _any_requires_grad(tensors) -> bool:
    for t in tensors:
        if t is not None and t._impl.requires_grad:
            return True
    return False


def compile_function(src: str, name: str, what: str, **env):
    """Compile ``src`` (defining ``name``) with ``env`` as its globals; tracebacks show the source."""
    _counter[0] += 1
    filename = f"<onion: {what} #{_counter[0]}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    env.setdefault("_any_rg", _any_requires_grad)
    env.setdefault("_ks_list", keyset_of_list)
    exec(compile(src, filename, "exec"), env)  # noqa: S102 - source built from a parsed schema
    return env[name]


def arg_names(n: int) -> list:
    return [f"a{i}" for i in range(n)]


def _tensor_kind(t) -> str | None:
    if t.base != "Tensor":
        return None
    if t.is_list:
        return "list"
    return "optional" if t.optional else "tensor"


def requires_grad_test(args, names) -> str | None:
    """An expression that is true when a tensor argument requires grad (None: the schema has none)."""
    parts = []
    for a, n in zip(args, names):
        kind = _tensor_kind(a.type)
        if kind == "tensor":
            parts.append(f"{n}._impl.requires_grad")
        elif kind == "optional":
            parts.append(f"({n} is not None and {n}._impl.requires_grad)")
        elif kind == "list":
            parts.append(f"_any_rg({n})")
    return " or ".join(parts) if parts else None


def keyset_terms(args, names) -> list:
    """The terms whose union is the tensor arguments' keyset."""
    parts = []
    for a, n in zip(args, names):
        kind = _tensor_kind(a.type)
        if kind == "tensor":
            parts.append(f"{n}._impl.keyset")
        elif kind == "optional":
            parts.append(f"({n}._impl.keyset if {n} is not None else 0)")
        elif kind == "list":
            parts.append(f"_ks_list({n})")
    return parts
