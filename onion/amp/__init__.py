"""onion.amp: automatic mixed precision (autocast regions, GradScaler), as torch.amp."""
from .autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available  # noqa: F401
from .grad_scaler import GradScaler  # noqa: F401
