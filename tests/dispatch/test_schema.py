"""Tests for onion.dispatch.schema: the function-schema parser and printer.

Without PyTorch: every ``func:`` of onion's own native_functions.yaml and a set of
hand-written schemas print back byte for byte, and the parsed structure, defaults
and errors are checked against worked values.

The strongest checks use PyTorch's own material and are marked ``oracle``: every
``func:`` in torchgen's packaged native_functions.yaml (torchgen ships with torch)
must print back byte for byte, and the parsed structure must agree with
``torch._C.parse_schema``.  (How fast the parser is: benchmarks/bench_schema.py.)
"""

import importlib.util
import math
import os

import pytest
import yaml

from onion.dispatch.schema import (
    AliasInfo,
    Argument,
    FunctionSchema,
    Return,
    SchemaSymbol,
    SchemaType,
    parse_operator_name,
    parse_schema,
    parse_type,
)


def _native_functions_yaml():
    spec = importlib.util.find_spec("torchgen")
    if spec is None or spec.origin is None:
        pytest.skip("torchgen is not installed")
    path = os.path.join(
        os.path.dirname(spec.origin), "packaged", "ATen", "native", "native_functions.yaml"
    )
    if not os.path.exists(path):
        pytest.skip(f"{path} not found")
    return path


@pytest.fixture(scope="module")
def yaml_funcs():
    with open(_native_functions_yaml()) as f:
        entries = yaml.load(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    return [e["func"] for e in entries if "func" in e]


# ---------------------------------------------------------------------------
# (1) round trip of native_functions.yaml
# ---------------------------------------------------------------------------


def test_onion_native_functions_round_trip():
    """Stored text, no torch needed: every schema onion declares prints back exactly as written."""
    import onion
    with open(os.path.join(os.path.dirname(onion.__file__), "aten", "native_functions.yaml")) as f:
        funcs = [e["func"] for e in yaml.safe_load(f) if "func" in e]
    assert len(funcs) >= 150
    assert [f for f in funcs if str(parse_schema(f)) != f] == []
    assert "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor" in funcs


@pytest.mark.oracle
def test_every_native_function_round_trips(yaml_funcs):
    print(f"\nnative_functions.yaml: {len(yaml_funcs)} func entries")
    assert len(yaml_funcs) >= 2500
    failures = [(f, str(parse_schema(f))) for f in yaml_funcs if str(parse_schema(f)) != f]
    assert failures == []


@pytest.mark.oracle
def test_out_fn_matches_torchgen(yaml_funcs):
    tm = pytest.importorskip("torchgen.model")
    for f in yaml_funcs:
        expected = tm.FunctionSchema.parse(f).kind() == tm.SchemaKind.out
        assert parse_schema(f).is_out_fn == expected, f


# ---------------------------------------------------------------------------
# (2) structure agrees with torch._C.parse_schema
# ---------------------------------------------------------------------------

_TORCH_BASE = {"Scalar": "number", "SymInt": "int", "SymBool": "bool", "SymFloat": "float", "DeviceIndex": "int"}


def _torch_type_str(t: SchemaType) -> str:
    """Spell our type the way torch's ``Argument.real_type`` prints it."""
    if t.is_list:
        text = f"List[{_torch_type_str(t.element_type)}]"
    elif t.base == "Tuple":
        text = "Tuple[" + ", ".join(_torch_type_str(c) for c in t.contained) + "]"
    elif t.contained:
        text = f"{t.base}[" + ", ".join(_torch_type_str(c) for c in t.contained) + "]"
    else:
        text = _TORCH_BASE.get(t.base, t.base)
    return f"Optional[{text}]" if t.optional else text


def _alias_tuple(a):
    if a is None:
        return None
    return (sorted(a.before_set), sorted(a.after_set), a.is_write)


def _compare_with_torch(text, ours, theirs):
    assert ours.name == theirs.name, text
    assert ours.overload_name == theirs.overload_name, text
    assert len(ours.arguments) == len(theirs.arguments), text
    assert len(ours.returns) == len(theirs.returns), text
    assert ours.is_mutable == theirs.is_mutable, text
    for a, b in zip(ours.arguments, theirs.arguments):
        assert a.name == b.name, text
        assert a.kwarg_only == b.kwarg_only, text
        assert _torch_type_str(a.type) == str(b.real_type), (text, a.name)
        assert a.type.list_size == b.N, (text, a.name)
        assert a.has_default == b.has_default_value(), (text, a.name)
        assert _alias_tuple(a.alias_info) == _alias_tuple(b.alias_info), (text, a.name)
        assert a.is_write == b.is_write, (text, a.name)
        assert a.is_out == b.is_out, (text, a.name)
        if a.has_default:
            ours_v, theirs_v = a.default_value, b.default_value
            if not isinstance(ours_v, SchemaSymbol):  # torch maps those to enum ints
                if isinstance(ours_v, float) and math.isnan(ours_v):
                    assert math.isnan(theirs_v)
                else:
                    assert ours_v == theirs_v and type(ours_v) is type(theirs_v), (text, a.name)
    for r, s in zip(ours.returns, theirs.returns):
        assert (r.name or "") == s.name, text
        assert _torch_type_str(r.type) == str(s.real_type), text
        assert _alias_tuple(r.alias_info) == _alias_tuple(s.alias_info), text


@pytest.mark.oracle
def test_structure_matches_torch_for_native_functions(yaml_funcs):
    torch = pytest.importorskip("torch")
    compared = 0
    for f in yaml_funcs:
        try:
            theirs = torch._C.parse_schema(f)
        except RuntimeError:
            continue  # e.g. Dimname, which torch's schema parser does not know
        _compare_with_torch(f, parse_schema(f), theirs)
        compared += 1
    print(f"\ncompared {compared} schemas with torch._C.parse_schema")
    assert compared >= 2000


_EXTRA_SCHEMAS = [
    "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "myns::foo(Tensor x) -> Tensor",
    "foo(Tensor(a|b) x) -> Tensor",
    "foo(Tensor(a! -> a|b) x) -> Tensor",
    "foo(Tensor(a)[](b) x) -> Tensor",
    "foo(Tensor(a!)[] x) -> Tensor",
    "foo(Tensor[](a) x) -> Tensor(a)[]",
    "foo(Tensor(a -> *) self) -> Tensor(a)[]",
    "foo(Tensor(*) x) -> Tensor(a -> *)",
    "foo(Tensor(a!)? self) -> Tensor(a!)?",
    "foo(int[2](a)? x) -> Tensor",
    "foo(Dict(str, Tensor)(a!) x) -> ()",
    "foo(t(c -> *) x, Future(Tensor) f, RRef(int) r, Union(int, str) u) -> t(*)",
    "foo((str, t)[] x, int[][2] y, Tensor?[]? z=None) -> ((int, int) a)",
    "foo(int[2] x=1, bool[3] y=True, float z=1, float w=-1.5e3, complex c=1j) -> Tensor",
    "foo(str a=\"\\\"'\\\\\", str b='\"\\'\\\\', str c='x') -> Tensor",
    "foo(Tensor x, ...) -> (Tensor, ...)",
    "foo(...) -> ...",
    "foo(*, Tensor x, Tensor(a!) out) -> Tensor(a!)",
    "foo(Tensor x) -> (Tensor(a!) values, Tensor(b!) indices)",
]


@pytest.mark.parametrize("text", _EXTRA_SCHEMAS)
def test_hand_written_schemas_round_trip(text):
    assert str(parse_schema(text)) == text


@pytest.mark.oracle
@pytest.mark.parametrize("text", _EXTRA_SCHEMAS)
def test_structure_matches_torch_for_hand_written_schemas(text):
    torch = pytest.importorskip("torch")
    ours = parse_schema(text)
    assert str(ours) == text
    _compare_with_torch(text, ours, torch._C.parse_schema(text))


@pytest.mark.oracle
def test_torch_printed_jit_schemas_round_trip():
    """Every schema torch registers (prim::, c10d::, ... included), as torch prints it."""
    torch = pytest.importorskip("torch")
    texts = [str(s) for s in torch._C._jit_get_all_schemas()]
    assert len(texts) > 1000
    for text in texts:
        ours = parse_schema(text)
        assert str(ours) == text
        for a in ours.arguments:
            if a.has_default:
                a.default_value  # noqa: B018 - must convert without error


# ---------------------------------------------------------------------------
# (3) default values
# ---------------------------------------------------------------------------

_DEFAULTS = [
    ("int dim=-1", -1),
    ("int x=0", 0),
    ("SymInt s=100", 100),
    ("float eps=1e-05", 1e-05),
    ("float p=2", 2.0),
    ("float p=0", 0.0),
    ("float x=.5", 0.5),
    ("float x=5.", 5.0),
    ("float x=1E3", 1000.0),
    ("float lo=-inf", -math.inf),
    ("float hi=inf", math.inf),
    ("Scalar alpha=1", 1),
    ("Scalar alpha=1.0", 1.0),
    ("Scalar beta=0.3333333333333333", 0.3333333333333333),
    ("Scalar t=True", True),
    ("complex c=1j", 1j),
    ("bool keepdim=False", False),
    ("bool flag=True", True),
    ("bool? b=None", None),
    ("Tensor? w=None", None),
    ("int? x=0", 0),
    ('str mode="constant"', "constant"),
    ("str norm='fro'", "fro"),
    ('str e=""', ""),
    ('str a="\\"\'\\\\"', "\"'\\"),
    ("str b='\"\\'\\\\'", "\"'\\"),
    ("str nl='a\\nb\\tc'", "a\nb\tc"),
    ("int[] dims=[0,1]", [0, 1]),
    ("int[] dims=[-2,-1]", [-2, -1]),
    ("int[] x=[1, 2]", [1, 2]),
    ("int[] x=[]", []),
    ("SymInt[] size=[]", []),
    ("float[] f=[1, 2.5]", [1.0, 2.5]),
    ("bool[] m=[True, False]", [True, False]),
    ("int[2] stride=1", [1, 1]),
    ("SymInt[3] padding=0", [0, 0, 0]),
    ("bool[3] mask=True", [True, True, True]),
    ("int[1] dim=[]", []),
    ("int[2] kernel=[3,3]", [3, 3]),
    ("int[2]? k=None", None),
    ("int reduction=Mean", SchemaSymbol("Mean")),
    ("ScalarType? dtype=long", SchemaSymbol("long")),
    ("MemoryFormat memory_format=contiguous_format", SchemaSymbol("contiguous_format")),
    ("Layout layout=strided", SchemaSymbol("strided")),
    ("QScheme qscheme=per_tensor_affine", SchemaSymbol("per_tensor_affine")),
    ("int reduction=Sum", SchemaSymbol("Sum")),
]


@pytest.mark.parametrize("arg_text,expected", _DEFAULTS)
def test_default_value(arg_text, expected):
    schema = parse_schema(f"foo({arg_text}) -> Tensor")
    (arg,) = schema.arguments
    assert str(arg) == arg_text
    value = arg.default_value
    assert value == expected
    assert type(value) is type(expected)
    if isinstance(value, list):
        assert all(type(v) is type(e) for v, e in zip(value, expected))


def test_default_nan_and_fresh_lists():
    (arg,) = parse_schema("foo(float x=nan) -> ()").arguments
    assert math.isnan(arg.default_value)
    (arg,) = parse_schema("foo(int[2] x=0) -> ()").arguments
    first = arg.default_value
    first.append(99)
    assert arg.default_value == [0, 0]


def test_default_absent():
    (arg,) = parse_schema("foo(Tensor x) -> ()").arguments
    assert arg.default is None and not arg.has_default
    with pytest.raises(ValueError, match="no default"):
        arg.default_value


def test_schema_symbol():
    assert SchemaSymbol("Mean") == SchemaSymbol("Mean")
    assert str(SchemaSymbol("long")) == "long"
    assert hash(SchemaSymbol("long")) == hash(SchemaSymbol("long"))


@pytest.mark.oracle
def test_every_yaml_default_converts(yaml_funcs):
    seen = set()
    for f in yaml_funcs:
        for a in parse_schema(f).arguments:
            if a.has_default:
                seen.add((str(a.type), a.default, repr(a.default_value)))
    # spot-check a few conversions that only the yaml exercises
    assert ("SymInt[2]", "1", "[1, 1]") in seen
    assert ("float", "1e-15", "1e-15") in seen
    assert ("int", "Mean", "SchemaSymbol(name='Mean')") in seen


# ---------------------------------------------------------------------------
# (4) errors
# ---------------------------------------------------------------------------

_ERRORS = [
    ("foo(Tensor x", "expected ',' or ')' in the argument list but found end of input"),
    ("foo(Tensor x) Tensor", "expected '->'"),
    ("foo(Tensor) -> Tensor", "expected an argument name but found ')'"),
    ("foo(Tensor x) -> Tensor extra junk", "expected end of input but found 'junk'"),
    ("foo(Tensor(a x) -> Tensor", "expected ')' to close the alias annotation"),
    ("foo(Tensor() x) -> Tensor", "expected an alias set name or '*'"),
    ("foo(int[] x=1) -> Tensor", "must be a list like [0, 1] or None"),
    ("foo(int x=[1]) -> Tensor", "a list default needs a list type"),
    ("foo(Tensor x=1) -> Tensor", "can only default to None"),
    ("foo(int x=0x10) -> Tensor", "invalid number '0x10'"),
    ('foo(str x="abc) -> Tensor', "unterminated string literal"),
    ('foo(str x="a\\qb") -> Tensor', "unsupported escape sequence"),
    ("foo(int x=-abc) -> Tensor", "expected a number after '-'"),
    ("foo(int x=) -> Tensor", "expected a default value but found ')'"),
    ("foo(Tensor x, ..., Tensor y) -> Tensor", "'...' must be the last element of the argument list"),
    ("foo(Tensor x) -> (..., Tensor)", "'...' must be the last element of the return list"),
    ("foo(*, *, Tensor x) -> Tensor", "'*' may appear only once"),
    ("foo.default(Tensor x) -> Tensor", "default is not a legal overload name for aten operators"),
    ("foo.__call__(Tensor x) -> Tensor", "__call__ is not a legal overload name"),
    ("foo(int x=1, int y) -> Tensor", "Non-default positional argument follows default argument. Parameter y"),
    ("foo(int?? x) -> Tensor", "optional only once"),
    ("foo(Dict(str) x) -> Tensor", "Dict takes 2 type argument(s), got 1"),
    ("foo(int[2.5] x) -> Tensor", "list size must be a non-negative integer"),
    ("foo(Tensor x) -> Tensor @", "unexpected character '@'"),
    ("foo(, Tensor x) -> Tensor", "expected a type but found ','"),
    ("foo((Tensor(a), int) x) -> Tensor", "alias annotations inside tuple or container types"),
    ("", "expected '(' to open the argument list but found end of input"),
    ("aten::(Tensor x) -> Tensor", "expected an operator name after '::'"),
    ("foo(Tensor! x) -> Tensor", "the 'Tensor!' shorthand is not supported"),
]


@pytest.mark.parametrize("text,fragment", _ERRORS)
def test_malformed_schema_raises(text, fragment):
    with pytest.raises(RuntimeError) as info:
        parse_schema(text)
    message = str(info.value)
    assert fragment in message
    assert "<--- HERE" in message
    assert text in message  # the input is quoted back


def test_error_marks_the_column():
    text = "foo(Tensor x) -> Tensor extra junk"
    with pytest.raises(RuntimeError) as info:
        parse_schema(text)
    lines = str(info.value).splitlines()
    assert "column 31" in lines[0]
    source_line, marker_line = lines[1], lines[2]
    col = source_line.index("junk")
    assert marker_line.index("~") == col
    assert marker_line.strip() == "~~~~ <--- HERE"


def test_parse_type_errors():
    with pytest.raises(RuntimeError, match="alias annotations belong to arguments"):
        parse_type("Tensor(a)")
    with pytest.raises(RuntimeError, match="expected end of input"):
        parse_type("int x")
    with pytest.raises(RuntimeError, match="write tuple types"):
        parse_type("Tuple")


# ---------------------------------------------------------------------------
# (5) names, properties, printing, data model
# ---------------------------------------------------------------------------


def test_name_properties():
    s = parse_schema("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
    assert s.name == "aten::add"
    assert s.namespace == "aten"
    assert s.base_name == "add"
    assert s.overload_name == "Tensor"
    assert s.qualified_name == "aten::add.Tensor"
    assert [a.name for a in s.positional_args] == ["self", "other"]
    assert [a.name for a in s.kwarg_only_args] == ["alpha"]
    assert not s.is_mutable and not s.is_out_fn

    bare = parse_schema("add(Tensor self) -> Tensor")
    assert (bare.name, bare.namespace, bare.base_name, bare.overload_name) == ("add", "", "add", "")
    assert bare.qualified_name == "add"

    moved = s.with_namespace("myns")
    assert moved.qualified_name == "myns::add.Tensor"
    assert str(moved) == "myns::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
    assert str(bare.with_namespace("aten")) == "aten::add(Tensor self) -> Tensor"
    assert s.with_name("aten::sub").qualified_name == "aten::sub.Tensor"
    assert s.with_name("aten::sub", "").qualified_name == "aten::sub"


def test_nameless_schema():
    s = parse_schema("(Tensor x) -> Tensor")
    assert s.name == "" and s.overload_name == "" and s.qualified_name == ""
    assert str(s) == "(Tensor x) -> Tensor"
    assert str(s.with_name("mylib::foo")) == "mylib::foo(Tensor x) -> Tensor"
    with pytest.raises(ValueError):
        s.with_namespace("mylib")


def test_parse_operator_name():
    assert parse_operator_name("aten::add.Tensor") == ("aten::add", "Tensor")
    assert parse_operator_name("foo") == ("foo", "")
    with pytest.raises(RuntimeError):
        parse_operator_name("aten::add(")


def test_mutable_and_out():
    inplace = parse_schema("add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)")
    assert inplace.is_mutable and not inplace.is_out_fn
    out = parse_schema(
        "max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max, Tensor(b!) max_values)"
        " -> (Tensor(a!) values, Tensor(b!) indices)"
    )
    assert out.is_mutable and out.is_out_fn
    assert [a.name for a in out.arguments if a.is_out] == ["max", "max_values"]
    assert [r.name for r in out.returns] == ["values", "indices"]
    foreach_out = parse_schema("_foreach_add.List_out(Tensor[] self, Tensor[] other, *, Scalar alpha=1, Tensor(a!)[] out) -> ()")
    assert foreach_out.is_out_fn and foreach_out.returns == ()


@pytest.mark.parametrize(
    "text",
    [
        "Tensor", "Tensor?", "Tensor[]", "Tensor?[]", "Tensor[]?", "int?[]?", "SymInt[2]", "SymInt[1]?",
        "Dict(str, Tensor)", "Future(Tensor)", "(int, float)", "(str, t)[]", "Tensor[][]", "int[][2]",
        "Union(int, str, None)", "__torch__.torch.classes.c10d.ProcessGroup", "Dimname", "ConstQuantizerPtr",
        "Storage", "Stream", "Any", "t", "()",
    ],
)
def test_type_round_trip(text):
    assert str(parse_type(text)) == text


def test_type_fields():
    assert parse_type("Tensor") == SchemaType("Tensor")
    assert parse_type("Tensor?") == SchemaType("Tensor", optional=True)
    assert parse_type("Tensor?[]") == SchemaType("Tensor", is_list=True, elem_optional=True)
    assert parse_type("SymInt[2]") == SchemaType("SymInt", is_list=True, list_size=2)
    assert parse_type("int[]?") == SchemaType("int", optional=True, is_list=True)
    d = parse_type("Dict(str, Tensor)")
    assert d.base == "Dict" and d.contained == (SchemaType("str"), SchemaType("Tensor"))
    assert parse_type("(int, float)").base == "Tuple"
    nested = parse_type("Tensor[][]")
    assert nested.base == "Tensor" and nested.list_depth == 2
    assert nested.element_type == parse_type("Tensor[]")
    assert parse_type("Tensor?[]").element_type == parse_type("Tensor?")
    assert parse_type("int").element_type is None
    for t in ("Tensor", "Tensor?", "Tensor[]", "Tensor?[]", "Tensor[]?"):
        assert parse_type(t).is_tensor_like, t
    for t in ("int", "Scalar", "int[]", "Dict(str, Tensor)", "Generator?"):
        assert not parse_type(t).is_tensor_like, t
    assert str(SchemaType("int", is_list=True, list_size=3, optional=True)) == "int[3]?"


def test_alias_info_model():
    (x,) = parse_schema("foo(Tensor(a! -> a|b) x) -> ()").arguments
    assert x.alias_info == AliasInfo(("a",), ("a", "b"), True)
    assert x.type == SchemaType("Tensor")  # the annotation is not part of the type
    (x,) = parse_schema("foo(Tensor(a) x) -> ()").arguments
    assert x.alias_info.before_set == x.alias_info.after_set == ("a",)
    assert not x.is_write

    # element annotation only: an unnamed container that inherits is_write (as in c10)
    (x,) = parse_schema("foo(Tensor(a!)[] x) -> ()").arguments
    assert x.alias_info == AliasInfo((), (), True, (AliasInfo(("a",), ("a",), True),))
    assert x.is_write

    # both written
    (x,) = parse_schema("foo(Tensor(a)[](b) x) -> ()").arguments
    assert x.alias_info.before_set == ("b",)
    assert x.alias_info.contained == (AliasInfo(("a",)),)

    (r,) = parse_schema("split(Tensor(a -> *) self) -> Tensor(a)[]").returns
    assert r.alias_info.before_set == () and r.alias_info.contained[0].before_set == ("a",)
    (self_arg,) = parse_schema("split(Tensor(a -> *) self) -> Tensor(a)[]").arguments
    assert self_arg.alias_info.is_wildcard_after and not self_arg.alias_info.is_wildcard_before

    # after_set defaults to before_set; printing
    assert str(AliasInfo(("a",), is_write=True)) == "a!"
    assert str(AliasInfo(("a",), ("*",))) == "a -> *"
    assert str(AliasInfo(("a", "b"))) == "a|b"


@pytest.mark.parametrize(
    "text,normalized",
    [
        ("foo(Tensor x) -> ()", None),
        ("foo(Tensor x) -> (Tensor, Tensor)", None),
        ("foo(Tensor x) -> (Tensor)", "foo(Tensor x) -> Tensor"),
        ("foo(Tensor x) -> Tensor y", None),
        ("foo(Tensor x) -> ((int, int))", None),
        ("foo(Tensor x) -> (Tensor x, ...)", None),
        ("foo(...) -> (...)", "foo(...) -> ..."),
        ("foo() -> ()", None),
        ("foo(*, Tensor x) -> Tensor", None),
        ("foo(Tensor(a) self, *) -> Tensor", "foo(Tensor(a) self) -> Tensor"),
        ("aten :: foo . bar ( Tensor  x,Tensor y=None )->Tensor", "aten::foo.bar(Tensor x, Tensor y=None) -> Tensor"),
        ("foo(Tensor(a->*) x) -> Tensor(a)[]", "foo(Tensor(a -> *) x) -> Tensor(a)[]"),
        ("foo(Tensor[] x) -> Tensor[]", None),
        ("foo(Tensor x) -> Tensor(a)[]", None),
    ],
)
def test_printing(text, normalized):
    assert str(parse_schema(text)) == (normalized or text)


def test_build_schema_from_dataclasses():
    tensor = SchemaType("Tensor")
    schema = FunctionSchema(
        name="mylib::foo",
        overload_name="out",
        arguments=[
            Argument("x", tensor),
            Argument("dims", SchemaType("int", is_list=True, list_size=2), default="1"),
            Argument("out", tensor, kwarg_only=True, alias_info=AliasInfo(("a",), is_write=True)),
        ],
        returns=[Return(None, tensor, AliasInfo(("a",), is_write=True))],
    )
    text = "mylib::foo.out(Tensor x, int[2] dims=1, *, Tensor(a!) out) -> Tensor(a!)"
    assert str(schema) == text
    assert parse_schema(text) == schema
    assert hash(parse_schema(text)) == hash(schema)
    assert schema.arguments[1].default_value == [1, 1]
    assert schema.is_out_fn
