"""``onion.utils._python_dispatch``: where PyTorch users look for TorchDispatchMode."""
from ..modes.python_dispatch import (TorchDispatchMode, _get_current_dispatch_mode,  # noqa: F401
                                     _len_torch_dispatch_stack, _pop_mode, _push_mode)
