"""``SchemaCheckMode``: catch an operator whose implementation does what its schema does not declare.

Under the mode each operator call is watched: its tensor arguments are copied before the call (values,
sizes, strides, storage offset, storage and version counter) and compared after it.  An argument that
changed but is not ``Tensor(a!)`` is an undeclared mutation; an output that shares memory with an input
(or with another output) without an alias annotation that allows it is an undeclared alias; an output
that *is* an input not declared mutable is refused too (PyTorch's rule for operators below autograd).
A declared mutation that does not happen is fine.  The messages are PyTorch's, led by the operator's name.
"""
from __future__ import annotations

from itertools import combinations
from typing import NamedTuple

import numpy as np

from ....core.tensor import Tensor
from ....modes.python_dispatch import TorchDispatchMode
from .tensor_facts import host_values, overlaps, storage_of

__all__ = ["SchemaCheckMode", "Mutation", "Aliasing"]


class Mutation(NamedTuple):
    op_name: str
    arg_name: str


class Aliasing(NamedTuple):
    op_name: str
    arg_name: str
    output_number: str


class _Snapshot:
    """What a tensor argument looked like before the call."""

    __slots__ = ("values", "shape", "stride", "offset", "storage", "version")

    def __init__(self, t: Tensor):
        self.values = host_values(t)
        self.shape = tuple(t.shape)
        self.stride = tuple(t.stride())
        self.offset = t.storage_offset()
        self.storage = storage_of(t)
        self.version = t._version

    def changed(self, t: Tensor) -> str | None:
        """Why ``t`` counts as mutated (None if it does not)."""
        if tuple(t.shape) != self.shape or tuple(t.stride()) != self.stride or t.storage_offset() != self.offset \
                or storage_of(t) is not self.storage:
            return "its metadata (sizes, strides, storage offset or storage) changed"
        now = host_values(t)
        same = np.array_equal(now, self.values, equal_nan=now.dtype.kind in "fc")
        if not same:
            return "its values changed"
        if t._version != self.version:
            return "its version counter moved (it was written in place)"
        return None


def _leaves(value) -> list:
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, Tensor)]
    return []


def _alias_sets(info) -> set:
    """The alias sets an annotation names, with the element annotations of a list type."""
    if info is None:
        return set()
    found = set(info.before_set) | set(info.after_set)
    for inner in info.contained:
        found |= _alias_sets(inner)
    return found


def _may_alias(a, b) -> bool:
    """Whether the schema lets two annotated values share memory: a common alias set, or a wildcard."""
    sa, sb = _alias_sets(a), _alias_sets(b)
    if not sa or not sb:
        return False
    return bool(sa & sb) or "*" in sa or "*" in sb


def _is_mutable(info) -> bool:
    return info is not None and info.writes


# operators exempt, as in PyTorch: the unsafe ones alias without saying so; lift returns its input by design
_UNSAFE_ALIAS = frozenset({"aten::_unsafe_view", "aten::unsafe_split"})
_RETURNS_INPUT = frozenset({"aten::lift", "aten::lift_fresh"})


def _standardize_name(name: str) -> str:
    return "input" if name == "self" else name


class SchemaCheckMode(TorchDispatchMode):
    """Checks every operator called under it against its schema; records what was mutated and aliased."""

    def __init__(self):
        super().__init__()
        self.ops: list = []
        self.mutated: list = []     # Mutation(operator name, argument name)
        self.aliasing: list = []    # Aliasing(operator name, argument name, "output_<j>")

    def reset_cache(self) -> None:
        self.ops.clear()
        self.mutated.clear()
        self.aliasing.clear()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        schema = func._schema
        op_name = schema.name
        self.ops.append(op_name)
        params = schema.arguments
        values = []
        for i, a in enumerate(params):
            values.append(args[i] if i < len(args) else kwargs.get(a.name))
        before = [[_Snapshot(t) for t in _leaves(v)] for v in values]

        out = func(*args, **kwargs)

        outs = out if isinstance(out, tuple) else (out,)
        returns = schema.returns
        for i, (a, v) in enumerate(zip(params, values)):
            leaves = _leaves(v)
            if not leaves:
                continue
            name = _standardize_name(a.name)
            for j, o in enumerate(outs):
                ret_info = returns[j].alias_info if j < len(returns) else None
                for t in leaves:
                    if op_name not in _UNSAFE_ALIAS and any(overlaps(x, t) for x in _leaves(o)):
                        if not _may_alias(ret_info, a.alias_info):
                            raise RuntimeError(f"{op_name}: Argument {name} is not defined to alias output but was "
                                               f"aliasing (output {j} shares memory with it; annotate both, e.g. "
                                               f"'Tensor(a) {a.name} -> Tensor(a)', or return a copy)")
                        self.aliasing.append(Aliasing(op_name, name, f"output_{j}"))
                    if isinstance(o, Tensor) and o._impl is t._impl and not _is_mutable(a.alias_info) \
                            and op_name not in _RETURNS_INPUT:
                        raise RuntimeError(f"{op_name}: Dispatcher operators below autograd are not allowed to "
                                           f"directly return inputs. However, we found that `outputs[{j}] is "
                                           f"{name}`")
            for t, snap in zip(leaves, before[i]):
                why = snap.changed(t)
                if why is None:
                    continue
                if not _is_mutable(a.alias_info):
                    raise RuntimeError(f"{op_name}: Argument {name} is not defined as mutable but was mutated "
                                       f"({why}; declare it 'Tensor(a!) {a.name}' if the operator writes it)")
                self.mutated.append(Mutation(op_name, name))
                break
        for i, j in combinations(range(min(len(returns), len(outs))), 2):
            if any(overlaps(x, y) for x in _leaves(outs[i]) for y in _leaves(outs[j])):
                if not _may_alias(returns[i].alias_info, returns[j].alias_info):
                    raise RuntimeError(f"{op_name}: Outputs {i} and {j} alias unexpectedly")
        return out
