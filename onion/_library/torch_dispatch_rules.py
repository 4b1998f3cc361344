"""``register_torch_dispatch``: a rule that handles one operator for one TorchDispatchMode type or tensor
subclass in place of its ``__torch_dispatch__``.

The rules of an operator live in a kernel registered for that operator on the Python key, ahead of the Python
key's fallback: an operator without rules, and every other operator, costs nothing more per call.  With no
rule for the mode (or subclasses) at hand, the kernel hands the call to the fallback unchanged.
"""
from __future__ import annotations

from ..core.dispatch_key import AFTER_PYTHON, K
from ..core.tls import set_state, state as _state
from ..modes import python_dispatch as _pd
from ..modes import subclasses as _sc

def register_torch_dispatch_rule(lib, handle, torch_dispatch_class, fn) -> None:
    """Register (in ``lib``) a Python-key kernel holding the rules in force plus this one: the rule lasts as
    long as ``lib``, and when ``lib`` goes the kernel before it, with the rules before, is back in force."""
    regs = handle.kernels.get(K.Python, ())
    current = getattr(regs[-1].fn, "torch_dispatch_rules", None) if regs else None
    rules = dict(current or {})
    rules[torch_dispatch_class] = fn
    kernel = _python_key_kernel(handle, rules)
    kernel.torch_dispatch_rules = rules
    lib.impl_kernel(handle.qualified_name.partition("::")[2], kernel, "Python")


def _python_key_kernel(handle, rules):
    def kernel(ks, *values):
        op = handle.opoverload
        st = _state()
        stack = st.mode_stack
        if stack:
            mode = stack[-1]
            rule = rules.get(type(mode))
            if rule is None:
                return _pd._python_fallback(op, ks, values)
            plan = _pd._plan_of(op)
            set_state(_pd._mode_state(st))
            try:
                types, args, kwargs = _pd.python_arguments(op, values, plan)
                result = rule(mode, op, types, args, kwargs)
            finally:
                set_state(st)
            if result is NotImplemented:
                if types:
                    return _pd.SUBCLASS_DISPATCH[0](op, ks, values, mode=mode)
                raise _pd._not_implemented(op, mode)
            return _pd.check_result(plan, result)
        overloaded = _sc._overloaded_tensors(values)
        if not any(type(t) in rules for t in overloaded):
            return _pd._python_fallback(op, ks, values)
        return _subclass_rules(op, ks, values, overloaded, rules)
    return kernel


def _subclass_rules(op, ks, values, overloaded, rules):
    """The subclasses' turn (as ``dispatch_to_subclasses``), each type's rule in place of its
    ``__torch_dispatch__``."""
    plan = _pd._plan_of(op)
    _, args, kwargs = _pd.python_arguments(op, values, plan)
    types = tuple(type(a) for a in overloaded)
    for a in overloaded:
        cls = type(a)
        rule = rules.get(cls)
        if rule is None:
            _sc._check_torch_dispatch_definition(cls)
            ret = cls.__torch_dispatch__(op, types, args, kwargs)
        else:
            ret = rule(cls, op, types, args, kwargs)
        if ret is not NotImplemented:
            ret = _pd.check_result(plan, ret)
            writes = _sc._write_returns(op)
            if writes:
                if len(writes) == 1:
                    return values[writes[0]]
                ret = tuple(r if i is None else values[i] for r, i in zip(ret, writes))
            return ret
    if not overloaded:
        return op._handle.redispatch(ks & AFTER_PYTHON, *values)
    raise _sc.not_implemented_error(op, None, types)
