"""The autograd graph: ``Node`` and its edges, ``AccumulateGrad`` for leaves, ``SavedVariable``.

An edge is ``(node, input_nr)``: where a gradient goes next.  A tensor that
requires grad is either a leaf (gradients accumulate into ``.grad`` through
its ``AccumulateGrad``) or the ``output_nr``-th output of its ``grad_fn``.
"""
from __future__ import annotations

import itertools
import weakref

from ..core.tensor import make_tensor
from ..core.tensor_impl import TensorImpl

_sequence = itertools.count()

ERR_BACKWARD_TWICE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward.")


class Node:
    """A function of the backward graph; ``apply(grads)`` returns one gradient per next edge."""

    _name = None
    next_functions: tuple = ()

    def __init__(self):
        self._sequence_nr = next(_sequence)
        self._pre_hooks = None       # output_nr -> [fn(grad) -> grad|None]
        self._hooks = None           # [fn(grad_inputs, grad_outputs)]
        self._node_pre_hooks = None  # [fn(grad_outputs) -> grad_outputs|None]
        self.metadata = {}
        self._released = False

    def name(self) -> str:
        return self._name or type(self).__name__

    def apply(self, grads):
        raise NotImplementedError

    def __call__(self, *grads):
        return self.apply(grads)

    def release_variables(self) -> None:
        self._released = True
        for k, v in list(vars(self).items()):
            if isinstance(v, SavedVariable):
                v.release()

    def register_hook(self, fn):
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(fn)
        return _RemovableHandle(self._hooks, fn)

    def register_prehook(self, fn):
        if self._node_pre_hooks is None:
            self._node_pre_hooks = []
        self._node_pre_hooks.append(fn)
        return _RemovableHandle(self._node_pre_hooks, fn)

    def _add_tensor_pre_hook(self, output_nr: int, fn):
        if self._pre_hooks is None:
            self._pre_hooks = {}
        hooks = self._pre_hooks.setdefault(output_nr, [])
        hooks.append(fn)
        return _RemovableHandle(hooks, fn)

    def __repr__(self):
        return f"<{self.name()} object at {hex(id(self))}>"


class _RemovableHandle:
    def __init__(self, hooks, fn):
        self._hooks = hooks
        self._fn = fn

    def remove(self):
        if self._fn in self._hooks:
            self._hooks.remove(self._fn)


class AccumulateGrad(Node):
    """The sink of a leaf: adds incoming gradients into ``variable.grad``."""

    _name = "torch::autograd::AccumulateGrad"

    def __init__(self, variable):
        super().__init__()
        self._sequence_nr = float("inf")   # runs as soon as it is ready, as in PyTorch
        self.variable = variable

    def apply(self, grads):
        from ..core.tls import tls
        (grad,) = grads
        impl = self.variable._impl
        if grad is None:
            return ()
        if impl.grad is None:
            impl.grad = grad if tls.grad_enabled else _detached(grad, copy=True)
        elif tls.grad_enabled:
            impl.grad = impl.grad + grad
        else:
            from ..aten.at import at
            at.add__Tensor(impl.grad, grad, 1)
        return ()


def _detached(t, copy=False):
    impl = t._impl
    if copy:
        from ..aten.at import at
        from .grad_mode import no_grad
        with no_grad():
            return at.clone(t, None)
    return detach(t)


def detach(t):
    """A new tensor sharing storage and version counter, outside the graph."""
    impl = t._impl
    d = TensorImpl(impl._array, impl.dtype, impl.device, impl.keyset)
    d._vc = impl.version_counter()
    if impl._storage is not None:
        d._storage, d._offset = impl._storage, impl._offset
    d._base = impl._base
    if impl._strides is not None:
        d._strides = impl._strides
    if impl._inference:
        d._inference = True
    return make_tensor(d)


def grad_accumulator(t):
    """The (unique, weakly cached) AccumulateGrad of a leaf that requires grad."""
    impl = t._impl
    ref = getattr(impl, "_grad_acc", None)
    node = ref() if ref is not None else None
    if node is None:
        node = AccumulateGrad(t)
        impl._grad_acc = weakref.ref(node)
    return node


def gradient_edge(t):
    """Where a gradient for ``t`` goes: its grad_fn, its AccumulateGrad, or nowhere."""
    if t is None:
        return (None, 0)
    impl = t._impl
    fn = impl.grad_fn
    if fn is not None:
        return (fn, impl.output_nr)
    if impl.requires_grad:
        return (grad_accumulator(t), 0)
    return (None, 0)


def set_history(t, node, output_nr: int = 0) -> None:
    impl = t._impl
    impl.grad_fn = node
    impl.requires_grad = True
    impl.output_nr = output_nr


def _type_desc(impl) -> str:
    names = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
             "complex64": "ComplexFloat", "complex128": "ComplexDouble"}
    kind = names.get(impl.dtype.name, impl.dtype.scalar_type_name)
    prefix = "torch" if impl.device.type == "cpu" else f"torch.{impl.device.type}"
    return f"{prefix}.{kind}Tensor [{', '.join(str(s) for s in impl._array.shape)}]"


class SavedVariable:
    """A tensor saved for backward, with the version it had when saved.

    Saved outputs keep only a detached alias (no reference to their own
    grad_fn, so no cycle); unpacking re-attaches the node.
    """

    __slots__ = ("data", "version", "vc", "is_output", "output_nr", "grad_fn_name", "was_leaf", "released",
                 "requires_grad", "leaf_ref")

    def __init__(self, tensor, is_output: bool):
        impl = tensor._impl
        if impl._inference and not _inference_now():
            raise RuntimeError("Inference tensors cannot be saved for backward. To work around you can make a "
                               "clone to get a normal tensor and use it in autograd.")
        self.vc = impl.version_counter()
        self.version = self.vc[0]
        self.is_output = is_output
        self.output_nr = impl.output_nr
        self.released = False
        self.requires_grad = impl.requires_grad
        self.grad_fn_name = None
        if is_output:
            self.data = detach(tensor)
            self.was_leaf = False
        else:
            self.data = tensor
            fn = impl.grad_fn
            self.was_leaf = fn is None
            self.grad_fn_name = fn.name() if fn is not None else None

    def release(self) -> None:
        self.released = True
        self.data = None

    def unpack(self, node=None):
        if self.released:
            raise RuntimeError(ERR_BACKWARD_TWICE)
        if self.vc[0] != self.version:
            impl = self.data._impl
            if self.is_output:
                where = f", which is output {self.output_nr} of {node.name() if node is not None else '?'},"
            elif self.grad_fn_name is not None:
                where = f", which is output {self.output_nr} of {self.grad_fn_name},"
            else:
                where = ""
            raise RuntimeError(
                f"one of the variables needed for gradient computation has been modified by an inplace operation: "
                f"[{_type_desc(impl)}]{where} is at version {self.vc[0]}; expected version {self.version} instead. "
                f"Hint: enable anomaly detection to find the operation that failed to compute its gradient, with "
                f"torch.autograd.set_detect_anomaly(True).")
        if self.is_output and node is not None:
            t = detach(self.data)
            set_history(t, node, self.output_nr)
            return t
        return self.data


def _inference_now() -> bool:
    from ..core.tls import tls
    return tls.inference_mode


class NotImplementedBackward(Node):
    """The node of an operator that has a kernel but no derivative formula."""

    def __init__(self, opname: str):
        super().__init__()
        self.opname = opname
        self._name = "NotImplemented"

    def apply(self, grads):
        raise RuntimeError(f"derivative for {self.opname} is not implemented")


class GraphRoot(Node):
    _name = "GraphRoot"
