"""``onion.autograd``: reverse-mode AD as a dispatch key (the kernels are generated)."""
from __future__ import annotations

from .engine import backward, grad  # noqa: F401
from .function import Function, FunctionCtx, once_differentiable  # noqa: F401
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled,  # noqa: F401
                        no_grad, set_grad_enabled)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: F401
from .graph import Node  # noqa: F401
