"""``autograd_registration_check``: is the operator's autograd where autograd looks for it, and is it right?

Two parts.  PyTorch's: an operator without a kernel at an Autograd key (or CompositeImplicitAutograd) is
run with the autograd fallback set to "nothing"; if an output that is not an input then requires grad,
autograd happened inside a backend kernel (an ``autograd.Function`` registered to CPU, or built-in
operators called from it), which silently gives wrong gradients.  onion's addition, where the operator has
an autograd kernel and every input that requires grad is float64: the gradient it computes is compared
with central differences of the operator itself along one random direction per input (a vector-Jacobian
product against a directional derivative), which catches a wrong backward formula.
"""
from __future__ import annotations

import contextlib

import numpy as np

from ....aten.tensor_new import wrap
from ....autograd.engine import grad as autograd_grad
from ....autograd.grad_mode import no_grad
from ....backends import backend_for
from ....core import dtype as _dt
from ....core.dispatch_key import DispatchKey
from ....core.tensor import Tensor
from ....utils import _pytree as pytree
from .tensor_facts import clone_input, host_values

__all__ = ["autograd_registration_check", "set_autograd_fallback_mode", "gradient_check"]


def _fallback_mode_api():
    """The getter and setter of the autograd fallback mode (``torch._C._get/_set_autograd_fallback_mode``),
    or Nones where onion's fallback has no modes (it then does what "nothing" does)."""
    try:
        from ....autograd import autograd_fallback as fb
    except ImportError:
        return None, None
    return fb._get_autograd_fallback_mode, fb._set_autograd_fallback_mode


@contextlib.contextmanager
def set_autograd_fallback_mode(mode: str):
    get, set_ = _fallback_mode_api()
    if get is None:     # no modes: the fallback already does what "nothing" does
        yield
        return
    prev = get()
    try:
        set_(mode)
        yield
    finally:
        set_(prev)


def _has_kernel(op, key: str) -> bool:
    return op._handle.has_kernel_for(DispatchKey[key])


def has_autograd_kernel(op, device_types) -> bool:
    key = "AutogradCUDA" if "cuda" in device_types else "AutogradCPU"
    return any(_has_kernel(op, k) for k in (key, "Autograd", "CompositeImplicitAutograd"))


def autograd_registration_check(op, args, kwargs) -> None:
    """Raise if the operator's autograd support is registered where autograd does not look (see module doc)."""
    if not hasattr(op, "_handle") or not hasattr(op, "_overloadpacket"):
        raise AssertionError(f"Expected op to be OpOverload, got {type(op)}")
    flat_args = pytree.arg_tree_leaves(*args, **kwargs)
    all_tensors = [a for a in flat_args if isinstance(a, Tensor)]
    if not any(t.requires_grad for t in all_tensors):
        raise RuntimeError("autograd_registration_check: no inputs have requires_grad=True so we are unable to "
                           "actually perform this test. Please pass inputs that do require grad.")
    device_types = {t.device.type for t in all_tensors}
    if not device_types <= {"cpu", "cuda"}:
        raise NotImplementedError(f"autograd_registration_check: NYI devices other than CPU/CUDA, got "
                                  f"{device_types}")
    if has_autograd_kernel(op, device_types):
        if not _has_kernel(op, "CompositeImplicitAutograd"):
            gradient_check(op, args, kwargs)
        return
    with set_autograd_fallback_mode("nothing"):
        outs = op(*args, **kwargs)
    inputs = {id(a._impl) for a in all_tensors}
    if not any(o.requires_grad and id(o._impl) not in inputs
               for o in pytree.tree_leaves(outs) if isinstance(o, Tensor)):
        return
    raise AssertionError(
        f"{op.name()}: at least one output of this operator has requires_grad=True but the operator does not "
        f"have an autograd kernel defined at an autograd key (e.g. DispatchKey::Autograd). This could mean that "
        f"you have incorrectly registered an autograd kernel to a non-Autograd DispatchKey, which may lead to "
        f"silently incorrect results. If your operator consists of regular PyTorch operations, consider not "
        f"using an operator at all or registering your operator as CompositeImplicitAutograd. If you have an "
        f"autograd.Function registered to a backend (CPU/CUDA) key, the correct location for it is the "
        f"Autograd key.")


def _labels(op, args, kwargs) -> list:
    """A name for each leaf of ``(args, kwargs)`` in flattening order: the argument's, indexed in a list."""
    names = [a.name for a in op._schema.arguments]
    labels = []
    for i, a in enumerate(args):
        base = names[i] if i < len(names) else f"arg{i}"
        n = len(pytree.tree_leaves(a))
        labels += [base] if n == 1 and not isinstance(a, (list, tuple)) else [f"{base}[{j}]" for j in range(n)]
    for k, v in kwargs.items():
        n = len(pytree.tree_leaves(v))
        labels += [k] if n == 1 and not isinstance(v, (list, tuple)) else [f"{k}[{j}]" for j in range(n)]
    return labels


def _tensor_from(values: np.ndarray, like: Tensor) -> Tensor:
    dev = like.device
    return wrap(backend_for(dev).from_numpy(np.ascontiguousarray(values, dtype=like.dtype.np), dev), like.dtype, dev)


def gradient_check(op, args, kwargs, *, eps: float = 1e-6, rtol: float = 1e-3, atol: float = 1e-5) -> None:
    """The operator's autograd against finite differences of its own forward, in float64 (see module doc).

    Skipped where it cannot decide: an input that requires grad is not float64, the operator mutates its
    arguments, or no float64 output requires grad."""
    flat, spec = pytree.tree_flatten((args, kwargs))
    diff = [k for k, v in enumerate(flat) if isinstance(v, Tensor) and v.requires_grad]
    if not diff or any(flat[k].dtype is not _dt.float64 for k in diff) or op._schema.is_mutable:
        return

    def run(replace: dict):
        values = [replace.get(k, v) for k, v in enumerate(flat)]
        a, kw = pytree.tree_unflatten(values, spec)
        return op(*a, **kw)

    inputs = {k: clone_input(flat[k]) for k in diff}
    outs = [o for o in pytree.tree_leaves(run(inputs)) if isinstance(o, Tensor)]
    picked = [j for j, o in enumerate(outs) if o.requires_grad and o.dtype is _dt.float64]
    if not picked:
        return
    rng = np.random.default_rng(0)
    weights = {j: rng.standard_normal(tuple(outs[j].shape)) for j in picked}
    loss = None
    for j in picked:
        term = (outs[j] * _tensor_from(weights[j], outs[j])).sum()
        loss = term if loss is None else loss + term
    grads = autograd_grad(loss, [inputs[k] for k in diff], allow_unused=True)

    def weighted(replace: dict) -> float:
        with no_grad():
            now = [o for o in pytree.tree_leaves(run(replace)) if isinstance(o, Tensor)]
        return float(sum((host_values(now[j]) * weights[j]).sum() for j in picked))

    labels = _labels(op, args, kwargs)
    for k, g in zip(diff, grads):
        x = flat[k].detach()
        direction = rng.standard_normal(tuple(x.shape))
        analytical = 0.0 if g is None else float((host_values(g) * direction).sum())
        base = host_values(x)
        plus = weighted({k: _tensor_from(base + eps * direction, x)})
        minus = weighted({k: _tensor_from(base - eps * direction, x)})
        numerical = (plus - minus) / (2 * eps)
        if not abs(analytical - numerical) <= atol + rtol * abs(numerical):
            label = labels[k] if k < len(labels) else f"input {k}"
            raise AssertionError(
                f"{op.name()}: the gradient its autograd kernel gives for '{label}' disagrees with finite "
                f"differences of the operator (float64, along one random direction): analytical {analytical:.6g}, "
                f"numerical {numerical:.6g}. The backward formula registered for it is likely wrong.")
