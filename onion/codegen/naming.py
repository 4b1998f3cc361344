"""Shared naming and rendering rules of the generators."""
from __future__ import annotations

import keyword

from ..dispatch.arguments import REQUIRED, python_default
from .pyfmt import WIDTH


def pyname(name: str) -> str:
    """A schema argument name usable as a Python identifier."""
    return name + "_" if keyword.iskeyword(name) else name


def arg_names(f) -> list:
    return [pyname(a.name) for a in f.func.arguments]


def render_default(arg) -> str | None:
    d = python_default(arg)
    if d is REQUIRED:
        return None
    if isinstance(d, list):
        return repr(tuple(d)) if d else "()"
    if hasattr(d, "name") and not isinstance(d, (str, int, float)):   # dtype objects
        return f"_dt.{d.name}"
    return repr(d)


def params(f, with_defaults: bool = True) -> str:
    """A Python parameter list for every schema argument; only a trailing run keeps its defaults."""
    out = []
    trailing = True
    for a, n in reversed(list(zip(f.func.arguments, arg_names(f)))):
        d = render_default(a) if with_defaults and trailing else None
        trailing = trailing and d is not None
        out.append(f"{n}={d}" if d is not None else n)
    return ", ".join(reversed(out))


def tensor_ks_expr(arg, var: str) -> str:
    t = arg.type
    if t.is_list:
        return f"_ks_list({var})"
    if t.optional:
        return f"({var}._impl.keyset if {var} is not None else 0)"
    return f"{var}._impl.keyset"


def keyset_lines(schema, names, indent: str) -> list:
    """``st = _state()`` (the thread's dispatch state), then
    ``ks = (a._impl.keyset | b._impl.keyset | st.include) & st.mask``, over several lines when long."""
    parts = [tensor_ks_expr(a, n) for a, n in zip(schema.arguments, names) if a.type.is_tensor_like]
    line = f"{indent}ks = ({' | '.join(parts + ['st.include'])}) & st.mask"
    if len(line) <= WIDTH:
        return [f"{indent}st = _state()", line]
    out = [f"{indent}st = _state()", f"{indent}ks = {parts[0]}"]
    for p in parts[1:]:
        out.append(f"{indent}ks |= {p}")
    out.append(f"{indent}ks = (ks | st.include) & st.mask")
    return out
