"""``aot_autograd_check``: the operator traced as a compiler would see it, against eager mode.

onion has no AOTAutograd; what stands for it is the trace a compiler starts from: ``make_fx`` of the call
(``dynamic``: on fake tensors, where the operator's fake implementation answers; static: on the real
tensors).  The graph must hold the operator as one node (unless it is CompositeImplicitAutograd, which
decomposes), and its replay must give the eager outputs, the arguments it writes, and, where inputs and
outputs require grad, the eager gradients.  A custom operator whose outputs alias its inputs is refused, as
PyTorch's functionalization refuses it.  Inputs are copied for each run, so a mutating operator compares fairly.
"""
from __future__ import annotations

from ....autograd.engine import grad as autograd_grad
from ....core.dispatch_key import DispatchKey
from ....core.tensor import Tensor
from ....fx.experimental.proxy_tensor import make_fx
from ....utils import _pytree as pytree
from ...._subclasses.fake_tensor import UnsupportedOperatorException
from .fake_tensor import MissingFakeImplError
from .tensor_facts import assert_close, clone_input

__all__ = ["aot_autograd_check"]

outputs_msg = ("Outputs of the operator are different in eager-mode PyTorch vs AOTDispatcher tracing. This means "
               "the operator will have incorrect output underneath torch.compile. This could be because the "
               "operator's implementation not traceable.")
grads_msg = ("Gradients of the operator are different in eager-mode PyTorch vs AOTDispatcher. This means the "
             "operator will have incorrect gradients underneath torch.compile. This could be because the "
             "operator's backward is incorrectly registered or not traceable.")


def _with_grads(f, tensors):
    """``f(*tensors)`` and the gradients of the sum of its outputs' absolute sums."""
    out = f(*tensors)
    diff = [t for t in tensors if t.requires_grad]
    outs = [o for o in pytree.tree_leaves(out) if isinstance(o, Tensor) and o.requires_grad]
    if not diff or not outs:
        return out, None
    total = None
    for o in outs:
        term = o.sum().abs()
        total = term if total is None else total + term
    return out, autograd_grad(total, diff, allow_unused=True)


def _written_positions(op, args, kwargs, flat, positions) -> list:
    """The flat positions of the tensors the schema lets the operator write (``Tensor(a!)`` arguments)."""
    written = set()
    for i, a in enumerate(op._schema.arguments):
        if a.is_write:
            value = args[i] if i < len(args) else kwargs.get(a.name)
            written.update(id(t) for t in pytree.tree_leaves(value) if isinstance(t, Tensor))
    return [k for k in positions if id(flat[k]) in written]


def aot_autograd_check(op, args, kwargs, dynamic: bool, *, rtol=None, atol=None) -> None:
    schema = op._schema
    if op.namespace not in ("aten", "prims", "prim") and any(r.alias_info is not None for r in schema.returns):
        raise RuntimeError(f"Found a custom (non-ATen) operator whose output has alias annotations: {schema}. "
                           f"Tracing for a compiler (PyTorch's functionalization) only supports custom operators "
                           f"whose outputs are new tensors: return a copy and drop the output's annotation, or make "
                           f"the operator write into an argument declared 'Tensor(a!)' and return nothing.")
    flat, spec = pytree.tree_flatten((args, kwargs))
    positions = [k for k, v in enumerate(flat) if isinstance(v, Tensor)]

    written = _written_positions(op, args, kwargs, flat, positions)

    def func(*tensors):
        values = list(flat)
        for k, t in zip(positions, tensors):
            values[k] = t.clone()       # the operator may write its inputs: the caller's stay as they were
        a, kw = pytree.tree_unflatten(values, spec)
        out = op(*a, **kw)
        if not written:
            return out
        return out, [values[k] for k in written]     # what it wrote is compared too

    def fresh():
        return [clone_input(flat[k]) for k in positions]

    try:
        traced = make_fx(func, tracing_mode="fake" if dynamic else "real")(*fresh())
    except UnsupportedOperatorException as e:
        if e.func != op or isinstance(e, MissingFakeImplError):
            raise
        raise MissingFakeImplError(op) from e
    if not op._handle.has_kernel_for(DispatchKey.CompositeImplicitAutograd):
        calls = [n for n in traced.graph.nodes if n.op == "call_function" and n.target == op]
        if len(calls) != 1:
            raise AssertionError(f"{op.name()}: the traced graph holds {len(calls)} calls of the operator where one "
                                 f"node was expected (an operator is traced as one node, by its fake "
                                 f"implementation):\n{traced.graph}")
    expected, expected_grads = _with_grads(func, fresh())
    result, result_grads = _with_grads(traced, fresh())
    assert_close(result, expected, rtol=rtol, atol=atol, msg=f"{op.name()}: {outputs_msg}")
    if expected_grads is not None:
        assert_close(result_grads, expected_grads, rtol=rtol, atol=atol, msg=f"{op.name()}: {grads_msg}")
