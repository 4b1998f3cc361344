"""The Autograd kernel ``register_autograd`` installs (PyTorch's ``torch/_library/autograd.py``).

One kernel per operator, generated from its schema at registration: when no input requires grad (or grad
mode is off) it only masks the autograd keys and redispatches; otherwise it records a node, an
``onion.autograd.Function`` named ``GeneratedBackwardFor_<ns>_<op>_<overload>``, whose backward calls the
user's ``backward(ctx, *grads)`` with the ``ctx`` that ``setup_context(ctx, inputs, output)`` filled.
``Tensor[]`` arguments and returns are flattened for the node and rebuilt for the user's functions.
"""
from __future__ import annotations

from ..autograd.function import Function
from ..core.dispatch_key import AFTER_AUTOGRAD
from ..core.tls import set_state, state as _state
from ..dispatch.specialize import arg_names, compile_function, requires_grad_test


class Info:
    """What an autograd kernel reads at backward time (a ``CustomOpDef`` has the same two attributes)."""

    def __init__(self, backward_fn, setup_context_fn):
        self._backward_fn = backward_fn
        self._setup_context_fn = setup_context_fn


class _CallMeta:
    """The last (non-tensor) argument of the generated Function: what forward needs besides the tensors."""

    __slots__ = ("ks", "args", "arg_lengths", "result_lists")

    def __init__(self, ks, args, arg_lengths):
        self.ks = ks
        self.args = args
        self.arg_lengths = arg_lengths      # per positional argument: None, or the length of a Tensor[]
        self.result_lists = None


def _is_list(t) -> bool:
    return t.is_list and t.base == "Tensor"


def make_autograd_kernel(handle, info):
    """The kernel (generated convention ``kernel(ks, *arguments)``) for ``handle``'s Autograd key."""
    op = handle.opoverload
    schema = handle.schema
    args = schema.arguments
    npos = sum(1 for a in args if not a.kwarg_only)
    kw_names = tuple(a.name for a in args if a.kwarg_only)
    list_args = tuple(_is_list(a.type) for a in args[:npos])
    list_rets = tuple(_is_list(r.type) for r in schema.returns)
    single_return = len(schema.returns) == 1
    redispatch = handle.redispatch_cache
    overload = handle.overload_name or "default"
    ns, _, base = handle.name.partition("::")

    def forward(ctx, *flat):
        meta = flat[-1]
        ctx._arg_lengths = meta.arg_lengths
        ctx._result_lists = None
        st = _state()
        set_state(st.below_autograd)
        try:
            ks = meta.ks & AFTER_AUTOGRAD
            result = redispatch[ks](ks, *meta.args)
        finally:
            set_state(st)
        setup = info._setup_context_fn
        if setup is not None:
            inputs = tuple(meta.args[:npos])
            if kw_names:
                setup(ctx=ctx, inputs=inputs, keyword_only_inputs=dict(zip(kw_names, meta.args[npos:])),
                      output=result)
            else:
                setup(ctx=ctx, inputs=inputs, output=result)
        if not any(list_rets):
            return result
        outs = (result,) if single_return else tuple(result)
        flat_out = []
        lengths = []
        for is_list, o in zip(list_rets, outs):
            if is_list:
                lengths.append(len(o))
                flat_out.extend(o)
            else:
                lengths.append(None)
                flat_out.append(o)
        meta.result_lists = ctx._result_lists = lengths
        return tuple(flat_out)

    def backward(ctx, *grads):
        fn = info._backward_fn
        if fn is None:
            raise RuntimeError(f"Trying to backward through {op} but no autograd formula was registered. "
                               f"Please use register_autograd to add one.")
        lengths = ctx._result_lists
        if lengths is not None:         # regroup the gradients of Tensor[] outputs into lists
            grads = _regroup(grads, lengths)
        prev = ctx.needs_input_grad
        ctx.needs_input_grad = _regroup(prev[:-1], ctx._arg_lengths)
        try:
            result = fn(ctx, *grads)
        finally:
            ctx.needs_input_grad = prev
        if not isinstance(result, tuple):
            result = (result,)
        flat = []
        for i, g in enumerate(result):
            n = ctx._arg_lengths[i] if i < len(ctx._arg_lengths) else None
            if n is None:
                flat.append(g)
            elif g is None:
                flat.extend([None] * n)
            elif isinstance(g, (list, tuple)) and len(g) == n:
                flat.extend(g)
            else:
                raise RuntimeError(f"Expected the return from backward to be of the same structure as the "
                                   f"inputs: a list of {n} gradients (or None) for argument "
                                   f"'{args[i].name}' of {op}, got {type(g).__name__}")
        return (*flat, None)

    generated = type(f"GeneratedBackwardFor_{ns}_{base}_{overload}", (Function,),
                     {"forward": staticmethod(forward), "backward": staticmethod(backward)})

    def record(ks, values):
        # the node's inputs are the positional arguments without the trailing ones left at their defaults,
        # as PyTorch's dispatcher hands them to a Python kernel (so backward returns a gradient for each)
        given = len(op._unnormalize(values)[0])
        flat = []
        lengths = []
        for is_list, v in zip(list_args, values[:given]):
            if is_list:
                lengths.append(len(v))
                flat.extend(v)
            else:
                lengths.append(None)
                flat.append(v)
        meta = _CallMeta(ks, values, lengths)
        out = generated.apply(*flat, meta)
        if meta.result_lists is None:
            return out
        outs, k = [], 0
        for n in meta.result_lists:
            if n is None:
                outs.append(out[k])
                k += 1
            else:
                outs.append(list(out[k:k + n]))
                k += n
        return outs[0] if single_return else tuple(outs)

    names = arg_names(len(args))
    test = requires_grad_test(args, names)
    params = ", ".join(names)
    call = f"ks, {params}" if names else "ks"
    if test is None:
        src = (f"def autograd_kernel({call}):\n"
               f"    ks &= _AFTER\n"
               f"    return _redispatch[ks]({call})\n")
    else:
        src = (f"def autograd_kernel({call}):\n"
               f"    if ({test}) and _state().grad_enabled:\n"
               f"        return _record(ks, ({params},))\n"
               f"    ks &= _AFTER\n"
               f"    return _redispatch[ks]({call})\n")
    return compile_function(src, "autograd_kernel", f"autograd kernel of {handle.qualified_name}",
                            _AFTER=AFTER_AUTOGRAD, _redispatch=redispatch, _record=record, _state=_state)


def _regroup(flags, lengths):
    out, k = [], 0
    for n in lengths:
        if n is None:
            out.append(flags[k])
            k += 1
        else:
            out.append(list(flags[k:k + n]))
            k += n
    return tuple(out)
