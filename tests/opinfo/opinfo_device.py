"""The OpInfo harness on another onion device: PyTorch's samples, run on CPU by torch and on the device by onion.

Inputs are built on onion's CPU as the CPU harness builds them (opinfo_convert.py: values, sizes, strides,
storage offsets) and then moved with ``to_device(onion_cpu_tensor) -> tensor``, a parameter (the example
backend keeps strides; a backend without strides, such as Dask's, gives its own).  Results must be on the
device; they come back with ``.cpu()`` and are compared with torch's CPU results by test_opinfo.py's own
``compare`` / ``compare_outcomes`` (dtype, shape, strides where ``check_strides``, values).  Checks: the
function and method variants, non-contiguous samples, ``out=`` (a device out tensor), in-place (a device
self) and gradients (float64/complex128; device leaves, output gradients moved like inputs).  Meta is the
CPU harness's business (it does not depend on the device).

Use::

    failures = run_device_opinfo(["add", "mm"], to_device=keeping_strides("npu"), device="npu")
    assert not failures, "\\n".join(failures)
"""
from __future__ import annotations

import warnings

import pytest

torch = pytest.importorskip("torch")

import onion  # noqa: E402
from opinfo_convert import to_onion  # noqa: E402
from opinfo_entries import entries, torch_excludes  # noqa: E402
from test_opinfo import DEFAULT_SAMPLES, Case, Mismatch, _dtype_name, compare, compare_outcomes  # noqa: E402

DEVICE_DTYPES = ("float32", "int64", "float64")


class DeviceCase(Case):
    """One (entry, dtype) on ``device``: Case's samples and checks, with onion's side moved to the device (the
    hooks below: ``args``/``convert`` move arguments there, ``back``/``check``/``outcome`` bring results back)."""

    def __init__(self, entry, dtype, full, to_device, device, check_strides=True, check_aliasing=True,
                 samples=DEFAULT_SAMPLES):
        super().__init__(entry, dtype, full)
        self.to_device, self.device = to_device, onion.device(device)
        self.check_strides, self.check_aliasing, self.n_samples = check_strides, check_aliasing, samples
        self.on_target = True

    def _make_samples(self, requires_grad):
        import itertools
        it = super()._make_samples(requires_grad)
        return it if self.full else itertools.islice(it, self.n_samples)

    # --- moving argument trees ------------------------------------------------------------------
    def on_device(self, x, memo):
        """The onion argument tree with every tensor moved by ``to_device`` (once per tensor; leaves that
        require grad stay leaves) and every CPU device naming the target device."""
        if isinstance(x, onion.Tensor):
            if id(x) not in memo:
                with onion.no_grad():
                    moved = self.to_device(x.detach())
                if x.requires_grad:
                    moved = moved.requires_grad_(True)
                memo[id(x)] = (x, moved)
            return memo[id(x)][1]
        if isinstance(x, onion.device):
            return self.device if x.type == "cpu" else x
        if isinstance(x, (list, tuple)):
            out = [self.on_device(v, memo) for v in x]
            return out if isinstance(x, list) else tuple(out)
        if isinstance(x, dict):
            return {k: self.on_device(v, memo) for k, v in x.items()}
        return x

    def back(self, x, where):
        """A device result tree with its tensors on the CPU (checking that they were on the device)."""
        if isinstance(x, onion.Tensor):
            expect = self.device.type if self.on_target else "cpu"
            if x.device.type != expect:
                raise Mismatch(f"{where}: onion returned a {x.device} tensor, expected one on {expect}")
            if not self.check_strides:
                return x.detach().cpu()
            x = x.detach()        # Tensor.cpu() would make a tensor with gaps contiguous
            return onion.empty_strided(tuple(x.shape), x.stride(), dtype=x.dtype).copy_(x)
        if isinstance(x, (list, tuple)):
            return type(x)(self.back(v, where) for v in x)
        return x

    def args(self, sample, memo):
        cpu_memo: dict = {}
        o = (to_onion(sample.input, memo=cpu_memo), to_onion(sample.args, memo=cpu_memo),
             to_onion(sample.kwargs, memo=cpu_memo))
        dev = self.on_device(o, memo)
        self.on_target = bool(memo)       # no tensor argument (``add(2, 3)``): the result is a CPU tensor
        # the torch tensor -> the device tensor, for aliasing and gradients
        by_torch = {tid: memo[id(o_cpu)][1] for tid, (_, o_cpu) in cpu_memo.items() if id(o_cpu) in memo}
        return dev, by_torch

    def compare(self, ro, rt, where):
        if not self.check_strides and isinstance(rt, torch.Tensor) and isinstance(ro, onion.Tensor):
            ro = ro.contiguous()
            rt = rt.contiguous()
        if isinstance(rt, (tuple, list)) and isinstance(ro, (tuple, list)) and len(ro) == len(rt):
            for i, (a, b) in enumerate(zip(ro, rt)):
                self.compare(a, b, f"{where}[{i}]")
            return
        compare(ro, rt, where)

    def outcome(self, ro, rt, where):
        if ro[0] == "ok":
            ro = ("ok", self.back(ro[1], where))
        if rt[0] == "ok" and ro[0] == "ok":
            self.compare(ro[1], rt[1], where)
        else:
            compare_outcomes(ro, rt, where)

    def convert(self, x):
        return self.on_device(to_onion(x), {})

    def new_out(self, shape, dtype):
        self.on_target = True       # an out= lives on the device, also for a call with no tensor argument
        return super().new_out(shape, dtype)

    def check(self, o, t, where):
        self.compare(self.back(o, where), t, where)

    def check_meta(self):
        return None                 # the CPU harness's business: a Meta kernel does not depend on the device


def keeping_strides(device):
    """A ``to_device`` that keeps the CPU tensor's sizes and strides (``Tensor.to`` makes tensors with gaps
    contiguous, as PyTorch's preserve_format does): an ``empty_strided`` on the device, then ``copy_``."""
    def to_device(t):
        return onion.empty_strided(tuple(t.shape), t.stride(), dtype=t.dtype, device=device).copy_(t)
    return to_device


def device_cases(names, dtypes=DEVICE_DTYPES):
    """(entry, torch dtype) for the OpInfo entries named (``entry.key`` or the OpInfo name) in ``dtypes``."""
    wanted = set(names)
    out = []
    for e in entries():
        if e.key in wanted or e.op.name in wanted:
            for dt in e.dtypes:
                if _dtype_name(dt) in dtypes:
                    out.append((e, dt))
    return out


def run_device_opinfo(names, to_device, device, dtypes=DEVICE_DTYPES, full=False, samples=DEFAULT_SAMPLES,
                      check_strides=True, check_aliasing=True, known=()):
    """Run every check for the entries named; returns the failures as lines (``known``: (key, check) or
    (key, check, dtype) differences to leave out, as opinfo_known.py lists them)."""
    known = set(known)
    failures = []
    cases = device_cases(names, dtypes)
    missing = set(names) - {e.key for e, _ in cases} - {e.op.name for e, _ in cases}
    if missing:
        failures.append(f"no OpInfo entry for {sorted(missing)} in {dtypes}")
    for entry, dtype in cases:
        case = DeviceCase(entry, dtype, full, to_device, device, check_strides, check_aliasing, samples)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            case.run_all()
        dt = _dtype_name(dtype)
        for check, msgs in case.failures.items():
            if (entry.key, check) in known or (entry.key, check, dt) in known:
                continue
            failures.append(f"{entry.key} ({dt}) [{check}] " + "\n    ".join(msgs[:3]))
        if not case.ran and not torch_excludes(entry.op, "values", dtype):
            failures.append(f"{entry.key} ({dt}): no check ran")
    return failures
