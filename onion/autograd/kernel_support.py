"""What the generated autograd kernels call: edges, history, in-place rules.

Most of it is re-exported from where it lives (graph, history), so the
generated code has one module to import.
"""
from __future__ import annotations

from ..core.creation_meta import view_rebase_error
from ..core.dispatch_key import AUTOGRAD_MASK  # noqa: F401  (re-exported for generated code)
from ..core.tls import state as _tls_state
from ..aten.at import at
from .graph import NotImplementedBackward, SavedVariable, gradient_edge, meta, next_sequence_nr  # noqa: F401  (re-exported)
from .graph import short_node_name
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


def check_inplace(t) -> None:
    """PyTorch's check_inplace: no in-place on a leaf that requires grad, on a view of one, or on a view
    made in no_grad / inference mode (CreationMeta), when something in the call requires grad."""
    if not _tls_state().grad_enabled:
        return
    impl = t._impl
    base = impl._base
    if base is not None:
        meta = impl._creation_meta
        if meta:
            fn = impl.__dict__.get("_grad_fn")
            name = None if fn is None else short_node_name(fn)
            raise RuntimeError(view_rebase_error(meta, False, name, impl.output_nr))
        if base.requires_grad and base.grad_fn is None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
    if impl.grad_fn is None and impl.requires_grad:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
