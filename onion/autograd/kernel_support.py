"""What the generated autograd kernels call: edges, history, in-place rules, CopySlices."""
from __future__ import annotations

from ..core.dispatch_key import AUTOGRAD_MASK  # noqa: F401  (re-exported for generated code)
from ..core.tls import tls
from ..aten.at import at
from ..core.tensor import make_tensor
from .graph import (Node, NotImplementedBackward, SavedVariable, _contiguous_strides, _same_layout,  # noqa: F401
                    detach, gradient_edge, set_history)

edge = gradient_edge


def meta(t):
    """What the engine needs to shape a gradient for this input: (sizes, dtype, device)."""
    if t is None:
        return None
    impl = t._impl
    return (tuple(impl._array.shape), impl.dtype, impl.device)


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


def rebase_history(t, node) -> None:
    """After an in-place op: ``t`` is now the output of ``node`` (through CopySlices if it is a view)."""
    impl = t._impl
    base = impl._base
    if base is None or base is impl:
        set_history(t, node)
        return
    base_t = make_tensor(base)
    copy_slices = CopySlices(base_t, t, node)
    set_history(base_t, copy_slices)
    view_node = ViewOfBase(base_t, t)
    view_node.next_functions = ((copy_slices, 0),)
    set_history(t, view_node)


def regenerate_view_node(base_impl, view_impl):
    """The node of a view whose base changed in place since its history was recorded."""
    base_t, view_t = make_tensor(base_impl), make_tensor(view_impl)
    node = ViewOfBase(base_t, view_t)
    node.next_functions = (gradient_edge(base_t),)
    return node


def _geometry(impl):
    return tuple(impl._array.shape), impl.strides, impl.storage_offset()


class CopySlices(Node):
    """The base's node after an in-place op on one of its views (PyTorch's CopySlices)."""

    _name = "torch::autograd::CopySlices"

    def __init__(self, base, view, fn):
        super().__init__()
        self.base_geom = _geometry(base._impl)
        self.view_geom = _geometry(view._impl)
        self.dtype = base._impl.dtype
        self.fn = fn
        self.next_functions = (gradient_edge(base),) + tuple(fn.next_functions[1:])
        self._in_meta = (meta(base),) + tuple(getattr(fn, "_in_meta", (None,) * len(fn.next_functions))[1:])

    def apply(self, grads):
        (grad,) = grads
        sizes, strides, offset = self.base_geom
        vs, vst, voff = self.view_geom
        if _same_layout(sizes, strides, _contiguous_strides(sizes)):
            result = at.clone(grad, "contiguous_format")
        else:
            result = at.empty_strided(list(sizes), list(strides), grad.dtype, None, grad.device, None)
            at.copy_(result, grad, False)
        grad_slice = at.as_strided(result, list(vs), list(vst), voff - offset)
        res = self.fn.apply((at.clone(grad_slice, None),))
        if res[0] is not None:
            at.copy_(grad_slice, res[0], False)
        else:
            at.fill__Scalar(grad_slice, 0)
        return (result,) + tuple(res[1:])

    def release_variables(self):
        self.fn.release_variables()


class ViewOfBase(Node):
    """A modified view's node: its gradient is the base's, restricted to the view (as_strided's backward)."""

    _name = "AsStridedBackward0"

    def __init__(self, base, view):
        super().__init__()
        self.base_geom = _geometry(base._impl)
        self.view_geom = _geometry(view._impl)
        self._in_meta = (meta(base),)

    def apply(self, grads):
        from .formulas import as_strided_backward
        (grad,) = grads
        if grad is None:
            return (None,)
        sizes, strides, offset = self.base_geom
        vs, vst, voff = self.view_geom
        return (as_strided_backward(grad, sizes, strides, offset, vs, vst, voff),)
