"""Device checks for out-of-tree backends' kernels, in PyTorch's words.

The stub generator's registration wrappers call ``check_same_device`` for operators whose
``device_check`` is ExactSame (as torchgen's wrappers call ``check_and_update_common_device``);
a kernel of a NoCheck operator calls it itself with ``allow_cpu_scalars=True``, TensorIterator's rule
(a 0-dim CPU tensor may join a device computation).
"""
from __future__ import annotations


def check_same_device(method: str, named_tensors, allow_cpu_scalars: bool = False) -> None:
    """Raise PyTorch's device-mismatch error unless every defined tensor of ``named_tensors``
    (``(name, tensor or list or None)`` pairs) is on one device."""
    common = None
    for name, value in named_tensors:
        for t in (value if isinstance(value, (list, tuple)) else (value,)):
            if t is None:
                continue
            d = t.device
            if allow_cpu_scalars and d.type == "cpu" and t.dim() == 0:
                continue
            if common is None:
                common = d
            elif d != common:
                if allow_cpu_scalars:
                    raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two "
                                       f"devices, {common} and {d}!")
                raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                                   f"{common} and {d}! (when checking argument for argument {name} in method "
                                   f"{method})")
