"""The autograd fallback written out for one operator (what ``OperatorHandle`` uses for a fallback that
offers it): the common case -- no input requires grad, or grad mode is off -- masks the autograd keys and
redispatches, as a generated autograd kernel does, without boxing the arguments; anything else goes to the
boxed fallback.  Made once per operator schema, when its dispatch table is computed."""
from __future__ import annotations

from ..core.dispatch_key import AFTER_AUTOGRAD
from ..core.tls import state as _state


def _any_requires_grad(tensors) -> bool:
    for t in tensors:
        if t is not None and t._impl.requires_grad:
            return True
    return False


def specialized_fallback(handle, boxed, mode):
    """``kernel(ks, *arguments)`` for ``handle``; ``boxed(op, ks, values)`` is the fallback itself, ``mode``
    its one-element list holding the fallback mode."""
    schema = handle.schema
    cached = handle.__dict__.get("_autograd_fallback_kernel")
    if cached is not None and cached[0] is schema and cached[1] is boxed:
        return cached[2]
    names = [f"a{i}" for i in range(len(schema.arguments))]
    tests = []
    for a, n in zip(schema.arguments, names):
        t = a.type
        if t.base != "Tensor":
            continue
        if t.is_list:
            tests.append(f"_any_rg({n})")
        elif t.optional:
            tests.append(f"({n} is not None and {n}._impl.requires_grad)")
        else:
            tests.append(f"{n}._impl.requires_grad")
    params = ", ".join(["ks"] + names)
    lines = [f"def kernel({params}):"]
    if tests:
        lines += [f"    if ({' or '.join(tests)}) and _state().grad_enabled and _mode[0] != 'nothing':",
                  f"        return _boxed(_handle.opoverload, ks, ({', '.join(names)}{',' if names else ''}))"]
    lines += ["    ks &= _AFTER", f"    return _redispatch[ks]({params})"]
    env = {"_AFTER": AFTER_AUTOGRAD, "_redispatch": handle.redispatch_cache, "_boxed": boxed, "_handle": handle,
           "_state": _state, "_mode": mode, "_any_rg": _any_requires_grad}
    exec(compile("\n".join(lines) + "\n", f"<onion: autograd fallback of {handle.qualified_name}>", "exec"), env)  # noqa: S102
    kernel = env["kernel"]
    handle.__dict__["_autograd_fallback_kernel"] = (schema, boxed, kernel)
    return kernel
