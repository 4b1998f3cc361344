"""``onion.cpu.amp.autocast``: the deprecated spelling of ``onion.amp.autocast('cpu', ...)``, as torch.cpu.amp."""
from __future__ import annotations

import warnings

from ...amp import autocast_mode as _am


class autocast(_am.autocast):
    def __init__(self, enabled: bool = True, dtype=None, cache_enabled: bool = True):
        warnings.warn("`onion.cpu.amp.autocast(args...)` is deprecated. Please use "
                      "`onion.amp.autocast('cpu', args...)` instead.", FutureWarning, stacklevel=2)
        from ...core.dtype import bfloat16
        super().__init__("cpu", dtype=bfloat16 if dtype is None else dtype, enabled=enabled,
                         cache_enabled=cache_enabled)


def GradScaler(init_scale: float = 2.0**16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
               growth_interval: int = 2000, enabled: bool = True):
    """The deprecated ``onion.cpu.amp.GradScaler(...)``: ``onion.amp.GradScaler('cpu', ...)``."""
    warnings.warn("`onion.cpu.amp.GradScaler(args...)` is deprecated. Please use "
                  "`onion.amp.GradScaler('cpu', args...)` instead.", FutureWarning, stacklevel=2)
    from ...amp import GradScaler as _GradScaler
    return _GradScaler("cpu", init_scale, growth_factor, backoff_factor, growth_interval, enabled)
