"""Type stubs: mypy, reading only onion/_generated/*.pyi and onion/__init__.py, sees the surface
that onion builds at import, with the types PyTorch's own stubs give.

One mypy run (about 15 s, cold cache) checks a small user file; the other tests read the
generated stubs and compare them with the runtime objects, or generate stubs for a small YAML.
"""
from __future__ import annotations

import ast
import os
import re
import textwrap

import pytest

import onion
from onion.codegen.gen_pyi import gen_pyi
from onion.codegen.model import load_native_functions
from onion.codegen.runner import OUT

mypy_api = pytest.importorskip("mypy.api")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(onion.__file__)))

USER_FILE = """\
import onion
a = onion.ones(2)
b = onion.add(a, a)
reveal_type(b)                                  # line 4
reveal_type(b.shape)                            # line 5
reveal_type(b.dtype)                            # line 6
reveal_type(a.sum())                            # line 7
reveal_type(onion.ops.aten.add.Tensor(a, a))    # line 8
reveal_type(a + 1)                              # line 9
reveal_type(a.device)                           # line 10
reveal_type(a.grad)                             # line 11
reveal_type(a.ndim)                             # line 12
reveal_type(a.T)                                # line 13
reveal_type(a.view(2, 1))                       # line 14
reveal_type(onion.zeros(2, 3, dtype=onion.float32, requires_grad=True))  # line 15
onion.add(a, "x")                               # line 16
c = onion.tensor([1.0, 2.0])
with onion.no_grad():
    d = (c * 2 - a)[0].item()
e = onion.ops.aten.mul.Tensor(self=c, other=c)
"""

ONION = "onion._generated.tensor.Tensor"
# What mypy reveals for the same lines with `import torch as onion` (PyTorch 2.13.0's stubs;
# recorded once, as checking torch costs half a minute): onion reveals the same kind of object
# everywhere, and a Tensor where torch.ops gives Any.
TORCH = {4: "torch._tensor.Tensor", 5: "torch._C.Size", 6: "torch._C.dtype", 7: "torch._tensor.Tensor",
         8: "Any", 9: "torch._tensor.Tensor", 10: "torch._C.device", 11: "torch._tensor.Tensor | None",
         12: "int", 13: "torch._tensor.Tensor", 14: "torch._tensor.Tensor", 15: "torch._tensor.Tensor"}
EXPECTED = {4: ONION, 5: "onion.core.tensor.Size", 6: "onion.core.dtype.dtype", 7: ONION, 8: ONION, 9: ONION,
            10: "onion.core.device.device", 11: f"{ONION} | None", 12: "int", 13: ONION, 14: ONION, 15: ONION}


@pytest.fixture(scope="module")
def mypy_report(tmp_path_factory):
    d = tmp_path_factory.mktemp("stubs")
    (d / "user.py").write_text(USER_FILE)
    # the checkout's onion, whatever is installed; errors inside onion's own .py files are not the user's
    (d / "mypy.ini").write_text(f"[mypy]\nmypy_path = {ROOT}\nfollow_imports = silent\n")
    stdout, stderr, status = mypy_api.run(["--config-file", str(d / "mypy.ini"), "--cache-dir", str(d / "cache"),
                                           "--no-error-summary", "--show-error-codes", str(d / "user.py")])
    assert status in (0, 1), stderr
    revealed, errors = {}, []
    for line in stdout.splitlines():
        m = re.match(r".*user\.py:(\d+): note: Revealed type is \"(.*)\"$", line)
        if m:
            revealed[int(m.group(1))] = m.group(2)
        elif ": error:" in line:
            errors.append(line)
    return revealed, errors, stdout


def test_revealed_types_match_pytorch_kinds(mypy_report):
    revealed, _, out = mypy_report
    assert revealed == EXPECTED, out
    for line, torch_type in TORCH.items():      # Tensor where torch has Tensor, Size for Size, ...
        if torch_type != "Any":
            kind = torch_type.replace("torch._tensor.", "").replace("torch._C.", "")
            assert revealed[line].replace(ONION, "Tensor").rsplit(".", 1)[-1] == kind.rsplit(".", 1)[-1], line


def test_wrong_argument_is_the_only_error(mypy_report):
    _, errors, out = mypy_report
    assert len(errors) == 1, out        # the stubs themselves, and every other line, check clean
    assert "user.py:16: error: No overload variant of \"add\" matches argument types \"Tensor\", \"str\"" \
        in errors[0] and "[call-overload]" in errors[0]


def _stub_class_members(path: str, cls_name: str) -> set:
    with open(path) as f:
        tree = ast.parse(f.read())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls_name)
    names = set()
    for n in cls.body:
        if isinstance(n, ast.FunctionDef):
            names.add(n.name)
        elif isinstance(n, ast.AnnAssign):
            names.add(n.target.id)
    return names


def test_tensor_stub_matches_runtime_class():
    stub = _stub_class_members(os.path.join(OUT, "tensor.pyi"), "Tensor")
    runtime = set(vars(onion.Tensor))
    missing = {n for n in runtime - stub if not n.startswith("_") or n in ("__getitem__", "__add__", "__eq__")}
    assert not missing, f"Tensor members with no stub: {sorted(missing)}"
    assert not [n for n in stub if not hasattr(onion.Tensor, n)], "stubbed members that onion.Tensor lacks"
    for dunder in ("__add__", "__radd__", "__mul__", "__matmul__", "__eq__", "__neg__", "__getitem__", "__rsub__"):
        assert dunder in stub


def test_function_stub_matches_runtime_namespace():
    with open(os.path.join(OUT, "python_functions.pyi")) as f:
        tree = ast.parse(f.read())
    all_names = next(ast.literal_eval(n.value) for n in tree.body
                     if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", None) == "__all__")
    from onion._generated.python_functions import FUNCTIONS
    assert set(FUNCTIONS) <= set(all_names)
    assert [n for n in all_names if not callable(getattr(onion, n, None))] == []


def test_generated_from_schemas(tmp_path):
    path = tmp_path / "native_functions.yaml"
    path.write_text(textwrap.dedent("""\
        - func: pair(Tensor self, int[] dims, *, Scalar alpha=1) -> (Tensor, Tensor)
          variants: function, method
        - func: cat(Tensor[] tensors, int dim=0) -> Tensor
        - func: cat.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> Tensor(a!)
        - func: chunks(Tensor self, int size) -> Tensor[]
          variants: method
        - func: zeros(SymInt[] size, *, ScalarType? dtype=None, Device? device=None) -> Tensor
        """))
    stubs = gen_pyi(load_native_functions(str(path)))
    functions, tensor, ops = stubs["python_functions.pyi"], stubs["tensor.pyi"], stubs["ops.pyi"]
    scalar = "Union[Tensor, Number, _complex]"
    assert f"def pair(input: Tensor, dims: _size, *, alpha: {scalar} = 1) -> tuple[Tensor, Tensor]: ..." in functions
    assert f"    def pair(self, dims: _size, *, alpha: {scalar} = 1) -> tuple[Tensor, Tensor]: ..." in tensor
    # out= folds into the functional overload: one signature, no @overload
    assert ("def cat(tensors: Union[tuple[Tensor, ...], list[Tensor]], dim: _int = 0, *, out: Optional[Tensor] = None)"
            " -> Tensor: ...") in functions
    assert "@overload\ndef cat" not in functions
    assert "    def chunks(self, size: _int) -> tuple[Tensor, ...]: ..." in tensor
    assert "def chunks" not in functions                  # a method only
    # a factory takes requires_grad=, and `zeros(2, 3)` as well as `zeros((2, 3))`
    assert "@overload\ndef zeros(\n    size: _size,\n    *," in functions
    assert "@overload\ndef zeros(\n    *size: _int,\n    dtype: Optional[_dtype] = None," in functions
    assert "    requires_grad: _bool = False,\n) -> Tensor: ..." in functions
    # onion.ops.aten.pair.default(self=..., dims=...): schema names, numbers allowed for tensors
    assert ("class _aten_pair_default(OpOverload):\n    def __call__(\n        self_,\n        /,\n"
            f"        self: {scalar},\n        dims: _size,\n") in ops
    assert "    default: _aten_pair_default" in ops and "    pair: _aten_pair" in ops
    assert all(len(line) <= 120 for text in stubs.values() for line in text.splitlines())
