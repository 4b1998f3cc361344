"""The npu runtime: how its tensors hold memory (NumPy arrays standing in for device memory).

A real accelerator would allocate on the device here; everything else in the package (the
kernels, the device module, the registration) stays as it is.
"""
from __future__ import annotations

import numpy as np

import onion
from onion.backends.cpu import HostArrayBackend
from onion.core.dispatch_key import K


class NPUBackend(HostArrayBackend):
    """Arrays of the ``npu`` device: NumPy arrays over byte storages, like the CPU's (a real accelerator would
    override ``empty``/``empty_strided``/``view``/``storage_of`` and the transfers with its own allocator)."""

    device_type = "npu"
    key = K.PrivateUse1
    xp_generic_kernels = False      # the kernels are ours (kernels/), the rest falls back to the CPU
    indexed = True                  # tensors live on npu:0, as on any PyTorch accelerator


def array_of(t) -> np.ndarray:
    """The array behind an npu (or CPU) tensor, with the tensor's sizes and strides."""
    return t._impl._array


def empty_on(shape, strides, dtype, device):
    """A fresh tensor of ``device`` with the given geometry."""
    from onion.aten.tensor_new import empty_tensor
    return empty_tensor(tuple(shape), dtype, onion.device(device), tuple(strides) if strides is not None else None)


def result_like_meta(op, *args, **kwargs):
    """An empty npu tensor shaped as onion's Meta kernel of ``op`` shapes the result (shape, dtype, strides),
    so that a kernel computing only the values agrees with onion on everything else; the Meta run also
    raises the operator's errors in PyTorch's words before anything is computed."""
    def meta(x):
        if isinstance(x, onion.Tensor) and not x._impl.is_wrapped_number:     # a Python number stays one
            return onion.empty_strided(tuple(x.shape), x.stride(), dtype=x.dtype, device="meta")
        if isinstance(x, (list, tuple)):
            return type(x)(meta(v) for v in x)
        return x
    with onion.no_grad():
        m = op(*meta(args), **{k: meta(v) for k, v in kwargs.items()})
    device = next(x.device for x in args if isinstance(x, onion.Tensor) and x.device.type == "npu")
    return empty_on(m.shape, m.stride(), m.dtype, device)
