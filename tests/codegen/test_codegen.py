"""Codegen: the YAML model, its errors (file:line and reason), and what it generates."""
import os

import pytest

import onion  # noqa: F401  (ensures onion/_generated exists)
from onion.codegen.model import CodegenError, load_native_functions
from onion.codegen.runner import YAML, generate, inputs_hash, is_stale


def _write(tmp_path, text):
    p = tmp_path / "native_functions.yaml"
    p.write_text(text)
    return str(p)


def test_model_keeps_lines_and_fields():
    fns = load_native_functions(YAML)
    by = {f.name: f for f in fns}
    add = by["add.Tensor"]
    assert add.structured_delegate == "add.out" and add.variants == ("function", "method")
    assert by["add.out"].structured and by["add.out"].ufunc_inner_loop["Generic"].startswith("add")
    with open(YAML) as f:
        lines = f.read().splitlines()
    assert lines[add.loc.line - 1].startswith("- func: add.Tensor(")


@pytest.mark.parametrize("text, reason", [
    ("- func: foo(Tensor x -> Tensor\n", "bad schema"),
    ("- func: foo(Tensor x) -> Tensor\n  dispatch:\n    Bogus: foo\n", "unknown dispatch key 'Bogus'"),
    ("- func: foo(Tensor x) -> Tensor\n  variants: function, gadget\n", "unknown variant 'gadget'"),
    ("- func: foo(Tensor x) -> Tensor\n  colour: blue\n", "unknown field(s) colour"),
    ("- func: foo(Tensor x) -> Tensor\n  structured_delegate: foo.out\n", "'foo.out' is not declared"),
    ("- func: foo(Tensor x) -> Tensor\n  structured: True\n", "only for out= variants"),
    ("- func: foo(Tensor x) -> Tensor\n\n- func: foo(Tensor x) -> Tensor\n", "duplicate operator foo"),
])
def test_malformed_entry_names_file_line_and_reason(tmp_path, text, reason):
    path = _write(tmp_path, "# header\n" + text)
    with pytest.raises(CodegenError) as e:
        load_native_functions(path)
    msg = str(e.value)
    assert msg.startswith(f"{path}:") and reason in msg
    line = int(msg[len(path) + 1:].split(":")[0])
    assert line >= 2


def test_missing_kernel_is_a_codegen_error(tmp_path):
    path = _write(tmp_path, "- func: foo(Tensor x) -> Tensor\n  dispatch:\n    CPU: no_such_kernel_anywhere\n")
    with pytest.raises(CodegenError, match=r":1: kernel 'no_such_kernel_anywhere' for foo not found"):
        generate(path, str(tmp_path / "out"))


def test_generates_specialised_code(tmp_path):
    out = tmp_path / "gen"
    generate(YAML, str(out))
    ops = (out / "operators.py").read_text()
    # the keyset extraction names the tensor arguments directly; defaults are inlined
    assert "def add_Tensor(self, other, alpha=1):" in ops
    assert "ks = (self._impl.keyset | other._impl.keyset | _tls.include) & _tls.mask" in ops
    kernels = (out / "register_kernels.py").read_text()
    assert "def k_add_Tensor__CPU(ks, self, other, alpha):" in kernels
    assert "def k_add_Tensor__Meta(ks, self, other, alpha):" in kernels
    assert "def k_mm__Meta(ks, self, mat2):" in kernels
    assert {"python_functions.pyi", "tensor.pyi", "ops.pyi", "type_aliases.pyi"} <= set(os.listdir(out))


def test_hash_tracks_inputs():
    assert not is_stale()
    assert len(inputs_hash()) == 64
    assert os.path.exists(os.path.join(os.path.dirname(onion.__file__), "_generated", "operators.py"))
