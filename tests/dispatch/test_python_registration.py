"""The registration rules of ``Library`` (PyTorch's test_python_dispatch.py, TestPythonRegistration), each
checked against torch.library doing the same thing."""
from __future__ import annotations

import gc
import itertools
import warnings

import pytest

import onion

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

_ns = itertools.count()


def _both(fn):
    """``fn(lib_module, C, ns)`` run for torch and for onion; their (exception type, message) or results."""
    out = []
    for mod in (torch, onion):
        ns = f"regtest{next(_ns)}"
        try:
            out.append(("ok", fn(mod, ns)))
        except Exception as e:   # noqa: BLE001 - the exception is what is compared
            out.append((type(e).__name__, str(e).split("\nException raised from")[0].replace(ns, "NS")))
        gc.collect()
    return out


def test_unsupported_kind_and_reserved_namespace():
    for case in (lambda m, ns: m.library.Library(ns, "BAD"), lambda m, ns: m.library.Library("prim", "DEF"),
                 lambda m, ns: m.library.Library("prim", "FRAGMENT")):
        t, o = _both(case)
        assert t == o


@pytest.mark.parametrize("alias", ["", "FROM_SCHEMA", "CONSERVATIVE", "PURE_FUNCTION", "BOGUS"])
def test_alias_analysis_kinds(alias):
    def case(m, ns):
        lib = m.library.Library(ns, "DEF")
        lib.define("f(Tensor x) -> Tensor", alias_analysis=alias)
        return m._C._dispatch_dump(f"{ns}::f").splitlines()[3]
    t, o = _both(case)
    assert t == o


def test_a_library_is_undone_when_dropped_and_not_usable_after_destroy():
    def case(m, ns):
        lib = m.library.Library(ns, "DEF")
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: x, "CPU")
        alive = m._C._dispatch_dump(f"{ns}::f") != ""
        del lib
        gc.collect()
        gone = m._C._dispatch_dump(f"{ns}::f") == ""
        lib2 = m.library.Library(ns, "DEF")      # the namespace is free again
        lib2._destroy()
        errors = []
        for call in (lambda: lib2.define("g(Tensor x) -> Tensor"), lambda: lib2.impl("f", lambda x: x, "CPU")):
            try:
                call()
            except AssertionError as e:
                errors.append(str(e))
        return alive, gone, errors
    t, o = _both(case)
    assert t == o and t[1] == (True, True, ["Library object has been destroyed"] * 2)


def test_kernels_before_the_definition_and_after_it_goes():
    def case(m, ns):
        impl_lib = m.library.Library(ns, "FRAGMENT")
        impl_lib.impl("f", lambda x: x * 2, "CPU")
        before = m._C._dispatch_dump(f"{ns}::f").splitlines()[1]
        def_lib = m.library.Library(ns, "FRAGMENT")
        def_lib.define("f(Tensor x) -> Tensor")
        value = getattr(getattr(m.ops, ns), "f")(m.ones(2)).tolist()
        def_lib._destroy()
        after = m._C._dispatch_dump(f"{ns}::f").splitlines()[1]
        return before, value, after
    t, o = _both(case)
    assert t == o
    assert t[1] == ("schema: (none)", [2.0, 2.0], "schema: (none)")


def test_overriding_a_kernel_keeps_the_newest():
    def case(m, ns):
        lib = m.library.Library(ns, "DEF")
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: x + 1, "CPU")
        with warnings.catch_warnings(record=True) as w:      # warned the first time in the process only
            warnings.simplefilter("always")
            lib.impl("f", lambda x: x + 2, "CPU", allow_override=True)
            lib.impl("f", lambda x: x + 3, "CPU")
        assert all("Overriding a previously registered kernel" in str(x.message) for x in w)
        return getattr(getattr(m.ops, ns), "f")(m.zeros(1)).tolist()
    t, o = _both(case)
    assert t == o == ("ok", [3.0])


def test_registration_errors():
    cases = {
        "fallback outside _": lambda m, ns: m.library.Library(ns, "FRAGMENT").fallback(lambda *a: None, "CPU"),
        "define in IMPL": lambda m, ns: m.library.Library(ns, "IMPL").define("q(Tensor x) -> Tensor"),
        "duplicate define": lambda m, ns: [lib := m.library.Library(ns, "DEF"),
                                           lib.define("f(Tensor x) -> Tensor"), lib.define("f(Tensor x) -> Tensor")],
        "unknown key": lambda m, ns: m.library.Library(ns, "FRAGMENT").impl("f", lambda x: x, "Bogus"),
    }
    for name, case in cases.items():
        t, o = _both(case)
        assert t[0] == o[0] == "RuntimeError", name
        if name in ("fallback outside _", "unknown key"):
            assert t[1] == o[1], name


def test_meta_kernel_on_a_composite_implicit_operator_is_refused():
    def case(m, ns):
        lib = m.library.Library(ns, "DEF")
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: x, "CompositeImplicitAutograd")
        lib.impl("f", lambda x: x, "Meta")
    t, o = _both(case)
    assert t == o and t[0] == "RuntimeError"


def test_namespace_mismatch_in_impl():
    def case(m, ns):
        m.library.Library(ns, "FRAGMENT").impl("other::x", lambda x: x, "CPU")
    t, o = _both(case)
    assert t[0] == o[0] == "RuntimeError"
    assert "Explicitly provided namespace (other) in operator name does not match namespace of enclosing" in o[1]


def test_an_operator_without_tensors_runs_its_composite_kernel():
    def case(m, ns):
        lib = m.library.Library(ns, "DEF")
        lib.define("make(int n) -> Tensor")
        lib.impl("make", lambda n: m.zeros(n), "CompositeExplicitAutograd")
        table = [r for r in m._C._dispatch_dump_table(f"{ns}::make").splitlines() if r.startswith("Undefined")]
        return getattr(getattr(m.ops, ns), "make")(3).tolist(), [r.split(" [")[1] for r in table]
    t, o = _both(case)
    assert t == o and t[1] == ([0.0, 0.0, 0.0], ["default backend kernel]"])


@pytest.mark.parametrize("mode", ["nothing", "warn"])
def test_autograd_fallback_modes(mode):
    def case(m, ns):
        lib = m.library.Library(ns, "DEF")
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: x.detach() * 2, "CPU")
        old = m._C._get_autograd_fallback_mode()
        m._C._set_autograd_fallback_mode(mode)
        try:
            y = getattr(getattr(m.ops, ns), "f")(m.ones(2, requires_grad=True))
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                if y.requires_grad:
                    y.sum().backward()
            return old, y.requires_grad, ["an autograd kernel was not registered" in str(x.message) for x in w]
        finally:
            m._C._set_autograd_fallback_mode(old)
    t, o = _both(case)
    assert t == o
