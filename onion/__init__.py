"""onion: PyTorch's operator system in Python (``import onion as torch``).

Importing regenerates onion/_generated when the YAML or the generators changed,
registers every kernel through the Dispatcher, then exposes the torch-shaped
surface.  (Under ``python -m onion...`` the package is imported before its
``__main__`` runs; loading then waits for ``_load()`` so that
``python -m onion.codegen`` works even when the generated code is broken.)
"""
from __future__ import annotations

import sys as _sys
from typing import TYPE_CHECKING

from .core.dtype import (bfloat16, bool, cdouble, cfloat, complex64, complex128, double, dtype,  # noqa: F401,A004
                         float, float16, float32, float64, get_default_dtype, half, int, int8, int16, int32,
                         int64, long, set_default_dtype, short, uint8, uint16, uint32, uint64)
from .core.device import device  # noqa: F401
from .core.memory_format import (channels_last, channels_last_3d, contiguous_format,  # noqa: F401
                                 memory_format, preserve_format)
from .core.promotion import can_cast, promote_types  # noqa: F401
from .core.tensor import Size  # noqa: F401
from .core.generator import Generator, default_generator  # noqa: F401
from . import random  # noqa: F401
from .random import get_rng_state, initial_seed, manual_seed, seed, set_rng_state  # noqa: F401

if TYPE_CHECKING:
    # What _load() adds at runtime, as type checkers and editors should see it: the generated
    # stubs (onion/_generated/*.pyi, written by codegen) and the hand-written names.
    from . import _C, autograd, library, nn, profiler, utils  # noqa: F401
    from ._generated.ops import ops as ops
    from ._generated.python_functions import *  # noqa: F403
    from ._generated.tensor import Tensor as Tensor
    from .autograd.grad_mode import (enable_grad, inference_mode, is_grad_enabled,  # noqa: F401
                                     is_inference_mode_enabled, no_grad, set_grad_enabled)
else:
    from .core.tensor import Tensor
    from .dispatch.ops import ops  # noqa: F401

__version__ = "0.1.0"


from .core.layout import strided  # noqa: E402,F401  (onion.strided)
_LOADED = False


def _load() -> None:
    """Generate if stale, register every kernel, and fill in the public surface (once).

    The cyclic garbage collector is paused meanwhile: loading makes tens of thousands of long-lived objects
    (kernels, operator handles) and no garbage, so the collections it would trigger find nothing and cost
    about a sixth of the import."""
    import gc
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        _load_all()
    finally:
        if was_enabled:
            gc.enable()


def _load_all() -> None:
    global _LOADED
    if _LOADED:
        return
    from .codegen.runner import ensure_generated
    ensure_generated()
    from . import backends  # noqa: F401  (register CPU/Meta/CUDA)
    from .dispatch.default_fallbacks import register_default_fallbacks
    from .modes.python_dispatch import register_python_fallback
    g = globals()
    from .autograd.autograd_fallback import register_autograd_fallback
    default_lib = register_default_fallbacks()
    register_autograd_fallback(default_lib)
    g["_FALLBACK_LIBS"] = (default_lib, register_python_fallback())
    import importlib
    from ._generated import REGISTRATIONS, operators  # noqa: F401
    from .backends import BACKENDS
    for module, device_type in REGISTRATIONS.items():
        if device_type is None or device_type in BACKENDS:
            importlib.import_module(f"{__name__}._generated.{module}")
    from .backends import base as _backends_base

    def load_generated(device_type, _registrations=REGISTRATIONS):    # a backend registered later (onion.dask)
        for module, needs in _registrations.items():
            if needs == device_type:
                importlib.import_module(f"{__name__}._generated.{module}")
    _backends_base.LOAD_GENERATED[0] = load_generated
    from .aten.math_bits import register_math_bit_fallbacks
    g["_MATH_BIT_LIBS"] = register_math_bit_fallbacks()
    from ._generated.python_functions import FUNCTIONS
    from ._generated.tensor_methods import METHODS
    from .aten.tensor_new import scalar_to_tensor
    from .dispatch import arguments
    from .bindings.python_torch_functions import as_tensor, from_numpy, tensor
    from .bindings.python_variable_methods import EXTRA_METHODS
    arguments.SCALAR_TO_TENSOR[0] = scalar_to_tensor
    for name, fn in {**METHODS, **EXTRA_METHODS}.items():
        setattr(Tensor, name, fn)
    g.update(FUNCTIONS)
    from ._generated.python_functions import LINALG_FUNCTIONS as _LINALG_FUNCTIONS
    g.update(_LINALG_FUNCTIONS)        # also as onion.linalg_x (the stubs list them there); torch.linalg.x is onion.linalg.x
    from ._generated.python_functions import SPECIAL_FUNCTIONS as _SPECIAL_FUNCTIONS
    g.update(_SPECIAL_FUNCTIONS)       # onion.special_i1, as the stubs list it
    g["_segment_reduce"] = FUNCTIONS["segment_reduce"]     # torch._segment_reduce is the same function
    g.update(tensor=tensor, from_numpy=from_numpy, as_tensor=as_tensor)
    from . import _C, autograd, library, nn, profiler, utils  # noqa: F401
    from .autograd import profiler as _autograd_profiler  # noqa: F401  (onion.autograd.profiler)
    g.update(profiler=profiler)
    from .autograd.grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled,
                                     no_grad, set_grad_enabled)
    g.update(autograd=autograd, no_grad=no_grad, enable_grad=enable_grad, set_grad_enabled=set_grad_enabled,
             is_grad_enabled=is_grad_enabled, inference_mode=inference_mode,
             is_inference_mode_enabled=is_inference_mode_enabled)
    from .bindings.python_torch_functions import is_tensor, numel, result_type
    from .utils import _python_dispatch  # noqa: F401
    g.update(_C=_C, library=library, nn=nn, utils=utils, is_tensor=is_tensor, numel=numel, result_type=result_type)
    from . import return_types  # noqa: F401  (torch.return_types)
    g.update(return_types=return_types)
    from .bindings.python_torch_functions import is_conj, is_inference, is_neg
    g.update(is_inference=is_inference, is_conj=is_conj, is_neg=is_neg)
    from . import functional as _functional      # torch/functional.py's Python-level forms of the shape ops
    _functional.install(Tensor, g)
    from ._linalg_functional import PUBLIC as _LINALG_PUBLIC
    g.update(_LINALG_PUBLIC)
    from . import linalg
    g.update(linalg=linalg)
    from ._lowrank import PUBLIC as _LOWRANK_PUBLIC
    g.update(_LOWRANK_PUBLIC)
    from .bindings.python_indexing import make_nonzero, make_nonzero_method, unravel_index
    g.update(nonzero=make_nonzero(g["nonzero"]), unravel_index=unravel_index)
    Tensor.nonzero = make_nonzero_method(Tensor.nonzero)
    from . import functional
    g.update(unique=functional.unique, unique_consecutive=functional.unique_consecutive,
             histogramdd=functional.histogramdd)
    for name, fn in functional.TENSOR_METHODS.items():
        setattr(Tensor, name, fn)
    from .functional import BINDINGS, _tensor_norm, norm
    from ._generated.python_functions import LINALG_FUNCTIONS
    BINDINGS.update(FUNCTIONS)
    BINDINGS.update(LINALG_FUNCTIONS)
    g.update(norm=norm)
    Tensor.norm = _tensor_norm
    from . import amp, cpu, cuda
    from .amp import autocast_mode as _am
    g.update(amp=amp, cpu=cpu, cuda=cuda, autocast=_am.autocast, is_autocast_enabled=_am.is_autocast_enabled,
             set_autocast_enabled=_am.set_autocast_enabled, get_autocast_dtype=_am.get_autocast_dtype,
             set_autocast_dtype=_am.set_autocast_dtype, clear_autocast_cache=_am.clear_autocast_cache,
             is_autocast_cache_enabled=_am.is_autocast_cache_enabled,
             set_autocast_cache_enabled=_am.set_autocast_cache_enabled,
             get_autocast_cpu_dtype=_am.get_autocast_cpu_dtype, get_autocast_gpu_dtype=_am.get_autocast_gpu_dtype,
             is_autocast_cpu_enabled=_am.is_autocast_cpu_enabled,
             autocast_increment_nesting=_am.autocast_increment_nesting,
             autocast_decrement_nesting=_am.autocast_decrement_nesting)
    from .modes import subclasses as _subclasses, torch_function as _torch_function
    from ._generated import python_functions as _pf, tensor_methods as _tm
    _subclasses.install(Tensor)
    _torch_function.install(Tensor, (_pf, _tm))
    for _name in ("tensor", "as_tensor", "from_numpy"):
        g[_name] = _torch_function.wrap_function(g[_name], _name)
    from . import overrides  # noqa: F401
    g.update(overrides=overrides)
    from .utils import dlpack as _dlpack       # Tensor.__dlpack__ / __dlpack_device__, onion.from_dlpack
    _dlpack.install(Tensor)
    g.update(from_dlpack=_dlpack.from_dlpack)
    from .utils.backend_registration import _register_device_module    # the out-of-tree backend kit
    from ._generated.register_privateuse1 import register as _register_xp_generic
    from .backends import base as _backends_base
    _backends_base.XP_GENERIC_REGISTER[0] = _register_xp_generic
    g.update(_register_device_module=_register_device_module)
    _LOADED = True


if _sys.argv[:1] != ["-m"]:
    _load()
