"""PyTorch's own bad-input cases: the ``error_inputs`` of its OpInfos, for every operator onion has.

Each ErrorInput (a SampleInput, the exception type and a message regex) is converted
to onion (tensors through NumPy, dtypes and devices by name) and called on onion's
function or method of the same name.  onion must raise PyTorch's exception type;
the message must match PyTorch's regex, or the case is in MESSAGE_DIFFERS with what
onion says instead (strict, like known_failures.py).  Operators join by existing in
onion: nothing here names one, except the known differences.
"""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import onion

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")

pytestmark = pytest.mark.oracle


def _op_db():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from torch.testing._internal.common_methods_invocations import op_db
    return op_db


def _onion_callable(op):
    """onion's function of the OpInfo's name, or its Tensor method; None if onion has neither."""
    if op.name.startswith("__") or getattr(torch, op.name, None) is None or op.op is not getattr(torch, op.name):
        fn = getattr(onion.Tensor, op.name, None)
        if fn is None or isinstance(fn, property) or not callable(fn):
            return None
        return fn           # unbound, as OpInfo calls it: Tensor.__radd__(2, 3) must raise
    return getattr(onion, op.name, None)


def _cases():
    out = []
    for op in _op_db():
        if op.error_inputs_func is None or _onion_callable(op) is None:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            errs = list(op.error_inputs("cpu"))
        for i, e in enumerate(errs):
            name = op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")
            out.append(pytest.param(op, e, id=f"{name}-{i}"))
    return out


def to_onion(x):
    """A torch value (nested) as onion's: tensors keep values, dtype, device type, requires_grad."""
    if isinstance(x, torch.Tensor):
        t = x.detach()
        dt = getattr(onion, str(t.dtype).split(".")[-1])
        if t.device.type == "meta":
            o = onion.empty_strided(tuple(t.shape), tuple(t.stride()), dtype=dt, device="meta")
        else:
            arr = (t.float() if t.dtype == torch.bfloat16 else t).cpu().resolve_conj().resolve_neg().numpy()
            o = onion.tensor(np.array(arr), dtype=dt)
        if x.requires_grad:
            o.requires_grad_(True)
        return o
    if isinstance(x, torch.dtype):
        return getattr(onion, str(x).split(".")[-1])
    if isinstance(x, torch.device):
        return str(x)
    if isinstance(x, torch.memory_format):
        return getattr(onion, str(x).split(".")[-1])
    if isinstance(x, torch.Size):
        return tuple(x)
    if isinstance(x, (list, tuple)):
        return type(x)(to_onion(y) for y in x)
    if isinstance(x, dict):
        return {k: to_onion(v) for k, v in x.items()}
    return x


# (case id) -> what onion says instead of PyTorch's message; the type is still PyTorch's
MESSAGE_DIFFERS: dict[str, str] = {
}
# (case id) -> why onion raises another exception type (or none)
_MORE_THAN_64_DIMS = ("onion cannot make the 65-dimensional input at all (its tensors are NumPy arrays, which have "
                      "at most 64 dims; it raises a RuntimeError saying so) where PyTorch makes it and its "
                      "reduction refuses it")
_ALIASED_OUT = ("the error input's out= shares memory with an input (or is expanded); to_onion copies every torch "
                "tensor into a fresh onion tensor, so the aliasing never reaches onion (tests/aten/test_indexing.py "
                "checks onion's refusal of the same calls)")
TYPE_DIFFERS: dict[str, str] = {
    "amax-1": _MORE_THAN_64_DIMS, "amax-2": _MORE_THAN_64_DIMS,
    "amin-1": _MORE_THAN_64_DIMS, "amin-2": _MORE_THAN_64_DIMS,
    **{f"{op}-{i}": _ALIASED_OUT for op in ("take", "masked_select") for i in range(3)},
}

CASES = _cases()


@pytest.mark.parametrize("op,error_input", CASES)
def test_error_input(op, error_input, request):
    case = request.node.callspec.id
    s = error_input.sample_input
    want_type, regex = error_input.error_type, error_input.error_regex
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            op.op(s.input, *s.args, **s.kwargs)
        pytest.skip("PyTorch itself takes this error input on CPU (it is meant for another device)")
    except want_type:
        pass
    fn = _onion_callable(op)
    try:
        args = [to_onion(s.input)] + [to_onion(a) for a in s.args]
        kwargs = to_onion(dict(s.kwargs))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(*args, **kwargs)
        got = None
    except Exception as e:  # noqa: BLE001 - compared with PyTorch's
        got = e
    type_ok = got is not None and isinstance(got, want_type)
    if case in TYPE_DIFFERS:
        assert not type_ok, f"{case} now raises PyTorch's {want_type.__name__}: remove it from TYPE_DIFFERS"
        pytest.xfail(TYPE_DIFFERS[case])
    assert got is not None, f"onion accepts; PyTorch raises {want_type.__name__} matching {regex!r}"
    assert type_ok, f"onion raises {type(got).__name__}: {got}\nPyTorch raises {want_type.__name__} ({regex!r})"
    matches = re.search(regex, str(got)) is not None
    if case in MESSAGE_DIFFERS:
        assert not matches, f"{case}: the message now matches PyTorch's: remove it from MESSAGE_DIFFERS"
        return
    assert matches, f"message {str(got)!r} does not match PyTorch's {regex!r}"
