"""``onion.utils._mode_utils``: ``no_dispatch``, at PyTorch's path."""
from __future__ import annotations

import contextlib

from ..modes.python_dispatch import _DisableTorchDispatch


@contextlib.contextmanager
def no_dispatch():
    """Neither modes nor ``__torch_dispatch__`` subclasses see the calls made inside."""
    with _DisableTorchDispatch():
        yield
