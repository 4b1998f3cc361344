"""The policy table's codegen: errors name the YAML line, unknown names are skipped, and each policy's kernel
casts as PyTorch's WrapFunction does (worked dtypes; the CUDA-only policies rendered for the CPU key here)."""
from __future__ import annotations

import os

import pytest

import onion
from onion.codegen import runner
from onion.codegen.context import CodegenError
from onion.codegen.gen_autocast import gen_autocast
from onion.codegen.model import load_native_functions


@pytest.fixture(scope="module")
def fns():
    return load_native_functions(runner.YAML)


def _render(tmp_path, fns, text):
    p = tmp_path / "aten" / "autocast_policy.yaml"
    p.parent.mkdir(exist_ok=True)
    p.write_text(text)
    return gen_autocast(fns, str(p))


def test_policy_table_is_a_regeneration_input():
    assert runner.AUTOCAST_POLICY in runner._inputs()
    assert os.path.basename(runner.AUTOCAST_POLICY) == "autocast_policy.yaml"


@pytest.mark.parametrize("text,line,match", [
    ("cpu:\n  fastest:\n    - mm\n", 2, "unknown autocast policy 'fastest'"),
    ("tpu:\n  fp32:\n    - mm\n", 1, "unknown autocast device 'tpu'"),
    ("cpu:\n  fp32:\n    - mm\n  promote:\n    - mm\n", 5, "'mm' is listed twice for cpu"),
    ("cpu:\n  fp32_append_dtype:\n    - norm.Scalar\n", 3, "only fp32_append_dtype names a target"),
    ("cpu:\n  fp32_set_opt_dtype:\n    - mm\n", 3, "fp32_set_opt_dtype needs a tensor and a 'dtype' argument in mm"),
])
def test_errors_name_the_yaml_line(tmp_path, fns, text, line, match):
    with pytest.raises(CodegenError, match=match) as e:
        _render(tmp_path, fns, text)
    assert str(e.value).split(": ")[0].endswith(f"aten/autocast_policy.yaml:{line}")


def test_unknown_names_are_skipped(tmp_path, fns):
    out = _render(tmp_path, fns, "cpu:\n  fp32:\n    - no_such_op\n    - exp\n")
    src = out["register_autocast_cpu.py"]
    assert "SKIPPED = ('no_such_op',)" in src
    assert "m.impl_kernel('exp', exp_autocast_cpu)" in src


class _NoRegistration:
    def impl_kernel(self, name, fn):
        pass


def _kernels(tmp_path, fns, text):
    src = _render(tmp_path, fns, text)["register_autocast_cpu.py"]
    src = src.replace("m = _Library('aten', 'IMPL', 'AutocastCPU')", "m = _NoRegistration()")
    ns = {"_NoRegistration": _NoRegistration}
    exec(compile(src, "register_autocast_cpu.py", "exec"), ns)
    return ns


def test_policies_cast_as_pytorch(tmp_path, fns):
    k = _kernels(tmp_path, fns, "cpu:\n  fp32_set_opt_dtype:\n    - sum.dim_IntList\n"
                                "  fp32_append_dtype:\n    - norm.Scalar -> norm.ScalarOpt_dtype\n"
                                "  promote:\n    - addcmul\n  fp32:\n    - exp\n  banned:\n    - atan2\n")
    b = onion.ones(2, 3, dtype=onion.bfloat16)
    f = onion.ones(2, 3)
    d = onion.ones(2, 3, dtype=onion.float64)
    with onion.autocast("cpu"):
        ks = 0
        assert k["sum_dim_IntList_autocast_cpu"](ks, b, [1], False, None).dtype == onion.float32
        assert k["sum_dim_IntList_autocast_cpu"](ks, b, [1], False, onion.bfloat16).dtype == onion.bfloat16
        assert k["sum_dim_IntList_autocast_cpu"](ks, d, [1], False, None).dtype == onion.float64
        r = k["norm_Scalar_autocast_cpu"](ks, b, 2)
        assert r.dtype == onion.float32 and float(r) == pytest.approx(6 ** 0.5)
        assert k["norm_Scalar_autocast_cpu"](ks, onion.ones(3, dtype=onion.int64).float().to(onion.float64),
                                             2).dtype == onion.float64
        assert k["addcmul_autocast_cpu"](ks, b, f, b, 1).dtype == onion.float32
        assert k["addcmul_autocast_cpu"](ks, b, b, b, 1).dtype == onion.bfloat16
        assert k["addcmul_autocast_cpu"](ks, d, b, b, 1).dtype == onion.float64     # double is never cast
        assert k["exp_autocast_cpu"](ks, b).dtype == onion.float32
        with pytest.raises(RuntimeError, match="unsafe to autocast"):
            k["atan2_autocast_cpu"](ks, b, b)
        assert onion.is_autocast_enabled("cpu")       # the kernel restored the key it excluded
