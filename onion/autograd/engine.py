"""The backward engine: dependency counting, then nodes in decreasing sequence order.

Gradients for the same input of a node are summed in its input buffer before
the node runs; saved tensors are released after a node runs unless the graph
is retained; grad mode during backward is ``create_graph``.
"""
from __future__ import annotations

import heapq
import itertools

from ..core.tensor import Tensor
from ..core.tls import tls, state as _tls_state
from ..aten.at import at
from ..aten.view_geometry import legacy_type_str
from .graph import AccumulateGrad, accumulate_nonleaf_grad, gradient_edge
from .formulas import sum_to


def _add(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def _make_grads(outputs, grad_outputs):
    grads = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if g is None:
            if out._impl._array.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not out._impl.dtype.is_floating_point:
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got "
                                   f"{out._impl.dtype!r}")
            # as torch.autograd's _make_grads calls it through the binding (pin_memory filled in)
            g = at.ones_like(out, None, None, None, False, "preserve_format")
        elif tuple(g._impl._array.shape) != tuple(out._impl._array.shape):
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {_size(g)} and output[{i}] "
                               f"has a shape of {_size(out)}.")
        grads.append(g)
    return grads


def _size(t) -> str:
    return "torch.Size([" + ", ".join(str(s) for s in t._impl._array.shape) + "])"


_COUNT = range(1 << 62)          # each edge's position, zipped in (cheaper than counting in the loop)
_NO_META = itertools.repeat(None)    # a node without input metadata: nothing to check on any edge


def _run_graph(roots, grads, retain_graph: bool, decide=None) -> None:
    """Count dependencies, then run ready nodes in decreasing sequence order, summing the
    gradients for each input of a node before it runs.

    ``decide(node, buf)`` (``autograd.grad`` / ``backward(inputs=...)``) sees every node's
    incoming gradients and says whether to run it; without it every node runs, which keeps
    the common ``backward()`` to the fewest Python steps.
    """
    deps = {}
    # every node is walked once, also one that is the root of several outputs (qr's Q and R) or a root
    # reached again from another root (svd's S and V = Vh.mH), so each edge is counted once
    stack = list({id(n): n for n, _ in roots}.values())
    walked = set(stack)             # (nodes hash by identity)
    while stack:
        for nxt, _ in stack.pop().next_functions:
            if nxt is not None:
                deps[nxt] = deps.get(nxt, 0) + 1
                if nxt not in walked:
                    walked.add(nxt)
                    stack.append(nxt)
    buffers = {}
    for (node, nr), g in zip(roots, grads):
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node._num_outputs
        buf[nr] = g if buf[nr] is None else buf[nr] + g
    ready = []
    counter = 0
    push, pop = heapq.heappush, heapq.heappop
    for node in buffers:
        if node not in deps:
            push(ready, (-node._sequence_nr, counter, node))
            counter += 1
    while ready:
        node = pop(ready)[2]
        buf = buffers.pop(node, None) or [None] * node._num_outputs
        nf = node.next_functions
        if decide is not None and id(node) not in decide.wanted:
            outs = (None,) * len(nf)    # leads to no captured input: neither its hooks nor itself run (PyTorch)
        else:
            if node._pre_hooks or node._node_pre_hooks or (node._is_accumulate and node.variable._impl._hooks):
                buf = _run_pre_hooks(node, buf)
            if (decide is None or decide(node, buf)) and (buf[0] is not None or any(g is not None for g in buf)):
                outs = node.apply(buf)
                if node._hooks:
                    for h in node._hooks:
                        r = h(tuple(outs), tuple(buf))
                        if r is not None:
                            outs = _checked_hook_values(h, r, tuple(outs))
                if not retain_graph:
                    saved = node._saved_names
                    if saved is None or saved:      # nodes that saved nothing have nothing to release
                        node.release_variables()
            else:
                outs = (None,) * len(nf)
        in_meta = node._in_meta or _NO_META
        for k, (nxt, nr), g, m in zip(_COUNT, nf, outs, in_meta):
            if nxt is not None:
                if g is not None:
                    if m is not None and (g._impl.dtype is not m[1] or g._impl._array.shape != m[0]):
                        g = _validate(g, m, node, k)
                    b = buffers.get(nxt)
                    if b is None:
                        b = buffers[nxt] = [None] * nxt._num_outputs
                        b[nr] = g
                    else:
                        old = b[nr]
                        b[nr] = g if old is None else old + g
                left = deps[nxt] - 1
                deps[nxt] = left
                if left == 0:
                    push(ready, (-nxt._sequence_nr, counter, nxt))
                    counter += 1
        outs = g = b = old = None   # the gradients now live only in the buffers (AccumulateGrad counts holders)


def _needed_nodes(roots, capture) -> set:
    """Ids of the nodes from which a capture point can be reached (the only ones worth running)."""
    parents = {}
    seen = set()
    stack = [n for n, _ in roots]
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        for nxt, _ in n.next_functions:
            if nxt is not None:
                parents.setdefault(id(nxt), []).append(id(n))
                stack.append(nxt)
    needed = set()
    # a capture point itself runs only when another capture point lies beyond it (as PyTorch's exec_info)
    stack = [p for key in capture if key[0] in seen for p in parents.get(key[0], ())]
    while stack:
        k = stack.pop()
        if k not in needed:
            needed.add(k)
            stack.extend(parents.get(k, ()))
    return needed


def run_backward(outputs, grad_outputs, retain_graph: bool, create_graph: bool, inputs=None,
                 allow_unused: bool = False, accumulate: bool = True):
    """Run the graph from ``outputs``; returns the captured grads of ``inputs`` (when not accumulating)."""
    roots = []
    for i, out in enumerate(outputs):
        edge = gradient_edge(out)
        if edge[0] is None:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        roots.append(edge)
    grads = _make_grads(outputs, grad_outputs)
    decide = None
    results = []
    if inputs is not None:
        # capture points for autograd.grad / backward(inputs=...)
        capture = {}
        for k, t in enumerate(inputs):
            node, nr = gradient_edge(t)
            if node is None:
                if not t.requires_grad:
                    raise RuntimeError("One of the differentiated Tensors does not require grad")
                continue        # requires grad through its base but no gradient reaches it (a no-grad view)
            capture.setdefault((id(node), nr), []).append(k)
        needed = _needed_nodes(roots, capture)
        results = [None] * len(inputs)

        def capture_and_decide(node, buf):
            if node._is_accumulate:
                if accumulate:      # a leaf's gradient goes to its .grad only (not held here, so it may be stolen)
                    return (id(node), 0) in capture
                for k in capture.get((id(node), 0), ()):
                    results[k] = buf[0]
                return False
            for nr, g in enumerate(buf):
                for k in capture.get((id(node), nr), ()):
                    results[k] = g
            return id(node) in needed
        capture_and_decide.wanted = needed | {key[0] for key in capture}
        decide = capture_and_decide

    prev_grad = _tls_state().grad_enabled
    tls.grad_enabled = create_graph
    try:
        _run_graph(roots, grads, retain_graph, decide)
    finally:
        tls.grad_enabled = prev_grad
    if inputs is None:
        return results
    if inputs is not None and not accumulate:
        for k, r in enumerate(results):
            if r is None and not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {k} appears to not have been used in the "
                                   f"graph. Set allow_unused=True if this is the desired behavior.")
    if inputs is not None and accumulate:
        # backward(inputs=[non-leaf]) fills that tensor's .grad (leaves got theirs from AccumulateGrad)
        for t, r in zip(inputs, results):
            if r is not None and t._impl.grad_fn is not None:
                accumulate_nonleaf_grad(t._impl, r, create_graph)
    return results


def _validate(g, meta, node, index):
    """Shape and dtype of a gradient made to match its input (PyTorch's validate_outputs)."""
    sizes, dtype, device = meta
    shape = tuple(g._impl._array.shape)
    if shape != sizes:
        if not _expandable(sizes, shape):
            raise RuntimeError(f"Function {node.name()} returned an invalid gradient at index {index} - got "
                               f"{list(shape)} but expected shape compatible with {list(sizes)}")
        g = sum_to(g, sizes)
    if g._impl.dtype is not dtype:
        if g._impl.dtype.is_complex and not dtype.is_complex:
            # PyTorch refuses rather than dropping the imaginary part; formulas take it (handle_r_to_c) where due
            raise RuntimeError(
                f"Function {node.name()} returned a complex gradient ({g._impl.dtype.scalar_type_name}) at index "
                f"{index} for a real input ({dtype.scalar_type_name}): expected isFloatingType(grad.scalar_type()) "
                "|| (input_is_complex == grad_is_complex)")
        g = at._to_copy(g, dtype, None, None, None, False, None)
    return g


def _expandable(shape, desired) -> bool:
    """Whether ``shape`` broadcasts to ``desired`` (so a gradient of ``desired`` sums back to it)."""
    if len(shape) > len(desired):
        return False
    for s, d in zip(reversed(shape), reversed(desired)):
        if s != d and s != 1:
            return False
    return True


def _num_inputs(node) -> int:
    return node._num_outputs


def _run_pre_hooks(node, buf):
    if node._pre_hooks:
        buf = list(buf)
        for nr, hooks in node._pre_hooks.items():
            for h in list(hooks):
                if buf[nr] is None:
                    continue
                r = h(buf[nr])
                if r is not None:
                    buf[nr] = _checked_hook_value(h, r, buf[nr])
    if isinstance(node, AccumulateGrad):
        hooks = getattr(node.variable._impl, "_hooks", None)
        if hooks:
            buf = list(buf)
            for h in list(hooks):
                if buf[0] is not None:
                    r = h(buf[0])
                    if r is not None:
                        buf[0] = _checked_hook_value(h, r, buf[0])
    if node._node_pre_hooks:
        for h in node._node_pre_hooks:
            r = h(tuple(buf))
            if r is not None:
                buf = list(_checked_hook_values(h, r, tuple(buf)))
    return buf


# --- what a hook may return (PyTorch's check_single_result / _call_hooks) ----------------------------
# A hook replaces a gradient; one of another dtype, device or size would be cast or summed away
# silently later (or break the node it flows into), so it is refused here, naming the hook.

def _hook_name(hook) -> str:
    return getattr(hook, "__name__", type(hook).__name__)


def _checked_hook_value(hook, value, original):
    if not isinstance(value, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(value).__name__}'")
    if original is None:
        return value
    g, o = value._impl, original._impl
    if g.dtype is not o.dtype or g.device.type != o.device.type:
        raise RuntimeError(f"hook '{_hook_name(hook)}' has changed the type of value (was "
                           f"{legacy_type_str(o.dtype.scalar_type_name, o.device.type)} got "
                           f"{legacy_type_str(g.dtype.scalar_type_name, g.device.type)})")
    if g.device != o.device:
        raise RuntimeError(f"hook '{_hook_name(hook)}' has changed the type of value (was {o.device} got "
                           f"{g.device})")
    if g._array.shape != o._array.shape:
        raise RuntimeError(f"hook '{_hook_name(hook)}' has changed the size of value")
    return value


def _checked_hook_values(hook, values, originals) -> tuple:
    """A node hook's replacement for a tuple of gradients: as many, each None or a tensor like its original."""
    if not isinstance(values, (tuple, list)):
        raise TypeError(f"expected tuple, but hook returned '{type(values).__name__}'")
    if len(values) != len(originals):
        raise RuntimeError(f"hook '{_hook_name(hook)}' has returned an incorrect number of values (got "
                           f"{len(values)}, but expected {len(originals)})")
    return tuple(v if v is None else _checked_hook_value(hook, v, o) for v, o in zip(values, originals))


# --- the Python entry points (``onion.autograd.backward`` / ``grad``) ---------------------------

def _tuple(x):
    """One tensor or an iterable of them as a tuple (a non-iterable raises Python's TypeError, as in PyTorch)."""
    if x is None:
        return None
    if isinstance(x, Tensor):
        return (x,)
    if not hasattr(x, "__iter__"):
        raise TypeError(f"'{type(x).__name__}' object is not iterable")
    return tuple(x)


def _checked_outputs(outputs) -> tuple:
    outputs = _tuple(outputs)
    for o in outputs:
        if not isinstance(o, Tensor):
            raise AssertionError(f"Expected output to be a onion.Tensor, but got {type(o).__name__}")
    return outputs


def _checked_inputs(inputs):
    inputs = _tuple(inputs)
    for t in inputs or ():
        if not isinstance(t, Tensor):
            raise RuntimeError(f"all inputs have to be Tensors or GradientEdges, but got {type(t).__name__}")
    return inputs


def _checked_grads(grads, outputs) -> tuple:
    grads = _tuple(grads) if grads is not None else (None,) * len(outputs)
    for g in grads:
        if g is not None and not isinstance(g, Tensor):
            raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
    if len(grads) < len(outputs):       # extra gradients are ignored, as PyTorch's zip ignores them
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")
    return grads[:len(outputs)]


def _checked_flag(value):
    """``retain_graph`` / ``create_graph`` as PyTorch's engine call reads them (as an index-like bool)."""
    if value is None or isinstance(value, (bool, int)):
        return value
    if hasattr(value, "_impl"):
        if value._impl._array.size != 1 or value._impl.dtype.category > 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return bool(value.item())
    raise TypeError(f"'{type(value).__name__}' object cannot be interpreted as an integer")


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    retain_graph, create_graph = _checked_flag(retain_graph), _checked_flag(create_graph)
    tensors = _checked_outputs(tensors)
    grads = _checked_grads(grad_tensors, tensors)
    if retain_graph is None:
        retain_graph = create_graph
    inputs = _checked_inputs(inputs)
    if inputs is not None and len(inputs) == 0:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    run_backward(tensors, grads, retain_graph, create_graph, inputs=inputs, accumulate=True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    retain_graph, create_graph = _checked_flag(retain_graph), _checked_flag(create_graph)
    outputs = _checked_outputs(outputs)
    inputs = _checked_inputs(inputs)
    grads = _checked_grads(grad_outputs, outputs)
    if retain_graph is None:
        retain_graph = create_graph
    if allow_unused is None:
        allow_unused = materialize_grads
    res = run_backward(outputs, grads, retain_graph, create_graph, inputs=inputs, allow_unused=allow_unused,
                       accumulate=False)
    if materialize_grads:
        res = [r if r is not None else at.zeros_like(x, None, None, None, None, None) for r, x in zip(res, inputs)]
    return tuple(res)
