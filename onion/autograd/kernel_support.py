"""What the generated autograd kernels call: edges, history, in-place rules, CopySlices."""
from __future__ import annotations

from ..core.dispatch_key import AUTOGRAD_MASK  # noqa: F401  (re-exported for generated code)
from ..core.tls import tls
from .graph import (Node, NotImplementedBackward, SavedVariable, detach, gradient_edge,  # noqa: F401
                    set_history)

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
    """In-place ops that need their input's old value save a copy of it."""
    from ..aten.at import at
    prev = tls.exclude
    tls.set_exclude(prev | AUTOGRAD_MASK)
    try:
        return at.clone(t, None)
    finally:
        tls.set_exclude(prev)


def check_inplace(t) -> None:
    impl = t._impl
    if impl.grad_fn is None and impl.requires_grad and tls.grad_enabled:
        if impl._base is not None and impl._base.requires_grad:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    base = impl._base
    if base is not None and base.grad_fn is None and base.requires_grad and tls.grad_enabled:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")


def rebase_history(t, node) -> None:
    """After an in-place op: ``t`` is now the output of ``node`` (through CopySlices if it is a view)."""
    impl = t._impl
    base = impl._base
    if base is None or base is impl:
        set_history(t, node)
        return
    from ..core.tensor import make_tensor
    base_t = make_tensor(base)
    copy_slices = CopySlices(base_t, t, node)
    set_history(base_t, copy_slices)
    view_node = ViewOfBase(base_t, t)
    view_node.next_functions = ((copy_slices, 0),)
    set_history(t, view_node)


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
        from ..aten.at import at
        (grad,) = grads
        sizes, strides, offset = self.base_geom
        vs, vst, voff = self.view_geom
        result = at.empty_strided(list(sizes), list(strides), grad.dtype, None, grad.device, None)
        at.copy_(result, grad, False)
        grad_slice = at.as_strided(result, list(vs), list(vst), voff - offset)
        res = self.fn.apply((at.clone(grad_slice, None),))
        if res[0] is not None:
            at.copy_(grad_slice, res[0], False)
        else:
            at.fill_Scalar(grad_slice, 0)
        return (result,) + tuple(res[1:])

    def release_variables(self):
        self.fn.release_variables()


class ViewOfBase(Node):
    """A modified view's node: its gradient is the base's, restricted to the view."""

    _name = "AsStridedBackward0"

    def __init__(self, base, view):
        super().__init__()
        self.base_geom = _geometry(base._impl)
        self.view_geom = _geometry(view._impl)
        self._in_meta = (meta(base),)

    def apply(self, grads):
        from ..aten.at import at
        (grad,) = grads
        sizes, strides, offset = self.base_geom
        vs, vst, voff = self.view_geom
        out = at.zeros(list(sizes), grad.dtype, None, grad.device, None)
        target = at.as_strided(out, list(vs), list(vst), voff - offset) if tuple(strides) == tuple(
            at.zeros(list(sizes), grad.dtype, None, grad.device, None).stride()) else None
        if target is None:
            full = at.empty_strided(list(sizes), list(strides), grad.dtype, None, grad.device, None)
            at.fill_Scalar(full, 0)
            at.copy_(at.as_strided(full, list(vs), list(vst), voff - offset), grad, False)
            return (full,)
        at.copy_(target, grad, False)
        return (out,)
