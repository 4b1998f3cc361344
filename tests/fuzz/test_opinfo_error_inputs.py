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
    code = getattr(op.op, "__code__", None)
    if code is not None and "wrapper_set_seed" in code.co_names:
        return _seeded_target(code)         # a random operator, called after seeding: the one it wraps
    if op.name.startswith("__") or getattr(torch, op.name, None) is None or op.op is not getattr(torch, op.name):
        fn = getattr(onion.Tensor, op.name, None)
        if fn is None or isinstance(fn, property) or not callable(fn):
            return None
        return fn           # unbound, as OpInfo calls it: Tensor.__radd__(2, 3) must raise
    return getattr(onion, op.name, None)


def _seeded_target(code):
    """onion's counterpart of the ``torch.x`` / ``torch.Tensor.x`` a ``wrapper_set_seed`` lambda calls."""
    import dis
    chain = []
    for ins in dis.get_instructions(code):
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME") and ins.argval == "torch":
            chain = ["torch"]
        elif chain and ins.opname in ("LOAD_ATTR", "LOAD_METHOD"):
            chain.append(ins.argval)
        elif chain:
            break
    if chain[1:2] == ["Tensor"] and len(chain) == 3:
        return getattr(onion.Tensor, chain[2], None)
    return getattr(onion, chain[1], None) if len(chain) == 2 else None


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


def to_onion(x, memo=None):
    """A torch value (nested) as onion's: tensors keep values, dtype, device type, requires_grad; a tensor
    that appears twice (kthvalue's input passed as its own out=) becomes one onion tensor (``memo``)."""
    if memo is None:
        memo = {}
    if isinstance(x, torch.Tensor) and id(x) in memo:
        return memo[id(x)]
    if isinstance(x, torch.Tensor):
        memo[id(x)] = o = _tensor_to_onion(x)
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
        return type(x)(to_onion(y, memo) for y in x)
    if isinstance(x, dict):
        return {k: to_onion(v, memo) for k, v in x.items()}
    return x


def _tensor_to_onion(x):
    t = x.detach()
    dt = getattr(onion, str(t.dtype).split(".")[-1])
    if t.device.type == "meta":
        o = onion.empty_strided(tuple(t.shape), tuple(t.stride()), dtype=dt, device="meta")
    elif any(st == 0 and n > 1 for n, st in zip(t.shape, t.stride())):     # an expanded tensor stays one
        base = t[tuple(slice(0, 1) if st == 0 else slice(None) for st in t.stride())].contiguous()
        o = _tensor_to_onion(base).expand(tuple(t.shape))
    else:
        arr = (t.float() if t.dtype == torch.bfloat16 else t).cpu().resolve_conj().resolve_neg().numpy()
        o = onion.tensor(np.array(arr), dtype=dt)
    if x.requires_grad:
        o.requires_grad_(True)
    return o


# (case id) -> what onion says instead of PyTorch's message; the type is still PyTorch's
MESSAGE_DIFFERS: dict[str, str] = {
    "cat-11": "onion's argument parser: cat(): argument 'tensors' (position 1) must be tuple of Tensors, not tuple",
}
# (case id) -> why onion raises another exception type (or none)
_MORE_THAN_64_DIMS = ("onion cannot make the 65-dimensional input at all (its tensors are NumPy arrays, which have "
                      "at most 64 dims; it raises a RuntimeError saying so) where PyTorch makes it and its "
                      "reduction refuses it")
_ALIASING_LOST = ("the case's out= aliases an input or is an expanded view; to_onion copies every tensor "
                  "through NumPy, so onion's out= is a fresh dense tensor and there is no overlap to refuse "
                  "(tests/aten/test_shape_ops.py::test_cat_out checks these on real views)")
_ALIASED_OUT = ("the error input's out= shares memory with an input (or is expanded); to_onion copies every torch "
                "tensor into a fresh onion tensor, so the aliasing never reaches onion (tests/aten/test_indexing.py "
                "checks onion's refusal of the same calls)")
TYPE_DIFFERS: dict[str, str] = {
    "cat-8": _ALIASING_LOST,
    "amax-1": _MORE_THAN_64_DIMS, "amax-2": _MORE_THAN_64_DIMS,
    "amin-1": _MORE_THAN_64_DIMS, "amin-2": _MORE_THAN_64_DIMS,
    "aminmax-1": _MORE_THAN_64_DIMS, "aminmax-2": _MORE_THAN_64_DIMS,
    "take-2": _ALIASED_OUT,
}

CASES = _cases()


# error inputs whose point is memory layout or aliasing, which to_onion (a copy per tensor) does not carry over
_ALIASING = ("the error input's out= is an expanded tensor or shares memory with an input; to_onion copies each "
             "tensor on its own, so onion is called without the overlap (tests/aten/test_scatter_gather.py "
             "checks these refusals directly)")
NOT_CONVERTED = {"gather-5": _ALIASING, "gather-6": _ALIASING, "gather-7": _ALIASING, "index_select-0": _ALIASING}


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
    if case in NOT_CONVERTED:
        pytest.skip(NOT_CONVERTED[case])
    fn = _onion_callable(op)
    try:
        memo: dict = {}
        args = [to_onion(s.input, memo)] + [to_onion(a, memo) for a in s.args]
        kwargs = to_onion(dict(s.kwargs), memo)
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
