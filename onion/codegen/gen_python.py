"""Generates the Python surface: ``onion.*`` functions, ``Tensor`` methods, stubs.

Each name gets a ``PyFunction`` (all overloads, for the general path) and a
specialised fast path for its first all-Tensor overload: the keyset is read
off the named arguments and the defaults are inlined, so the common call does
no parsing at all.
"""
from __future__ import annotations

from .context import context
from .header import HEADER
from .naming import arg_names, render_default
from .pyfmt import fit_all
from .model import NativeFunction

DUNDERS = {  # dunder -> (method name, reflected?)
    "__add__": "add", "__sub__": "sub", "__mul__": "mul", "__truediv__": "div", "__matmul__": "matmul",
    "__pow__": "pow", "__eq__": "eq", "__ne__": "ne", "__lt__": "lt", "__le__": "le", "__gt__": "gt",
    "__ge__": "ge", "__iadd__": "add_", "__isub__": "sub_", "__imul__": "mul_", "__itruediv__": "div_",
    "__ipow__": "pow_", "__floordiv__": "floor_divide", "__mod__": "remainder", "__ifloordiv__": "floor_divide_",
    "__imod__": "remainder_",
}
UNARY_DUNDERS = {"__neg__": "neg", "__abs__": "abs", "__invert__": "bitwise_not"}
# operators declared under a dunder's own name in native_functions.yaml (PyTorch wraps their methods in
# TypeError_to_NotImplemented_, as the dunders above)
BINDING_DUNDERS = {f"__{i}{op}__" for op in ("and", "or", "xor", "lshift", "rshift") for i in ("", "i")}


def _binding_default(f, a):
    """The value the binding passes for an argument not given: the schema default, except where
    PyTorch's binding fills the tensor options (``pin_memory=False``; a factory without tensor arguments
    gets ``device=`` the default device), so a mode sees ``ones([2], device=device(type='cpu'),
    pin_memory=False)`` as it does under PyTorch."""
    args = f.func.arguments
    names = {x.name for x in args}
    if "dtype" in names and "device" in names and a.kwarg_only:
        if a.name == "pin_memory":
            return "False"
        if a.name == "device" and not any(x.type.is_tensor_like for x in args):
            return "_DEV"
    return render_default(a)


def _groups(fns, method: bool):
    groups: dict = {}
    for f in fns:
        if method:
            if "method" not in f.variants or f.is_out:
                continue
        else:
            if "function" not in f.variants and not f.is_out:
                continue
        groups.setdefault((f.python_module, f.func.name), []).append(f)
    if not method:
        # out= overloads join the group of their functional name only if it is a function
        groups = {k: v for k, v in groups.items() if any("function" in f.variants for f in v)}
    return groups


def _named_returns(f) -> bool:
    """Several named returns: the binding wraps them in a return type, so no fast path skips it."""
    rets = f.func.returns
    return len(rets) > 1 and all(r.name for r in rets)


def _fast_candidate(fs, method: bool):
    for f in fs:
        if f.is_out or _named_returns(f):
            continue
        args = f.func.arguments
        pos = [a for a in args if not a.kwarg_only]
        rest = [a for a in args if a.kwarg_only]
        if not pos or any(a.type.base != "Tensor" or a.type.optional or a.type.is_list for a in pos):
            continue
        if any(render_default(a) is None for a in rest):
            continue
        return f
    return None


def _fast_body(f: NativeFunction, method: bool, fvar: str, indent="    "):
    args = f.func.arguments
    pos = [a for a in args if not a.kwarg_only]
    self_idx = next((i for i, a in enumerate(pos) if a.name == "self"), 0) if method else None
    n = len(pos) - (1 if method else 0)
    given = [f"a{i}" for i in range(n)]
    lines = [f"{indent}if not kwargs and len(args) == {n}:" if n else f"{indent}if not args and not kwargs:"]
    if n:
        lines.append(f"{indent}    {', '.join(given)}{',' if n == 1 else ''} = args")
    order = list(given)
    if method:
        order.insert(self_idx, "self")
    call_args = order + [_binding_default(f, a) for a in args if a.kwarg_only]
    call = f"return _ops.{f.ident}({', '.join(call_args)})"
    # a method called unbound with another self (``Tensor.exp(2)``) takes the parser's road to its TypeError
    checked = (["self"] if method else []) + given
    lines.append(f"{indent}    if {' and '.join(f'type({x}) is _T' for x in checked)}:")
    lines.append(f"{indent}        {call}")
    return lines


def _sizes_candidate(fs):
    """A factory whose only positional argument is its sizes and whose options all have defaults
    (``ones(SymInt[] size, *, ScalarType? dtype=None, ...)``)."""
    for f in fs:
        args = f.func.arguments
        if f.is_out or _named_returns(f) or not args or args[0].kwarg_only or not (args[0].type.is_list and args[0].type.base in
                                                              ("int", "SymInt")):
            continue
        if all(a.kwarg_only and render_default(a) is not None for a in args[1:]):
            return f
    return None


def _intlist_candidate(fs):
    """``t.view(2, 3)``, ``t.permute((1, 0))``, ``t.sum(1)``: self, then an int list, the rest defaulted."""
    for f in fs:
        if f.is_out or _named_returns(f) or any(r.type.is_list for r in f.func.returns):
            continue        # (a Tensor[] return, split_with_sizes: the general path gives the tuple)
        args = f.func.arguments
        pos = [a for a in args if not a.kwarg_only]
        if len(pos) < 2 or pos[0].type.base != "Tensor" or pos[0].type.optional or pos[0].type.is_list:
            continue
        t = pos[1].type
        if not (t.is_list and t.base in ("int", "SymInt")):
            continue
        if any(render_default(a) is None for a in args[2:]):
            continue
        return f
    return None


def _intlist_body(f, method: bool, indent="    ", single_int_elsewhere=False):
    """Ints as varargs or one tuple/list; anything else takes the general path.

    When a sibling overload takes a plain ``int`` there (``squeeze.dim``), a single int goes
    to the general path so that overload is chosen, as PyTorch does."""
    args = f.func.arguments
    first = "self" if method else "args[0]"
    rest = "args" if method else "args[1:]"
    defaults = [_binding_default(f, a) for a in args[2:]]
    guard = "args" if method else "len(args) > 1"
    if len([a for a in args if not a.kwarg_only]) > 2:
        # more positional arguments follow the list (roll's dims): only ``t.roll(1)`` / ``t.roll((1, 2))``
        guard += f" and len(args) == {1 if method else 2}"
    if single_int_elsewhere:
        guard += f" and not (len(args) == {1 if method else 2} and type(args[-1]) is int)"
    lines = [f"{indent}if not kwargs and {guard}:"]
    if not method:
        lines.append(f"{indent}    self = args[0]")
    lines += [f"{indent}    sz = {rest}",
              f"{indent}    if len(sz) == 1 and type(sz[0]) in (tuple, list, _Size):",
              f"{indent}        sz = tuple(sz[0])",
              f"{indent}    if type(self) is _T and _small_ints(sz):",
              f"{indent}        return _ops.{f.ident}({', '.join(['self', 'sz'] + defaults)})"]
    del first
    return lines


def _takes_int(a, name) -> bool:
    """Whether the parser could bind a plain Python int to argument ``a``: anything but the types whose
    conversion refuses one (a Tensor outside the names PyTorch lets numbers into, a bool, a str, a dtype, a
    memory format, a generator; lists of those)."""
    from ..bindings.python_arg_parser import ALLOW_NUMBERS_AS_TENSORS
    base = a.type.base
    if base == "Tensor":
        return name in ALLOW_NUMBERS_AS_TENSORS
    return base not in ("bool", "str", "ScalarType", "MemoryFormat", "Generator")


def _ints_candidate(name, fs):
    """``t.transpose(0, 1)``, ``t.softmax(-1)``, ``t.unsqueeze(0)``: self, then plain ints, the rest defaulted.
    Only where no other overload could take a Python int after self (``transpose.Dimname`` cannot; ``squeeze.dims``
    could), so the call binds the overload the parser would pick.  Returns (overload, number of ints)."""
    found = None
    for f in fs:
        if f.is_out or _named_returns(f) or any(r.type.is_list for r in f.func.returns):
            continue
        args = f.func.arguments
        pos = [a for a in args if not a.kwarg_only]
        if len(pos) < 2 or pos[0].name != "self" or pos[0].type.base != "Tensor" or pos[0].type.optional:
            continue
        j = 0
        while j + 1 < len(pos) and pos[j + 1].type.base in ("int", "SymInt") and not pos[j + 1].type.is_list:
            j += 1
        if j == 0 or any(render_default(a) is None for i, a in enumerate(args) if a.kwarg_only or i > j):
            continue
        found = (f, j)
        break
    if found is None:
        return None
    for g in fs:
        if g is found[0] or g.is_out:
            continue
        gpos = [a for a in g.func.arguments if not a.kwarg_only]
        if len(gpos) > 1 and _takes_int(gpos[1], name):
            return None
    return found


def _ints_body(f, j: int, method: bool, indent="    ") -> list:
    """One return per number of ints given (from all ``j`` down to the required ones); defaults fill the rest."""
    args = f.func.arguments
    pos = [a for a in args if not a.kwarg_only]
    lo = max(1, sum(1 for a in pos[1:j + 1] if render_default(a) is None))
    base = 0 if method else 1
    given = "args" if method else "args[1:]"
    first = "self" if method else "args[0]"
    count = f"len(args) == {j + base}" if lo == j else f"{lo + base} <= len(args) <= {j + base}"
    lines = [f"{indent}if not kwargs and {count} and type({first}) is _T and _small_ints({given}):"]
    for k in range(j, lo - 1, -1):
        vals = [first] + [f"args[{base + i}]" for i in range(k)] + [_binding_default(f, a) for a in args[k + 1:]]
        ret = f"return _ops.{f.ident}({', '.join(vals)})"
        if lo == j:
            lines.append(f"{indent}    {ret}")
        else:
            lines += [f"{indent}    if len(args) == {k + base}:", f"{indent}        {ret}"]
    return lines


def _numbers_candidate(name, fs):
    """``t.clamp(min=0)``, ``t.clamp(0, 6)``: an overload taking one Tensor and then only Scalars, all
    its keyword-only arguments defaulted, whose Scalars no sibling overload could take as Python numbers
    (a sibling with a Tensor there does not bind a number, except for the names PyTorch lets numbers
    into tensors, which this path leaves to the parser)."""
    from ..bindings.python_arg_parser import ALLOW_NUMBERS_AS_TENSORS, HIDDEN_IN_PYTHON
    if name in ALLOW_NUMBERS_AS_TENSORS:
        return None
    for f in fs:
        if f.is_out or _named_returns(f) or f"aten::{f.func.name}" in HIDDEN_IN_PYTHON:
            continue
        args = f.func.arguments
        pos = [a for a in args if not a.kwarg_only]
        first = pos[0] if pos else None
        if first is None or first.type.base != "Tensor" or first.type.optional or first.type.is_list:
            continue
        scalars = pos[1:]
        if not scalars or any(a.type.base != "Scalar" or a.type.is_list for a in scalars):
            continue
        if any(render_default(a) is None for a in args if a.kwarg_only):
            continue
        names = [a.name for a in scalars]
        for g in fs:
            if g is f:
                continue
            gpos = [a for a in g.func.arguments if not a.kwarg_only]
            by_name = {a.name: a for a in g.func.arguments}
            clash = any(i < len(gpos) and gpos[i].type.base != "Tensor" for i in range(1, len(scalars) + 1))
            clash = clash or any(n in by_name and by_name[n].type.base != "Tensor" for n in names)
            if clash:
                return None
        return f
    return None


def _numbers_body(f, method: bool, indent="    ") -> list:
    args = f.func.arguments
    scalars = [a for a in args if not a.kwarg_only][1:]
    names = tuple(a.name for a in scalars)
    defaults = "(" + "".join(f"{render_default(a) if render_default(a) is not None else '_REQ'}, "
                             for a in scalars) + ")"
    nullable = tuple(a.type.optional for a in scalars)
    rest = [_binding_default(f, a) for a in args if a.kwarg_only]
    first = "self" if method else "args[0]"
    given = "args" if method else "args[1:]"
    lines = [f"{indent}if {'' if method else 'args and '}type({first}) is _T:",
             f"{indent}    v = _numbers({given}, kwargs, {names!r}, {defaults}, {nullable!r})",
             f"{indent}    if v is not None:",
             f"{indent}        return _ops.{f.ident}({', '.join([first, '*v'] + rest)})"]
    return lines


def _number_fast_path(name, fs):
    """``t + 2``: a Python int/float operand skips argument parsing, as the Tensor fast path does."""
    from ..bindings.python_arg_parser import ALLOW_NUMBERS_AS_TENSORS
    lines = ["    tp = type(other)", "    if (tp is int or tp is float) and type(self) is _T:"]
    if name in ALLOW_NUMBERS_AS_TENSORS:
        fast = _fast_candidate(fs, True)
        if fast is None or len([a for a in fast.func.arguments if not a.kwarg_only]) != 2:
            return []
        defaults = [_binding_default(fast, a) for a in fast.func.arguments if a.kwarg_only]
        lines += [f"        return _ops.{fast.ident}({', '.join(['self', '_s2t(other)'] + defaults)})"]
        return lines
    for f in fs:
        pos = [a for a in f.func.arguments if not a.kwarg_only]
        if len(pos) == 2 and pos[0].type.base == "Tensor" and not pos[0].type.optional and \
                pos[1].type.base == "Scalar" and not pos[1].type.optional and \
                all(render_default(a) is not None for a in f.func.arguments if a.kwarg_only):
            defaults = [_binding_default(f, a) for a in f.func.arguments if a.kwarg_only]
            lines += [f"        return _ops.{f.ident}({', '.join(['self', 'other'] + defaults)})"]
            return lines
    return []


def _binding(var: str, name: str, fs, method: bool) -> list:
    """One public name: its PyFunction (all overloads) and a def with the specialised fast paths."""
    lines = [f"{var} = _PF({name!r}{', method=True' if method else ''})"]
    lines += [f"{var}.add(_ops.op_{f.ident}, _ops.{f.ident})" for f in fs]
    lines.append(f"{var}.finish()")
    lines.append(f"def {name}({'self, ' if method else ''}*args, **kwargs):")
    fast = _fast_candidate(fs, method)
    if fast is not None:
        lines.extend(_fast_body(fast, method, var))
    sizes = _sizes_candidate(fs) if not method else None
    if sizes is not None:
        defaults = [_binding_default(sizes, a) for a in sizes.func.arguments[1:]]
        # sizes as ints, ones(2, 3), or as one sequence, ones((2, 3)); an int beyond int64 takes the parser's road
        # to its error
        lines += ["    if not kwargs and args:",
                  "        if _small_ints(args):",
                  f"            return _ops.{sizes.ident}({', '.join(['args'] + defaults)})",
                  "        if len(args) == 1 and type(args[0]) in (tuple, list, _Size) and _small_ints(args[0]):",
                  f"            return _ops.{sizes.ident}({', '.join(['tuple(args[0])'] + defaults)})"]
    nums = _numbers_candidate(name, fs)
    if nums is not None:
        lines.extend(_numbers_body(nums, method))
    ints = _ints_candidate(name, fs) if fast is None and sizes is None else None
    if ints is not None:
        lines.extend(_ints_body(*ints, method))
    il = _intlist_candidate(fs)
    if il is not None:
        single = any(len([a for a in g.func.arguments if not a.kwarg_only]) > 1 and
                     [a for a in g.func.arguments if not a.kwarg_only][1].type.base == "int" and
                     not [a for a in g.func.arguments if not a.kwarg_only][1].type.is_list for g in fs)
        lines.extend(_intlist_body(il, method, single_int_elsewhere=single))
    lines.append(f"    return {var}.call(args, kwargs{', self' if method else ''})")
    return lines


def gen_functions(fns) -> str:
    lines = [HEADER, "from onion.core import dtype as _dt", "from onion.core.tensor import Tensor as _T, Size as _Size",
             "from onion.core.device import CPU as _DEV",
             "from onion.bindings.python_arg_parser import PyFunction as _PF, small_ints as _small_ints",
             "from onion.bindings.python_arg_parser import plain_numbers as _numbers, REQUIRED as _REQ",
             "from onion._generated import operators as _ops", "", "FUNCTIONS = {}", "NN_FUNCTIONS = {}",
             "SPECIAL_FUNCTIONS = {}", "LINALG_FUNCTIONS = {}", ""]
    for (module, name), fs in sorted(_groups(fns, False).items(), key=lambda kv: (kv[0][0] or "", kv[0][1])):
        with context(fs[0].loc, f"the binding onion.{name}"):
            lines.extend(_binding(f"_F_{module + '_' if module else ''}{name}", name, fs, False))
        line = f"{name}.__qualname__ = {name}.__name__ = {name!r}"
        lines.extend([line] if len(line) <= 120 else [f"{name}.__qualname__ = {name!r}", f"{name}.__name__ = {name!r}"])
        table = {"nn": "NN_FUNCTIONS", "special": "SPECIAL_FUNCTIONS", "linalg": "LINALG_FUNCTIONS"}.get(module,
                                                                                                        "FUNCTIONS")
        lines.append(f"{table}[{name!r}] = {name}")
        lines.append("")
    return "\n".join(fit_all(lines)) + "\n"


def gen_methods(fns) -> str:
    lines = [HEADER, "from onion.core import dtype as _dt", "from onion.core.tensor import Tensor as _T, Size as _Size",
             "from onion.core.device import CPU as _DEV",
             "from onion.bindings.python_arg_parser import PyFunction as _PF, small_ints as _small_ints",
             "from onion.bindings.python_arg_parser import plain_numbers as _numbers, REQUIRED as _REQ",
             "from onion.aten.tensor_new import scalar_to_tensor as _s2t",
             "from onion._generated import operators as _ops", "", "METHODS = {}", ""]
    groups = _groups(fns, True)
    for (_module, name), fs in sorted(groups.items(), key=lambda kv: kv[0][1]):
        with context(fs[0].loc, f"the binding Tensor.{name}"):
            lines.extend(_binding(f"_M_{name}", name, fs, True))
        lines.append(f"{name}.__qualname__ = 'Tensor.' + {name!r}")
        lines.append(f"{name}.__name__ = {name!r}")
        lines.append(f"METHODS[{name!r}] = {name}")
        lines.append("")
    method_names = {n for (_m, n) in groups}
    for dunder, name in DUNDERS.items():
        if name not in method_names:
            continue
        fast = _fast_candidate(groups[(None, name)], True)
        lines.append(f"def {dunder}(self, other):")
        if fast is not None and len([a for a in fast.func.arguments if not a.kwarg_only]) == 2:
            defaults = [_binding_default(fast, a) for a in fast.func.arguments if a.kwarg_only]
            lines.append("    if type(other) is _T and type(self) is _T:")
            lines.append(f"        return _ops.{fast.ident}({', '.join(['self', 'other'] + defaults)})")
        lines.extend(_number_fast_path(name, groups[(None, name)]))
        lines.append("    try:")
        lines.append(f"        return _M_{name}.call((other,), None, self)")
        lines.append("    except TypeError:      # Python then tries the reflected operator, as PyTorch's dunders")
        lines.append("        if not isinstance(self, _T):")
        lines.append("            raise          # called unbound on a non-tensor (Tensor.__radd__(3, t))")
        lines.append("        return NotImplemented")
        lines.append(f"METHODS[{dunder!r}] = {dunder}")
        lines.append("")
    for name in sorted(BINDING_DUNDERS & method_names):
        # a binding named as a binary dunder (__and__, __ilshift__, ...): a TypeError becomes NotImplemented
        lines.append(f"def {name}_or_not_implemented(self, other):")
        lines.append("    try:")
        lines.append(f"        return {name}(self, other)")
        lines.append("    except TypeError:")
        lines.append("        if not isinstance(self, _T):")
        lines.append("            raise")
        lines.append("        return NotImplemented")
        lines.append(f"{name}_or_not_implemented.__qualname__ = 'Tensor.' + {name!r}")
        lines.append(f"{name}_or_not_implemented.__name__ = {name!r}")
        lines.append(f"METHODS[{name!r}] = {name}_or_not_implemented")
        lines.append("")
    for dunder, same in (("__radd__", "__add__"), ("__rmul__", "__mul__")):
        lines.append(f"METHODS[{dunder!r}] = {same}")
    for dunder, name in UNARY_DUNDERS.items():
        if name in method_names:
            lines.append(f"def {dunder}(self):")
            lines.append(f"    return {name}(self)")
            lines.append(f"METHODS[{dunder!r}] = {dunder}")
            lines.append("")
    return "\n".join(fit_all(lines)) + "\n"


__all__ = ["gen_functions", "gen_methods", "arg_names"]
