"""``onion.autograd.Function``: user-defined forward/backward pairs.

``Cls.apply(*args)`` runs ``forward`` with grad disabled, then (if any input
requires grad) makes a ``ClsBackward`` node whose ``apply`` calls the user's
``backward`` with the same ``ctx``.
"""
from __future__ import annotations

from ..core.creation_meta import CreationMeta
from ..core.tensor import Tensor
from ..core.tls import tls, state as _tls_state
from .grad_mode import no_grad
from .graph import Node, SavedVariable, detach, gradient_edge, meta
from .history import rebase_history, set_history
from ..aten.at import at
from ..dispatch import profiling as _profiling


class FunctionCtx:
    """What ``forward`` and ``backward`` share (``ctx``)."""

    def save_for_backward(self, *tensors):
        self._to_save = tensors

    @property
    def saved_tensors(self):
        saved = getattr(self, "_saved", None)
        if saved is None:
            return ()
        return tuple(None if s is None else s.unpack(self if s.is_output else None) for s in saved)

    def mark_dirty(self, *tensors):
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool):
        self.materialize_grads = value


class BackwardCFunction(Node, FunctionCtx):
    """The node of one ``Function.apply`` call; it is also the ``ctx``."""

    _cls = None
    materialize_grads = True

    def apply(self, grads):
        grads = list(grads)
        if self.materialize_grads:
            for i, g in enumerate(grads):
                out_meta = self._output_meta[i]
                if g is None and out_meta is not None:     # None for a non-tensor output
                    shape, dtype, device = out_meta
                    grads[i] = at.zeros(list(shape), dtype, None, device, None)
        out = self._cls.backward(self, *grads)
        if not isinstance(out, tuple):
            out = (out,)
        n = len(self.next_functions)
        if len(out) > n and all(g is None for g in out[n:]):
            out = out[:n]            # extra gradients are fine as long as they are all None
        if len(out) != n:
            raise RuntimeError(f"function {self.name()} returned an incorrect number of gradients "
                               f"(expected {n}, got {len(out)})")
        for i, g in enumerate(out):
            if g is not None and not self._tensor_input[i]:
                raise RuntimeError(f"function {self.name()} returned a gradient different than None at position "
                                   f"{i + 1}, but the corresponding forward input was not a Variable")
        return tuple(g if nxt is not None else None for (nxt, _), g in zip(self.next_functions, out))

    def release_variables(self):
        super().release_variables()
        for s in getattr(self, "_saved", None) or ():
            if s is not None:
                s.release()


class FunctionMeta(type):
    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_cls = type(f"{name}Backward", (BackwardCFunction,), {"_cls": cls})


class Function(metaclass=FunctionMeta):
    """Subclass with static ``forward(ctx, *args)`` and ``backward(ctx, *grads)``."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        rec = _profiling.ACTIVE[0]
        if rec is None:
            return cls._apply(*args, **kwargs)
        ev = rec.begin(cls.__name__, "autograd")      # the profiler names the call after the Function (PyTorch)
        try:
            return cls._apply(*args, **kwargs)
        finally:
            rec.end(ev)

    @classmethod
    def _apply(cls, *args, **kwargs):
        node = cls._backward_cls()
        tensor_args = [a for a in args if isinstance(a, Tensor)]
        record = _tls_state().grad_enabled and any(a._impl.requires_grad for a in tensor_args)
        node.needs_input_grad = tuple(isinstance(a, Tensor) and a._impl.requires_grad for a in args)
        prev = _tls_state().grad_enabled
        tls.grad_enabled = False
        try:
            out = cls.forward(node, *args, **kwargs)
        finally:
            tls.grad_enabled = prev
        single = not isinstance(out, tuple)
        outs = (out,) if single else out
        if not record:
            return out
        node.next_functions = tuple(gradient_edge(a) if isinstance(a, Tensor) else (None, 0) for a in args)
        node._tensor_input = tuple(isinstance(a, Tensor) for a in args)
        node._in_meta = tuple(meta(a) if isinstance(a, Tensor) else None for a in args)
        non_diff = {id(t._impl) for t in getattr(node, "_non_differentiable", ())}
        dirty = {id(t._impl) for t in getattr(node, "_dirty", ())}
        for t in getattr(node, "_dirty", ()):
            t._impl.bump_version()         # as PyTorch's mark_dirty, even when forward wrote through .data
        input_impls = {id(a._impl) for a in tensor_args}
        results = []
        node._output_meta = []
        node._num_outputs = len(outs)
        for i, o in enumerate(outs):
            if not isinstance(o, Tensor):
                results.append(o)
                node._output_meta.append(None)
                continue
            impl = o._impl
            node._output_meta.append((tuple(impl._array.shape), impl.dtype, impl.device))
            differentiable = id(impl) not in non_diff and (impl.dtype.is_floating_point or impl.dtype.is_complex)
            if id(impl) in dirty:
                if differentiable:
                    if impl.grad_fn is None and impl.requires_grad:
                        raise RuntimeError("a leaf Variable that requires grad has been used in an in-place "
                                           "operation.")
                    if impl._base is not None and len(outs) > 1:
                        raise RuntimeError("If your Function modifies inplace an input that is a view of another "
                                           "Tensor, your Function cannot return more than one Tensor. This is not "
                                           "supported by the current autograd engine. You should either make sure "
                                           "the input is not a view (using .clone() for example) or make your "
                                           "Function only return one Tensor (potentially splitting it into two "
                                           "Functions: one doing the inplace that returns a single Tensor and a "
                                           "second one that does the other operations). You can ask on the forum "
                                           "https://discuss.pytorch.org/ if you need help to do this change.")
                    impl.grad = None
                    if impl._base is not None:
                        rebase_history(o, node)
                    else:
                        set_history(o, node, i)
            elif id(impl) in input_impls:
                if differentiable:
                    # an input returned as-is: a view of it, outside the graph, that this node owns (PyTorch)
                    with no_grad():
                        o = at.alias(o)
                    if o._impl._base is not None:          # an inference tensor's alias is no view
                        o._impl._creation_meta = CreationMeta.IN_CUSTOM_FUNCTION
                    set_history(o, node, i)
                else:
                    o = detach(o)
            elif differentiable:
                if impl._base is not None:
                    # a view made in forward: modifying it in place later would bypass the custom backward
                    impl._creation_meta = CreationMeta.IN_CUSTOM_FUNCTION
                set_history(o, node, i)
            elif impl.requires_grad and impl.grad_fn is None:
                impl.requires_grad = False
            results.append(o)
        to_save = node.__dict__.pop("_to_save", ())
        out_ids = {id(r._impl): k for k, r in enumerate(results) if isinstance(r, Tensor)}
        node._saved = tuple(None if t is None else SavedVariable(t, id(t._impl) in out_ids) for t in to_save)
        # what forward handed to ctx may be this node's own outputs: kept, they would make a cycle
        # (output -> grad_fn -> ctx -> output) that only the cyclic collector frees, as PyTorch clears them too
        node.__dict__.pop("_dirty", None)
        node.__dict__.pop("_non_differentiable", None)
        return results[0] if single else tuple(results)


class once_differentiable:  # noqa: N801 - PyTorch's name
    def __new__(cls, fn):
        return fn
