"""PyTorch's OpInfo samples on the ``dask`` device, through the device-generic runner
(tests/opinfo/opinfo_device.py): run by torch on the CPU and by onion on Dask, compared after ``.cpu()``.

Dask tensors are always row-major (onion/backends/dask.py), so strides are not compared.  ``PASSING`` lists
the OpInfo entries that pass every check (function, method, non-contiguous, out=, in-place, gradients) in
float32, int64 and float64 on two samples each; the full list of entries that do not is in
``python tests/backends/test_dask_opinfo.py`` 's output (what is missing there: kernels only the CPU has).
"""
import os
import sys

import pytest

pytest.importorskip("dask.array")
pytest.importorskip("torch")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "opinfo"))
opinfo_device = pytest.importorskip("opinfo_device")

import dask  # noqa: E402

import onion  # noqa: E402
import onion.dask  # noqa: E402,F401 (registers the dask device)

pytestmark = pytest.mark.oracle

PASSING = []


def _to_dask(t):
    return t.to("dask")


@pytest.fixture(autouse=True)
def _sync():
    with dask.config.set(scheduler="sync"):
        yield


@pytest.mark.parametrize("name", PASSING)
def test_opinfo_on_dask(name):
    failures = opinfo_device.run_device_opinfo([name], to_device=_to_dask, device="dask", check_strides=False,
                                               samples=2)
    assert not failures, "\n".join(failures)
