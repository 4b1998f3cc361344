"""Codegen: the YAML model, its errors (file:line and reason), and the shape of what it generates."""
import ast
import dataclasses
import os
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

import onion
from onion.codegen.derivatives import load_derivatives
from onion.codegen.model import CodegenError, load_native_functions
from onion.codegen.native_index import backward_helper_names
from onion.codegen.runner import OUT, YAML, generate, inputs_hash, is_stale

GENERATED = OUT
PKG_ROOT = os.path.dirname(os.path.dirname(onion.__file__))


def _write(tmp_path, text, name="native_functions.yaml"):
    p = tmp_path / name
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


def test_model_is_frozen():
    f = load_native_functions(YAML)[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.variants = ("method",)


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
    path = _write(tmp_path, "# a comment\n- func: foo(Tensor x) -> Tensor\n  dispatch:\n    CPU: no_such_kernel\n")
    with pytest.raises(CodegenError, match=r"native_functions.yaml:2: kernel 'no_such_kernel' for foo is not"):
        generate(path, str(tmp_path / "out"))


def test_unknown_ufunc_formula_and_group_are_codegen_errors(tmp_path):
    entry = ("- func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n"
             "  ufunc_inner_loop:\n    Generic: {}\n  dispatch:\n    CPU: foo_out\n")
    path = _write(tmp_path, entry.format("no_such_formula (Floating)"))
    with pytest.raises(CodegenError, match=r":1: no ufunc formula 'no_such_formula'"):
        generate(path, str(tmp_path / "out"))
    path = _write(tmp_path, entry.format("exp (Floaty)"))
    with pytest.raises(CodegenError, match=r":1: ufunc_inner_loop Generic: unknown dtype group 'Floaty'"):
        generate(path, str(tmp_path / "out"))


def _derivative_error(tmp_path, formula):
    nf = _write(tmp_path, "- func: exp(Tensor self) -> Tensor\n  dispatch:\n    CPU: exp_out\n")
    d = _write(tmp_path, f"# first\n- name: exp(Tensor self) -> Tensor\n  self: \"{formula}\"\n", "derivatives.yaml")
    by_name = {f.name: f for f in load_native_functions(nf)}
    return lambda: load_derivatives(d, by_name, backward_helper_names())


def test_derivative_formula_typo_is_a_codegen_error_with_the_yaml_line(tmp_path):
    with pytest.raises(CodegenError, match=r"derivatives.yaml:2: formula for self uses 'sqrtt'"):
        _derivative_error(tmp_path, "grad * sqrtt(self)")()
    # names the formula may use: arguments, grad, result, helpers, builtins, its own lambda/comprehension names
    _derivative_error(tmp_path, "maybe_multiply(grad, result) + sum([x for x in (self,)], self) * "
                                "(lambda y: y)(self)")()


def test_the_real_yamls_generate_without_error(tmp_path):
    files = generate(YAML, str(tmp_path / "gen"))
    for name in ("operators.py", "register_cpu.py", "register_meta.py", "register_autograd.py",
                 "register_backend_select.py", "autograd_nodes.py", "python_functions.py", "tensor_methods.py"):
        assert name in files


def _generated_sources():
    return {name: open(os.path.join(GENERATED, name)).read()
            for name in sorted(os.listdir(GENERATED)) if name.endswith(".py")}


def test_grep_finds_a_kernel_by_operator_name():
    cpu = open(os.path.join(GENERATED, "register_cpu.py")).read().splitlines()
    hits = [i for i, line in enumerate(cpu, 1) if '"add.Tensor"' in line]
    assert len(hits) == 1 and cpu[hits[0] - 1].startswith("m.impl_kernel(")
    # _dispatch_dump names that very line, as PyTorch names RegisterCPU_0.cpp:<line>
    dump = onion._C._dispatch_dump("aten::add.Tensor")
    assert f"CPU: registered at onion/_generated/register_cpu.py:{hits[0]} :: (none) [ boxed unboxed ]" in dump


def test_generated_lines_fit_and_no_branch_tests_a_constant():
    for name, text in _generated_sources().items():
        long = [i for i, line in enumerate(text.splitlines(), 1) if len(line) > 120]
        assert not long, f"{name}: lines over 120 characters: {long[:5]}"
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.If, ast.IfExp, ast.While)):
                parts = node.test.values if isinstance(node.test, ast.BoolOp) else [node.test]
                for part in parts:
                    leaves = [n for n in ast.walk(part) if isinstance(n, (ast.Name, ast.Attribute, ast.Call))]
                    assert leaves, f"{name}:{node.lineno}: a branch on a constant ({ast.unparse(part)})"


def test_call_path_reads_in_order():
    """binding -> operator entry -> Dispatcher -> autograd kernel -> redispatch -> CPU kernel."""
    src = _generated_sources()
    assert "return _ops.add_Tensor(a0, a1, 1)" in src["python_functions.py"]
    assert re.search(r"def add_Tensor\(self, other, alpha=1\):\n    st = _state\(\)\n    ks = .*\n    return dispatch_add_Tensor\[ks\]",
                     src["operators.py"])
    assert "return _ops.redispatch_add_Tensor[ks](ks, self, other, alpha)" in src["register_autograd.py"]
    assert 'm.impl_kernel("add.Tensor", ufunc_add.functional(' in src["register_cpu.py"]


def test_structured_kernel_reads_fast_path_meta_impl():
    """A structured functional CPU kernel tries the op's hand-written ``fast_<op>`` first where the kernel
    modules have one (mm), then meta and impl; an op without one (bmm) goes straight to its meta."""
    cpu = _generated_sources()["register_cpu.py"]
    assert ("def mm_cpu(ks, self, mat2):\n    result = _linalg.fast_mm(self, mat2)\n    if result is not None:\n"
            "        return result\n    plan = _linalg.meta_mm(self, mat2)\n") in cpu
    assert "def bmm_cpu(ks, self, mat2):\n    plan = _linalg.meta_bmm(self, mat2)\n" in cpu
    assert "fast_mm" not in _generated_sources()["register_meta.py"]


def test_keyset_first_kernels_are_registered_without_a_wrapper():
    """A hand-written kernel whose first parameter is ``ks`` takes the keyset the Dispatcher passes (as a C++
    kernel taking a ``DispatchKeySet`` first), so it is registered as it is; one without gets a generated
    wrapper that drops the keyset.  Which kernels take it is read from their source, and is part of the hash."""
    from onion.codegen import native_index
    takes = native_index.keyset_kernels()
    assert {"view", "t", "select", "_to_copy", "to_dtype", "sum", "cat", "where_self"} <= takes
    assert "copy_" not in takes and "mean" not in takes
    src = _generated_sources()
    assert '# view  (onion/aten/native_functions.yaml:' in src["register_cpu.py"]
    assert 'm.impl_kernel("view", _views.view)' in src["register_cpu.py"]
    assert 'm.impl_kernel("view", _views.view)' in src["register_meta.py"]
    assert 'm.impl_kernel("select.int", _views.select)' in src["register_composite_explicit_autograd.py"]
    assert 'm.impl_kernel("to.dtype", _copy.to_dtype)' in src["register_composite_implicit_autograd.py"]
    assert "def copy__cpu(ks, self, src, non_blocking):\n    return _copy.copy_(self, src, non_blocking)" in \
        src["register_cpu.py"]
    assert "view(ks)" in native_index.fingerprint() and "copy_(ks)" not in native_index.fingerprint()
    # the dump still names the generated line that registered the kernel
    dump = onion._C._dispatch_dump("aten::view")
    line = next(i for i, text in enumerate(src["register_cpu.py"].splitlines(), 1)
                if text == 'm.impl_kernel("view", _views.view)')
    assert f"register_cpu.py:{line}" in dump


def test_hash_tracks_inputs():
    assert not is_stale()
    assert len(inputs_hash()) == 64


def _copy_checkout(tmp_path):
    """A copy of the package with a stale generated folder (so importing it regenerates)."""
    dst = tmp_path / "checkout"
    shutil.copytree(os.path.join(PKG_ROOT, "onion"), dst / "onion",
                    ignore=shutil.ignore_patterns("_generated", "__pycache__"))
    return dst


def test_editing_a_kernel_body_does_not_regenerate(tmp_path):
    dst = _copy_checkout(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(dst)}
    code = "from onion.codegen.runner import inputs_hash; print(inputs_hash())"
    before = subprocess.check_output([sys.executable, "-c", code], env=env, text=True, cwd=dst)
    views = dst / "onion" / "aten" / "native" / "views.py"
    views.write_text(views.read_text() + "\n# a comment in a kernel module\n")
    body = dst / "onion" / "aten" / "native" / "ufunc_formulas.py"
    body.write_text(body.read_text().replace("return xp.exp(self)", "return xp.exp(self)  # same loop"))
    assert subprocess.check_output([sys.executable, "-c", code], env=env, text=True, cwd=dst) == before
    # a new kernel name is an input (a dispatch: entry may now name it)
    views.write_text(views.read_text() + "\ndef a_new_kernel(self):\n    return self\n")
    assert subprocess.check_output([sys.executable, "-c", code], env=env, text=True, cwd=dst) != before


@pytest.mark.parametrize("n", [4, pytest.param(16, marks=pytest.mark.slow)])
def test_concurrent_importers_of_a_stale_checkout(tmp_path, n):
    dst = _copy_checkout(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(dst), "ONION_SKIP_CODEGEN": "0"}
    code = textwrap.dedent("""
        import onion
        assert onion.__file__.startswith(%r)
        assert onion.add(onion.ones(2), onion.ones(2)).tolist() == [2.0, 2.0]
        print("ok")
    """) % str(dst)
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, cwd=dst, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(n)]
    results = [p.communicate(timeout=600) for p in procs]
    for p, (out, err) in zip(procs, results):
        assert p.returncode == 0 and out.strip() == "ok", err[-2000:]
    gen = dst / "onion" / "_generated"
    assert not [f for f in os.listdir(gen) if f.endswith(".tmp")]


def test_ufunc_inner_loop_per_backend_and_scalar_only_entries(tmp_path):
    """Each backend may supply its own loop (a formula over SciPy, CuPy...); ScalarOnly serves a tensor
    with a Python number; Generic is the fallback for every other backend."""
    path = _write(tmp_path, "- func: twice.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n"
                            "  structured: True\n  ufunc_inner_loop:\n    Generic: exp (Floating)\n"
                            "    CPU: sin (Floating, Half)\n    ScalarOnly: cos (Floating)\n"
                            "  dispatch:\n    CPU: twice_out\n")
    out = tmp_path / "gen"
    generate(path, str(out))
    cpu = (out / "register_cpu.py").read_text()
    cuda = (out / "register_cuda.py").read_text()
    meta = (out / "register_meta.py").read_text()
    assert "ufunc_sin = _ufunc.Ufunc(_FORMULAS['sin'], 'cpu', _np, ('Floating', 'Half'), " \
           "scalar_only=_FORMULAS['cos'])" in cpu
    assert "ufunc_exp = _ufunc.Ufunc(_FORMULAS['exp'], 'cuda', None, ('Floating',), scalar_only=_FORMULAS['cos'])" \
        in cuda
    assert 'm.impl_kernel("twice.out", ufunc_sin.out(\'twice\', (\'Tensor\',)))' in cpu
    assert 'm.impl_kernel("twice.out", ufunc_exp.out(' in meta
    bad = _write(tmp_path, "- func: twice.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n"
                           "  ufunc_inner_loop:\n    Generic: exp\n    TPU: exp\n")
    with pytest.raises(CodegenError, match=r":1: ufunc_inner_loop: unknown entry TPU"):
        generate(bad, str(tmp_path / "gen2"))


def test_an_unexpected_generator_failure_still_names_the_yaml_line(tmp_path, monkeypatch):
    from onion.codegen import gen_registrations

    def broken(self, f, key, kname):
        raise ValueError("something unforeseen")
    monkeypatch.setattr(gen_registrations.RegistrationWriter, "direct", broken)
    path = _write(tmp_path, "# first\n- func: foo(Tensor x) -> Tensor\n  dispatch:\n    CPU: view\n")
    with pytest.raises(CodegenError, match=r"native_functions.yaml:2: while generating foo: ValueError: something"):
        generate(path, str(tmp_path / "out"))
