"""``onion.device`` equality and hashing, against ``torch.device``: only devices compare equal."""
from __future__ import annotations

import pytest

import onion

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

SPECS = [("cpu",), ("cpu", 0), ("meta",), ("cuda",), ("cuda", 0), ("cuda", 1), ("cuda:1",)]
OTHERS = ["cpu", "abc", "cuda:0", 0, 1, None, 1.5, ("cpu",)]


@pytest.mark.parametrize("spec", SPECS, ids=str)
@pytest.mark.parametrize("other", OTHERS, ids=repr)
def test_device_against_non_devices(spec, other):
    o, t = onion.device(*spec), torch.device(*spec)
    assert (o == other, o != other, other == o) == (t == other, t != other, other == t)


@pytest.mark.parametrize("a", SPECS, ids=str)
@pytest.mark.parametrize("b", SPECS, ids=str)
def test_device_pairs_and_hash(a, b):
    assert (onion.device(*a) == onion.device(*b)) == (torch.device(*a) == torch.device(*b))
    assert (onion.device(*a) != onion.device(*b)) == (torch.device(*a) != torch.device(*b))
    assert hash(onion.device(*a)) == hash(torch.device(*a))
    assert len({onion.device(*a), onion.device(*b)}) == len({torch.device(*a), torch.device(*b)})


def test_tensor_device_compares_to_device_not_string():
    o, t = onion.ones(2).device, torch.ones(2).device
    assert (o == "cpu", o == onion.device("cpu")) == (t == "cpu", t == torch.device("cpu"))
