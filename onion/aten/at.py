"""``at``: the positional, dispatching entry point of every operator (ATen's ``at::``).

Kernels call other operators through it (``at.add_Tensor(a, b, 1)``).  It is
empty until the generated code fills it in at import, which keeps the import
graph pointing down: ``aten`` never imports ``_generated``.
"""
from __future__ import annotations

from ..dispatch import selective_build as _selective


class _At:
    """Attributes are set by ``onion._generated.aten_ops`` (one per overload)."""

    def __getattr__(self, name):
        if _selective.STATE["selection"] is not None:     # a selective build may have left it out
            try:
                _selective.omitted_attribute(name)
            except _selective.OperatorNotSelectedError:
                raise
            except AttributeError:
                pass
        raise AttributeError(f"at.{name}: no such operator overload (is onion._generated loaded?)")


at = _At()
