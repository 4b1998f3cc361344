"""Selective builds: ``python -m onion.codegen --select``, the closure, ``record_operators``, the errors.

Builds never touch the shared onion/_generated: each is made in a temporary copy of the package and
checked in a subprocess with that copy first on PYTHONPATH.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import onion
from onion.codegen.context import CodegenError
from onion.codegen.model import load_native_functions
from onion.codegen.runner import DERIVATIVES, YAML
from onion.codegen.selection import SCALAR_TYPES, closure, load_selection, write_selection
from onion.dispatch.dispatcher import dispatcher

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SELECT_YAML = """\
include_all_operators: false
operators:
  aten::add.Tensor: {is_root_operator: true}
  aten::mul.Tensor: {is_root_operator: true}
  aten::sum: {include_all_overloads: true}
  aten::mm: {}
kernel_metadata:
  aten::mul.Tensor: [Float, Long]
"""

# a tiny linear model: two steps of SGD on sum((x @ w + b) * (x @ w + b)), then what the build left out
TRAIN = """\
import json, onion
out = {}
x = onion.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
w = onion.tensor([[0.1], [0.2]], requires_grad=True)
b = onion.tensor([0.5], requires_grad=True)
for _ in range(2):
    y = onion.add(onion.mm(x, w), b)
    loss = onion.sum(onion.mul(y, y))
    loss.backward()
    with onion.no_grad():
        w.add_(w.grad, alpha=-0.01)
        b.add_(b.grad, alpha=-0.01)
    w.grad = None
    b.grad = None
out["train"] = [loss.item(), w.tolist(), b.tolist()]
out["int_mul"] = onion.mul(onion.tensor([2, 3]), onion.tensor([4, 5])).tolist()
def error(fn):
    try:
        fn()
    except Exception as e:
        return [type(e).__name__, isinstance(e, NotImplementedError), str(e)]
    return None
out["sin"] = error(lambda: onion.sin(x))
out["method"] = error(lambda: x.sin())
out["ops"] = error(lambda: onion.ops.aten.sin.default(x))
out["hasattr_ops"] = hasattr(onion.ops.aten, "sin")
out["f64"] = error(lambda: onion.mul(x.double(), x.double()))
out["selection"] = onion.dispatch.selective_build.STATE["selection"]
print(json.dumps(out))
"""


def _copy_package(dst) -> str:
    """A copy of the onion package without its generated code; returns the directory to put on PYTHONPATH."""
    shutil.copytree(os.path.join(ROOT, "onion"), os.path.join(dst, "onion"),
                    ignore=shutil.ignore_patterns("_generated", "__pycache__"))
    return str(dst)


def _run(path, *args, code=None, check=True):
    env = {**os.environ, "PYTHONPATH": path, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("ONION_SKIP_CODEGEN", None)
    cmd = [sys.executable] + (["-c", code] if code is not None else list(args))
    r = subprocess.run(cmd, env=env, cwd=path, capture_output=True, text=True, timeout=300)
    if check:
        assert r.returncode == 0, r.stderr[-3000:]
    return r


@pytest.fixture(scope="module")
def selective(tmp_path_factory):
    """A package copy built with SELECT_YAML; yields (its path, the training script's results)."""
    base = tmp_path_factory.mktemp("selective")
    path = _copy_package(base)
    sel = base / "ops.yaml"
    sel.write_text(SELECT_YAML)
    _run(path, "-m", "onion.codegen", "--select", str(sel))
    results = json.loads(_run(path, code=TRAIN).stdout)
    return path, str(sel), results


def _full_build_training():
    ns: dict = {}
    script = TRAIN.replace("print(json.dumps(out))", "")
    exec(compile(script, "<train>", "exec"), ns)    # noqa: S102 - the same script, in this (full) build
    return ns["out"]


def test_selective_build_trains_a_tiny_model_like_the_full_build(selective):
    _path, _sel, got = selective
    want = _full_build_training()
    assert got["train"] == want["train"]
    assert got["int_mul"] == [8, 15]


def test_left_out_operator_names_the_build(selective):
    _path, sel, got = selective
    for key in ("sin", "method", "ops"):
        kind, not_impl, msg = got[key]
        assert kind == "OperatorNotSelectedError" and not_impl
        assert "aten::sin was not selected in this selective build of onion" in msg
        assert sel in msg and "--select" in msg
    assert got["hasattr_ops"] is False


def test_left_out_dtype_names_the_build(selective):
    _path, _sel, got = selective
    kind, _, msg = got["f64"]
    assert kind == "OperatorNotSelectedError"
    assert "aten::mul.Tensor for dtype onion.float64 was not selected" in msg


def test_selection_is_part_of_the_regeneration_hash(selective):
    """The next import keeps the selective build, also after a watched file is touched."""
    path, sel, _got = selective
    kept = os.path.join(path, "onion", "_generated", "selected_operators.yaml")
    assert os.path.exists(kept)
    yaml_file = os.path.join(path, "onion", "aten", "native_functions.yaml")
    st = os.stat(yaml_file)
    os.utime(yaml_file, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))     # touched, content unchanged
    probe = "import onion; print(onion.dispatch.selective_build.STATE['selection'] is not None)"
    assert _run(path, code=probe).stdout.strip() == "True"


@pytest.mark.slow
def test_select_all_returns_to_the_full_build(tmp_path):
    """An edited kernel body regenerates a selective build (still selective); ``--select all`` goes back."""
    path = _copy_package(tmp_path)
    sel = tmp_path / "ops.yaml"
    sel.write_text("- aten::mm\n")
    _run(path, "-m", "onion.codegen", "--select", str(sel))
    kept = os.path.join(path, "onion", "_generated", "selected_operators.yaml")
    assert os.path.exists(kept)
    probe = "import onion; print(onion.dispatch.selective_build.STATE['selection'] is not None)"
    # a kernel's body is an input of a selective build (its closure reads it): edited, it regenerates, selective
    marks = os.path.join(path, "onion", "_generated", "_inputs.sha256")
    with open(marks) as f:
        before = f.read().split()[0]
    with open(os.path.join(path, "onion", "aten", "native", "shape.py"), "a") as f:
        f.write("\n# edited\n")
    assert _run(path, code=probe).stdout.strip() == "True"
    with open(marks) as f:
        assert f.read().split()[0] != before
    _run(path, "-m", "onion.codegen", "--select", "all")
    assert not os.path.exists(kept)
    full = "import onion; print(onion.sin(onion.tensor([0.0])).tolist(), onion.dispatch.selective_build.STATE)"
    assert _run(path, code=full).stdout.strip() == "[0.0] {'selection': None, 'omitted': {}, 'omitted_bases': " \
                                                   "frozenset()}"


@pytest.fixture(scope="module")
def native_functions():
    return load_native_functions(YAML)


def test_closure_keeps_what_the_roots_call(tmp_path, native_functions):
    p = tmp_path / "ops.yaml"
    p.write_text("- aten::mm\n- aten::sum\n")
    kept = closure(native_functions, load_selection(str(p)), DERIVATIVES)
    # roots with their siblings; mm's backward (t, mm), sum's backward (expand), the engine's seed
    for name in ("mm", "mm.out", "sum", "sum.dim_IntList", "sum.IntList_out", "t", "expand", "ones_like",
                 "empty.memory_format", "copy_"):
        assert name in kept, name
    assert "sin" not in kept and "lgamma" not in kept and "fft_fft" not in kept


@pytest.mark.parametrize("text, reason", [
    ("- aten::not_an_op\n", "onion does not declare: aten::not_an_op"),
    ("operators: {aten::mm: {}}\nkernel_metadata: {aten::mm: [Floatt]}\n", "unknown dtype 'Floatt'"),
    ("operators: {aten::mm: {}}\nbogus: 1\n", "unknown field(s) bogus"),
])
def test_bad_selection_names_the_file(tmp_path, text, reason, native_functions):
    p = tmp_path / "ops.yaml"
    p.write_text(text)
    with pytest.raises(CodegenError) as e:
        closure(native_functions, load_selection(str(p)), DERIVATIVES)
    assert str(p) in str(e.value) and reason in str(e.value)


def test_record_operators_records_operators_and_dtypes(tmp_path):
    x = onion.tensor([[1.0, 2.0], [3.0, 4.0]])
    w = onion.tensor([[0.5], [0.25]], requires_grad=True)
    i = onion.tensor([1, 2])
    out = tmp_path / "recorded.yaml"
    with onion.utils.record_operators(out) as rec:
        onion.sum(onion.mul(onion.mm(x, w), 2.0)).backward()
        onion.add(i, i)
    assert dispatcher.recorder is None
    sel = rec.selection()
    assert sel["mm"] == ["float32"] and sel["add.Tensor"] == ["int64"]
    assert "mul.Scalar" in sel or "mul.Tensor" in sel
    assert {"sum", "ones_like", "expand", "t"} <= set(sel)
    loaded = load_selection(str(out))
    assert set(loaded.operators) == set(sel)
    assert loaded.dtypes["add.Tensor"] == ("int64",) and loaded.dtypes["mm"] == ("float32",)
    # nothing recorded outside the block, and the plain kernels are back in the caches
    onion.sin(x)
    assert "sin" not in rec.operators
    assert all(getattr(k, "__name__", "") != "recording"
               for h in dispatcher.ops.values() for k in h.dispatch_cache.values())


def test_record_operators_does_not_nest():
    with onion.utils.record_operators():
        with pytest.raises(RuntimeError, match="already running"):
            with onion.utils.record_operators():
                pass
    assert dispatcher.recorder is None


def test_recorded_selection_round_trips_scalar_type_names(tmp_path):
    p = tmp_path / "sel.yaml"
    write_selection(str(p), {"mm": None, "add.Tensor": None}, {"mm": ["bfloat16", "float32"], "add.Tensor": []})
    text = p.read_text()
    assert "aten::mm:" in text and "- BFloat16" in text and "- Float" in text
    sel = load_selection(str(p))
    assert sel.dtypes == {"mm": ("bfloat16", "float32")}
    assert SCALAR_TYPES["Long"] == "int64"


@pytest.mark.slow
def test_record_then_build_runs_the_recorded_program(tmp_path):
    """A selection written by record_operators builds, and the recorded program runs in that build."""
    program = textwrap.dedent("""\
        import onion
        a = onion.tensor([[1.0, -2.0], [3.0, 4.0]], requires_grad=True)
        (onion.relu(a) * a).sum().backward()
        print(a.grad.tolist())
        """)
    ns: dict = {}
    out = tmp_path / "rec.yaml"
    with onion.utils.record_operators(out):
        exec(compile(program.replace("print(a.grad.tolist())", "r = a.grad.tolist()"), "<p>", "exec"), ns)  # noqa: S102
    path = _copy_package(tmp_path)
    _run(path, "-m", "onion.codegen", "--select", str(out))
    got = _run(path, code=program).stdout.strip()
    assert got == str(ns["r"])
    r = _run(path, code="import onion; onion.tensor([1.0]).sin()", check=False)
    assert r.returncode != 0 and "aten::sin was not selected in this selective build" in r.stderr


def test_pytorch_shaped_selection_other_namespaces_and_kernel_tags(tmp_path, native_functions):
    """What PyTorch's tracing-based build writes: prim:: operators and kernel-tag dtype keys are skipped."""
    p = tmp_path / "ops.yaml"
    p.write_text(textwrap.dedent("""\
        build_features: []
        custom_classes: []
        include_all_non_op_selectives: false
        include_all_operators: false
        kernel_metadata:
          add_stub: [Float]
          aten::mul.Tensor: [Float, Double]
        operators:
          aten::mul.Tensor: {debug_info: [model], include_all_overloads: false, is_root_operator: true,
                             is_used_for_training: true}
          prim::TupleConstruct: {is_root_operator: false}
        """))
    sel = load_selection(str(p))
    assert sel.dtypes == {"add_stub": ("float32",), "mul.Tensor": ("float32", "float64")}
    kept = closure(native_functions, sel, DERIVATIVES)
    assert {"mul.Tensor", "mul_.Tensor", "mul.out"} <= kept and "prim::TupleConstruct" not in kept
    p.write_text("include_all_operators: true\n")
    assert load_selection(str(p)).is_all
