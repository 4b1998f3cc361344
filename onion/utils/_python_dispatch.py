"""``onion.utils._python_dispatch``: where PyTorch users look for TorchDispatchMode and the mode stack."""
from ..modes.python_dispatch import (TorchDispatchMode, _disable_current_modes,  # noqa: F401
                                     _get_current_dispatch_mode, _get_current_dispatch_mode_stack,
                                     _len_torch_dispatch_stack, _pop_mode, _pop_mode_temporarily, _push_mode,
                                     is_in_torch_dispatch_mode)
