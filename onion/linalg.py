"""``onion.linalg``: the operators declared with ``python_module: linalg`` (``linalg_qr`` is
``onion.linalg.qr``), and ``LinAlgError``."""
from __future__ import annotations

from ._generated.python_functions import LINALG_FUNCTIONS as _LINALG
from .core.linalg_error import LinAlgError  # noqa: F401

globals().update({(n[len("linalg_"):] if n.startswith("linalg_") else n): f for n, f in _LINALG.items()})
