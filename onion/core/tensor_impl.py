"""``TensorImpl``: what a tensor is — array over storage, dtype, device, keyset.

The backend array (NumPy ndarray on CPU) already carries sizes, strides and the
offset into its memory; it is made once when the impl is made, and kernels use
it directly.  Everything rarely needed (storage object, version counter,
autograd metadata) has a class-level default so that making a result costs
a few attribute stores; the fields read on every call (``requires_grad``, ``_base``, ``_inference``)
are slots too, since CPython 3.11 cannot specialise reading a class-level default through an
instance (about 20 ns each, against 5 ns for a slot).
"""
from __future__ import annotations

from .geometry import contiguous_strides
from .tls import state as _tls_state

# device type -> function(array) -> (Storage, offset in elements); filled by backends
STORAGE_MAKERS: dict = {}
# function(view impl): turns a LazyViewImpl whose base gained history into a differentiable view;
# set by onion.autograd (history.py), which this layer cannot import
VIEW_GAINS_HISTORY: list = [None]


def element_strides(byte_strides, itemsize) -> tuple:
    """NumPy's strides (bytes) in elements; spelled out for the usual ranks (no comprehension frame)."""
    k = len(byte_strides)
    if k == 2:
        return (byte_strides[0] // itemsize, byte_strides[1] // itemsize)
    if k == 1:
        return (byte_strides[0] // itemsize,)
    if k == 3:
        return (byte_strides[0] // itemsize, byte_strides[1] // itemsize, byte_strides[2] // itemsize)
    if k == 0:
        return ()
    return tuple([s // itemsize for s in byte_strides])


class TensorImpl:
    # the fields every impl sets, and those every call reads, live in slots (a slot costs half a dict
    # entry to make and a quarter of a class default to read); the rest keep a class-level default,
    # shadowed in the instance dict only when set.  The class has no ``__init__``: ``TensorImpl()``
    # is then CPython's cheapest allocation (about 25 ns less than ``object.__new__(TensorImpl)``),
    # and whoever makes one (``make_impl``, the kernels' inlined wraps) sets all seven slots
    # (``requires_grad`` is a property of LazyViewImpl, which leaves it unset).
    __slots__ = ("_array", "dtype", "device", "keyset", "requires_grad", "_base", "_inference",
                 "__dict__", "__weakref__")
    # defaults, shadowed per instance only when set
    grad_fn = None
    grad = None
    output_nr = 0
    _base_tensor = None     # the root base's Python tensor, which ``Tensor._base`` returns (PyTorch keeps it too)
    _vc = None              # version counter: a one-element list shared with views
    _storage = None
    _offset = 0
    is_wrapped_number = False
    wrapped_value = None    # a wrapped number's Python value (int, float, bool or complex)
    _retains_grad = False
    _hooks = None
    _view_fn = None         # how to replay this view on another base (autograd)
    _is_param = False
    _creation_meta = 0       # CreationMeta of a view made in no_grad / inference mode (creation_meta.py)
    _name = None
    _strides = None         # set when NumPy cannot tell (views of empty tensors)
    _grad_acc = None        # weak reference to the leaf's AccumulateGrad (autograd)

    # --- geometry -----------------------------------------------------------
    @property
    def sizes(self) -> tuple:
        return self._array.shape

    @property
    def strides(self) -> tuple:
        if self._strides is not None:
            return self._strides
        a = self._array
        if a.size == 0:     # NumPy gives empty arrays zero strides; PyTorch gives contiguous ones
            return contiguous_strides(a.shape)
        return element_strides(a.strides, self.dtype.itemsize)

    def dim(self) -> int:
        return self._array.ndim

    def numel(self) -> int:
        return self._array.size

    def is_contiguous(self) -> bool:
        a = self._array
        if a.size == 0:         # an empty tensor is contiguous whatever its strides
            return True
        expected = 1
        for size, stride in zip(reversed(a.shape), reversed(self.strides)):
            if size != 1:
                if stride != expected:
                    return False
                expected *= size
        return True

    # --- storage and version ------------------------------------------------
    def storage(self):
        if self._storage is None:
            self._storage, self._offset = STORAGE_MAKERS[self.device.type](self._array)
        return self._storage

    def storage_offset(self) -> int:
        self.storage()
        return self._offset

    def shallow_copy_and_detach(self) -> "TensorImpl":
        """A new impl over the same array, storage and version counter, outside any graph (PyTorch's name):
        what ``detach`` and a saved output's alias are made of."""
        d = make_impl(self._array, self.dtype, self.device, self.keyset)
        d._vc = self.version_counter()
        if self._storage is not None:
            d._storage, d._offset = self._storage, self._offset
        if self._strides is not None:
            d._strides = self._strides
        if self._inference:
            d._inference = True
        return d

    def version_counter(self) -> list:
        vc = self._vc
        if vc is None:
            vc = self._vc = [0]
        return vc

    @property
    def version(self) -> int:
        vc = self._vc
        return 0 if vc is None else vc[0]

    def bump_version(self) -> None:
        if self._inference:
            self.check_writable()
            return                  # inference tensors have no version counter
        vc = self._vc
        if vc is None:
            self._vc = [1]
        else:
            vc[0] += 1

    def check_writable(self) -> None:
        """Inference tensors may only be updated in place inside inference mode (PyTorch's rule)."""
        if self._inference:
            if not _tls_state().inference_mode:
                raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not allowed.You can "
                                   "make a clone to get a normal tensor before doing inplace update.See "
                                   "https://github.com/pytorch/rfcs/pull/17 for more details.")

    def __repr__(self):
        return f"TensorImpl(sizes={self.sizes}, strides={self.strides}, dtype={self.dtype!r}, device={self.device})"


def make_impl(array, dtype, device, keyset) -> TensorImpl:
    """A new impl over ``array``: not a view, outside any graph, not an inference tensor."""
    impl = TensorImpl()
    impl._array = array
    impl.dtype = dtype
    impl.device = device
    impl.keyset = keyset
    impl.requires_grad = False
    impl._base = None           # the impl this one is a view of (root base)
    impl._inference = False
    return impl


class WrappedNumberImpl(TensorImpl):
    """The 0-dim tensor PyTorch makes for a Python number passed where a Tensor goes (``h * 1.01``).

    Its Python value rides along in a slot, for kernels that hand NumPy the number itself (a weak
    scalar); the class says it is a wrapped number, so making one stores no instance dict.
    """

    __slots__ = ("wrapped_value",)
    is_wrapped_number = True


class ViewImpl(TensorImpl):
    """A view (made by ``_share`` in views.py, which sets every slot): the fields a plain impl keeps as
    class defaults (storage, offset, version counter, root base's tensor) are always set on a view, so
    they are slots here; making a view then allocates no instance dict.  The view classes autograd
    switches a view between (``LazyViewImpl``, ``DifferentiableViewImpl``) derive from this one, so
    that ``__class__`` assignment keeps the layout."""

    __slots__ = ("_storage", "_offset", "_vc", "_base_tensor")


class LazyViewImpl(ViewImpl):
    """A view made in grad mode of a tensor that did not require grad then.

    PyTorch makes every such view a differentiable view: it requires grad as soon as its base does (an
    in-place op that gives the base history), and its node is then rebuilt from the base's.  Views of
    tensors that already require grad get their history at once (autograd's set_history); these get
    it on the first read of ``requires_grad`` or ``grad_fn`` after the base gained it.
    """

    __slots__ = ()

    @property
    def requires_grad(self):
        d = self.__dict__
        if d.get("_own_requires_grad"):
            return True
        base = self._base
        if base is not None and base.requires_grad:     # (None: made a view, then detached from it)
            VIEW_GAINS_HISTORY[0](self)
            return True
        return False

    @requires_grad.setter
    def requires_grad(self, value):
        self.__dict__["_own_requires_grad"] = value

    @property
    def grad_fn(self):
        if self.__dict__.get("_own_requires_grad") or not self.requires_grad:
            return self.__dict__.get("_lazy_grad_fn")
        return self.grad_fn           # now a differentiable view: its own (rebuilt) node

    @grad_fn.setter
    def grad_fn(self, fn):
        self.__dict__["_lazy_grad_fn"] = fn
