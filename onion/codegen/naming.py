"""Shared naming/rendering rules of the generators."""
from __future__ import annotations

import keyword

from ..dispatch.arguments import REQUIRED, python_default


def pyname(name: str) -> str:
    """A schema argument name usable as a Python identifier."""
    return name + "_" if keyword.iskeyword(name) else name


def render_default(arg) -> str | None:
    d = python_default(arg)
    if d is REQUIRED:
        return None
    if isinstance(d, list):
        return repr(tuple(d)) if d else "()"
    if hasattr(d, "name") and not isinstance(d, (str, int, float)):   # dtype objects
        return f"_dt.{d.name}"
    return repr(d)


def tensor_ks_expr(arg, var: str) -> str:
    t = arg.type
    if t.is_list:
        return f"_ks_list({var})"
    if t.optional:
        return f"({var}._impl.keyset if {var} is not None else 0)"
    return f"{var}._impl.keyset"


def keyset_expr(schema, names) -> str:
    parts = [tensor_ks_expr(a, n) for a, n in zip(schema.arguments, names) if a.type.is_tensor_like]
    if not parts:
        return "(_tls.include) & _tls.mask"
    return "(" + " | ".join(parts) + " | _tls.include) & _tls.mask"
