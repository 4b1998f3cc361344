"""What the generated autograd kernels call: edges, history, in-place rules.

Most of it is re-exported from where it lives (graph, history), so the
generated code has one module to import.
"""
from __future__ import annotations

from ..core.dispatch_key import AUTOGRAD_MASK  # noqa: F401  (re-exported for generated code)
from ..core.tls import tls
from ..aten.at import at
from .graph import NotImplementedBackward, SavedVariable, gradient_edge, meta  # noqa: F401  (re-exported)
from .history import rebase_history, set_history  # noqa: F401  (re-exported)

edge = gradient_edge


def differentiable(t) -> bool:
    dt = t._impl.dtype
    return dt.is_floating_point or dt.is_complex


def clone_for_save(t):
    """In-place ops that need their input's old value save a copy of it.

    The copy is recorded (CloneBackward0) so that a gradient computed with
    ``create_graph=True`` still depends on the old value, as in PyTorch.
    """
    return at.clone(t, None)


ERR_NO_GRAD_VIEW = ("A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given "
                    "that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by "
                    "moving both the view and the inplace either both inside the no_grad block (if you don't want "
                    "the inplace to be tracked) or both outside (if you want the inplace to be tracked).")


def check_inplace(t) -> None:
    """PyTorch's check_inplace: no in-place on a leaf that requires grad, on a view of one, or on a no_grad view."""
    if not tls.grad_enabled:
        return
    impl = t._impl
    base = impl._base
    if base is not None and base.requires_grad:
        if impl.grad_fn is None:
            raise RuntimeError(ERR_NO_GRAD_VIEW)
        if base.grad_fn is None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
    if impl.grad_fn is None and impl.requires_grad:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
