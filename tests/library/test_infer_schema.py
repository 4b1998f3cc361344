"""``infer_schema`` against PyTorch 2.13's: the same annotated function gives the same schema text in both, and
an annotation neither can map gives a ValueError that names the parameter (the same text up to the type lists)."""
import typing
from types import ModuleType, SimpleNamespace

import pytest

import onion
import onion.types
from conftest import torch
from onion.library import infer_schema

pytestmark = pytest.mark.oracle

# what quoted annotations name: evaluated in this module's globals, as both libraries do
OnionTensor = onion.Tensor
TorchTensor = torch.Tensor if isinstance(torch, ModuleType) else None     # the stand-in when torch is missing


def _namespace(lib):
    return SimpleNamespace(Tensor=lib.Tensor, dtype=lib.dtype, device=lib.device, Number=lib.types.Number,
                           float32=lib.float32, int64=lib.int64, cpu=lib.device("cpu"),
                           quoted=("OnionTensor" if lib is onion else "TorchTensor"),
                           quoted_list=("list[OnionTensor]" if lib is onion else "list[TorchTensor]"))


def _functions(T):
    """Annotated prototypes written against ``T`` (onion's or torch's types); name -> (function, mutates_args)."""
    Opt, Seq, List, Tuple = typing.Optional, typing.Sequence, typing.List, typing.Tuple  # noqa: UP006

    def plain(x: T.Tensor, y: T.Tensor) -> T.Tensor: ...
    def scalars(x: T.Tensor, a: int, b: float, c: bool, d: str, e: T.Number, f: T.dtype, g: T.device) -> T.Tensor: ...
    def optionals(x: Opt[T.Tensor], a: Opt[int], b: Opt[float], c: Opt[bool], d: Opt[str], e: Opt[T.Number],
                  f: Opt[T.dtype], g: Opt[T.device]) -> T.Tensor: ...
    def pep604(x: T.Tensor | None, a: int | None, b: float | None) -> T.Tensor: ...
    def lists(a: list[T.Tensor], b: List[int], c: Seq[float], d: list[bool], e: Seq[Opt[T.Tensor]],
              f: list[T.Number]) -> list[T.Tensor]: ...
    def optional_lists(a: Opt[list[int]], b: Opt[Seq[float]], c: Opt[List[bool]]) -> T.Tensor: ...
    def defaults(x: T.Tensor, a: Opt[int] = None, b: float = 3.14, c: bool = True, d: int = 3, e: str = "foo",
                 f: T.dtype = T.float32, g: T.dtype = T.int64, h: T.device = T.cpu, i: float = -2.5) -> T.Tensor: ...
    def kwonly(x: T.Tensor, *, a: int, b: float = 1.0) -> T.Tensor: ...
    def tuple_out(x: T.Tensor) -> Tuple[T.Tensor, int, float, bool, T.Number, list[T.Tensor]]: ...
    def one_tuple(x: T.Tensor) -> tuple[T.Tensor]: ...
    def none_out(x: T.Tensor) -> None: ...
    def scalar_outs(x: T.Tensor) -> int: ...
    def mutating(x: T.Tensor, y: Opt[T.Tensor], z: list[T.Tensor], w: list[Opt[T.Tensor]], k: int) -> None: ...
    def quoted(x: T.quoted, y: "typing.Optional[int]") -> T.quoted_list: ...

    return {
        "plain": (plain, ()), "scalars": (scalars, ()), "optionals": (optionals, ()), "pep604": (pep604, ()),
        "lists": (lists, ()), "optional_lists": (optional_lists, ()), "defaults": (defaults, ()),
        "kwonly": (kwonly, ()), "tuple_out": (tuple_out, ()), "one_tuple": (one_tuple, ()),
        "none_out": (none_out, ()), "scalar_outs": (scalar_outs, ()),
        "mutating": (mutating, ("x", "y", "z", "w")), "mutating_unknown": (mutating, "unknown"),
        "quoted": (quoted, []),
    }


@pytest.mark.parametrize("name", list(_functions(_namespace(onion))))
def test_same_schema_as_pytorch(name):
    fn, mutates = _functions(_namespace(onion))[name]
    tfn, _ = _functions(_namespace(torch))[name]
    expected = torch.library.infer_schema(tfn, mutates_args=mutates)
    assert infer_schema(fn, mutates_args=mutates) == expected
    assert infer_schema(fn, mutates_args=mutates, op_name="foo") == "foo" + expected


def test_worked_values():
    def f(x: onion.Tensor, w: list[onion.Tensor], *, scale: float = 1.0) -> tuple[onion.Tensor, onion.Tensor]:
        ...
    assert infer_schema(f, mutates_args={"w"}) == "(Tensor x, Tensor(a1!)[] w, *, float scale=1.0) -> (Tensor, Tensor)"
    # the schema parses, names and kinds intact
    s = onion.dispatch.schema.parse_schema("f" + infer_schema(f, mutates_args={"w"}))
    assert [a.name for a in s.arguments] == ["x", "w", "scale"] and s.arguments[2].kwarg_only
    assert s.is_mutable


def _bad_functions(T):
    def no_annotation(x) -> T.Tensor: ...
    def tuple_in(x: tuple[int, int]) -> T.Tensor: ...
    def dict_in(x: dict) -> T.Tensor: ...
    def dict_out(x: T.Tensor) -> dict: ...
    def bad_tuple_out(x: T.Tensor) -> tuple[T.Tensor, dict]: ...
    def varargs(x: T.Tensor, *args) -> T.Tensor: ...
    def varkw(x: T.Tensor, **kw) -> T.Tensor: ...
    def posonly(x: T.Tensor, /, y: int) -> T.Tensor: ...
    def no_return(x: T.Tensor, y: int): ...
    def list_default(x: T.Tensor, y: int = [1]) -> T.Tensor: ...  # noqa: B006 - the unsupported default itself
    def unknown_name(x: T.Tensor, y: "NoSuchType") -> T.Tensor: ...  # noqa: F821
    def two(x: T.Tensor, y: int) -> T.Tensor: ...
    return {"no_annotation": (no_annotation, ()), "tuple_in": (tuple_in, ()), "dict_in": (dict_in, ()),
            "dict_out": (dict_out, ()), "bad_tuple_out": (bad_tuple_out, ()), "varargs": (varargs, ()),
            "varkw": (varkw, ()), "posonly": (posonly, ()), "no_return": (no_return, ()),
            "list_default": (list_default, ()), "unknown_name": (unknown_name, ()),
            "mutates_non_tensor": (two, ("y",)), "mutates_missing": (two, ("z",)),
            "mutates_bad_string": (two, "everything")}


def _head(message: str) -> str:
    """The part of the message before the list of valid types and the signature (which print each library's
    own type names)."""
    for cut in (" The valid types are", " Got func with signature", " For example"):
        message = message.split(cut)[0]
    return message.replace("torch.", "").replace("onion.", "").replace("core.tensor.", "")


@pytest.mark.parametrize("name", list(_bad_functions(_namespace(onion))))
def test_errors_as_pytorch(name):
    fn, mutates = _bad_functions(_namespace(onion))[name]
    tfn, _ = _bad_functions(_namespace(torch))[name]
    with pytest.raises(ValueError) as expected:
        torch.library.infer_schema(tfn, mutates_args=mutates)
    with pytest.raises(ValueError) as got:
        infer_schema(fn, mutates_args=mutates)
    assert _head(str(got.value)) == _head(str(expected.value))


@pytest.mark.parametrize("ann", ["tuple", "typing.Tuple", "tuple[int]", "tuple[int, ...]", "tuple[int, int]",
                                 "tuple[int, float]", "typing.Tuple[float, int, bool]"])
def test_tuple_to_list_suggestion_as_pytorch(ann):
    from onion._library.infer_schema import tuple_to_list
    from torch._library.infer_schema import tuple_to_list as torch_tuple_to_list
    t = eval(ann)
    assert tuple_to_list(t) == torch_tuple_to_list(t)


def test_tuple_parameter_message_suggests_a_list():
    def f(x: tuple[int, ...]) -> onion.Tensor: ...
    with pytest.raises(ValueError, match=r"please try to use List instead. For example, list\[int\]"):
        infer_schema(f, mutates_args=())
