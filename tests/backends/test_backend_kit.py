"""The out-of-tree backend kit without a backend package: naming PrivateUse1, device types for the other
private keys, the device-module registry, and the backend-YAML errors of the stub generator.

PyTorch's messages come from a subprocess (renaming PrivateUse1 in this process's torch could not be undone).
"""
import json
import os
import subprocess
import sys
import textwrap

import pytest

import onion
from onion.codegen.backend_stubs import generate, load_backend_yaml
from onion.codegen.context import CodegenError
from onion.core import device as _device
from onion.core.dispatch_key import K
from onion.utils import backend_registration as kit

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def clean_names():
    """Whatever a test names or registers is taken back afterwards."""
    saved = (list(_device._PRIVATE_NAME), dict(_device._BACKEND_OF_TYPE), dict(_device._DEVICE_TYPE_NUMBER),
             dict(_device._CACHE))
    try:
        yield
    finally:
        kit._undo_privateuse1_registrations()
        _device._PRIVATE_NAME[:] = saved[0]
        for registry, before in zip((_device._BACKEND_OF_TYPE, _device._DEVICE_TYPE_NUMBER, _device._CACHE),
                                    saved[1:]):
            registry.clear()
            registry.update(before)


_TORCH_PROBE = textwrap.dedent("""
    import json, warnings
    warnings.simplefilter("ignore")
    import torch
    out = {}
    def attempt(key, fn):
        try:
            fn()
            out[key] = None
        except Exception as e:
            out[key] = [type(e).__name__, str(e)]
    attempt("in_tree", lambda: torch.utils.rename_privateuse1_backend("cuda"))
    attempt("first", lambda: torch.utils.rename_privateuse1_backend("npu"))
    attempt("same_again", lambda: torch.utils.rename_privateuse1_backend("npu"))
    attempt("other", lambda: torch.utils.rename_privateuse1_backend("foo"))
    out["str"] = str(torch.device("privateuseone:1"))
    class M:
        @staticmethod
        def is_available():
            return True
    attempt("module", lambda: torch._register_device_module("npu", M))
    attempt("module_again", lambda: torch._register_device_module("npu", M))
    attempt("module_bad_type", lambda: torch._register_device_module("bogus", M))
    attempt("methods", lambda: torch.utils.generate_methods_for_privateuse1_backend(for_packed_sequence=False))
    attempt("methods_again", lambda: torch.utils.generate_methods_for_privateuse1_backend(for_packed_sequence=False))
    t = torch.ones(2)
    out["is_npu_cpu"] = t.is_npu
    out["missing_func"] = None
    try:
        torch.utils.backend_registration._get_custom_mod_func("nothing_here")
    except RuntimeError as e:
        out["missing_func"] = str(e)
    print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def torch_says():
    pytest.importorskip("torch")
    res = subprocess.run([sys.executable, "-c", _TORCH_PROBE], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout.strip().splitlines()[-1])


def _outcome(fn):
    try:
        fn()
        return None
    except Exception as e:  # noqa: BLE001 - compared with PyTorch's
        return [type(e).__name__, str(e)]


@pytest.mark.oracle
def test_rename_and_device_module_rules_match_torch(torch_says, clean_names):
    class M:
        @staticmethod
        def is_available():
            return True
    assert _outcome(lambda: onion.utils.rename_privateuse1_backend("cuda")) == torch_says["in_tree"]
    assert _outcome(lambda: onion.utils.rename_privateuse1_backend("npu")) == torch_says["first"] is None
    assert _outcome(lambda: onion.utils.rename_privateuse1_backend("npu")) == torch_says["same_again"] is None
    assert _outcome(lambda: onion.utils.rename_privateuse1_backend("foo")) == torch_says["other"]
    assert str(onion.device("privateuseone:1")) == torch_says["str"] == "npu:1"
    assert _outcome(lambda: onion._register_device_module("npu", M)) == torch_says["module"] is None
    assert onion.npu is M and sys.modules["onion.npu"] is M
    again = _outcome(lambda: onion._register_device_module("npu", M))
    assert again[0] == torch_says["module_again"][0] == "RuntimeError"
    assert again[1].startswith("The runtime module of 'npu' has already been registered with")
    bad = _outcome(lambda: onion._register_device_module("bogus", M))
    assert bad[0] == torch_says["module_bad_type"][0] and bad[1].endswith("device type at start of device string: bogus")
    methods = dict(for_packed_sequence=False)
    assert _outcome(lambda: onion.utils.generate_methods_for_privateuse1_backend(**methods)) is None
    assert torch_says["methods"] is None
    again = _outcome(lambda: onion.utils.generate_methods_for_privateuse1_backend(**methods))
    assert again == [torch_says["methods_again"][0],
                     torch_says["methods_again"][1].replace("<class 'torch.Tensor'>", f"{onion.Tensor}")]
    assert onion.ones(2).is_npu is torch_says["is_npu_cpu"] is False
    with pytest.raises(RuntimeError) as info:
        kit._get_custom_mod_func("nothing_here")
    assert str(info.value) == torch_says["missing_func"]
    assert kit._get_custom_mod_func("is_available")() is True


def test_undo_takes_every_patch_back(clean_names):
    onion.utils.rename_privateuse1_backend("npu")
    onion.utils.generate_methods_for_privateuse1_backend(for_storage=True)
    onion._register_device_module("npu", object())
    assert hasattr(onion.Tensor, "npu") and hasattr(onion, "npu")
    kit._undo_privateuse1_registrations()
    assert not hasattr(onion.Tensor, "npu") and not hasattr(onion.Tensor, "is_npu")
    assert not hasattr(onion, "npu") and "onion.npu" not in sys.modules


def test_register_device_type_for_the_other_private_keys(clean_names):
    """The hook a second out-of-tree backend (Dask's, on PrivateUse2) names its device with."""
    _device.register_device_type("dask", K.PrivateUse2)
    d = onion.device("dask")
    assert (d.type, d.index, d.backend_key) == ("dask", None, K.PrivateUse2)
    assert _device.device_type_of_key(K.PrivateUse2) == "dask"
    _device.register_device_type("dask", "PrivateUse2")          # the same again: nothing to do
    with pytest.raises(RuntimeError, match="already registered for the PrivateUse2 backend"):
        _device.register_device_type("dask", K.PrivateUse3)
    with pytest.raises(RuntimeError, match="'cuda' is already registered for the CUDA backend"):
        _device.register_device_type("cuda", K.PrivateUse3)
    with pytest.raises(RuntimeError, match="in-tree device name: mps"):
        _device.register_device_type("mps", K.PrivateUse3)
    with pytest.raises(RuntimeError, match="already names the PrivateUse2 backend"):
        onion.utils.rename_privateuse1_backend("dask")
    from onion._library.custom_ops import dispatch_key_for_device
    assert dispatch_key_for_device("dask") == "PrivateUse2"
    _device.unregister_device_type("dask")
    with pytest.raises(RuntimeError, match="device type at start of device string: dask"):
        onion.device("dask")


# ----------------------------------------------------------------------------- backend YAML errors
def _yaml(tmp_path, text):
    p = tmp_path / "backend.yaml"
    p.write_text(textwrap.dedent(text).lstrip())
    return str(p)


@pytest.mark.parametrize("text,message", [
    ("""
     backend: PrivateUse1
     cpp_namespace: vendor
     supported:
       - add.Tensor
       - not_an_op.Tensor
     """, "backend.yaml:5: operator 'not_an_op.Tensor' is not declared in onion's native_functions.yaml"),
    ("""
     backend: PrivateUse1
     cpp_namespace: vendor
     supportd:
       - add.Tensor
     """, "backend.yaml:3: unknown field 'supportd' in the backend YAML"),
    ("""
     backend: CPU
     cpp_namespace: vendor
     """, "backend.yaml:1: backend: 'CPU' is not an out-of-tree backend key"),
    ("""
     backend: PrivateUse1
     cpp_namespace: vendor
     supported: [add.Tensor]
     autograd:
       - mm
       - add.Tensor
     """, "backend.yaml:6: add.Tensor is listed twice (first at backend.yaml:3)"),
    ("""
     backend: PrivateUse1
     cpp_namespace: vendor
     supported: [mm]
     symint:
       - view
     """, "backend.yaml:5: symint: view is not listed under supported, autograd or full_codegen"),
    ("""
     backend: PrivateUse1
     supported: [mm]
     """, "backend.yaml:1: the backend YAML needs a 'cpp_namespace:' field"),
    ("""
     backend: PrivateUse1
     cpp_namespace: vendor
     ir_gen: [mm]
     """, "backend.yaml:3: 'ir_gen:' describes lazy-tensor IR nodes"),
])
def test_backend_yaml_errors_name_file_and_line(tmp_path, text, message):
    path = _yaml(tmp_path, text)
    with pytest.raises(CodegenError) as info:
        generate(path, str(tmp_path / "out"))
    assert str(info.value).startswith(message)
    assert not (tmp_path / "out" / "register_privateuse1.py").exists()


def test_the_command_line_reports_the_error_and_fails(tmp_path):
    path = _yaml(tmp_path, """
        backend: PrivateUse1
        cpp_namespace: vendor
        supported: [nope]
        """)
    res = subprocess.run([sys.executable, "-m", "onion.codegen.backend_stubs", path, "--out", str(tmp_path / "o")],
                         capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT}, timeout=120)
    assert res.returncode == 1
    assert res.stderr.strip() == ("backend_stubs error: backend.yaml:3: operator 'nope' is not declared in onion's "
                                  "native_functions.yaml (names are as there: add.Tensor, mm, sum.dim_IntList)")


def test_stub_has_schema_signature_meta_pointer_and_raises_until_filled(tmp_path):
    path = _yaml(tmp_path, """
        backend: PrivateUse2
        cpp_namespace: vendor_pkg
        supported:
          - sum.dim_IntList
        autograd:
          - aten::mm
        """)
    by = load_backend_yaml(path)
    assert by.key is K.PrivateUse2 and [n for n, _ in by.entries["autograd"]] == ["mm"]
    generate(path, str(tmp_path / "vendor_pkg"))
    stub = (tmp_path / "vendor_pkg" / "kernels" / "sum_dim_IntList.py").read_text()
    assert "def sum_dim_IntList(self, dim, keepdim=False, *, dtype=None):" in stub
    assert "aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor" \
        in stub
    assert "meta: onion/aten/native/reductions.py meta_sum (structured_delegate sum.IntList_out)" in stub
    reg = (tmp_path / "vendor_pkg" / "register_privateuse2.py").read_text()
    assert 'm.impl_kernel("sum.dim_IntList", sum_dim_IntList_privateuse2)' in reg
    assert """m.impl_kernel("mm", mm_autogradprivateuse2, 'AutogradPrivateUse2')""" in reg
    assert "_check_same_device('wrapper_AutogradPrivateUse2_mm', (('self', self), ('mat2', mat2),))" in reg
    sys.path.insert(0, str(tmp_path))
    try:
        from vendor_pkg.kernels.sum_dim_IntList import sum_dim_IntList
        with pytest.raises(NotImplementedError, match="sum.dim_IntList: fill in this PrivateUse2 kernel"):
            sum_dim_IntList(onion.ones(2), None)
    finally:
        sys.path.remove(str(tmp_path))
        for m in [m for m in sys.modules if m.startswith("vendor_pkg")]:
            del sys.modules[m]
    # a stub that exists is the vendor's: regenerating keeps it
    (tmp_path / "vendor_pkg" / "kernels" / "mm.py").write_text("# filled\n")
    generate(path, str(tmp_path / "vendor_pkg"))
    assert (tmp_path / "vendor_pkg" / "kernels" / "mm.py").read_text() == "# filled\n"
