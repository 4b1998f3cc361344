"""``at``: the positional, dispatching entry point of every operator (ATen's ``at::``).

Kernels call other operators through it (``at.add_Tensor(a, b, 1)``).  It is
empty until the generated code fills it in at import, which keeps the import
graph pointing down: ``aten`` never imports ``_generated``.
"""
from __future__ import annotations


class _At:
    """Attributes are set by ``onion._generated.aten_ops`` (one per overload)."""

    def __getattr__(self, name):
        raise AttributeError(f"at.{name}: no such operator overload (is onion._generated loaded?)")


at = _At()
