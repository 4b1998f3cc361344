"""``onion._C._dispatch_library``: the registration object PyTorch's own dispatcher tests drive.

PyTorch exposes its C++ ``torch::Library`` to Python as ``_DispatchModule``, with a few typed test kernels
(``impl_t_t``: ``Tensor -> Tensor``) whose schema is inferred from their C++ signature and checked against the
operator's definition in whichever order the two arrive.  onion's version is a thin shell over ``Library``:
the same method names, the same debug strings, the same inferred-schema check, so that registration
scenarios written for PyTorch run unchanged and dump the same state.
"""
from __future__ import annotations

from ..dispatch.dispatch_table import FALLTHROUGH, KernelRegistration
from ..dispatch.library import Library, parse_key

_T_T = "(Tensor _0) -> Tensor _0"


def _identity(ks, x):
    return x


class _DispatchModule:
    """One ``TORCH_LIBRARY``/``TORCH_LIBRARY_FRAGMENT``/``TORCH_LIBRARY_IMPL`` block; ``reset()`` (or dropping
    the object) undoes its registrations."""

    def __init__(self, kind: str, ns: str, dispatch: str, file: str, line: int):
        self._lib = Library(ns, kind, dispatch, _debug=f"registered at {file}:{line}")

    # --- definitions ----------------------------------------------------------------
    def def_(self, schema: str, alias: str = ""):
        self._lib.define(schema, alias, _c_api=True)
        return self

    def def_legacy(self, schema: str):
        return self.def_(schema)

    def define(self, schema: str, alias_analysis: str = "", tags=()):
        return self._lib.define(schema, alias_analysis, tags=tags)

    def def_name_t_t(self, name: str, dispatch: str = "", debug: str = "default_def_name_t_t"):
        """Define ``name`` with the schema a ``Tensor -> Tensor`` function implies (alias analysis
        CONSERVATIVE, as for every inferred schema) and register that function."""
        self._lib.define(f"{name}{_T_T}", "CONSERVATIVE")
        self._typed_kernel(name, dispatch, debug)
        return self

    def def_schema_t_t(self, schema: str, dispatch: str = "", debug: str = "default_def_schema_t_t"):
        name = self._lib.define(schema)
        self._typed_kernel(name, dispatch, debug)
        return self

    # --- kernels ------------------------------------------------------------------------
    def impl_t_t(self, name: str, dispatch: str = "", debug: str = "impl_t_t"):
        self._typed_kernel(name, dispatch, debug)
        return self

    def impl(self, name: str, dispatch, func, with_keyset: bool = False):
        self._lib.impl(name, func, dispatch.name if hasattr(dispatch, "name") else dispatch, with_keyset=with_keyset)

    def _typed_kernel(self, name: str, dispatch: str, debug: str) -> None:
        key = parse_key(dispatch or self._lib.dispatch_key or "CompositeImplicitAutograd")
        self._lib._add(self._lib._resolve(name),
                       KernelRegistration(key, _identity, debug, owner=self._lib._state, inferred=_T_T))

    # --- fallbacks ----------------------------------------------------------------------
    def fallback(self, dispatch, func, with_keyset: bool = False):
        self._lib.fallback(func, dispatch.name if hasattr(dispatch, "name") else dispatch, with_keyset=with_keyset)

    def fallback_fallthrough(self, dispatch: str = ""):
        self._lib.fallback(FALLTHROUGH, dispatch)
        return self

    def reset(self) -> None:
        self._lib._destroy()


def _dispatch_library(kind: str, name: str, dispatch: str, file: str = "/dev/null", linenum: int = 0):
    return _DispatchModule(kind, name, dispatch, file, linenum)
