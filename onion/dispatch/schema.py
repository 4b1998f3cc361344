"""PyTorch's function-schema language: parser, data model and printer.

Every operator in onion is declared with a schema string written exactly as in
PyTorch, e.g. ``aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1)
-> Tensor``.  This module turns such a string into immutable dataclasses that the
dispatcher, codegen and the Python bindings read, and prints them back.

Design notes (why it looks like this):

* Printing reproduces the source text exactly for everything PyTorch's
  ``native_functions.yaml`` contains.  Default values are therefore kept as their
  *source text* (``Argument.default``); ``Argument.default_value`` converts that
  text to a Python value on demand.  Printing follows PyTorch's C++
  ``operator<<(FunctionSchema)``: one unnamed return without parentheses, several
  in parentheses, ``()`` for none, ``*`` before the first keyword-only argument.
* Alias annotations follow c10's ``AliasInfo`` model: an annotation written on a
  list (``Tensor[](a)``) is the argument's alias info and the element's
  annotation is nested in ``contained``; when only the element is annotated
  (``Tensor(a!)[]``) the list gets an empty, unnamed container that inherits
  ``is_write`` (exactly what ``torch._C.parse_schema`` reports).  Types
  themselves carry no alias annotation, so ``arg.type == parse_type("Tensor")``
  holds for ``Tensor(a!) self``.
* The tokenizer is one master pattern scanned left to right; the grammar is a
  small recursive-descent parser.  Nothing is ever ``eval``-ed.
* Errors are ``RuntimeError`` and point at the offending column, in the style
  of PyTorch's schema parser, so a message a user searches for looks familiar.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, replace
from typing import Optional

__all__ = [
    "AliasInfo",
    "Argument",
    "FunctionSchema",
    "Return",
    "SchemaSymbol",
    "SchemaType",
    "parse_operator_name",
    "parse_schema",
    "parse_type",
]

# Type constructors whose parentheses hold *types* rather than an alias
# annotation (``Dict(str, Tensor)`` vs ``Tensor(a)``).
_CONTAINER_ARITY = {"Dict": (2, 2), "Future": (1, 1), "RRef": (1, 1), "Await": (1, 1), "Union": (1, None)}
# Base name used for anonymous tuple types ``(int, float)``.
_TUPLE = "Tuple"
_FLOAT_BASES = frozenset({"float", "SymFloat"})
_COMPLEX_BASES = frozenset({"complex"})
_FLOAT_WORDS = {"inf": math.inf, "nan": math.nan}


# ---------------------------------------------------------------------------
# Data model
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SchemaSymbol:
    """An enum-like identifier used as a default (``Mean``, ``long``, ``contiguous_format``).

    The schema layer does not know onion's dtype/layout/reduction enums (they
    live in higher layers), so it hands the name back for the caller to map.
    """

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class SchemaType:
    """A schema type such as ``Tensor``, ``int[2]``, ``Tensor?[]`` or ``Dict(str, t)``.

    The common shapes are flat so callers can test them cheaply:
    ``base`` is the innermost named type (``"Tuple"`` for ``(A, B)``),
    ``optional`` is a trailing ``?`` on the whole type, ``is_list`` /
    ``list_size`` describe an outer ``[]``/``[N]`` and ``elem_optional`` marks
    ``T?[]``.  ``contained`` holds type arguments (``Dict(K, V)``,
    ``Future(T)``, ``Union(...)``, tuple members).  ``elem`` is only set for the
    rare list whose element is itself a list (``Tensor[][]``); ``base`` and
    ``contained`` then still describe the innermost type.
    """

    base: str
    optional: bool = False
    is_list: bool = False
    list_size: Optional[int] = None
    elem_optional: bool = False
    contained: tuple["SchemaType", ...] = ()
    elem: Optional["SchemaType"] = None

    def __str__(self) -> str:
        return _format_type(self, None)

    @property
    def is_tensor_like(self) -> bool:
        """True for Tensor, Tensor?, Tensor[], Tensor?[] (and nested variants)."""
        return self.base == "Tensor" and not self.contained

    @property
    def element_type(self) -> Optional["SchemaType"]:
        """The element type of a list type, else None."""
        if not self.is_list:
            return None
        if self.elem is not None:
            return self.elem
        return SchemaType(self.base, optional=self.elem_optional, contained=self.contained)

    @property
    def list_depth(self) -> int:
        """How many list levels wrap the innermost type (0 for a non-list)."""
        if not self.is_list:
            return 0
        return 1 + (self.elem.list_depth if self.elem is not None else 0)


@dataclass(frozen=True)
class AliasInfo:
    """c10's alias annotation: ``a``, ``a!``, ``a -> *``, ``a|b``, ``a! -> a|b``, ``*``.

    ``after_set`` equals ``before_set`` when no ``->`` is written (as in
    PyTorch).  Sets keep their source order so printing round-trips.
    ``contained`` nests the element's annotation of a list type (see module
    notes); its ``before_set`` may then be empty for an unwritten container.
    """

    before_set: tuple[str, ...]
    after_set: tuple[str, ...] = ()
    is_write: bool = False
    contained: tuple["AliasInfo", ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "before_set", tuple(self.before_set))
        object.__setattr__(self, "after_set", tuple(self.after_set) or tuple(self.before_set))
        object.__setattr__(self, "contained", tuple(self.contained))

    def __str__(self) -> str:
        text = "|".join(self.before_set)
        if self.is_write:
            text += "!"
        if self.after_set != self.before_set:
            text += " -> " + "|".join(self.after_set)
        return text

    @property
    def is_wildcard_before(self) -> bool:
        return "*" in self.before_set

    @property
    def is_wildcard_after(self) -> bool:
        return "*" in self.after_set

    @property
    def writes(self) -> bool:
        """True if this annotation or any nested one is a write."""
        return self.is_write or any(c.writes for c in self.contained)


@dataclass(frozen=True)
class Argument:
    """One schema argument.  ``default`` is the default's exact source text."""

    name: str
    type: SchemaType
    default: Optional[str] = None
    kwarg_only: bool = False
    alias_info: Optional[AliasInfo] = None

    def __str__(self) -> str:
        text = f"{_format_type(self.type, self.alias_info)} {self.name}"
        if self.default is not None:
            text += "=" + self.default
        return text

    @property
    def has_default(self) -> bool:
        return self.default is not None

    @property
    def default_value(self):
        """The default as a Python value (see ``_default_value``).

        Raises ``ValueError`` when the argument has no default, because ``None``
        is itself a legitimate default value.
        """
        if self.default is None:
            raise ValueError(f"argument '{self.name}' has no default value")
        return _default_value(self.default, self.type)

    @property
    def is_write(self) -> bool:
        return self.alias_info is not None and self.alias_info.writes

    @property
    def is_out(self) -> bool:
        """A keyword-only argument that is written to (an ``out=`` argument)."""
        return self.kwarg_only and self.is_write


@dataclass(frozen=True)
class Return:
    """One schema return; ``name`` is None for unnamed returns."""

    name: Optional[str]
    type: SchemaType
    alias_info: Optional[AliasInfo] = None

    def __str__(self) -> str:
        text = _format_type(self.type, self.alias_info)
        return f"{text} {self.name}" if self.name else text

    @property
    def is_write(self) -> bool:
        return self.alias_info is not None and self.alias_info.writes


@dataclass(frozen=True)
class FunctionSchema:
    """A parsed operator schema.

    ``name`` includes the namespace when one was written (``"aten::add"``) and
    is ``""`` for the name-less form ``"(Tensor x) -> Tensor"`` that
    ``torch.library.define(qualname, schema)`` accepts.
    """

    name: str
    overload_name: str
    arguments: tuple[Argument, ...]
    returns: tuple[Return, ...]
    is_vararg: bool = False
    is_varret: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "arguments", tuple(self.arguments))
        object.__setattr__(self, "returns", tuple(self.returns))

    # -- names -------------------------------------------------------------
    @property
    def namespace(self) -> str:
        """``"aten"`` for ``aten::add``; ``""`` when no namespace was written."""
        ns, sep, _ = self.name.rpartition("::")
        return ns if sep else ""

    @property
    def base_name(self) -> str:
        return self.name.rpartition("::")[2]

    @property
    def qualified_name(self) -> str:
        """``aten::add.Tensor`` (no dot when the overload name is empty)."""
        return f"{self.name}.{self.overload_name}" if self.overload_name else self.name

    def with_namespace(self, ns: str) -> "FunctionSchema":
        """A copy whose name is ``ns::base_name`` (replacing any namespace)."""
        if not self.name:
            raise ValueError("cannot add a namespace to a schema without a name")
        return replace(self, name=f"{ns}::{self.base_name}")

    def with_name(self, name: str, overload_name: Optional[str] = None) -> "FunctionSchema":
        """A copy with another name (and overload name, when given)."""
        if overload_name is None:
            overload_name = self.overload_name
        return replace(self, name=name, overload_name=overload_name)

    # -- argument views ----------------------------------------------------
    @property
    def positional_args(self) -> tuple[Argument, ...]:
        return tuple(a for a in self.arguments if not a.kwarg_only)

    @property
    def kwarg_only_args(self) -> tuple[Argument, ...]:
        return tuple(a for a in self.arguments if a.kwarg_only)

    @property
    def is_mutable(self) -> bool:
        """Any argument carries a writing alias annotation (``Tensor(a!)``)."""
        return any(a.is_write for a in self.arguments)

    @property
    def is_out_fn(self) -> bool:
        """Has keyword-only written arguments (the ``out=`` variant of an op).

        This matches torchgen's ``SchemaKind.out``: the out tensors are
        keyword-only and mutable, and what is returned aliases them (or
        nothing is returned, as for ``_foreach_*.out``).
        """
        return any(a.is_out for a in self.arguments)

    # -- printing ----------------------------------------------------------
    def __str__(self) -> str:
        parts = []
        seen_kwarg_only = False
        for a in self.arguments:
            if a.kwarg_only and not seen_kwarg_only:
                parts.append("*")
                seen_kwarg_only = True
            parts.append(str(a))
        if self.is_vararg:
            parts.append("...")
        rets = [str(r) for r in self.returns]
        if len(rets) == 1 and not self.is_varret and not rets[0].startswith("("):
            ret_text = rets[0]
        elif not rets and self.is_varret:
            ret_text = "..."
        else:
            if self.is_varret:
                rets.append("...")
            ret_text = "(" + ", ".join(rets) + ")"
        return f"{self.qualified_name}({', '.join(parts)}) -> {ret_text}"


# ---------------------------------------------------------------------------
# Printing helpers
# ---------------------------------------------------------------------------


def _primary_text(t: SchemaType) -> str:
    if t.base == _TUPLE:
        return "(" + ", ".join(str(c) for c in t.contained) + ")"
    if t.contained:
        return f"{t.base}(" + ", ".join(str(c) for c in t.contained) + ")"
    return t.base


def _suffixes(t: SchemaType) -> list[str]:
    """The ``?``/``[]``/``[N]`` suffixes of a type, innermost first."""
    if not t.is_list:
        return ["?"] if t.optional else []
    if t.elem is not None:
        out = _suffixes(t.elem)
    else:
        out = ["?"] if t.elem_optional else []
    out.append("[]" if t.list_size is None else f"[{t.list_size}]")
    if t.optional:
        out.append("?")
    return out


def _alias_levels(t: SchemaType, alias: Optional[AliasInfo]) -> list[Optional[AliasInfo]]:
    """Place an AliasInfo chain onto the type: index 0 = primary, i = i-th list level.

    The chain's head belongs to the outermost list; each ``contained[0]`` is one
    level further in.  Containers with an empty before-set were not written and
    print nothing.
    """
    depth = t.list_depth
    levels: list[Optional[AliasInfo]] = [None] * (depth + 1)
    level = depth
    node = alias
    while node is not None:
        if level < 0:
            raise ValueError(f"alias annotation nests deeper than type '{t}'")
        if len(node.contained) > 1:
            raise ValueError("an alias annotation may nest at most one element annotation")
        levels[level] = node if node.before_set else None
        node = node.contained[0] if node.contained else None
        level -= 1
    return levels


def _format_type(t: SchemaType, alias: Optional[AliasInfo]) -> str:
    primary = _primary_text(t)
    sufs = _suffixes(t)
    if alias is None:
        return primary + "".join(sufs)
    levels = _alias_levels(t, alias)
    parts = [primary]
    if levels[0] is not None:
        parts.append(f"({levels[0]})")
    level = 1
    for s in sufs:
        parts.append(s)
        if s[0] == "[":
            if levels[level] is not None:
                parts.append(f"({levels[level]})")
            level += 1
    return "".join(parts)


# ---------------------------------------------------------------------------
# Tokenizer
# ---------------------------------------------------------------------------

# Token kinds: "ident", "number", "string", "eof", or the punctuation text itself.
_TOKEN_RE = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<number>(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?j?)
  | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<punct>->|\.\.\.|::|[()\[\],?!|*=.\-])
    """,
    re.VERBOSE,
)
_IDENT_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def _error(text: str, start: int, end: int, message: str) -> RuntimeError:
    """A RuntimeError quoting the input line with the offending span marked."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", start)
    if line_end < 0:
        line_end = len(text)
    col = start - line_start
    width = max(1, min(end, line_end) - start)
    line = text[line_start:line_end]
    return RuntimeError(f"{message} (column {col + 1}):\n    {line}\n    {' ' * col}{'~' * width} <--- HERE")


def _tokenize(text: str) -> list[tuple[str, str, int, int]]:
    tokens = []
    pos = 0
    n = len(text)
    match = _TOKEN_RE.match
    while pos < n:
        m = match(text, pos)
        if m is None:
            ch = text[pos]
            if ch in "\"'":
                raise _error(text, pos, n, "unterminated string literal")
            raise _error(text, pos, pos + 1, f"unexpected character {ch!r}")
        kind = m.lastgroup
        end = m.end()
        if kind != "ws":
            tok_text = m.group()
            if kind == "punct":
                kind = tok_text
            elif kind == "number" and end < n and text[end] in _IDENT_CHARS:
                stop = end
                while stop < n and text[stop] in _IDENT_CHARS:
                    stop += 1
                raise _error(text, pos, stop, f"invalid number {text[pos:stop]!r}")
            tokens.append((kind, tok_text, pos, end))
        pos = end
    tokens.append(("eof", "", n, n))
    return tokens


_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "n": "\n", "t": "\t", "r": "\r",
            "a": "\a", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}


def _unescape(literal: str) -> str:
    """Decode a quoted string literal (either quote style, C-like escapes)."""
    body = literal[1:-1]
    if "\\" not in body:
        return body
    out = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\":
            esc = body[i + 1]
            if esc not in _ESCAPES:
                raise ValueError(f"unsupported escape sequence '\\{esc}'")
            out.append(_ESCAPES[esc])
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _describe(tok: tuple[str, str, int, int]) -> str:
    return "end of input" if tok[0] == "eof" else repr(tok[1])


# ---------------------------------------------------------------------------
# Parser
# ---------------------------------------------------------------------------


class _Parser:
    """Recursive descent over the token list (one instance per input string)."""

    __slots__ = ("text", "toks", "i")

    def __init__(self, text: str) -> None:
        if not isinstance(text, str):
            raise TypeError(f"schema must be a str, got {type(text).__name__}")
        self.text = text
        self.toks = _tokenize(text)
        self.i = 0

    # -- token helpers -----------------------------------------------------
    def peek(self, k: int = 0) -> tuple[str, str, int, int]:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def next(self) -> tuple[str, str, int, int]:
        tok = self.toks[self.i]
        if tok[0] != "eof":
            self.i += 1
        return tok

    def accept(self, kind: str):
        tok = self.toks[self.i]
        if tok[0] == kind:
            self.i += 1
            return tok
        return None

    def expect(self, kind: str, what: Optional[str] = None):
        tok = self.toks[self.i]
        if tok[0] == kind:
            self.i += 1
            return tok
        raise self.fail(f"expected {what or repr(kind)} but found {_describe(tok)}", tok)

    def fail(self, message: str, tok=None) -> RuntimeError:
        tok = tok or self.peek()
        return _error(self.text, tok[2], max(tok[3], tok[2] + 1), message)

    def expect_eof(self) -> None:
        tok = self.peek()
        if tok[0] != "eof":
            raise self.fail(f"expected end of input but found {_describe(tok)}", tok)

    # -- names -------------------------------------------------------------
    def operator_name(self) -> tuple[str, str]:
        name = self.expect("ident", "an operator name")[1]
        if self.accept("::"):
            name += "::" + self.expect("ident", "an operator name after '::'")[1]
        overload = ""
        if self.accept("."):
            tok = self.expect("ident", "an overload name after '.'")
            overload = tok[1]
            # 'default' names the empty overload on OpOverloadPacket; dunders
            # would clash with Python attributes (PyTorch rejects both).
            if overload == "default" or overload.startswith("__"):
                raise self.fail(f"{overload} is not a legal overload name for aten operators", tok)
        return name, overload

    # -- schema ------------------------------------------------------------
    def schema(self) -> FunctionSchema:
        name = overload = ""
        if self.peek()[0] == "ident":
            name, overload = self.operator_name()
        self.expect("(", "'(' to open the argument list")
        arguments: list[Argument] = []
        arg_toks = []
        kwarg_only = is_vararg = False
        if not self.accept(")"):
            while True:
                tok = self.peek()
                if is_vararg:
                    raise self.fail("'...' must be the last element of the argument list", tok)
                if self.accept("*"):
                    if kwarg_only:
                        raise self.fail("'*' may appear only once in an argument list", tok)
                    kwarg_only = True
                elif self.accept("..."):
                    is_vararg = True
                else:
                    arg_toks.append(tok)
                    arguments.append(self.argument(kwarg_only))
                if self.accept(","):
                    continue
                self.expect(")", "',' or ')' in the argument list")
                break
        self.expect("->", "'->' after the argument list")
        returns: list[Return] = []
        is_varret = False
        if self.accept("..."):
            is_varret = True
        elif self.accept("("):
            if not self.accept(")"):
                while True:
                    tok = self.peek()
                    if is_varret:
                        raise self.fail("'...' must be the last element of the return list", tok)
                    if self.accept("..."):
                        is_varret = True
                    else:
                        returns.append(self.return_())
                    if self.accept(","):
                        continue
                    self.expect(")", "',' or ')' in the return list")
                    break
        else:
            returns.append(self.return_())
        self.expect_eof()
        # Python-style binding needs defaults to form a positional suffix
        # (c10's FunctionSchema enforces the same rule).
        seen_default = False
        for a, tok in zip(arguments, arg_toks):
            if a.kwarg_only:
                continue
            if a.default is not None:
                seen_default = True
            elif seen_default:
                raise self.fail(
                    f"Non-default positional argument follows default argument. Parameter {a.name}", tok
                )
        return FunctionSchema(name, overload, tuple(arguments), tuple(returns), is_vararg, is_varret)

    def argument(self, kwarg_only: bool) -> Argument:
        t, alias = self.annotated_type()
        if self.peek()[0] == "!":
            # c10 reads 'Tensor!' as a write to a fresh anonymous set; that
            # cannot be printed back, so ask for the explicit spelling.
            raise self.fail("the 'Tensor!' shorthand is not supported; name the alias set, e.g. 'Tensor(a!)'")
        name_tok = self.expect("ident", "an argument name")
        default = None
        if self.accept("="):
            default = self.default(t)
        return Argument(name_tok[1], t, default, kwarg_only, alias)

    def return_(self) -> Return:
        t, alias = self.annotated_type()
        tok = self.accept("ident")
        return Return(tok[1] if tok else None, t, alias)

    # -- types -------------------------------------------------------------
    def annotated_type(self) -> tuple[SchemaType, Optional[AliasInfo]]:
        """Parse a type and fold its per-level annotations into c10's AliasInfo chain."""
        t, levels = self.type_()
        alias = levels[0]
        for container in levels[1:]:
            if alias is not None:
                if container is None:
                    container = AliasInfo((), (), alias.is_write, (alias,))
                else:
                    container = replace(container, contained=(alias,))
            alias = container
        return t, alias

    def type_(self) -> tuple[SchemaType, list[Optional[AliasInfo]]]:
        tok = self.peek()
        contained: tuple[SchemaType, ...] = ()
        primary_alias = None
        if tok[0] == "(":
            self.next()
            contained = self.type_list(")")
            base = _TUPLE
        elif tok[0] == "ident":
            self.next()
            base = tok[1]
            while self.peek()[0] == "." and self.peek(1)[0] == "ident":
                self.next()
                base += "." + self.next()[1]
            if base == _TUPLE:
                raise self.fail("write tuple types as '(A, B)', not 'Tuple'", tok)
            if base in _CONTAINER_ARITY and self.peek()[0] == "(":
                open_tok = self.next()
                contained = self.type_list(")")
                lo, hi = _CONTAINER_ARITY[base]
                if len(contained) < lo or (hi is not None and len(contained) > hi):
                    want = str(lo) if lo == hi else f"at least {lo}"
                    raise self.fail(f"{base} takes {want} type argument(s), got {len(contained)}", open_tok)
            if self.peek()[0] == "(":
                primary_alias = self.alias_annotation()
        else:
            raise self.fail(f"expected a type but found {_describe(tok)}", tok)
        t = SchemaType(base, contained=contained)
        levels: list[Optional[AliasInfo]] = [primary_alias]
        while True:
            kind = self.peek()[0]
            if kind == "?":
                q = self.next()
                if t.optional:
                    raise self.fail("a type can be made optional only once ('??')", q)
                t = replace(t, optional=True)
            elif kind == "[":
                self.next()
                size = None
                num = self.accept("number")
                if num is not None:
                    if not num[1].isdigit():
                        raise self.fail(f"list size must be a non-negative integer, got {num[1]!r}", num)
                    size = int(num[1])
                self.expect("]", "']' to close the list type")
                if t.is_list:
                    t = SchemaType(t.base, is_list=True, list_size=size, elem_optional=t.optional,
                                   contained=t.contained, elem=t)
                else:
                    t = SchemaType(t.base, is_list=True, list_size=size, elem_optional=t.optional,
                                   contained=t.contained)
                levels.append(self.alias_annotation() if self.peek()[0] == "(" else None)
            else:
                return t, levels

    def type_list(self, close: str) -> tuple[SchemaType, ...]:
        types = []
        if self.accept(close):
            return ()
        while True:
            tok = self.peek()
            t, levels = self.type_()
            if any(a is not None for a in levels):
                raise self.fail("alias annotations inside tuple or container types are not supported", tok)
            types.append(t)
            if self.accept(","):
                continue
            self.expect(close, f"',' or {close!r}")
            return tuple(types)

    def alias_annotation(self) -> AliasInfo:
        self.expect("(")
        before = self.alias_sets()
        is_write = self.accept("!") is not None
        after = self.alias_sets() if self.accept("->") else before
        self.expect(")", "')' to close the alias annotation")
        return AliasInfo(before, after, is_write)

    def alias_sets(self) -> tuple[str, ...]:
        sets = []
        while True:
            tok = self.peek()
            if tok[0] == "*" or tok[0] == "ident":
                self.next()
                sets.append(tok[1])
            else:
                raise self.fail(f"expected an alias set name or '*' but found {_describe(tok)}", tok)
            if not self.accept("|"):
                return tuple(sets)

    # -- defaults ----------------------------------------------------------
    def default(self, t: SchemaType) -> str:
        first = self.peek()
        if first[0] == "[":
            self.next()
            if not self.accept("]"):
                while True:
                    self.single_constant()
                    if self.accept(","):
                        continue
                    self.expect("]", "',' or ']' in the list default")
                    break
            is_list_literal = True
        else:
            self.single_constant()
            is_list_literal = False
        last = self.toks[self.i - 1]
        text = self.text[first[2]:last[3]]
        if text != "None":
            if is_list_literal and not t.is_list:
                raise self.fail(f"a list default needs a list type, not '{t}'", first)
            if not is_list_literal and t.is_list and t.list_size is None:
                raise self.fail(f"the default of list type '{t}' must be a list like [0, 1] or None", first)
            if t.base in ("Tensor", "Generator") and not t.is_list:
                raise self.fail(f"a {t.base} argument can only default to None", first)
        return text

    def single_constant(self) -> None:
        tok = self.next()
        kind = tok[0]
        if kind == "-":
            tok = self.next()
            if tok[0] == "number" or (tok[0] == "ident" and tok[1] in _FLOAT_WORDS):
                return
            raise self.fail(f"expected a number after '-' but found {_describe(tok)}", tok)
        if kind == "string":
            try:
                _unescape(tok[1])
            except ValueError as e:
                raise self.fail(str(e), tok) from None
            return
        if kind in ("number", "ident"):
            return
        raise self.fail(f"expected a default value but found {_describe(tok)}", tok)


# ---------------------------------------------------------------------------
# Default values
# ---------------------------------------------------------------------------


def _constant(tokens, i: int, base: str):
    """Convert the constant starting at tokens[i]; returns (value, next index)."""
    kind, text = tokens[i][0], tokens[i][1]
    sign = 1
    if kind == "-":
        sign = -1
        i += 1
        kind, text = tokens[i][0], tokens[i][1]
    if kind == "number":
        if text.endswith("j"):
            value = complex(0, float(text[:-1]))
        elif base in _COMPLEX_BASES:
            value = complex(float(text))
        elif base in _FLOAT_BASES or "." in text or "e" in text or "E" in text:
            value = float(text)
        else:
            value = int(text)
        return (-value if sign < 0 else value), i + 1
    if kind == "string":
        return _unescape(text), i + 1
    # identifiers
    if text in _FLOAT_WORDS:
        return sign * _FLOAT_WORDS[text], i + 1
    if text == "True":
        return True, i + 1
    if text == "False":
        return False, i + 1
    if text == "None":
        return None, i + 1
    return SchemaSymbol(text), i + 1


def _default_value(text: str, t: SchemaType):
    """Python value of a default's source text for an argument of type ``t``.

    Numbers follow PyTorch's rule: float when the type is float or the text has
    a '.'/'e'; complex for 'j'; otherwise int.  A scalar given for a sized list
    (``int[2] stride=1``) is repeated to the list size.  Lists come back as
    fresh lists from a cached tuple so callers may mutate them.
    """
    value = _default_value_cached(text, t)
    return list(value) if isinstance(value, tuple) else value


@functools.lru_cache(maxsize=4096)
def _default_value_cached(text: str, t: SchemaType):
    tokens = _tokenize(text)
    base = t.base
    if tokens[0][0] == "[":
        items = []
        i = 1
        if tokens[i][0] != "]":
            while True:
                v, i = _constant(tokens, i, base)
                items.append(v)
                if tokens[i][0] == ",":
                    i += 1
                    continue
                break
        return tuple(items)
    value, _ = _constant(tokens, 0, base)
    if value is not None and t.is_list and t.list_size is not None:
        return (value,) * t.list_size
    return value


# ---------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------


@functools.lru_cache(maxsize=8192)
def parse_schema(text: str) -> FunctionSchema:
    """Parse a full schema: ``[ns::]name[.overload](args) -> returns``.

    The name may be omitted (``"(Tensor x) -> Tensor"``), giving ``name == ""``.
    Results are immutable and cached, since operators re-parse the same strings.
    """
    return _Parser(text).schema()


def parse_type(text: str) -> SchemaType:
    """Parse a bare type such as ``"Tensor?[]"`` or ``"SymInt[2]"`` (no alias annotation)."""
    p = _Parser(text)
    tok = p.peek()
    t, levels = p.type_()
    if any(a is not None for a in levels):
        raise p.fail("alias annotations belong to arguments, not to bare types", tok)
    p.expect_eof()
    return t


def parse_operator_name(text: str) -> tuple[str, str]:
    """Split ``"aten::add.Tensor"`` into ``("aten::add", "Tensor")``."""
    p = _Parser(text)
    result = p.operator_name()
    p.expect_eof()
    return result
