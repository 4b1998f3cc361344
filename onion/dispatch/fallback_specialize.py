"""The autograd fallback written out for one operator (what ``OperatorHandle`` uses for a fallback that
offers it): the common case -- no input requires grad, or grad mode is off -- masks the autograd keys and
redispatches, as a generated autograd kernel does, without boxing the arguments; anything else goes to the
boxed fallback.  Made once per operator schema, when its dispatch table is computed."""
from __future__ import annotations

from ..core.dispatch_key import AFTER_AUTOGRAD
from ..core.tls import state as _state
from .specialize import arg_names, compile_function, requires_grad_test


def specialized_fallback(handle, boxed, mode):
    """``kernel(ks, *arguments)`` for ``handle``; ``boxed(op, ks, values)`` is the fallback itself, ``mode``
    its one-element list holding the fallback mode."""
    schema = handle.schema
    cached = handle.__dict__.get("_autograd_fallback_kernel")
    if cached is not None and cached[0] is schema and cached[1] is boxed:
        return cached[2]
    names = arg_names(len(schema.arguments))
    test = requires_grad_test(schema.arguments, names)
    params = ", ".join(["ks"] + names)
    lines = [f"def kernel({params}):"]
    if test:
        lines += [f"    if ({test}) and _state().grad_enabled and _mode[0] != 'nothing':",
                  f"        return _boxed(_handle.opoverload, ks, ({', '.join(names)}{',' if names else ''}))"]
    lines += ["    ks &= _AFTER", f"    return _redispatch[ks]({params})"]
    kernel = compile_function("\n".join(lines) + "\n", "kernel", f"autograd fallback of {handle.qualified_name}",
                              _AFTER=AFTER_AUTOGRAD, _redispatch=handle.redispatch_cache, _boxed=boxed,
                              _handle=handle, _state=_state, _mode=mode)
    handle.__dict__["_autograd_fallback_kernel"] = (schema, boxed, kernel)
    return kernel
