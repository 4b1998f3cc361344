"""``FakeTensorMode`` and ``FakeTensor``: run programs on shapes alone, as ``torch._subclasses.fake_tensor``.

A ``FakeTensor`` reports a real device (``cpu``, ``cuda``, ``meta``, a PrivateUse1 device) but holds no data:
its impl's array is a Meta array and its keyset is the Meta backend's plus the Python key.  Under the mode
every operator reaches ``FakeTensorMode.__torch_dispatch__`` (the Python key, below autograd, so autograd
records on fake tensors as on real ones), which runs the operator's Meta kernel: the fake inputs are shown
to it as ``meta`` tensors for the duration of the call (their impls' device is switched and restored), so the
results are the Meta kernel's own tensors, views and aliases included, and are then given the device PyTorch's
rules give (the inputs' common device, a CPU 0-dim tensor deferring to the others; a factory's ``device``).

Data-dependent operators (``nonzero``, ``unique``, ``masked_select``, ``item``, boolean-mask indexing) raise
``DynamicOutputShapeException`` / ``DataDependentOutputException`` as PyTorch does; real tensors are refused
unless the mode allows non-fake inputs (then converted, as ``mode.from_tensor`` does).  Operators with a fake
implementation registered (``onion.library.register_fake``) run it instead of a Meta kernel.

As PyTorch's mode: an aten operator without a Meta kernel runs its kernel for the fake tensors' device on
zero-filled real tensors of their geometry (``allow_fallback_kernels``); a Meta kernel that needs the value of a
data-dependent operator (istft's ``aten::equal``) raises that operator's ``DataDependentOutputException``; and
a one-element tensor made from Python data under the mode (``onion.tensor(3)``) is a constant: ``item()``
reads it, and operators whose fake inputs are all constants run on the constants.
"""
from __future__ import annotations

import contextlib
import dataclasses
import re
import weakref

from ..backends.meta import MetaArray
from ..core.device import CPU, META, canonical
from ..core.geometry import contiguous_strides
from ..core.dispatch_key import K, bit, tensor_keyset
from ..core.tensor import Tensor, make_tensor
from ..core.tensor_impl import TensorImpl, ViewImpl, make_impl
from ..core.tls import ExcludeDispatchKeyGuard
from ..dispatch.library import FAKE_IMPLS
from ..modes.python_dispatch import TorchDispatchMode, _get_current_dispatch_mode
from ..utils import _pytree as pytree

__all__ = ["FakeTensor", "FakeTensorMode", "DynamicOutputShapeException", "DataDependentOutputException",
           "UnsupportedOperatorException", "FakeTensorDeviceMismatchError", "unset_fake_temporarily"]

_PYTHON_KEYS = bit(K.Python) | bit(K.PythonTLSSnapshot)
_PYTHON_BIT = bit(K.Python)


@dataclasses.dataclass
class DynamicOutputShapeException(RuntimeError):
    """The operator's output shape depends on the input's values (``nonzero``, ``unique``...)."""

    func: object


@dataclasses.dataclass
class DataDependentOutputException(RuntimeError):
    """The operator's output is a value computed from the data (``item``, ``equal``, ``allclose``...)."""

    func: object


@dataclasses.dataclass
class UnsupportedOperatorException(RuntimeError):
    func: object


class FakeTensorDeviceMismatchError(RuntimeError):
    def __init__(self, func, common_device, device):
        self.func = func
        self.common_device = common_device
        self.device = device
        super().__init__("Expected all tensors to be on the same device, but found "
                         f"at least two devices, {common_device} and {device}!")


class _OpName:
    """Stands for an operator onion calls no kernel for (``aten._local_scalar_dense``: ``item()`` reads the
    array directly), so that the exception carries the name PyTorch's does."""

    def __init__(self, name: str):
        self._name = name

    def __str__(self):
        return self._name

    __repr__ = __str__


_LOCAL_SCALAR_DENSE = _OpName("aten._local_scalar_dense.default")


_MATH_BITS = bit(K.Conjugate) | bit(K.Negative)
_META_KEYSET = tensor_keyset(K.Meta)
_FAKE_KEYSETS: dict = {}


def _fake_keyset(device) -> int:
    """A real tensor's keys on ``device`` plus the Python keys (PyTorch's FakeTensor carries the same), so that
    operators on it reach Python dispatch (its mode, or ``FakeTensor.__torch_dispatch__``)."""
    ks = _FAKE_KEYSETS.get(device)
    if ks is None:
        ks = _FAKE_KEYSETS[device] = tensor_keyset(device.backend_key) | _PYTHON_KEYS
    return ks


class FakeTensor(Tensor):
    """A tensor with geometry, dtype and a device, and no data; made by a ``FakeTensorMode``."""

    fake_mode: "FakeTensorMode"

    def __new__(cls, fake_mode, elem, device, constant=None, real_tensor=None):
        """``FakeTensor(mode, meta_tensor, device)``: ``elem``'s geometry and dtype reported on ``device``."""
        if elem.device.type != "meta":
            raise AssertionError(f"elem.device.type must be 'meta', got {elem.device.type}")
        dev = canonical(device)
        src = elem._impl
        impl = make_impl(src._array, src.dtype, dev, _fake_keyset(dev) | (src.keyset & _MATH_BITS))
        impl._storage, impl._offset = src.storage(), src._offset
        if src._strides is not None:
            impl._strides = src._strides
        impl.requires_grad = src.requires_grad
        return fake_mode._wrap_impl(impl)

    def __init__(self, *args, **kwargs):
        pass

    @property
    def fake_device(self):
        return self._impl.device

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        """Outside its mode, an operator on a fake tensor runs under the fake tensors' own mode."""
        mode = None
        for x in pytree.arg_tree_leaves(*args, **(kwargs or {})):
            if isinstance(x, FakeTensor):
                mode = x.fake_mode
                break
        if mode is None:
            return NotImplemented
        with mode:
            return func(*args, **(kwargs or {}))

    # --- no data -------------------------------------------------------------------
    def __repr__(self, *, tensor_contents=None):
        from ..core.dtype import get_default_dtype
        impl = self._impl
        parts = ["..."]
        if impl.device.type != "cpu":
            parts.append(f"device='{impl.device}'")
        parts.append(f"size={tuple(impl._array.shape)}")
        if impl.dtype is not get_default_dtype():
            parts.append(f"dtype={impl.dtype!r}")
        if impl.grad_fn is not None:
            parts.append(f"grad_fn=<{type(impl.grad_fn).__name__}>")
        elif impl.requires_grad:
            parts.append("requires_grad=True")
        return f"FakeTensor({', '.join(parts)})"

    __str__ = __repr__

    def item(self):
        c = _constant_of(self)
        if c is None:
            raise DataDependentOutputException(_LOCAL_SCALAR_DENSE)
        return c.item()

    def tolist(self):
        c = _constant_of(self)
        if c is None:
            raise DataDependentOutputException(_LOCAL_SCALAR_DENSE)
        return c.tolist()

    def _host_array(self):
        c = _constant_of(self)
        if c is None:
            raise DataDependentOutputException(_LOCAL_SCALAR_DENSE)
        return c._host_array()

    @property
    def constant(self):
        """The real one-element tensor this fake stands for, or None (PyTorch's ``FakeTensor.constant``)."""
        return _constant_of(self)

    def numpy(self, *, force: bool = False):
        raise RuntimeError(".numpy() is not supported for tensor subclasses.")

    def __array__(self, dtype=None, copy=None):
        raise RuntimeError(".numpy() is not supported for tensor subclasses.")

    def data_ptr(self) -> int:
        return 0


def _fake_impl_like(array, dtype, device, requires_grad=False) -> TensorImpl:
    impl = make_impl(array, dtype, device, _fake_keyset(device))
    impl.requires_grad = requires_grad
    return impl


@contextlib.contextmanager
def unset_fake_temporarily():
    """Pop the innermost mode while the block runs when it is a FakeTensorMode (to make real tensors)."""
    from ..modes.python_dispatch import _pop_mode, _push_mode
    mode = _get_current_dispatch_mode()
    if not isinstance(mode, FakeTensorMode):
        yield None
        return
    _pop_mode()
    try:
        yield mode
    finally:
        _push_mode(mode)


def _render(x) -> str:
    if isinstance(x, Tensor) and _owner(x) is not None:
        return FakeTensor.__repr__(x)
    if isinstance(x, Tensor):
        if x.dim() == 0 and x.device.type == "cpu":
            v = x._impl._array.item()
            text = f"{v:g}." if isinstance(v, float) and float(v).is_integer() else str(v)
            return f"tensor({text}, size=())"
        return f"tensor([...], size={tuple(x.shape)})"
    if isinstance(x, (list, tuple)):
        inner = ", ".join(_render(v) for v in x)
        return f"[{inner}]" if isinstance(x, list) else f"({inner}{',' if len(x) == 1 else ''})"
    return repr(x)


def _render_call(func, args, kwargs) -> str:
    parts = [_render(a) for a in args] + [f"{k}={_render(v)}" for k, v in kwargs.items()]
    return f"{func}({', '.join(parts)})"


# operators whose inputs may sit on different devices: the result is on the first input's (PyTorch's list)
_MULTI_DEVICE_FNS = frozenset({"aten::copy_", "aten::copy", "aten::copy.out", "aten::_unsafe_index_put",
                               "aten::slice_scatter", "aten::slice_scatter.out", "aten::diagonal_scatter"})
_LIFT_FNS = frozenset({"aten::lift_fresh", "aten::lift_fresh_copy", "aten::lift"})


class FakeTensorMode(TorchDispatchMode):
    """Operators on fake tensors (and factories) under this mode give fake tensors, computed by Meta kernels.

    ``allow_non_fake_inputs``: real tensors reaching an operator are converted (as ``from_tensor``) instead
    of refused.  The other arguments of PyTorch's constructor are accepted; onion has no symbolic shapes
    (``shape_env`` must be None).
    """

    def __init__(self, *, allow_fallback_kernels: bool = True, allow_non_fake_inputs: bool = False,
                 shape_env=None, static_shapes=None, export: bool = False):
        if shape_env is not None:
            raise NotImplementedError("FakeTensorMode: onion has no symbolic shapes (shape_env must be None)")
        self.allow_fallback_kernels = allow_fallback_kernels
        self.allow_non_fake_inputs = allow_non_fake_inputs
        self.shape_env = None
        self.static_shapes = True if static_shapes is None else static_shapes
        self.export = export
        self._memo: dict = {}       # id(real impl) -> (weakref to it, its fake tensor)

    # --- conversion ------------------------------------------------------------------
    def from_tensor(self, tensor, *, static_shapes=None, source=None, symbolic_context=None, trace=True):
        """A fake tensor with ``tensor``'s sizes, strides, storage offset, dtype, device and requires_grad.

        The same real tensor (impl) gives the same fake tensor while it lives; a fake tensor of this mode is
        returned as it is, one of another mode gets a fake of this mode."""
        if not isinstance(tensor, Tensor):
            raise TypeError(f"from_tensor(): expected a Tensor, got {type(tensor).__name__}")
        if self.is_our_fake(tensor):
            return tensor if type(tensor) is FakeTensor else self._wrap_impl(tensor._impl)
        impl = tensor._impl
        key = id(impl)
        hit = self._memo.get(key)
        if hit is not None and hit[0]() is impl:
            return hit[1]
        fake = self._fake_of(tensor)
        memo = self._memo

        def forget(_ref, _key=key, _memo=memo):
            _memo.pop(_key, None)

        memo[key] = (weakref.ref(impl, forget), fake)
        return fake

    def _fake_of(self, tensor) -> FakeTensor:
        from ..backends import backend_for
        impl = tensor._impl
        meta = backend_for(META)
        dt = impl.dtype
        sizes, strides = tuple(impl._array.shape), tuple(impl.strides)
        if _owner(tensor) is not None:
            offset = impl._offset
        else:
            offset = impl.storage_offset() if impl._array.size else 0
        arr = meta.view(None, sizes, strides, offset, dt.np)
        base = tensor._base if impl._base is not None and not impl.requires_grad else None
        if base is not None and _owner(tensor) is None:
            # a view stays a view: of the fake of its base, over that fake's storage and version counter
            fbase = self.from_tensor(base)
            bimpl = fbase._impl
            v = object.__new__(ViewImpl)
            v._array, v.dtype, v.device, v.keyset = arr, dt, impl.device, _fake_keyset(impl.device)
            v.requires_grad, v._inference = False, False
            v._base, v._base_tensor = bimpl, fbase
            v._storage, v._offset, v._vc = bimpl.storage(), offset, bimpl.version_counter()
            if not arr.size:
                v._strides = strides
            return self._wrap_impl(v)
        fimpl = _fake_impl_like(arr, dt, impl.device, impl.requires_grad)
        fimpl._storage, fimpl._offset = meta.storage_of(arr, META)
        if not arr.size:    # an empty tensor's strides are kept as given, not read back from its array
            fimpl._strides = strides
        if impl.is_wrapped_number:      # keeps its place in type promotion
            fimpl.is_wrapped_number = True
            fimpl.wrapped_value = impl.wrapped_value
        return self._wrap_impl(fimpl)

    def _wrap_impl(self, impl) -> FakeTensor:
        impl._fake_mode = self      # on the impl too: autograd hands saved tensors back in plain handles
        t = make_tensor(impl, FakeTensor)
        t.fake_mode = self
        return t

    def is_our_fake(self, t) -> bool:
        return isinstance(t, Tensor) and _owner(t) is self

    # --- the mode ----------------------------------------------------------------------
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if any(_foreign_subclass(t) for t in types):
            return NotImplemented       # another subclass's tensors: its own __torch_dispatch__ goes first
        kwargs = dict(kwargs) if kwargs else {}
        flat, spec = pytree.tree_flatten((args, kwargs))
        name = func.name() if hasattr(func, "name") else str(func)

        if name in _LIFT_FNS:      # onion.tensor(...) under the mode: the fresh real tensor becomes fake
            x = flat[0]
            if type(x) is Tensor and _owner(x) is None and _may_turn_const(x):
                # a one-element tensor made from Python data keeps its value (a constant), as in PyTorch
                with ExcludeDispatchKeyGuard(_PYTHON_KEYS):
                    return self._constant_fake(x.clone())
            return self.from_tensor(x)

        tags = getattr(func, "tags", ())
        for i, x in enumerate(flat):
            if not isinstance(x, Tensor):
                continue
            owner = _owner(x)
            if owner is None and type(x) is Tensor and _detached_fake(x._impl):
                owner = self
            if owner is self:
                if type(x) is not FakeTensor:   # a fake impl in a plain handle (autograd's saved tensors)
                    flat[i] = self._wrap_impl(x._impl)
            else:
                if x._impl.is_wrapped_number:   # a Python number the binding wrapped: no user tensor
                    flat[i] = self._fake_of(x)
                    continue
                if "inplace_view" in tags:
                    raise AssertionError("Can't call metadata mutating ops on non-Fake Tensor inputs. Found in "
                                         f"{_render_call(func, args, kwargs)}")
                if not self.allow_non_fake_inputs:
                    if owner is not None:
                        raise AssertionError(f"Mixing fake modes NYI x.fake_mode={owner} vs self={self}")
                    raise AssertionError("Please convert all Tensors to FakeTensors first or instantiate "
                                         "FakeTensorMode with 'allow_non_fake_inputs'. Found in "
                                         f"{_render_call(func, args, kwargs)}")
                flat[i] = self.from_tensor(x)
        fakes = [x for x in flat if isinstance(x, FakeTensor)]
        args, kwargs = pytree.tree_unflatten(flat, spec)

        if fakes and "nondeterministic_seeded" not in tags and "inplace_view" not in tags \
                and all(_constant_of(x) is not None for x in fakes):
            out = self._propagate_constants(func, flat, spec, fakes, args, kwargs)
            if out is not _NOT_CONSTANT:
                return out
        for t in _written_tensors(func, args, kwargs):   # written by an operator that is not computed here
            if _constant_of(t) is not None:
                t._impl._fake_constant = None

        fake_impl = FAKE_IMPLS.get(name)
        if fake_impl is not None:
            with self:
                return fake_impl[0](*args, **kwargs)

        if name == "aten::index.Tensor":
            if _has_mask_index(args, kwargs):   # PyTorch turns a mask into indices with nonzero first
                from ..dispatch.ops import ops
                raise DynamicOutputShapeException(ops.aten.nonzero.default)
        elif name == "aten::repeat_interleave.Tensor":
            size = kwargs.get("output_size", args[1] if len(args) > 1 else None)
            if size is None:            # with output_size given, the shape is known (PyTorch's fake impl)
                raise DynamicOutputShapeException(func)
        elif "dynamic_output_shape" in tags:
            raise DynamicOutputShapeException(func)
        if "data_dependent_output" in tags:
            raise DataDependentOutputException(func)

        if not _has_meta(func):     # no Meta kernel: the device's own kernel on zeros, where PyTorch allows it
            if not self._can_run_unsafe_fallback(func):
                raise UnsupportedOperatorException(func)
            return _run_fallback_kernel(self, func, args, kwargs, UnsupportedOperatorException(func))

        device_kw = _has_device_arg(func)
        if fakes and name in _MULTI_DEVICE_FNS:
            out_device = args[0]._impl.device if isinstance(args[0], Tensor) else fakes[0]._impl.device
        elif fakes:
            out_device = _common_device(func, fakes)
            if device_kw and kwargs.get("device") is not None:
                out_device = canonical(kwargs["device"])
        else:
            out_device = canonical(kwargs.get("device")) if device_kw else CPU
        if device_kw:
            kwargs["device"] = META

        written = _written_tensors(func, args, kwargs)
        versions = [t._impl.version for t in written]
        # the kernel sees Meta tensors: each fake impl's device and backend keys are switched for the call
        impls = [x._impl for x in fakes]
        saved = [(i.device, i.keyset) for i in impls]
        try:
            for i in impls:
                i.device = META
                i.keyset = _META_KEYSET | (i.keyset & _MATH_BITS)
            with ExcludeDispatchKeyGuard(_PYTHON_KEYS):
                out = func(*args, **kwargs)
        except NotImplementedError as e:
            inner = _missing_meta_operator(e)
            if inner is not None and inner != name:
                # the Meta kernel needed the value of an operator that reads data (istft's aten::equal): PyTorch's
                # composite calls it on fake tensors, which raises for data-dependent operators
                op = _overload_of(inner)
                if op is not None and "data_dependent_output" in op.tags:
                    raise DataDependentOutputException(op) from e
                if op is not None and "dynamic_output_shape" in op.tags:
                    raise DynamicOutputShapeException(op) from e
            if inner is not None:
                raise UnsupportedOperatorException(func) from e
            raise
        finally:
            for i, (d, ks) in zip(impls, saved):
                i.device = d
                i.keyset = ks
        for t, v in zip(written, versions):   # a mutated input's version moves once (ADInplaceOrView's bump)
            if t._impl.version == v:
                t._impl.bump_version()
        return self._wrap_outputs(out, fakes, out_device)

    def _constant_fake(self, t) -> FakeTensor:
        """The fake of a real one-element tensor that keeps it as its value (``item()`` reads it)."""
        fake = self.from_tensor(t)
        fake._impl._fake_constant = t
        return fake

    def _propagate_constants(self, func, flat, spec, fakes, args, kwargs):
        """Every fake input holds a constant: the operator runs on the constants, as PyTorch's fake mode does, and
        results of at most one element are constants again; otherwise ``_NOT_CONSTANT`` (the inputs whose
        constants the results share memory with lose them: writes through those results are not followed)."""
        cflat = [_constant_of(x) if isinstance(x, FakeTensor) else x for x in flat]
        cargs, ckwargs = pytree.tree_unflatten(cflat, spec)
        written = _written_tensors(func, args, kwargs)
        versions = [t._impl.version for t in written]
        with ExcludeDispatchKeyGuard(_PYTHON_KEYS):
            out = func(*cargs, **ckwargs)
        touts = [t for t in pytree.tree_leaves(out) if isinstance(t, Tensor)]
        if all(_may_turn_const(t) for t in touts):
            for t, v in zip(written, versions):
                if t._impl.version == v:
                    t._impl.bump_version()
            if isinstance(out, Tensor):
                return self._constant_fake(out)
            return pytree.tree_map(lambda e: self._constant_fake(e) if isinstance(e, Tensor) else e, out)
        shared = {id(t._impl.storage()) for t in touts}
        for x in fakes:
            c = _constant_of(x)
            if c is not None and id(c._impl.storage()) in shared:
                x._impl._fake_constant = None
        return _NOT_CONSTANT

    # operators of these namespaces may run their device kernel on zeros when they have no Meta kernel
    _can_run_unsafe_fallback_allowed_namespaces = ("debugprims", "prims", "aten")

    def _can_run_unsafe_fallback(self, func) -> bool:
        return self.allow_fallback_kernels and getattr(func, "namespace", None) in \
            self._can_run_unsafe_fallback_allowed_namespaces

    def _wrap_outputs(self, out, fakes, out_device):
        by_impl = {id(x._impl): x for x in fakes}

        def wrap(e):
            if not isinstance(e, Tensor):
                return e
            same = by_impl.get(id(e._impl))
            if same is not None:        # an input given back (in-place, out=): that very tensor
                return same
            impl = e._impl
            if impl.device.type != "meta":      # an operator that computed on its own (a CPU scalar tensor)
                return self.from_tensor(e)
            if impl._storage is None:
                impl.storage()
            impl.device = out_device
            impl.keyset = _fake_keyset(out_device) | (impl.keyset & _MATH_BITS)
            return self._wrap_impl(impl)

        if isinstance(out, Tensor):
            return wrap(out)
        return pytree.tree_map(wrap, out)


_NOT_CONSTANT = object()


def _constant_of(t):
    """The real one-element tensor a fake tensor stands for (made from Python data under the mode), or None."""
    return getattr(t._impl, "_fake_constant", None)


def _may_turn_const(t) -> bool:
    """A real result that may stay a constant: at most one element, not on Meta (PyTorch's rule)."""
    return t._impl._array.size <= 1 and t._impl.device.type != "meta" and _owner(t) is None


def _has_meta(func) -> bool:
    """The operator has a kernel for the Meta key (its own, or a composite's)."""
    check = getattr(func, "has_kernel_for_dispatch_key", None)
    return check is None or check(K.Meta)


# no Meta kernel: the dispatcher's error, or the Meta backend fallback's (PyTorch 2.13's wording)
_MISSING_KERNEL = re.compile(r"Could not run '([^']+)' with arguments from the 'Meta' backend"
                             r"|(\S+): attempted to run this operator with Meta tensors")


def _missing_meta_operator(e) -> str | None:
    """The operator a dispatcher error says has no Meta kernel (``aten::equal``), or None."""
    m = _MISSING_KERNEL.search(str(e))
    return (m.group(1) or m.group(2)) if m else None


def _overload_of(qualified: str):
    from ..dispatch.ops import ops
    ns, _, rest = qualified.partition("::")
    opname, _, overload = rest.partition(".")
    try:
        return getattr(getattr(getattr(ops, ns), opname), overload or "default")
    except AttributeError:
        return None


def _run_fallback_kernel(mode, func, args, kwargs, error):
    """PyTorch's fallback for an operator without a Meta kernel: its kernel for the fake tensors' device runs on
    real zero-filled tensors of their geometry, and the results are made fake (an input given back is that
    fake input; a result sharing an input's memory cannot be expressed, so the operator stays unsupported)."""
    from ..dispatch.ops import ops
    if "inplace_view" in getattr(func, "tags", ()):
        raise error
    flat, spec = pytree.tree_flatten((args, kwargs))
    inputs = {}
    storages = set()
    with ExcludeDispatchKeyGuard(_PYTHON_KEYS):
        for i, x in enumerate(flat):
            if isinstance(x, Tensor) and _owner(x) is mode:
                impl = x._impl
                shape, strides = list(impl._array.shape), list(impl.strides)
                if strides == list(contiguous_strides(shape)):      # a fresh tensor, which an out= may resize
                    real = ops.aten.zeros.default(shape, dtype=impl.dtype, device=impl.device)
                else:
                    real = ops.aten.empty_strided.default(shape, strides, dtype=impl.dtype, device=impl.device)
                    real.zero_()
                inputs[id(real)] = x
                flat[i] = real
        for x in flat:
            if isinstance(x, Tensor):
                storages.add(id(x._impl.storage()))
        a, kw = pytree.tree_unflatten(flat, spec)
        out = func(*a, **kw)

    def to_fake(e):
        if not isinstance(e, Tensor):
            return e
        same = inputs.get(id(e))
        if same is not None:
            return same
        if id(e._impl.storage()) in storages:
            raise error
        return mode.from_tensor(e)

    return pytree.tree_map(to_fake, out)


def _foreign_subclass(t) -> bool:
    """A tensor class with a ``__torch_dispatch__`` of its own that is not FakeTensor's (PyTorch's fake mode
    answers NotImplemented to those)."""
    if t is Tensor or issubclass(t, FakeTensor):
        return False
    td = getattr(t, "__torch_dispatch__", None)
    return td is not None and getattr(getattr(td, "__func__", td), "__name__", None) != "_disabled_torch_dispatch_impl"


def _owner(t):
    """The mode a tensor is a fake of (on the impl; on the handle for an alias that kept its class), or None."""
    mode = getattr(t._impl, "_fake_mode", None)
    if mode is None and isinstance(t, FakeTensor):
        mode = t.__dict__.get("fake_mode")
        if mode is not None:
            t._impl._fake_mode = mode
    return mode


def _detached_fake(impl) -> bool:
    """A new impl over a fake tensor's array (autograd's ``detach`` of a saved output): the Python key with a
    Meta array on another device, which only a fake tensor's impl has."""
    return bool(impl.keyset & _PYTHON_BIT) and type(impl._array) is MetaArray


_DEVICE_ARG: dict = {}


def _has_device_arg(func) -> bool:
    """Whether the operator takes a ``device`` (factories, ``*_like``, ``_to_copy``): it is then asked for Meta."""
    has = _DEVICE_ARG.get(func)
    if has is None:
        schema = getattr(func, "_schema", None)
        has = _DEVICE_ARG[func] = schema is not None and any(a.name == "device" for a in schema.arguments)
    return has


_WRITTEN_ARGS: dict = {}


def _written_tensors(func, args, kwargs) -> list:
    """The tensors an operator writes (``Tensor(a!)`` arguments: in-place self, ``out=``)."""
    spec = _WRITTEN_ARGS.get(func)
    if spec is None:
        schema = getattr(func, "_schema", None)
        spec = _WRITTEN_ARGS[func] = tuple(
            (i, a.name) for i, a in enumerate(schema.arguments) if a.is_write) if schema is not None else ()
    out = []
    for i, name in spec:
        v = kwargs.get(name) if name in kwargs else (args[i] if i < len(args) else None)
        if isinstance(v, Tensor):
            out.append(v)
        elif isinstance(v, (list, tuple)):
            out.extend(t for t in v if isinstance(t, Tensor))
    return out


def _has_mask_index(args, kwargs) -> bool:
    indices = args[1] if len(args) > 1 else kwargs.get("indices", ())
    from ..core import dtype as _dt
    return any(isinstance(i, Tensor) and i.dtype in (_dt.bool, _dt.uint8) for i in indices or ())


def _common_device(func, fakes):
    """The output device of an operator on fake tensors: their common device, where a CPU 0-dim tensor defers
    to the others (PyTorch's rule); different devices otherwise raise ``FakeTensorDeviceMismatchError``."""
    common = None
    cpu_zero_dim = False
    for t in fakes:
        dev = t._impl.device
        t_zero = dev.type == "cpu" and t._impl._array.ndim == 0
        if common is None:
            common, cpu_zero_dim = dev, t_zero
            continue
        if dev == common:
            if cpu_zero_dim:
                cpu_zero_dim = t_zero
            continue
        if t_zero:
            continue
        if cpu_zero_dim:
            common, cpu_zero_dim = dev, t_zero
            continue
        if str(func) == "aten.add_.Tensor" and "meta" in (common.type, dev.type):
            continue
        raise FakeTensorDeviceMismatchError(func, common, dev)
    return common
