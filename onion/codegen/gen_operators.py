"""``operators.py``: one entry per overload, the layer between a binding and the Dispatcher.

For each overload it defines the schema (``_lib.define``), keeps the operator's two
kernel caches, and writes the entry every caller uses (bindings, ``at``, other
kernels): compute the dispatch keyset from the tensor arguments and the thread-local
sets, index the cache (a miss asks the Dispatcher's table), call the kernel.
PyTorch's analogue is ``Operators.cpp`` (``at::_ops::add_Tensor::call``).
"""
from __future__ import annotations

from .model import NativeFunction
from .naming import arg_names, keyset_lines, params
from .pyfmt import WIDTH, fit_all, split_string

from .context import context
from .header import HEADER


def entry(f: NativeFunction) -> list:
    """The operator entry: ``add_Tensor(self, other, alpha=1)`` -> Dispatcher -> kernel."""
    i = f.ident
    names = arg_names(f)
    call = ", ".join(["ks"] + names)
    return ([f"def {i}({params(f)}):"] + keyset_lines(f.func, names, "    ")
            + [f"    return dispatch_{i}[ks]({call})", ""])


def gen_operators(fns) -> str:
    lines = [HEADER, '"""Operator entries: keyset, then the Dispatcher\'s kernel for it (one per overload)."""',
             "from onion.aten.at import at as _at",
             "from onion.core import dtype as _dt",
             "from onion.core.tls import state as _state",
             "from onion.dispatch.library import Library as _Library",
             "from onion.dispatch.operator import keyset_of_list as _ks_list", "",
             "_lib = _Library('aten', 'DEF')", "", ""]
    for f in fns:
        with context(f.loc, f"the operator entry of {f.name}"):
            lines += _operator(f)
    return "\n".join(fit_all(lines)) + "\n"


def _schema_lines(schema: str) -> list:
    """The schema text as one argument line, or adjacent literals within the line width."""
    parts = split_string(repr(schema), WIDTH - 4)
    parts[-1] += ","
    return [f"    {p}" for p in parts]


def _operator(f: NativeFunction) -> list:
    i = f.ident
    lines = [f"# aten::{f.name}, declared at {f.loc}",
             f"op_{i} = _lib._declare(",
             *_schema_lines(str(f.func)),
             f"    tags={tuple(f.tags)!r}, source='{f.loc}')",
             f"dispatch_{i} = op_{i}.dispatch_cache",
             f"redispatch_{i} = op_{i}.redispatch_cache", ""]
    lines += entry(f)
    return lines + [f"_at.{i} = {i}", "", ""]
