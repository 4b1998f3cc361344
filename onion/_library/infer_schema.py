"""``infer_schema``: a schema string from a Python function's type annotations.

The mapping is PyTorch's: ``Tensor`` -> ``Tensor``, ``int`` -> ``SymInt``, ``float``, ``bool``, ``str``,
``Number`` (``int | float | bool``) -> ``Scalar``, ``dtype`` -> ``ScalarType``, ``device`` -> ``Device``;
``Optional`` of each, sequences of most; mutated arguments get ``Tensor(a<i>!)``.
"""
from __future__ import annotations

import collections.abc
import inspect
import typing
from types import GenericAlias

from ..core.device import device as _device
from ..core.dtype import dtype as _dtype
from ..core.tensor import Tensor
from ..types import Number

UNKNOWN_MUTATES = "unknown"


def _sequence_forms(elem) -> tuple:
    """Every spelling of "a sequence of ``elem``" PyTorch accepts."""
    return (typing.Sequence[elem], typing.List[elem],  # noqa: UP006 - the typing spellings are accepted too
            GenericAlias(collections.abc.Sequence, (elem,)), GenericAlias(list, (elem,)))


def _param_types() -> dict:
    # (annotation, schema type, has T[], has T?[], has T[]?)
    table = [(Tensor, "Tensor", True, True, False), (int, "SymInt", True, False, True),
             (float, "float", True, False, True), (bool, "bool", True, False, True),
             (str, "str", False, False, False), (Number, "Scalar", True, False, False),
             (_dtype, "ScalarType", False, False, False), (_device, "Device", False, False, False)]
    out = {}
    for ann, name, lst, opt_elem_list, opt_list in table:
        out[ann] = name
        out[typing.Optional[ann]] = name + "?"
        if lst:
            for s in _sequence_forms(ann):
                out[s] = name + "[]"
        if opt_elem_list:
            for s in _sequence_forms(typing.Optional[ann]):
                out[s] = name + "?[]"
        if opt_list:
            for s in _sequence_forms(ann):
                out[typing.Optional[s]] = name + "[]?"
    return out


SUPPORTED_PARAM_TYPES = _param_types()
SUPPORTED_RETURN_TYPES = {Tensor: "Tensor", typing.List[Tensor]: "Tensor[]", list[Tensor]: "Tensor[]",  # noqa: UP006
                          int: "SymInt", float: "float", bool: "bool", Number: "Scalar"}


def _lookup(table: dict, ann):
    try:
        return table.get(ann)
    except TypeError:           # an unhashable annotation (an instance, a list): not a type we know
        return None


def _default_text(value) -> str | None:
    if value is None or isinstance(value, (bool, int, float)):
        return str(value)
    if isinstance(value, (str, _device)):
        return f'"{value}"'
    if isinstance(value, _dtype):
        return str(value).rpartition(".")[2]
    return None


def infer_schema(prototype_function, /, *, mutates_args, op_name: str | None = None, tags=()) -> str:
    """The schema of ``prototype_function`` from its annotations, e.g. ``(Tensor x) -> Tensor`` (with
    ``op_name``, ``foo(Tensor x) -> Tensor``).  ``mutates_args``: the names of the arguments the function
    writes to, or ``"unknown"`` (every Tensor argument)."""
    sig = inspect.signature(prototype_function)
    fn_globals = getattr(prototype_function, "__globals__", {})

    def fail(what: str):
        raise ValueError(f"infer_schema(func): {what} Got func with signature {sig})")

    def resolve(ann):
        """String annotations (``from __future__ import annotations``, or quoted) evaluated in the function's
        module, also inside generic aliases."""
        if isinstance(ann, str):
            try:
                return eval(ann, fn_globals)  # noqa: S307 - PyTorch evaluates annotation strings the same way
            except NameError as e:
                fail(f"Unsupported type annotation {ann}. It is not a type. ({e}). If you are using 'from "
                     f"__future__ import annotations', note that annotations are evaluated lazily as strings; "
                     f"make sure all types referenced in annotations are importable at module scope, not only "
                     f"inside a local function.")
            except Exception as e:  # noqa: BLE001 - any other failure is reported the same way
                fail(f"Unsupported type annotation {ann}. It is not a type. ({type(e).__name__}: {e})")
        origin = typing.get_origin(ann)
        if origin is not None:
            args = typing.get_args(ann)
            if any(isinstance(a, str) for a in args):
                return GenericAlias(origin, tuple(resolve(a) for a in args))
        return ann

    if type(mutates_args) is str:
        if mutates_args != UNKNOWN_MUTATES:
            raise ValueError("mutates_args must either be a sequence of the names of the arguments that are "
                             "mutated or the string 'unknown'. ")
    else:
        mutates_args = tuple(mutates_args)

    params = []
    seen = set()
    kwarg_only_started = False
    for idx, (name, param) in enumerate(sig.parameters.items()):
        if param.kind not in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY):
            fail("We do not support positional-only args, varargs, or varkwargs.")
        if param.kind == inspect.Parameter.KEYWORD_ONLY and not kwarg_only_started:
            params.append("*")
            kwarg_only_started = True
        if param.annotation is inspect.Parameter.empty:
            fail(f"Parameter {name} must have a type annotation.")
        ann = resolve(param.annotation)
        schema_type = _lookup(SUPPORTED_PARAM_TYPES, ann)
        if schema_type is None:
            valid = ", ".join(sorted(set(SUPPORTED_PARAM_TYPES.values())))
            if typing.get_origin(ann) is tuple or ann is tuple:
                as_list = tuple_to_list(ann)
                example = f"For example, {as_list}.\n\n" if _lookup(SUPPORTED_PARAM_TYPES, as_list) else "\n\n"
                fail(f"Parameter {name} has unsupported type {param.annotation}. We do not support Tuple inputs "
                     f"in schema. As a workaround, please try to use List instead. {example}The valid types are: "
                     f"{valid}.")
            fail(f"Parameter {name} has unsupported type {param.annotation}. The valid types are (as schema "
                 f"types): {valid}.")
        mutated = (mutates_args == UNKNOWN_MUTATES and schema_type.startswith("Tensor")) or \
            (type(mutates_args) is tuple and name in mutates_args)
        if mutated:
            if not schema_type.startswith("Tensor"):
                fail(f"Parameter {name} is in mutable_args but only Tensors or collections of Tensors can be "
                     f"mutated")
            schema_type = f"Tensor(a{idx}!){schema_type[len('Tensor'):]}"
        seen.add(name)
        if param.default is inspect.Parameter.empty:
            params.append(f"{schema_type} {name}")
        else:
            text = _default_text(param.default)
            if text is None:
                fail(f"Parameter {name} has an unsupported default value type {type(param.default)}. Please "
                     f"file an issue on GitHub so we can prioritize this.")
            params.append(f"{schema_type} {name}={text}")
    if type(mutates_args) is tuple:
        missing = set(mutates_args) - seen
        if missing:
            fail(f"{missing} in mutates_args were not found in the custom op's signature. mutates_args should "
                 f"contain the names of all args that the custom op mutates, or just the string 'unknown' if "
                 f"you don't know.")
    ret = _return_schema(resolve(sig.return_annotation), fail)
    head = op_name if op_name is not None else ""
    return f"{head}({', '.join(params)}) -> {ret}"


def tuple_to_list(tuple_type):
    """The list type suggested for a tuple annotation: ``tuple[int, ...]`` and ``tuple[int, int]`` ->
    ``list[int]``, mixed elements -> a list of their union, a bare tuple -> ``list``."""
    args = typing.get_args(tuple_type)
    if not args:
        return list
    if len(args) == 2 and args[1] is Ellipsis:
        return list[args[0]]
    if len(set(args)) == 1:
        return list[args[0]]
    return list[typing.Union[args]]


def _return_schema(ann, fail) -> str:
    if ann is None:
        return "()"
    if ann is inspect.Parameter.empty:
        fail("No return type annotation was provided. Please add one.")
    valid = ", ".join(sorted(set(SUPPORTED_RETURN_TYPES.values())))
    if typing.get_origin(ann) is not tuple:
        text = _lookup(SUPPORTED_RETURN_TYPES, ann)
        if text is None:
            fail(f"Return has unsupported type {ann}. The valid types are (as schema types): {valid}.")
        return text
    items = []
    for a in typing.get_args(ann):
        text = _lookup(SUPPORTED_RETURN_TYPES, a)
        if text is None:
            fail(f"Return has unsupported type {ann}. The valid types are (as schema types): {valid}.")
        items.append(text)
    inner = ", ".join(items)
    return f"(({inner}))" if len(items) == 1 else f"({inner})"
