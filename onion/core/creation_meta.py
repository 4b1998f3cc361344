"""How a view was made (PyTorch's ``CreationMeta``), and the error of modifying it in place.

A view made while grad mode was off (``no_grad``) or in ``inference_mode``
records nothing for autograd, yet it still shares memory with a base that
may require grad.  Modifying such a view, or its base, in place with grad
mode on would leave the graph silently wrong, so PyTorch forbids it and says
in which mode the view was made.  The flag lives here, below the view
kernels (``aten``) that set it and the autograd code that reads it.
"""
from __future__ import annotations

from enum import IntEnum

from .tls import state as _tls_state


class CreationMeta(IntEnum):
    """PyTorch's values, in its order."""

    DEFAULT = 0
    IN_CUSTOM_FUNCTION = 1
    MULTI_OUTPUT_NODE = 2
    NO_GRAD_MODE = 3
    INFERENCE_MODE = 4


_NO_GRAD = CreationMeta.NO_GRAD_MODE
_INFERENCE = CreationMeta.INFERENCE_MODE


def note_view_creation(view, parent) -> None:
    """Give a new view (an impl) of a normal tensor its creation meta, when it is not DEFAULT.

    Called by the view kernels only when grad mode is off or ``parent`` carries a meta
    already: a view of such a view keeps the stricter of the two (inference mode wins, as
    PyTorch's ``propagate_creation_meta``).  A view made without grad mode of a base that
    requires grad still reports ``requires_grad`` (PyTorch derives it from the base), but
    records no history of its own.
    """
    meta = parent._creation_meta
    if not _tls_state().grad_enabled:
        if meta != _INFERENCE:
            meta = _INFERENCE if _tls_state().inference_mode else _NO_GRAD
        if parent.requires_grad:
            view.requires_grad = True
    if meta:
        view._creation_meta = meta
        view._view_version = view.version


def view_rebase_error(meta: int, indirect: bool, grad_fn_name: str | None = None, output_nr: int = 0) -> str:
    """PyTorch's text for an in-place change that reaches a view made in no_grad or inference mode.

    ``indirect``: the base or another view was modified (found when the view's history is
    next read); else the view itself is being modified.  ``grad_fn_name``: the short name
    of the view's own node when it is a view of such a view.
    """
    modified = "its base or another view of its base has been" if indirect else "is being"
    if meta == CreationMeta.IN_CUSTOM_FUNCTION and grad_fn_name is not None:
        return (f"Output {output_nr} of {grad_fn_name} is a view and {modified} modified inplace. This view was "
                f"created inside a custom Function (or because an input was returned as-is) and the autograd logic "
                f"to handle view+inplace would override the custom backward associated with the custom Function, "
                f"leading to incorrect gradients. This behavior is forbidden. You can fix this by cloning the output "
                f"of the custom Function.")
    if meta == CreationMeta.MULTI_OUTPUT_NODE:
        head = (f"Output {output_nr} of {grad_fn_name} is a view and {modified} modified inplace."
                if grad_fn_name is not None else
                f"A view was created in no_grad mode and {modified} modified inplace with grad mode enabled.")
        return (f"{head} This view is the output of a function that returns multiple views. Such functions do not "
                f"allow the output views to be modified inplace. You should replace the inplace operation by an "
                f"out-of-place one.")
    if grad_fn_name is None:
        prefix = "A view was created in"
    else:
        prefix = f"Output {output_nr} of {grad_fn_name} is a view of a view which was created in"
    if meta == _INFERENCE:
        return (f"{prefix} inference mode and {modified} modified inplace in normal mode. Given that this use "
                f"case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both "
                f"the view and the inplace either both inside the inference_mode block (if you don't want the "
                f"inplace to be tracked) or both outside (if you want the inplace to be tracked).")
    return (f"{prefix} no_grad mode and {modified} modified inplace with grad mode enabled. Given that this use "
            f"case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the "
            f"view and the inplace either both inside the no_grad block (if you don't want the inplace to be "
            f"tracked) or both outside (if you want the inplace to be tracked).")


def check_view_unchanged(impl) -> None:
    """Reading the history of a no-history view whose base changed in place since: PyTorch's error."""
    base = impl._base
    if base is not None and base.requires_grad and impl.__dict__.get("_view_version") != impl.version:
        raise RuntimeError(view_rebase_error(impl._creation_meta, indirect=True))
