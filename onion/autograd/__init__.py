"""``onion.autograd``: reverse-mode AD as a dispatch key (the kernels are generated)."""
from __future__ import annotations

from .function import Function, FunctionCtx, once_differentiable  # noqa: F401
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled,  # noqa: F401
                        no_grad, set_grad_enabled)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: F401
from .graph import Node  # noqa: F401


def _tuple(x):
    if x is None:
        return None
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    from .engine import run_backward
    tensors = _tuple(tensors)
    grads = _tuple(grad_tensors) or (None,) * len(tensors)
    if retain_graph is None:
        retain_graph = create_graph
    inputs = _tuple(inputs)
    if inputs is not None and len(inputs) == 0:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    run_backward(tensors, grads, retain_graph, create_graph, inputs=inputs, accumulate=True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    from .engine import run_backward
    outputs = _tuple(outputs)
    inputs = _tuple(inputs)
    grads = _tuple(grad_outputs) or (None,) * len(outputs)
    if retain_graph is None:
        retain_graph = create_graph
    if allow_unused is None:
        allow_unused = materialize_grads
    res = run_backward(outputs, grads, retain_graph, create_graph, inputs=inputs, allow_unused=allow_unused,
                       accumulate=False)
    if materialize_grads:
        from ..aten.at import at
        res = [r if r is not None else at.zeros_like(x, None, None, None, None, None) for r, x in zip(res, inputs)]
    return tuple(res)
