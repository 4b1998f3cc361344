"""``gradcheck`` / ``gradgradcheck``: analytical gradients against central differences (float64)."""
from __future__ import annotations

import numpy as np

from ..core.tensor import Tensor


class GradcheckError(RuntimeError):
    pass


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def _numerical_jacobian(fn, inputs, i, eps):
    import onion
    x = inputs[i]
    base = x.detach()
    flat_n = base.numel()
    outs0 = _as_tuple(fn(*inputs))
    jac = [np.zeros((flat_n, o.numel())) for o in outs0]
    for k in range(flat_n):
        idx = np.unravel_index(k, tuple(base.shape)) if base.dim() else ()
        orig = base.numpy()[idx].item() if base.dim() else base.item()

        def perturbed(delta):
            with onion.no_grad():
                arr = base.numpy().copy()
                if arr.ndim:
                    arr[idx] = orig + delta
                else:
                    arr = np.asarray(orig + delta, dtype=arr.dtype)
                new = onion.tensor(arr)
            args = list(inputs)
            args[i] = new
            with onion.no_grad():
                return [o.detach().numpy().astype(np.float64).reshape(-1) for o in _as_tuple(fn(*args))]
        plus, minus = perturbed(eps), perturbed(-eps)
        for j in range(len(outs0)):
            jac[j][k] = (plus[j] - minus[j]) / (2 * eps)
    return jac


def _analytical_jacobian(fn, inputs, i, create_graph=False):
    import onion
    outs = _as_tuple(fn(*inputs))
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
            go = onion.tensor(g.reshape(tuple(o.shape)), dtype=o.dtype)
            (gi,) = onion.autograd.grad(o, (x,), go, retain_graph=True, allow_unused=True)
            if gi is not None:
                J[:, k] = gi.detach().numpy().astype(np.float64).reshape(-1)
        jacs.append(J)
    return jacs


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, **_ignored) -> bool:
    inputs = _as_tuple(inputs)
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
    import onion
    inputs = _as_tuple(inputs)
    outs = _as_tuple(func(*inputs))
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(onion.tensor(rng.standard_normal(tuple(o.shape)), dtype=o.dtype,
                                          requires_grad=True) for o in outs)
    grad_outputs = _as_tuple(grad_outputs)
    diff_inputs = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]
    n = len(inputs)

    def first_grads(*args):
        ins, gos = args[:n], args[n:]
        o = _as_tuple(func(*ins))
        diff = [x for x in ins if isinstance(x, Tensor) and x.requires_grad]
        gs = onion.autograd.grad(o, diff, gos, create_graph=True, allow_unused=True)
        return tuple(g if g is not None else onion.zeros_like(x) for g, x in zip(gs, diff))
    del diff_inputs
    return gradcheck(first_grads, tuple(inputs) + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
