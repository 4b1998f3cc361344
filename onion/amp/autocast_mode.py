"""Autocast: the AutocastCPU/AutocastCUDA dispatch keys, their thread-local state and the casts their kernels do.

Entering a region removes the device's Autocast key from the thread-local exclude set, so operators listed in
onion/aten/autocast_policy.yaml reach their generated kernel (onion/_generated/register_autocast_<device>.py),
which casts floating arguments with the helpers below and calls the operator again with the key excluded, as
PyTorch's ``WrapFunction`` does; every other operator falls through the key.  Off the region nothing here runs.
"""
from __future__ import annotations

import functools
import threading
import warnings

from ..core.dispatch_key import K, bit
from ..core.dtype import bfloat16, float16, float32, float64
from ..core.tls import state, tls

_KEY_OF_DEVICE = {"cpu": bit(K.AutocastCPU), "cuda": bit(K.AutocastCUDA)}


class _AutocastState(threading.local):
    """Per-thread autocast settings (PyTorch keeps them thread-local too); the enabled flags are the keys."""

    def __init__(self):
        self.dtype = {"cpu": bfloat16, "cuda": float16}
        self.enabled: dict = {}        # device types without an Autocast key in onion -> enabled
        self.cache_enabled = True
        self.nesting = 0
        self.cache: dict = {}          # id(source impl) -> (source tensor, cast tensor)


_tls = _AutocastState()


# c10's device types in the order its parser lists them, and what autocast knows of each (PyTorch 2.13)
_PYTORCH_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga",
                         "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")
_DEFAULT_DTYPE = {"cpu": bfloat16, "cuda": float16, "ipu": float16, "xpu": float16, "hip": float16, "maia": bfloat16,
                  "xla": bfloat16, "mps": float16, "hpu": bfloat16, "mtia": float16, "privateuseone": float16}
# device types with an Autocast dispatch key in PyTorch; onion has tensors (and cast kernels) for cpu and cuda only,
# so for the others a region only keeps the settings, as PyTorch's does for a device no tensor is on
_AUTOCAST_TYPES = frozenset(("cpu", "cuda", "ipu", "xpu", "maia", "xla", "mps", "hpu", "mtia", "privateuseone"))


def _parse_type(device_type: str) -> str:
    """The type of a device string, with c10's parser errors (its full list of device types)."""
    from ..core.device import _PRIVATE_NAME
    text = device_type.strip()
    if not text:
        raise RuntimeError("Device string must not be empty")
    kind, sep, idx = text.partition(":")
    if kind == _PRIVATE_NAME[0]:
        kind = "privateuseone"
    if kind not in _PYTORCH_DEVICE_TYPES:
        raise RuntimeError(f"Expected one of {', '.join(_PYTORCH_DEVICE_TYPES)} device type at start of device "
                           f"string: {text}")
    if sep and not idx.isdigit():
        raise RuntimeError(f"Invalid device string: '{text}'")
    return kind


def _device_type(device_type) -> str:
    """The device type string, checked as PyTorch checks it (unknown strings: the device parser's error)."""
    if device_type is None:
        return "cuda"
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    kind = _parse_type(device_type)
    if kind not in _AUTOCAST_TYPES:
        raise RuntimeError("unknown device type for autocast in get_autocast_dispatch_key_from_device_type")
    return kind


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on for the device (no argument: CUDA, as PyTorch's legacy form)."""
    kind = _device_type(device_type)
    key = _KEY_OF_DEVICE.get(kind)
    if key is None:
        return _tls.enabled.get(kind, False)
    return not state().exclude & key


def set_autocast_enabled(device_type, enabled=None) -> None:
    """``set_autocast_enabled(device_type, enabled)``, or the legacy ``set_autocast_enabled(enabled)`` (CUDA)."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    kind = _device_type(device_type)
    key = _KEY_OF_DEVICE.get(kind)
    if key is None:
        _tls.enabled[kind] = bool(enabled)
        return
    ex = state().exclude
    tls.exclude = (ex & ~key) if enabled else (ex | key)


def get_autocast_dtype(device_type: str):
    if not isinstance(device_type, str):
        raise TypeError(f"get_autocast_dtype(): argument 'device_type' (position 1) must be str, not "
                        f"{type(device_type).__name__}")
    kind = _parse_type(device_type)
    if kind not in _DEFAULT_DTYPE:
        raise RuntimeError("unsupported scalarType")
    return _tls.dtype.get(kind, _DEFAULT_DTYPE[kind])


def set_autocast_dtype(device_type: str, dtype) -> None:
    _tls.dtype[_device_type(device_type)] = dtype


def get_autocast_cpu_dtype():
    return _tls.dtype["cpu"]


def get_autocast_gpu_dtype():
    return _tls.dtype["cuda"]


def is_autocast_cpu_enabled() -> bool:
    return is_autocast_enabled("cpu")


def is_autocast_cache_enabled() -> bool:
    return _tls.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    _tls.cache_enabled = bool(enabled)


def clear_autocast_cache() -> None:
    _tls.cache.clear()


def autocast_increment_nesting() -> int:
    _tls.nesting += 1
    return _tls.nesting


def autocast_decrement_nesting() -> int:
    _tls.nesting -= 1
    return _tls.nesting


def _cuda_available() -> bool:
    from ..backends.cuda import AVAILABLE
    return AVAILABLE


class autocast:
    """``with onion.autocast("cpu"):`` or ``@onion.autocast("cpu")``: mixed precision for the listed operators."""

    def __init__(self, device_type: str, dtype=None, enabled: bool = True, cache_enabled: bool | None = None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        # PyTorch's order: the default dtype first (so an unknown type fails in the parser, one without autocast
        # dtype with "unsupported scalarType"), then whether the type has autocast at all
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        if not is_autocast_available(device_type):
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        self.device = _device_type(device_type)
        if self.device == "privateuseone":
            _check_custom_backend_module()
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None else bool(cache_enabled)
        enabled = bool(enabled)
        if self.device == "cpu":
            if enabled and self.fast_dtype not in (bfloat16, float16):
                warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                              "CPU Autocast only supports dtypes of onion.bfloat16, onion.float16 currently.",
                              stacklevel=2)
                enabled = False
        elif self.device != "cuda":
            if enabled and self.fast_dtype not in (bfloat16, float16):
                name = self.device.upper()
                warnings.warn(f"In {name} autocast, but the target dtype is not supported. Disabling autocast.\n"
                              f"{name} Autocast only supports dtypes of onion.bfloat16, onion.float16 currently.",
                              stacklevel=2)
                enabled = False
        elif enabled and not _cuda_available():
            warnings.warn("CUDA is not available. Disabling autocast.", stacklevel=2)
            enabled = False
        elif enabled and self.fast_dtype not in (bfloat16, float16):
            warnings.warn("In CUDA autocast, but the target dtype is not supported. Disabling autocast.\n"
                          "CUDA Autocast only supports dtypes of onion.float16 and onion.bfloat16 currently.",
                          stacklevel=2)
            enabled = False
        self._enabled = enabled

    def __enter__(self):
        self.prev_cache_enabled = is_autocast_cache_enabled()
        self.prev = is_autocast_enabled(self.device)
        self.prev_fastdtype = get_autocast_dtype(self.device)
        set_autocast_enabled(self.device, self._enabled)
        set_autocast_dtype(self.device, self.fast_dtype)
        autocast_increment_nesting()
        set_autocast_cache_enabled(self._cache_enabled)
        return None

    def __exit__(self, exc_type, exc_val, exc_tb):
        if autocast_decrement_nesting() == 0:       # leaving the outermost region: drop the cast weights
            clear_autocast_cache()
        set_autocast_enabled(self.device, self.prev)
        set_autocast_dtype(self.device, self.prev_fastdtype)
        set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with autocast(self.device, self.fast_dtype, self._enabled, self._cache_enabled):
                return func(*args, **kwargs)
        decorate_autocast.__autocast_instance = self
        return decorate_autocast


# ---- what the generated Autocast kernels call (onion/_generated/register_autocast_<device>.py) ----------------

_to_dtype = None     # aten::to.dtype's entry, handed over by the generated module (use_cast)


def use_cast(to_dtype) -> None:
    """The generated module gives its ``to.dtype`` entry: casts go through ``aten::to.dtype`` as PyTorch's
    ``arg.to(dtype)`` does, without the Python binding's parsing."""
    global _to_dtype
    _to_dtype = to_dtype


def _eligible(t, device_type: str) -> bool:
    """A floating tensor of the device other than float64 (PyTorch never casts double)."""
    if t is None:
        return False
    impl = t._impl
    dt = impl.dtype
    return dt.is_floating_point and dt is not float64 and impl.device.type == device_type


def cached_cast(t, to_type, device_type: str):
    """``t`` cast to ``to_type`` when eligible; a float32 leaf that requires grad is cast once per region (cache)."""
    if t is None:
        return t
    impl = t._impl          # _eligible, inlined: this runs for every tensor argument of a policy operator
    dt = impl.dtype
    if dt is to_type or not dt.is_floating_point or dt is float64 or impl.device.type != device_type:
        return t
    if (impl.requires_grad and dt is float32 and _tls.cache_enabled and to_type is _tls.dtype[device_type]
            and t.is_leaf and not t._is_view()):
        hit = _tls.cache.get(id(t._impl))
        if hit is not None and hit[0] is t._impl:
            return hit[1]
        out = _to_dtype(t, to_type)
        _tls.cache[id(t._impl)] = (t._impl, out)
        return out
    return _to_dtype(t, to_type)


def cast_list(ts, to_type, device_type: str):
    return [cached_cast(t, to_type, device_type) for t in ts]


def lower_dtype(device_type: str):
    return _tls.dtype[device_type]


def promote_type(device_type: str, *args):
    """The widest eligible floating dtype among the tensor arguments, starting from the autocast dtype."""
    current = _tls.dtype[device_type]
    for a in args:
        for t in (a if isinstance(a, (list, tuple)) else (a,)):
            if t is None or not hasattr(t, "_impl") or not _eligible(t, device_type):
                continue
            nxt = t._impl.dtype
            if nxt is current:
                continue
            if current is float32 or nxt is float32:
                current = float32
            else:                      # two different 16-bit types: float32 holds both
                current = float32
    return current


def first_eligible(t, device_type: str) -> bool:
    return t is not None and _eligible(t, device_type)


def banned(name: str, device_type: str):
    raise RuntimeError(
        f"onion.nn.functional.{name} and onion.nn.{name.title().replace('_', '')} are unsafe to autocast.\n"
        f"Many models use a sigmoid layer right before the binary cross entropy layer.\n"
        f"In this case, combine the two layers using onion.nn.functional.binary_cross_entropy_with_logits\n"
        f"or onion.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
        f"safe to autocast.")


# ---- custom_fwd / custom_bwd ---------------------------------------------------------------------------------

def _cast(value, device_type: str, dtype):
    from ..core.tensor import Tensor
    if isinstance(value, Tensor):
        impl = value._impl
        if impl.dtype.is_floating_point and impl.dtype is not float64 and impl.device.type == device_type:
            return value.to(dtype)
        return value
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, dict):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, device_type, dtype) for v in value)
    return value


def custom_fwd(fwd=None, *, device_type: str, cast_inputs=None):
    """Decorator for a custom autograd Function's ``forward``: runs it under ``cast_inputs`` (autocast off,
    floating inputs cast) when called inside an enabled region, and records the region for ``custom_bwd``."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        autocast_context = is_autocast_enabled(device_type)
        args[0]._fwd_used_autocast = False
        if autocast_context:
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast(args, device_type, cast_inputs), **_cast(kwargs, device_type, cast_inputs))
        return fwd(*args, **kwargs)
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type: str):
    """Decorator for ``backward``: runs it with the autocast state its forward ran under."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast, dtype=args[0]._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd


def is_autocast_available(device_type: str) -> bool:
    """Whether the device type has autocast (PyTorch's list; onion casts tensors of cpu and cuda)."""
    return _parse_type(device_type) in _AUTOCAST_TYPES


def _check_custom_backend_module() -> None:
    """A PrivateUse1 backend takes part in autocast once its module says which dtypes it supports."""
    import sys
    from ..core.device import _PRIVATE_NAME
    name = _PRIVATE_NAME[0]
    message = (f"Tried to use AMP with the `{name}` backend, but the backend has not registered a module or  the "
               "module miss some necessary funcs. The backend should register a module by "
               "`onion._register_device_module`, and the module must have these funcs: \n"
               "`get_amp_supported_dtype() -> List[onion.dtype]`. \n")
    mod = getattr(sys.modules[__name__.split(".")[0]], name, None)     # the backend's module, onion.<name>
    if mod is None:
        raise AssertionError(message)
    if not hasattr(mod, "get_amp_supported_dtype"):
        raise AssertionError(message + "But the func `get_amp_supported_dtype` is missing. \n")
