"""The Dispatcher end to end: keysets, tables, Library, fallthrough, trace, modes, errors."""
import pytest

import onion
from onion._C import DispatchKey, DispatchKeySet
from onion.library import Library, fallthrough_kernel
from onion.utils._python_dispatch import TorchDispatchMode

from conftest import dispatch_trace, torch  # (torch: a stand-in without PyTorch)


@pytest.mark.oracle
def test_tensor_keysets_match_pytorch():
    assert str(onion._C._dispatch_key_set(onion.ones(2))) == str(torch._C._dispatch_keys(torch.ones(2)))
    assert str(onion._C._dispatch_key_set(onion.ones(2, device="meta"))) == \
        str(torch._C._dispatch_keys(torch.ones(2, device="meta")))


@pytest.mark.oracle
def test_tls_sets():
    assert str(onion._C._dispatch_tls_local_include_set()) == str(torch._C._dispatch_tls_local_include_set())
    assert str(onion._C._dispatch_tls_local_exclude_set()) == str(torch._C._dispatch_tls_local_exclude_set())


def test_keyset_repr_and_ops():
    ks = DispatchKeySet([DispatchKey.AutogradCPU, DispatchKey.CPU])
    assert repr(ks) == "DispatchKeySet(CPU, AutogradCPU)"
    assert ks.highestPriorityTypeId() == DispatchKey.AutogradCPU
    autograd = DispatchKeySet(DispatchKey.Autograd)
    assert repr(autograd) == ("DispatchKeySet(AutogradOther, AutogradCPU, AutogradCUDA, AutogradHIP, AutogradXLA, "
                              "AutogradMPS, AutogradIPU, AutogradXPU, AutogradHPU, AutogradVE, AutogradLazy, "
                              "AutogradMTIA, AutogradMAIA, AutogradPrivateUse1, AutogradPrivateUse2, "
                              "AutogradPrivateUse3, AutogradMeta, AutogradNestedTensor)")


@pytest.mark.oracle
def test_op_names_print_like_pytorch():
    assert str(onion.ops.aten.add.Tensor) == str(torch.ops.aten.add.Tensor) == "aten.add.Tensor"
    assert str(onion.ops.aten.add) == "aten.add"
    assert onion.ops.aten.add.Tensor.name() == "aten::add.Tensor"
    assert str(onion.ops.aten.add.Tensor._schema) == str(torch.ops.aten.add.Tensor._schema)
    assert onion.ops.aten.mm.default.name() == "aten::mm"


def test_opoverload_and_packet_calls():
    a = onion.tensor([1.0, 2.0])
    b = onion.tensor([3.0, 4.0])
    assert onion.ops.aten.add.Tensor(a, b, alpha=2).tolist() == [7.0, 10.0]
    assert onion.ops.aten.add(a, b).tolist() == [4.0, 6.0]
    assert onion.ops.aten.add.Tensor(a, 1).tolist() == [2.0, 3.0]   # number wrapped as a tensor
    with pytest.raises(TypeError, match="alpha"):
        onion.ops.aten.add.Tensor(a, b, alpha="x")


def test_python_binding_picks_tensor_overload_with_wrapped_scalar():
    seen = []

    class Rec(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    t = onion.ones(2, dtype=onion.float16)
    with Rec():
        r = onion.add(t, 2)
        e = t == 2
    assert seen == ["aten.add.Tensor", "aten.eq.Scalar"]
    assert r.dtype is onion.float16 and e.dtype is onion.bool


def test_mode_tracer_prints_add(capsys):
    class Tracer(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            print(func)
            return func(*args, **(kwargs or {}))

    a, b = onion.ones(2), onion.ones(2)
    with Tracer():
        c = a + b
    assert capsys.readouterr().out == "aten.add.Tensor\n"
    assert c.tolist() == [2.0, 2.0]
    assert not (onion._C._dispatch_tls_local_include_set().repr_int & (1 << int(DispatchKey.Python)))


def test_mode_restored_on_exception():
    class Boom(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            raise ValueError("boom")

    before = onion._C._dispatch_tls_local_include_set()
    with pytest.raises(ValueError):
        with Boom():
            onion.ones(2) + onion.ones(2)
    assert onion._C._dispatch_tls_local_include_set() == before


def _trace(fn, level=1):
    with dispatch_trace(level) as buf:
        fn()
    return buf.getvalue()


def test_trace_autograd_then_cpu():
    a = onion.ones(3).requires_grad_()
    b = onion.ones(3)
    out = _trace(lambda: a + b)
    assert out.splitlines() == ["[call] op=[aten::add.Tensor], key=[AutogradCPU]",
                                " [redispatch] op=[aten::add.Tensor], key=[CPU]"]


def test_trace_level2_explains_choice():
    out = _trace(lambda: onion.ones(3) + onion.ones(3), level=2)
    assert "skipped as fallthrough: BackendSelect, ADInplaceOrView" in out
    assert "chosen: autograd kernel (Autograd, registered at onion/_generated/register_autograd.py:" in out
    assert "arg self: DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)" in out


def test_library_define_impl_and_precedence():
    lib = Library("onion_test", "DEF")
    try:
        lib.define("foo(Tensor x) -> Tensor")
        op = onion.ops.onion_test.foo.default
        lib.impl("foo", lambda x: x + 1, "CompositeImplicitAutograd")
        x = onion.zeros(2)
        assert op(x).tolist() == [1.0, 1.0]
        lib.impl("foo", lambda x: x + 2, "CompositeExplicitAutograd")
        assert op(x).tolist() == [2.0, 2.0]      # explicit beats implicit for the CPU key
        lib.impl("foo", lambda x: x + 3, "CPU")
        assert op(x).tolist() == [3.0, 3.0]      # a direct kernel beats both (cache was cleared)
        dump = onion._C._dispatch_dump("onion_test::foo")
        assert dump.splitlines()[:2] == ["name: onion_test::foo", "schema: onion_test::foo(Tensor x) -> Tensor"]
        assert any(line.startswith("CPU: registered at") for line in dump.splitlines())
        assert any(line.startswith("CompositeImplicitAutograd[alias]: registered at") for line in dump.splitlines())
        lib.impl("foo", lambda x: x + 4, "CPU", allow_override=True)    # overrides, as in PyTorch
        assert op(x).tolist() == [4.0, 4.0]
        with pytest.raises(RuntimeError, match="multiple"):
            lib.define("foo(Tensor x) -> Tensor")
        lib.impl("nope", lambda x: x, "CPU")        # a kernel before its definition is accepted
        assert onion._C._dispatch_dump("onion_test::nope").splitlines()[:2] == ["name: onion_test::nope",
                                                                              "schema: (none)"]
    finally:
        lib._destroy()
    assert not hasattr(onion.ops.onion_test, "foo")


class _FakeCudaTensor:
    """Only what dispatch reads: a keyset with the CUDA keys (no CUDA runtime needed)."""
    class _impl:
        keyset = int(DispatchKeySet([DispatchKey.CUDA, DispatchKey.AutogradCUDA]).repr_int)
        requires_grad = False


def test_missing_kernel_error_lists_backends():
    lib = Library("onion_test2", "DEF")
    try:
        lib.define("bar(Tensor x) -> Tensor")
        lib.impl("bar", lambda x: x, "CPU")
        # PyTorch 2.13's Meta backend fallback names the operator and what to register
        with pytest.raises(NotImplementedError, match="onion_test2::bar: attempted to run this operator with Meta "
                                                      "tensors, but there was no fake impl or Meta kernel"):
            onion.ops.onion_test2.bar.default(onion.ones(2, device="meta"))
        with pytest.raises(NotImplementedError, match="Could not run 'onion_test2::bar' with arguments from the "
                                                      r"'CUDA' backend.*only available for these backends: \[CPU, Meta"):
            onion.ops.onion_test2.bar.default._handle.call(_FakeCudaTensor())
    finally:
        lib._destroy()


def test_fallthrough_and_redispatch_with_keyset():
    lib = Library("onion_test3", "DEF")
    calls = []
    try:
        lib.define("baz(Tensor x) -> Tensor")

        def autograd_kernel(ks, x):
            calls.append(("autograd", repr(ks)))
            return onion.ops.onion_test3.baz.default.redispatch(
                ks - DispatchKeySet(DispatchKey.Autograd), x)

        lib.impl("baz", autograd_kernel, "AutogradCPU", with_keyset=True)
        lib.impl("baz", lambda x: x * 2, "CPU")
        assert onion.ops.onion_test3.baz.default(onion.ones(1)).tolist() == [2.0]
        assert calls and calls[0][0] == "autograd"
        # a fallthrough at AutogradCPU skips straight to the CPU kernel
        lib2 = Library("onion_test3", "IMPL")
        try:
            lib2.impl("baz", fallthrough_kernel, "AutogradCPU")
            calls.clear()
            assert onion.ops.onion_test3.baz.default(onion.ones(1)).tolist() == [2.0]
            assert calls == []
        finally:
            lib2._destroy()
        assert onion.ops.onion_test3.baz.default(onion.ones(1)).tolist() == [2.0] and calls
    finally:
        lib._destroy()


def test_backend_fallback_boxed():
    seen = []

    def fb(op, *args, **kwargs):
        seen.append(str(op))
        return onion.zeros(1)

    lib = Library("_", "IMPL")
    lib2 = Library("onion_test4", "DEF")
    try:
        lib.fallback(fb, "PrivateUse1")
        lib2.define("qux(Tensor x) -> Tensor")
        assert onion.ops.onion_test4.qux.default._handle.table[int(DispatchKey.PrivateUse1)].reason == \
            "backend fallback"
    finally:
        lib2._destroy()
        lib._destroy()


def test_shape_mismatch_message():
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(2\) must match the size of tensor b \(3\) at "
                                           r"non-singleton dimension 0"):
        onion.ones(2) + onion.ones(3)


def test_device_mismatch_message():
    # PyTorch 2.13's words when a meta tensor meets a CPU one (its Python meta kernels check)
    with pytest.raises(RuntimeError, match="^Tensor on device meta is not on the expected device cpu!$"):
        onion.ones(2) + onion.ones(2, device="meta")


def test_binding_type_error_lists_signatures():
    """Several signatures: the error lists them; one (add's Scalar twin is not bound in Python, as in
    PyTorch): it names the argument, as torch.add("a", t) does."""
    with pytest.raises(TypeError) as e:
        onion.sum(onion.ones(2), "a")
    msg = str(e.value)
    assert msg.startswith("sum() received an invalid combination of arguments - got (Tensor, str), "
                          "but expected one of:")
    assert "(Tensor input, tuple of ints dim, bool keepdim = False, *, dtype dtype = None)" in msg
    with pytest.raises(TypeError, match=r"^add\(\): argument 'input' \(position 1\) must be Tensor, not str$"):
        onion.add("a", onion.ones(2))


def test_unknown_operator():
    with pytest.raises(AttributeError):
        onion.ops.aten.definitely_not_an_op
    assert onion._C._dispatch_dump("aten::definitely_not_an_op") == ""     # as PyTorch: nothing to dump
    with pytest.raises(RuntimeError, match="does not exist"):
        onion._C._dispatch_has_kernel_for_dispatch_key("aten::definitely_not_an_op", "CPU")


def test_duplicate_def_namespace():
    lib = Library("onion_test5", "DEF")
    try:
        with pytest.raises(RuntimeError, match="Only a single TORCH_LIBRARY"):
            Library("onion_test5", "DEF")
    finally:
        lib._destroy()


def test_env_var_trace_in_a_fresh_process():
    import os
    import subprocess
    import sys
    code = ("import onion\n"
            "a = onion.ones(2).requires_grad_(); b = onion.ones(2)\n"
            "import sys; sys.stderr.write('--\\n')\n"
            "c = a + b\n"
            "sys.stderr.write('--\\n')\n"
            "with onion.inference_mode():\n"
            "    x, y = onion.ones(2), onion.ones(2)\n"
            "    sys.stderr.write('--\\n')\n"
            "    d = x + y\n")
    env = dict(os.environ, ONION_SHOW_DISPATCH_TRACE="1")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    err = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stderr
    parts = err.split("--\n")
    assert parts[1].splitlines() == ["[call] op=[aten::add.Tensor], key=[AutogradCPU]",
                                     " [redispatch] op=[aten::add.Tensor], key=[CPU]"]
    assert parts[3].splitlines() == ["[call] op=[aten::add.Tensor], key=[CPU]"]
