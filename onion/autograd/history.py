"""Where a tensor's gradient comes from: ``set_history``, ``rebase_history``, and views.

A view with history becomes a ``DifferentiableViewImpl``, whose ``grad_fn``
is rebuilt from its base after the base is modified in place.  An in-place op
on a view makes the base's node a ``CopySlices`` (PyTorch's variable.cpp and
CopySlices); the gradient of a view of a changed base is as_strided's.
"""
from __future__ import annotations

import weakref

from ..aten.at import at
from ..aten.math_bits import CONJ, MATH_BITS, NEG
from ..core.creation_meta import view_rebase_error
from ..core.geometry import contiguous_strides
from ..core.tensor import make_tensor
from ..core import tensor_impl
from ..core.tensor_impl import ViewImpl
from ..core.tls import state as _tls_state
from .graph import Node, _same_layout, accumulate_nonleaf_grad, gradient_edge, meta, short_node_name
from .strided_backward import as_strided_backward


def set_history(t, node, output_nr: int = 0) -> None:
    """``t`` is the ``output_nr``-th output of ``node``; a view starts tracking its base's changes."""
    impl = t._impl
    if impl._base is not None and type(impl) is not DifferentiableViewImpl:
        impl.__class__ = DifferentiableViewImpl
    impl.grad_fn = node                 # graph.set_grad_fn, inlined: this runs for every recorded op
    impl.requires_grad = True
    impl.output_nr = output_nr
    if impl._retains_grad and "_retain_hook" in impl.__dict__:
        _move_retain_hook(impl)


def retain_grad(t) -> None:
    """``Tensor.retain_grad``: keep the gradient of a non-leaf in ``.grad``.

    The hook follows the tensor: after an in-place op gives it a new
    grad_fn, the gradient retained is that of the new value, as in PyTorch.
    It holds the tensor weakly, so the graph does not keep it alive.
    """
    impl = t._impl
    if not impl.requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if impl.grad_fn is None or impl._retains_grad:
        return
    impl._retains_grad = True
    _move_retain_hook(impl)


def _move_retain_hook(impl) -> None:
    old = impl.__dict__.get("_retain_hook")
    if old is not None:
        old.remove()
    ref = weakref.ref(impl)

    def keep(grad):
        target = ref()
        if target is not None:
            accumulate_nonleaf_grad(target, grad, _tls_state().grad_enabled)
    fn = impl.__dict__.get("_grad_fn") if isinstance(impl, DifferentiableViewImpl) else impl.grad_fn
    impl._retain_hook = fn._add_tensor_pre_hook(impl.output_nr, keep)


class DifferentiableViewImpl(ViewImpl):
    """A view with autograd history (PyTorch's DifferentiableViewMeta).

    Its ``grad_fn`` is remembered with the version counter's value; after an
    in-place change made through the base or through another view, the stale
    node is replaced on the next read by an ``AsStridedBackward0`` of the
    base's current history, so gradients see the modification.
    """

    __slots__ = ()

    @property
    def grad_fn(self):
        d = self.__dict__
        fn = d.get("_grad_fn")
        if d.get("_view_version") != self.version:
            base = self._base
            if self._creation_meta and (fn is not None or base.requires_grad):
                # a view of a view made in no_grad / inference mode: its history cannot be rebuilt
                name = None if fn is None else short_node_name(fn)
                raise RuntimeError(view_rebase_error(self._creation_meta, True, name, self.output_nr))
            if base.requires_grad:
                fn = regenerate_view_node(base, self)
                self.output_nr = 0
            d["_grad_fn"] = fn
            d["_view_version"] = self.version
            if "_retain_hook" in d and fn is not None:
                _move_retain_hook(self)
        return fn

    @grad_fn.setter
    def grad_fn(self, fn):
        d = self.__dict__
        d["_grad_fn"] = fn
        d["_view_version"] = self.version


def _view_gains_history(impl) -> None:
    """A LazyViewImpl's base now requires grad: it becomes a differentiable view whose node is rebuilt
    from the base's on its next read (the stale version forces that)."""
    impl.__class__ = DifferentiableViewImpl
    d = impl.__dict__
    d.pop("_own_requires_grad", None)
    d.pop("_lazy_grad_fn", None)
    impl.requires_grad = True
    d["_grad_fn"] = None
    d["_view_version"] = -1


tensor_impl.VIEW_GAINS_HISTORY[0] = _view_gains_history


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
        self.view_bits = _relative_bits(base, view)
        self.dtype = base._impl.dtype
        self.fn = fn
        self.next_functions = (gradient_edge(base),) + tuple(fn.next_functions[1:])
        self._in_meta = (meta(base),) + tuple(getattr(fn, "_in_meta", (None,) * len(fn.next_functions))[1:])

    def apply(self, grads):
        (grad,) = grads
        sizes, strides, offset = self.base_geom
        vs, vst, voff = self.view_geom
        if _same_layout(sizes, strides, contiguous_strides(sizes)):
            result = at.clone(grad, "contiguous_format")
        else:
            result = at.empty_strided(list(sizes), list(strides), grad.dtype, None, grad.device, None)
            at.copy_(result, grad, False)
        grad_slice = _with_bits(at.as_strided(result, list(vs), list(vst), voff - offset), self.view_bits)
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
        self.view_bits = _relative_bits(base, view)
        if self.view_bits and self.view_geom == self.base_geom:     # a plain conj()/_neg_view() of the base
            self._name = "ConjBackward0" if self.view_bits == CONJ else "NegViewBackward0" \
                if self.view_bits == NEG else self._name
        self._in_meta = (meta(base),)

    def apply(self, grads):
        (grad,) = grads
        if grad is None:
            return (None,)
        sizes, strides, offset = self.base_geom
        vs, vst, voff = self.view_geom
        if self.view_bits:      # a conj()/neg() view: each is its own adjoint (ConjBackward0, NegViewBackward0)
            grad = at.clone(_with_bits(grad, self.view_bits), None)
        return (as_strided_backward(grad, sizes, strides, offset, vs, vst, voff),)


def _relative_bits(base, view) -> int:
    """The Conjugate/Negative bits the view has and its base has not (or the reverse): the view's values are
    the base's conjugated/negated."""
    return (base._impl.keyset ^ view._impl.keyset) & MATH_BITS


def _with_bits(t, bits):
    """``t`` seen through a conj()/neg() view, as the view ``bits`` describe."""
    if bits & CONJ and t._impl.dtype.is_complex:
        t = at.conj(t)
    if bits & NEG:
        t = at._neg_view(t)
    return t
