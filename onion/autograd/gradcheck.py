"""``gradcheck`` / ``gradgradcheck``: analytical gradients against central differences (float64).

The function is evaluated with grad mode as the caller has it and on perturbed
inputs that keep their ``requires_grad``: ``gradgradcheck`` checks a function
that itself calls ``autograd.grad(create_graph=True)`` on those inputs.
"""
from __future__ import annotations

import numpy as np

from ..aten.at import at
from ..aten.tensor_new import wrap
from ..backends import backend_for
from ..core.tensor import Tensor
from .engine import grad


class GradcheckError(RuntimeError):
    pass


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _tensor_outputs(outs):
    return [o for o in _as_tuple(outs) if isinstance(o, Tensor)]


def _like(values, t, requires_grad=False):
    """A new tensor of ``t``'s dtype and device holding ``values`` (a host array)."""
    dt, dev = t._impl.dtype, t._impl.device
    out = wrap(backend_for(dev).from_numpy(np.array(values, dtype=dt.np), dev), dt, dev)
    return out.requires_grad_(True) if requires_grad else out


def _host(t) -> np.ndarray:
    return np.asarray(t.detach().cpu().numpy()).astype(np.float64).reshape(-1)


def _numerical_jacobian(fn, inputs, i, eps):
    """d outputs / d inputs[i] by central differences: one (numel_in, numel_out) matrix per output."""
    x = inputs[i]
    base = np.array(x.detach().cpu().numpy(), copy=True)
    outs0 = _tensor_outputs(fn(*inputs))
    jac = [np.zeros((base.size, o.numel())) for o in outs0]

    def evaluate(values):
        new = _like(values, x, x.requires_grad)
        args = list(inputs)
        args[i] = new
        return [_host(o) for o in _tensor_outputs(fn(*args))]

    flat = base.reshape(-1)
    for k in range(base.size):
        orig = flat[k]
        plus_in = flat.copy()
        plus_in[k] = orig + eps
        minus_in = flat.copy()
        minus_in[k] = orig - eps
        plus = evaluate(plus_in.reshape(base.shape))
        minus = evaluate(minus_in.reshape(base.shape))
        for j in range(len(outs0)):
            jac[j][k] = (plus[j] - minus[j]) / (2 * eps)
    return jac


def _analytical_jacobian(fn, inputs, i):
    """The same matrices from one backward pass per output element (vector-Jacobian products)."""
    outs = _tensor_outputs(fn(*inputs))
    x = inputs[i]
    jacs = []
    for o in outs:
        J = np.zeros((x.numel(), o.numel()))
        if not o.requires_grad:
            jacs.append(J)
            continue
        for k in range(o.numel()):
            g = np.zeros(o.numel())
            g[k] = 1.0
            (gi,) = grad(o, (x,), _like(g.reshape(tuple(o.shape)), o), retain_graph=True, allow_unused=True)
            if gi is not None:
                if tuple(gi.shape) != tuple(x.shape):
                    raise GradcheckError(f"Gradient has wrong shape: {tuple(gi.shape)} for an input of shape "
                                         f"{tuple(x.shape)}")
                if gi.dtype is not x.dtype:
                    raise GradcheckError(f"Gradient has dtype mismatch: {gi.dtype} for an input of dtype {x.dtype}")
                J[:, k] = _host(gi)
        jacs.append(J)
    return jacs


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, **_ignored) -> bool:
    """True when every input's analytical Jacobian matches finite differences (else GradcheckError)."""
    inputs = _as_tuple(inputs)
    if not any(isinstance(x, Tensor) and x.requires_grad for x in inputs):
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of the them "
                         "have requires_grad=True.")
    for i, x in enumerate(inputs):
        if not isinstance(x, Tensor) or not x.requires_grad:
            continue
        if x.dtype.name != "float64":
            import warnings
            warnings.warn("Input #{} requires gradient and is not a double precision floating point. "
                          "This check will likely fail if all the inputs are not of double precision "
                          "floating point.".format(i), UserWarning)
        num = _numerical_jacobian(func, inputs, i, eps)
        ana = _analytical_jacobian(func, inputs, i)
        for j, (n, a) in enumerate(zip(num, ana)):
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                if raise_exception:
                    raise GradcheckError(f"Jacobian mismatch for output {j} with respect to input {i},\n"
                                         f"numerical:{n}\nanalytical:{a}\n")
                return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
                  **_ignored) -> bool:
    """gradcheck of the map (inputs, grad_outputs) -> first derivatives (built with create_graph=True)."""
    inputs = _as_tuple(inputs)
    outs = _tensor_outputs(func(*inputs))
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(_like(rng.standard_normal(tuple(o.shape)), o, True) for o in outs)
    grad_outputs = _as_tuple(grad_outputs)
    n = len(inputs)

    def first_grads(*args):
        ins, gos = args[:n], args[n:]
        o = [t for t in _tensor_outputs(func(*ins)) if t.requires_grad]
        diff = [x for x in ins if isinstance(x, Tensor) and x.requires_grad]
        gs = grad(o, diff, gos[:len(o)], create_graph=True, allow_unused=True)
        return tuple(g if g is not None else at.zeros_like(x, None, None, None, None, None) for g, x in zip(gs, diff))
    return gradcheck(first_grads, tuple(inputs) + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
