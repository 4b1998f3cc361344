"""The autograd graph: ``Node`` and its edges, ``AccumulateGrad`` for leaves, ``SavedVariable``.

An edge is ``(node, input_nr)``: where a gradient goes next.  A tensor that
requires grad is either a leaf (gradients accumulate into ``.grad`` through
its ``AccumulateGrad``) or the ``output_nr``-th output of its ``grad_fn``.
How views and in-place ops change a tensor's history is in ``history.py``.
"""
from __future__ import annotations

import itertools
import weakref
from sys import getrefcount as _refs

from numpy import add as _np_add, ndarray as _ndarray

from ..core.creation_meta import check_view_unchanged
from ..core.geometry import contiguous_strides
from ..core.tls import state as _tls_state
from ..core.tensor import Tensor, make_tensor
from ..aten.at import at
from .grad_mode import no_grad, enable_grad
import re

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
    _in_meta = None           # per next edge: (sizes, dtype, device) the gradient must have
    _num_outputs = 1
    _is_accumulate = False
    _saved_names = None       # generated nodes list their SavedVariable attributes
    _saved_outputs: dict = {}  # output name -> attribute (``indices`` -> ``s_out1``), several-output nodes

    _pre_hooks = None       # output_nr -> [fn(grad) -> grad|None]
    _hooks = None           # [fn(grad_inputs, grad_outputs)]
    _node_pre_hooks = None  # [fn(grad_outputs) -> grad_outputs|None]
    _released = False

    def __init__(self):
        self._sequence_nr = next(_sequence)

    @property
    def metadata(self) -> dict:
        d = self.__dict__.get("_metadata")
        if d is None:
            d = self._metadata = {}
        return d

    def name(self) -> str:
        return self._name or type(self).__name__

    def __getattr__(self, attr):
        """``grad_fn._saved_self``, ``_saved_other``, ``_saved_result``: what the node saved, as PyTorch
        exposes it (None when the input was not needed and so not saved)."""
        if attr.startswith("_saved_") and attr != "_saved_names":
            key = attr[len("_saved_"):]
            out = type(self)._saved_outputs.get(key)       # a named output of a several-output operator
            for stored in ((out,) if out else ("s_" + key, "a_" + key)):
                if hasattr(type(self), stored) or stored in self.__dict__:
                    value = getattr(self, stored)
                    if type(value) is list:                 # a saved Tensor[] argument
                        return [None if v is None else v.unpack() for v in value]
                    if stored[0] == "s" and value is not None:
                        return value.unpack(self) if key == "result" or out else value.unpack()
                    return value
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{attr}'")

    def apply(self, grads):
        raise NotImplementedError

    def __call__(self, *grads):
        return self.apply(grads)

    def release_variables(self) -> None:
        names = self._saved_names
        if names is not None:
            if names:
                self._released = True
                d = self.__dict__
                for n in names:
                    v = d.get(n)
                    if v is not None:
                        for sv in (v if type(v) is list else (v,)):    # a saved Tensor[] is a list
                            if sv is not None:
                                sv.released = True
                                sv.data = None
            return
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
        return f"<{self.name().rsplit('::', 1)[-1]} object at {hex(id(self))}>"


class _RemovableHandle:
    def __init__(self, hooks, fn):
        self._hooks = hooks
        self._fn = fn

    def remove(self):
        if self._fn in self._hooks:
            self._hooks.remove(self._fn)


class GeneratedNode(Node):
    """The base of the nodes generated from derivatives.yaml.  Their recording kernel makes one on every
    recorded call, so it is made with the cheapest class call (no Python ``__init__``) and the kernel
    numbers it itself: ``node._sequence_nr = next_sequence_nr()``."""

    __init__ = object.__init__


next_sequence_nr = _sequence.__next__


class AccumulateGrad(Node):
    """The sink of a leaf: adds incoming gradients into ``variable.grad``."""

    _name = "torch::autograd::AccumulateGrad"
    _is_accumulate = True
    _saved_names = ()
    _sequence_nr = float("inf")         # runs as soon as it is ready, as in PyTorch

    # no Node.__init__: a leaf's accumulator is remade whenever the last graph using it is freed, so it is
    # made on every recorded op of a short-lived graph and must be cheap; ``grad_accumulator`` makes it with
    # the class call CPython makes cheapest (no Python ``__init__``) and sets ``variable``
    __init__ = object.__init__

    def apply(self, grads):
        grad = grads[0]
        if grad is not None:
            # PyTorch steals a gradient no one else holds (use count 1) instead of copying it; here the holders
            # are counted by reference: the engine's input buffer, this local and getrefcount's own argument
            sole = _refs(grad) <= 3 and _refs(grad._impl) <= 2
            accumulate_grad(self.variable._impl, grad, _tls_state().grad_enabled, sole)
        return ()


def accumulate_grad(impl, grad, create_graph: bool, sole: bool = False) -> None:
    """``impl.grad += grad``: a new differentiable sum under create_graph, else in place.

    A first gradient is taken as it is (detached) when nothing else holds it (``sole``), grad mode is off
    and it already has the variable's layout (PyTorch's gradient layout contract); otherwise it is copied
    into that layout, so ``.grad`` never aliases a buffer of the backward pass (an expanded ones tensor).
    """
    g = impl.grad
    if g is not None and not create_graph and not _tls_state().mode_stack and impl.device.type == "cpu":
        # the common case, done as the kernel would: grad += new (same dtype and shape, on CPU)
        gi, ni = g._impl, grad._impl
        if gi.dtype is ni.dtype and gi._array.shape == ni._array.shape and gi.device is ni.device \
                and gi.dtype.category >= 2 and gi.dtype.name not in ("float16", "bfloat16"):
            try:
                _np_add(gi._array, ni._array, out=gi._array)
                gi.bump_version()
                return
            except TypeError:   # a subclass dispatched in Python has no array to add into: the operator below
                pass
    if impl.grad is None:
        if not create_graph and not grad._impl.requires_grad:
            # nothing to record, so no grad-mode switch
            if sole and _obeys_layout_contract(grad._impl, impl):
                impl.grad = at.detach(grad)
            else:
                impl.grad = _clone_obey_contract(grad, impl)
            return
        with enable_grad() if create_graph else no_grad():
            impl.grad = _clone_obey_contract(grad, impl)
    elif create_graph:
        with enable_grad():
            impl.grad = impl.grad + grad
    else:
        with no_grad():
            at.add__Tensor(impl.grad, grad, 1)


def accumulate_nonleaf_grad(impl, grad, create_graph: bool) -> None:
    """A retained (or ``backward(inputs=...)``-captured) gradient of a non-leaf: a contiguous copy first,
    then ``grad + new`` out of place, as PyTorch's retain_grad hook."""
    with enable_grad() if create_graph else no_grad():
        if impl.grad is None:
            impl.grad = at.clone(grad, "contiguous_format")
        else:
            impl.grad = impl.grad + grad


def _obeys_layout_contract(g, var) -> bool:
    """Whether gradient ``g`` may become ``var``'s ``.grad`` as it is: ``var``'s strides where ``var`` is dense
    (size-1 dimensions aside, unless broadcast with stride 0), else row-major contiguous."""
    ga, va = g._array, var._array
    if (type(ga) is _ndarray and type(va) is _ndarray and ga.shape == va.shape and ga.flags.c_contiguous
            and va.flags.c_contiguous and 1 not in va.shape and 0 not in va.shape):
        return True     # both row-major with no size-0/1 dims: the same strides, and var's are dense
    sizes = tuple(var._array.shape)
    strides = var.strides
    if _non_overlapping_and_dense(sizes, strides):
        return all((gs != 0) if n == 1 else (gs == vs) for n, gs, vs in zip(g._array.shape, g.strides, strides))
    return _same_layout(tuple(g._array.shape), g.strides, contiguous_strides(tuple(g._array.shape)))


def _clone_obey_contract(grad, var):
    """A copy of ``grad`` with ``var``'s strides when ``var`` is dense, else contiguous (as PyTorch)."""
    sizes = tuple(var._array.shape)
    strides = var.strides
    if not _non_overlapping_and_dense(sizes, strides):
        return at.clone(grad, "contiguous_format")
    out = at.new_empty_strided(grad, list(sizes), list(strides), var.dtype, None, var.device, None)
    return at.copy_(out, grad, False)


def _same_layout(sizes, a, b) -> bool:
    return all(x == y for n, x, y in zip(sizes, a, b) if n != 1)


def _non_overlapping_and_dense(sizes, strides) -> bool:
    dims = sorted((st, n) for n, st in zip(sizes, strides) if n != 1)
    expected = 1
    for st, n in dims:
        if st != expected:
            return False
        expected *= n
    return True


# ``detach`` of a subclass tensor with the Python key: set by onion/modes/subclasses.py to hand
# ``aten.detach.default`` to the class's ``__torch_dispatch__`` (None where it does not apply)
_PYTHON_DETACH = [None]


def detach(t):
    """A new tensor sharing storage and version counter, outside the graph (not a view, as in PyTorch).

    For a subclass tensor dispatched in Python it is what the class's ``__torch_dispatch__`` gives for
    ``aten.detach.default``, as PyTorch's ``shallow_copy_and_detach`` asks it."""
    impl = t._impl
    if type(t) is Tensor:
        return make_tensor(impl.shallow_copy_and_detach())
    if _PYTHON_DETACH[0] is not None:
        out = _PYTHON_DETACH[0](t)
        if out is not None:
            if _BASE_UNPACK[0] is _plain_unpack:
                _enable_subclass_unpack()
            return out
    d = impl.shallow_copy_and_detach()
    if impl._storage is not None:
        # a subclass (its impl always has a storage): the alias keeps its class and attributes (a wrapper's data)
        out = make_tensor(d, type(t))
        out.__dict__.update(t.__dict__)
        return out
    return make_tensor(d)


def grad_accumulator(t):
    """The (unique, weakly cached) AccumulateGrad of a leaf that requires grad."""
    impl = t._impl
    ref = impl._grad_acc
    node = ref() if ref is not None else None
    if node is None:
        node = AccumulateGrad()
        node.variable = t
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
        if impl._creation_meta and impl._base is not None and impl._base.requires_grad:
            # a view made without grad mode: requires grad through its base, but no gradient reaches it
            check_view_unchanged(impl)
            return (None, 0)
        return (grad_accumulator(t), 0)
    return (None, 0)


def set_grad_fn(impl, node, output_nr: int = 0) -> None:
    """Make ``impl`` the ``output_nr``-th output of ``node`` (``history.set_history`` adds what views need)."""
    impl.grad_fn = node
    impl.requires_grad = True
    impl.output_nr = output_nr


def meta(t):
    """What the engine needs to shape a gradient for this input: (sizes, dtype, device)."""
    if t is None:
        return None
    impl = t._impl
    return (tuple(impl._array.shape), impl.dtype, impl.device)


def _type_desc(impl) -> str:
    kind = impl.dtype.scalar_type_name
    prefix = "torch" if impl.device.type == "cpu" else f"torch.{impl.device.type}"
    return f"{prefix}.{kind}Tensor [{', '.join(str(s) for s in impl._array.shape)}]"


class SavedVariable:
    """A tensor saved for backward, with the version it had when saved.

    Saved outputs keep only a detached alias (no reference to their own
    grad_fn, so no cycle); unpacking re-attaches the node.  Saved inputs keep
    the tensor itself, so an error names the node it is an output of now.
    """

    __slots__ = ("data", "version", "vc", "is_output", "output_nr", "released")

    def __init__(self, tensor, is_output: bool):
        impl = tensor._impl
        if impl._inference and not _inference_now():
            raise RuntimeError("Inference tensors cannot be saved for backward. Please do not use Tensors created "
                               "in inference mode in computation tracked by autograd. To work around this, you can "
                               "make a clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` "
                               "instead of `torch.inference_mode()`.")
        vc = impl._vc           # impl.version_counter(), inlined: every recorded operator saves its inputs here
        if vc is None:
            vc = impl._vc = [0]
        self.vc = vc
        self.version = vc[0]
        self.is_output = is_output
        self.output_nr = impl.output_nr
        self.released = False
        self.data = detach(tensor) if is_output else tensor

    def release(self) -> None:
        self.released = True
        self.data = None

    def unpack(self, node=None):
        if self.released:
            raise RuntimeError(ERR_BACKWARD_TWICE)
        if self.vc[0] != self.version:
            raise RuntimeError(self._modified_message(node))
        if self.is_output and node is not None and _tls_state().grad_enabled:
            # a graph is being built (create_graph, or a user reading _saved_result): the output gets
            # its node back; otherwise the alias made at save time serves as is
            t = detach(self.data)         # a fresh alias, never a view: no view history to set up
            set_grad_fn(t._impl, node, self.output_nr)
            return t
        return self.data

    def _modified_message(self, node) -> str:
        """PyTorch's text: the tensor, the node it is an output of (for a saved output: the saving node)."""
        impl = self.data._impl
        if self.is_output:
            fn, nr = node, self.output_nr
        else:
            fn, nr = impl.grad_fn, impl.output_nr
        where = f", which is output {nr} of {short_node_name(fn)}," if fn is not None else ""
        return (f"one of the variables needed for gradient computation has been modified by an inplace operation: "
                f"[{_type_desc(impl)}]{where} is at version {self.vc[0]}; expected version {self.version} "
                f"instead. Hint: enable anomaly detection to find the operation that failed to compute its "
                f"gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")


_plain_init = SavedVariable.__init__
_plain_unpack = SavedVariable.unpack
_MODE_DETACH = [None]


def _init_under_modes(self, tensor, is_output: bool):
    d = _MODE_DETACH[0](tensor) if is_output else None
    if d is None:
        _plain_init(self, tensor, is_output)
    else:       # the mode's detach replaces the plain one (a subclass's would be a second detach)
        _plain_init(self, tensor, False)
        self.is_output = True
        self.data = d


def _unpack_detaching_subclasses(self, node=None):
    """``unpack`` once an output dispatched in Python was saved: each unpack of such an output is a detach
    through its ``__torch_dispatch__`` too, as PyTorch's unpacking makes a new variable of it."""
    t = _plain_unpack(self, node)
    if self.is_output and t is self.data and type(t) is not Tensor:
        return detach(t)
    return t


# the unpack used without modes: the plain one until the first subclass output is saved (so that plain
# tensors pay nothing for the subclass check)
_BASE_UNPACK = [_plain_unpack]


def _enable_subclass_unpack() -> None:
    _BASE_UNPACK[0] = _unpack_detaching_subclasses
    if _MODE_DETACH[0] is None:
        SavedVariable.unpack = _unpack_detaching_subclasses


def _unpack_under_modes(self, node=None):
    if not self.is_output or self.released or self.vc[0] != self.version:
        return _BASE_UNPACK[0](self, node)
    d = _MODE_DETACH[0](self.data)
    if d is None:
        return _BASE_UNPACK[0](self, node)
    if node is not None and _tls_state().grad_enabled:
        set_grad_fn(d._impl, node, self.output_nr)
    return d


def set_mode_detach(detach_fn) -> None:
    """While any TorchDispatchMode is pushed (on any thread) the mode stack installs ``detach_fn``: saved
    outputs are then detached through it when saved and when unpacked, as PyTorch's
    ``shallow_copy_and_detach`` asks the innermost mode to ``detach`` (it returns None where this thread
    has no mode); ``None`` puts back the plain path, which pays nothing for this."""
    _MODE_DETACH[0] = detach_fn
    SavedVariable.__init__ = _plain_init if detach_fn is None else _init_under_modes
    SavedVariable.unpack = _BASE_UNPACK[0] if detach_fn is None else _unpack_under_modes


def short_node_name(fn) -> str:
    """A node's name as PyTorch's saved-variable error prints it: ``MulBackward0`` -> ``Mul``."""
    return re.sub(r"Backward\d*$", "", fn.name())


def _inference_now() -> bool:
    return _tls_state().inference_mode


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
