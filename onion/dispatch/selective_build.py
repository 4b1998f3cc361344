"""What a selective build leaves out, at run time: the error a left-out operator or dtype raises.

Codegen (``onion/codegen/selection.py``) writes only the selected operators; the generated modules
fill ``STATE`` and route every name they no longer define to ``not_selected``, so a call names the build
instead of failing with an unrelated ``AttributeError``.  A full build never touches this module's state.
"""
from __future__ import annotations

# selection: the selection file a selective build was made from (None: the full build); omitted: the
# left-out overloads, ident (add_Tensor) -> name (add.Tensor); omitted_bases: names none of whose
# overloads were kept (what ``onion.ops.aten.<name>`` would have been)
STATE = {"selection": None, "omitted": {}, "omitted_bases": frozenset()}


class OperatorNotSelectedError(NotImplementedError, AttributeError):
    """An operator, or an operator's dtype, that the selective build left out (an ``AttributeError`` too,
    so that ``hasattr(at, name)`` and ``hasattr(onion.ops.aten, name)`` say False for it)."""


def omitted_attribute(attr: str):
    """Raise for a left-out operator's name in ``at`` or ``onion._generated.operators`` (an ident such as
    ``add_Tensor``, maybe behind ``op_`` / ``dispatch_`` / ``redispatch_``), else a plain AttributeError."""
    omitted = STATE["omitted"]
    name = omitted.get(attr)
    if name is None:
        for prefix in ("op_", "dispatch_", "redispatch_"):
            if attr.startswith(prefix) and attr[len(prefix):] in omitted:
                name = omitted[attr[len(prefix):]]
                break
    if name is None:
        raise AttributeError(attr)
    raise OperatorNotSelectedError(message(name))


def _rebuild_hint() -> str:
    return ("rebuild with `python -m onion.codegen --select FILE` with it listed in FILE (or recorded with "
            "onion.utils.record_operators()), or `python -m onion.codegen --select all` for the full build")


def message(name: str, dtype=None) -> str:
    what = f"aten::{name}" + (f" for dtype {dtype}" if dtype is not None else "")
    return (f"{what} was not selected in this selective build of onion (selection file {STATE['selection']}); "
            + _rebuild_hint())


def not_selected(name: str):
    """A stand-in for a left-out operator's entry or binding: raises when called."""
    def left_out(*args, **kwargs):
        raise OperatorNotSelectedError(message(name))
    left_out.__name__ = left_out.__qualname__ = name.split(".")[0]
    left_out._onion_not_selected = name
    return left_out


def check_dtypes(name: str, allowed: frozenset, args) -> None:
    """Raise unless every tensor argument's dtype is one the build kept for ``name``."""
    for a in args:
        impl = getattr(a, "_impl", None)
        if impl is not None:
            if impl.dtype not in allowed:
                raise OperatorNotSelectedError(message(name, impl.dtype))
        elif isinstance(a, (list, tuple)):
            for x in a:
                impl = getattr(x, "_impl", None)
                if impl is not None and impl.dtype not in allowed:
                    raise OperatorNotSelectedError(message(name, impl.dtype))
