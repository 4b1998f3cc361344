"""CUDA: ``onion.cuda`` without a GPU (as PyTorch built without CUDA), ``benchmarks/gpu_check.py``'s refusal
and its OpInfo runner (through the NumPy stand-in), and the ``cuda``-marked tests that need a real GPU."""
import os
import subprocess
import sys

import numpy as np
import pytest

import onion

from .fake_cuda import installed

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HAVE_GPU = onion.cuda.is_available()
needs_gpu = pytest.mark.skipif(not HAVE_GPU, reason="needs CuPy and an NVIDIA GPU (pip install 'onion[cuda]')")


def _outcome(fn):
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001 - compared with PyTorch's outcome
        return "err", type(e)


@pytest.mark.oracle
@pytest.mark.skipif(HAVE_GPU, reason="checks the behaviour without CUDA")
def test_without_cuda_onion_cuda_behaves_as_pytorch_built_without_cuda():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("the installed torch has CUDA")
    calls = {
        "is_available": lambda c: c.is_available(), "device_count": lambda c: c.device_count(),
        "current_device": lambda c: c.current_device(), "synchronize": lambda c: c.synchronize(),
        "memory_allocated": lambda c: c.memory_allocated(), "max_memory_allocated": lambda c: c.max_memory_allocated(),
        "memory_reserved": lambda c: c.memory_reserved(), "max_memory_reserved": lambda c: c.max_memory_reserved(),
        "empty_cache": lambda c: c.empty_cache(), "get_device_name": lambda c: c.get_device_name(),
        "get_device_properties": lambda c: c.get_device_properties(0),
        "get_device_capability": lambda c: c.get_device_capability(), "is_initialized": lambda c: c.is_initialized(),
        "init": lambda c: c.init(), "manual_seed": lambda c: c.manual_seed(3),
        "manual_seed_all": lambda c: c.manual_seed_all(3), "seed": lambda c: c.seed(),
        "initial_seed": lambda c: c.initial_seed(), "current_stream": lambda c: c.current_stream(),
        "default_stream": lambda c: c.default_stream(), "Stream": lambda c: c.Stream(),
        "Event": lambda c: c.Event(enable_timing=True), "device(0)": lambda c: c.device(0).__enter__(),
        "stream(None)": lambda c: c.stream(None).__enter__(),
    }
    for name, call in calls.items():
        assert _outcome(lambda: call(onion.cuda)) == _outcome(lambda: call(torch.cuda)), name
    for name, call in {"Tensor.cuda": lambda lib: lib.ones(2).cuda(), "to('cuda')": lambda lib: lib.ones(2).to("cuda"),
                       "factory": lambda lib: lib.ones(2, device="cuda:1")}.items():
        assert _outcome(lambda: call(onion)) == _outcome(lambda: call(torch)) == ("err", AssertionError), name
    with pytest.raises(AssertionError, match=r"^onion has no CUDA: install onion\[cuda\] \(CuPy\) on a machine "
                                             r"with an NVIDIA GPU$"):
        onion.ones(2).cuda()
    assert not onion.ones(2).is_cuda and str(onion.device("cuda", 0)) == "cuda:0"


def test_the_stand_in_is_undone_afterwards():
    with installed():
        assert onion.cuda.is_available() and onion.ones(1).cuda().is_cuda
    assert onion.cuda.is_available() is HAVE_GPU
    if not HAVE_GPU:
        with pytest.raises(AssertionError, match="onion has no CUDA"):
            onion.rand(2, device="cuda")


def test_gpu_check_without_a_gpu_says_why_and_exits_0():
    env = {**os.environ, "ONION_GPU_CHECK_FORCE_NO_GPU": "1", "PYTHONPATH": ROOT}
    r = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "gpu_check.py")], capture_output=True,
                       text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("gpu_check: cannot run: ONION_GPU_CHECK_FORCE_NO_GPU=1. It needs an NVIDIA GPU")


@pytest.mark.oracle
def test_gpu_checks_opinfo_runner_through_the_stand_in():
    pytest.importorskip("torch")
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    try:
        import gpu_check
    finally:
        sys.path.remove(os.path.join(ROOT, "benchmarks"))
    names = {"add", "mul", "exp", "sum", "mm", "matmul", "where", "cumsum", "index_select", "gather", "sort",
             "nn.functional.softmax", "abs", "max.reduction_no_dim", "masked_fill", "var"}
    lines = []
    with installed():
        stats = gpu_check.opinfo_on_cuda(names=names, out=lines.append)
    assert stats["failed"] == 0, stats["failures"]
    assert stats["passed"] >= 25
    assert lines[0].startswith(f"OpInfo on cuda: {stats['passed']} passed, 0 failed")


@pytest.mark.oracle
def test_gpu_checks_throughput_table_through_the_stand_in():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("the installed torch has CUDA: the table would time it")
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    try:
        import gpu_check
    finally:
        sys.path.remove(os.path.join(ROOT, "benchmarks"))
    lines = []
    with installed():
        times = gpu_check.throughput({"add": 1000, "matmul": 8, "batch": 4, "hidden": 8}, out=lines.append)
    assert list(times["onion"]) == ["add 1000 float32", "matmul 8x8 float32", "MLP step 4x8x8x1"]
    assert all(t > 0 for t in times["onion"].values()) and times["torch"] is None
    assert lines[0].split() == ["case", "onion", "cuda", "torch", "cuda", "ratio"]
    assert lines[-1] == "throughput against PyTorch CUDA skipped: the installed torch is a CPU build"


# --- on a GPU --------------------------------------------------------------------------------------------
@pytest.mark.cuda
@needs_gpu
@pytest.mark.oracle
def test_gpu_kernels_match_torch_cpu():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((64, 32)).astype(np.float32), rng.standard_normal((32, 8)).astype(np.float32)
    o, ow = onion.tensor(x).cuda(), onion.tensor(w).cuda(requires_grad=False)
    assert type(o._impl._array).__module__.startswith("cupy")
    t, tw = torch.tensor(x), torch.tensor(w)
    for got, want in (((o @ ow).relu().sum(0), (t @ tw).relu().sum(0)), (onion.erf(o), torch.erf(t)),
                      (o.softmax(1), t.softmax(1)), (o[o > 1], t[t > 1]), (o.sort(1).values, t.sort(1).values)):
        np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.cuda
@needs_gpu
def test_gpu_seeding_events_and_memory():
    onion.cuda.manual_seed(5)
    a = onion.rand(1000, device="cuda").cpu().tolist()
    onion.cuda.manual_seed(5)
    assert onion.rand(1000, device="cuda").cpu().tolist() == a
    before = onion.cuda.memory_allocated()
    big = onion.empty(1 << 20, device="cuda")
    assert onion.cuda.memory_allocated() >= before + 4 * (1 << 20)
    assert onion.cuda.max_memory_allocated() >= onion.cuda.memory_allocated()
    start, end = onion.cuda.Event(enable_timing=True), onion.cuda.Event(enable_timing=True)
    start.record()
    big.fill_(1.0).sum()
    end.record()
    end.synchronize()
    assert start.elapsed_time(end) > 0
    del big
    onion.cuda.empty_cache()


@pytest.mark.slow
@pytest.mark.oracle
def test_gpu_checks_whole_opinfo_sweep_through_the_stand_in():
    """Every OpInfo entry's first sample (float32, int64) on the stand-in: the kernels registered or falling
    back for CUDA keep to CuPy's namespace and never mix host arrays into device ones."""
    pytest.importorskip("torch")
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    try:
        import gpu_check
    finally:
        sys.path.remove(os.path.join(ROOT, "benchmarks"))
    with installed():
        stats = gpu_check.opinfo_on_cuda(out=lambda line: None)
    assert stats["failed"] == 0, stats["failures"]
    assert stats["passed"] > 700
