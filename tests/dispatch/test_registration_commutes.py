"""PyTorch's registration laws (test/test_dispatch.py), checked against PyTorch itself.

Registrations made at import time run in no fixed order and are undone when their library goes away, so the
dispatcher's state must depend only on *which* registrations are in effect: every order of registering and
of deregistering reaches the same dump and the same computed table.  Each scenario below runs every
permutation through ``onion._C._dispatch_library`` and records the state at each subset of registrations in
effect; the same scenario is run once through ``torch._C._dispatch_library`` and each subset's state must be
PyTorch's (a failing registration included: its message, and the dispatcher left as it was).
"""
from __future__ import annotations

import gc
import itertools
import re

import pytest

import onion

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

KEYS = ("Undefined", "CPU", "CUDA", "XLA", "AutogradOther", "AutogradCPU", "AutogradCUDA", "AutogradXLA")
_FALLBACK = re.compile(r"^(\w+): (fallthrough )?registered at .* \[backend fallback\]$")
_namespace = itertools.count()


def _table(text: str, keys) -> str:
    """The rows of ``keys`` (in that order); a backend fallback's file:line is masked (each library's own)."""
    rows = text.splitlines()
    out = []
    for k in keys:
        for row in rows:
            if row.startswith(k + ":"):
                out.append(_FALLBACK.sub(r"\1: \2<backend fallback>", row))
    return "\n".join(out)


def _state(C, ns: str, name: str, keys) -> tuple:
    dump = C._dispatch_dump(f"{ns}::{name}").replace(ns, "test")
    table = _table(C._dispatch_dump_table(f"{ns}::{name}").replace(ns, "test"), keys)
    return dump, table


def _run(C, ops, ctor, dtor, name, keys, results, expect_raises):
    """Register ``ops`` in order ``ctor``, then drop them in order ``dtor``, recording each state."""
    ns = f"__commute{next(_namespace)}__"
    refs = [None] * len(ops)
    active = set()

    def check(provenance):
        if C is onion._C:
            C._dispatch_check_invariants(f"{ns}::{name}")
        got = _state(C, ns, name, keys)
        want = results.setdefault(frozenset(active), (got, provenance))
        assert got == want[0], f"state after {provenance} differs from the one after {want[1]}"

    check("nothing")
    failed = None
    for i, ix in enumerate(ctor):
        refs[ix] = C._dispatch_library("FRAGMENT", ns, "")
        active.add(ix)
        try:
            ops[ix](refs[ix])
        except RuntimeError as e:
            if not expect_raises:
                raise
            msg = str(e).replace(ns, "test").split("\nException raised from ")[0]
            want = results.setdefault(("error", frozenset(active)), (msg, f"ctors {ctor[:i + 1]}"))
            assert msg == want[0], f"error after ctors {ctor[:i + 1]} differs from {want[1]}"
            failed = ix
            active.discard(ix)
            check(f"ctors {ctor[:i]} then a failing ctor {ix}")     # the failure changed nothing
            break
        check(f"ctors {ctor[:i + 1]}")
    if expect_raises:
        assert failed is not None, f"expected a registration to fail (ctors {ctor})"
    for i, ix in enumerate(dtor):
        refs[ix] = None          # the last reference: deregistration happens now (no gc needed, no cycles)
        active.discard(ix)
        check(f"ctors {ctor}, then dtors {dtor[:i + 1]}")


def commute(ops, name="foo", keys=KEYS, ctor_order=None, expect_raises=False) -> dict:
    """Registration and deregistration orders through onion, each state equal to PyTorch's: every pair of
    orders for up to three registrations; for more (PyTorch's own test runs all n!^2 pairs in C++), every
    registration order torn down in reverse, and every teardown order of the first registration order."""
    expected: dict = {}
    n = len(ops)
    first = tuple(ctor_order or range(n))
    _run(torch._C, ops, first, tuple(reversed(first)), name, keys, expected, expect_raises)
    ctors = [first] if ctor_order is not None else list(itertools.permutations(range(n)))
    if n <= 3:
        pairs = [(c, d) for c in ctors for d in itertools.permutations(range(n))]
    else:
        pairs = [(c, tuple(reversed(c))) for c in ctors] + [(first, d) for d in itertools.permutations(range(n))]
    results = dict(expected)
    for ctor, dtor in pairs:
        _run(onion._C, ops, ctor, dtor, name, keys, results, expect_raises)
    # every state PyTorch reached, onion reached identically (checked above through the shared ``results``)
    assert set(expected) <= set(results)
    return results


def t_t(*args, **kw):
    return lambda m: m.impl_t_t(*args, **kw)


DEF_FOO = lambda m: m.def_("foo(Tensor x) -> Tensor")  # noqa: E731
DEF_NAME = lambda m: m.def_name_t_t("foo")  # noqa: E731

SCENARIOS = {
    "def": [DEF_FOO, t_t("foo"), t_t("foo", dispatch="CPU"), t_t("foo", dispatch="Autograd"),
            t_t("foo", dispatch="AutogradCPU")],
    "def_with_inference": [DEF_NAME, t_t("foo", "CPU"), t_t("foo", "Autograd"), t_t("foo", "AutogradCPU")],
    "def_only": [lambda m: m.def_("foo(Tensor x, Tensor y) -> Tensor")],
    "impl_only": [t_t("foo"), t_t("foo", "CPU"), t_t("foo", "Autograd"), t_t("foo", "AutogradCPU")],
    "computed_table": [DEF_NAME, t_t("foo", "CPU", debug="fn_cpu"), t_t("foo", "XLA", debug="fn_xla"),
                       t_t("foo", "Autograd", debug="fn_autograd"),
                       t_t("foo", "AutogradCPU", debug="fn_autogradcpu")],
    "cpu_math": [DEF_FOO, t_t("foo", "CPU", debug="fn_cpu"),
                 t_t("foo", "CompositeImplicitAutograd", debug="fn_math")],
    "math": [DEF_FOO, t_t("foo", "CompositeImplicitAutograd")],
    "autograd": [DEF_FOO, t_t("foo", "Autograd")],
    "cpu_autograd_math": [DEF_FOO, t_t("foo", "CPU", debug="fn_cpu"), t_t("foo", "Autograd", debug="fn_autograd"),
                          t_t("foo", "CompositeImplicitAutograd", debug="fn_math")],
    "cpu_defaultbackend": [DEF_FOO, t_t("foo", "CPU", debug="fn_cpu"),
                           t_t("foo", "CompositeExplicitAutograd", debug="fn_defaultbackend")],
    "cpu_autograd_defaultbackend": [DEF_FOO, t_t("foo", "CPU", debug="fn_cpu"),
                                    t_t("foo", "Autograd", debug="fn_autograd"),
                                    t_t("foo", "CompositeExplicitAutograd", debug="fn_defaultbackend")],
    "def_explicit_alias": [lambda m: m.def_("foo(Tensor x, Tensor y) -> Tensor", alias="PURE_FUNCTION")],
}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_registrations_commute_and_invert(scenario):
    commute(SCENARIOS[scenario])


def test_ambiguous_autogradother():
    results = commute([DEF_FOO, t_t("foo", "CompositeImplicitAutograd", debug="fn_math"),
                       t_t("foo", "QuantizedCPU", debug="fn_quantizedcpu")], keys=KEYS + ("QuantizedCPU",))
    table = results[frozenset({0, 1, 2})][0][1]
    assert "AutogradOther: ambiguous_autogradother [ambiguous autogradother]" in table


def test_cpu_autograd_math_defaultbackend():
    # four registrations: all 24 x 24 orders are slow, so registrations in one order, every teardown order
    commute([DEF_FOO, t_t("foo", "CPU", debug="fn_cpu"), t_t("foo", "Autograd", debug="fn_autograd"),
             t_t("foo", "CompositeImplicitAutograd", debug="fn_math"),
             t_t("foo", "CompositeExplicitAutograd", debug="fn_defaultbackend")], ctor_order=(0, 1, 2, 3, 4))


def test_schema_mismatch_is_refused_in_either_order():
    commute([lambda m: m.def_("foo(Tensor x, Tensor y) -> Tensor"), t_t("foo")], expect_raises=True)


@pytest.mark.parametrize("second", ["def_legacy", "conservative", "same"])
def test_a_second_definition_is_refused(second):
    again = {"def_legacy": lambda m: m.def_legacy("foo(Tensor x) -> Tensor"),
             "conservative": lambda m: m.def_("foo(Tensor x) -> Tensor", alias="CONSERVATIVE"),
             "same": lambda m: m.def_("foo(Tensor x) -> Tensor", alias="PURE_FUNCTION")}[second]
    commute([lambda m: m.def_("foo(Tensor x) -> Tensor", alias="PURE_FUNCTION"), again], expect_raises=True)


def test_overwriting_a_kernel_keeps_the_old_one_inactive():
    results = commute([t_t("foo", debug="fn1"), t_t("foo", debug="fn2")], ctor_order=(0, 1))
    dump = results[frozenset({0, 1})][0][0]
    assert dump.splitlines()[-2:] == [
        "CompositeImplicitAutograd[alias]: fn2 :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]",
        "CompositeImplicitAutograd[alias] (inactive): fn1 :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]"]


def test_a_second_fallback_for_the_same_key_is_refused():
    for C in (torch._C, onion._C):
        m = C._dispatch_library("IMPL", "_", "XLA")
        m.fallback_fallthrough()
        with pytest.raises(RuntimeError) as info:
            m.fallback_fallthrough()
        assert str(info.value).split("\nException")[0] == (
            "Tried to register multiple backend fallbacks for the same dispatch key XLA; previous registration "
            "registered at /dev/null:0, new registration registered at /dev/null:0")
        m.reset()
        del m
        gc.collect()


def test_unknown_operator_dumps_are_empty_and_no_kernel_dangles():
    for C in (torch._C, onion._C):
        assert C._dispatch_dump("__nowhere__::nothing") == ""
        assert C._dispatch_dump_table("__nowhere__::nothing") == ""
        assert C._dispatch_find_dangling_impls() == []


def test_registrations_for_a_key():
    with pytest.raises(RuntimeError, match="could not parse dispatch key: invalid_key"):
        onion._C._dispatch_get_registrations_for_dispatch_key("invalid_key")
    every = set(onion._C._dispatch_get_registrations_for_dispatch_key())
    cpu = set(onion._C._dispatch_get_registrations_for_dispatch_key("CPU"))
    assert cpu and cpu < every and "aten::add.Tensor" in cpu


def test_every_runtime_key_in_pytorchs_order():
    assert str(onion._C._dispatch_keyset_full()) == str(torch._C._dispatch_keyset_full())
    for alias in ("Autograd", "CompositeImplicitAutograd", "CompositeExplicitAutograd",
                  "CompositeExplicitAutogradNonFunctional", "CompositeImplicitAutogradNestedTensor"):
        for key in onion._C._dispatch_keyset_full():
            if not hasattr(torch._C.DispatchKey, key.name):     # not every key is named in torch's Python
                continue
            assert onion._C._dispatch_is_included_in_alias(key, alias) == torch._C._dispatch_is_included_in_alias(
                getattr(torch._C.DispatchKey, key.name), getattr(torch._C.DispatchKey, alias)), (key, alias)
    assert str(onion._C._dispatch_autogradother_backends) == str(torch._C._dispatch_autogradother_backends)
