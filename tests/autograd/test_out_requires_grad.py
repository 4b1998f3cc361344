"""``out=`` overloads record no graph, so with grad mode on they refuse a tensor that requires grad.

Every ``out=`` overload onion registers is called (sample arguments from its schema, see
tests/schema_calls.py) once with ``out`` a leaf that requires grad and once per floating input
that requires grad, and compared with PyTorch: both raise the same RuntimeError with the same text
(``exp(): functions with out=... arguments don't support automatic differentiation, ...``), or both
accept (the non-differentiable eq/argmax family, whose inputs may require grad).  A refused call
leaves ``out`` as it was.
"""
from __future__ import annotations

import numpy as np
import pytest
import schema_calls as sc
from conftest import to_np

import onion
from onion.dispatch.dispatcher import dispatcher

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

# Where onion deliberately differs from PyTorch 2.13: (overload, argument that requires grad) -> reason.
KNOWN = {
    ("relu.out", "self"): "PyTorch autogenerates relu.out from relu_ (autogen: in its YAML); such an overload takes the "
                          "boxed autograd fallback, which only looks at out, so an input that requires grad is "
                          "accepted.  onion declares relu.out structured with relu's derivative and refuses it, as "
                          "for every other differentiable operator",
    ("relu.out", "out"): "the same fallback names the operator 'aten::relu()'; onion says 'relu()'",
    ("conj_physical.out", "self"): "PyTorch's conj_physical.out has no derivative entry (the differentiable op is "
                                   "_conj_physical), so it takes the boxed autograd fallback as relu.out does; onion "
                                   "declares it structured with _conj_physical's derivative and refuses",
    ("lu_unpack.out", "LU_pivots"): "PyTorch's out= autograd check skips LU_pivots (non_differentiable in its "
                                    "derivatives.yaml), so its kernel's pivots dtype check speaks first; onion's "
                                    "check looks at every tensor argument",
    ("conj_physical.out", "out"): "the same fallback names the operator 'aten::conj_physical()'; onion says "
                                  "'conj_physical()'",
}
_AUTOGEN_OUT = {"masked_fill.Scalar_out": ("self",), "masked_fill.Tensor_out": ("self", "value"),
                "masked_scatter.out": ("self", "source"), "put.out": ("self", "source")}
for _name, _inputs in _AUTOGEN_OUT.items():
    for _arg in _inputs:
        KNOWN[(_name, _arg)] = ("PyTorch autogenerates this out= overload, so it takes the boxed autograd fallback, "
                                "which only looks at out; onion gives it the refusal of every out= overload whose "
                                "functional operator is differentiable")
    KNOWN[(_name, "out")] = "the same fallback names the operator 'aten::<name>()'; onion says '<name>()'"


def _out_specs():
    specs = []
    for handle in dispatcher.ops.values():
        spec = sc.call_spec(handle.schema)
        if spec is not None and spec.out is not None:
            specs.append(pytest.param(spec, id=spec.qualified))
    return specs


OUT_SPECS = _out_specs()


def test_every_out_overload_is_swept():
    """The sweep is driven by the registry: all of onion's out= overloads (23 and more) are in it."""
    names = {p.values[0].qualified for p in OUT_SPECS}
    assert len(names) >= 23
    assert {"exp.out", "add.out", "sum.IntList_out", "mm.out", "where.self_out", "zeros.out"} <= names


def _call(lib, spec, grad_arg, shape, dtype):
    ts = []
    for t in spec.tensors:
        if t.is_out:
            ts.append(sc.make_tensor(lib, t, shape=shape, dtype=dtype, requires_grad=grad_arg == "out"))
        else:
            ts.append(sc.make_tensor(lib, t, requires_grad=grad_arg == t.name))
    out = ts[spec.out.position]
    before = (np.array(to_np(out)), out._version)
    return sc.run(lib, spec, ts), out, before


@pytest.mark.parametrize("spec", OUT_SPECS)
def test_out_that_requires_grad_matches_torch(spec):
    template = sc.out_template(torch, spec)
    # no sample of 2x2 float tensors works (dot wants vectors, cholesky a positive-definite matrix): the
    # refusals are compared, with an empty float out
    shape, dtype = template if template is not None else ((0,), "float32")
    grad_args = [t.name for t in spec.tensors if not t.is_out and t.dtype == "float32"]
    if dtype == "float32":
        grad_args.append("out")
    problems = []
    for grad_arg in grad_args:
        (rt, _, _), (ro, out, before) = _call(torch, spec, grad_arg, shape, dtype), \
            _call(onion, spec, grad_arg, shape, dtype)
        if (spec.qualified, grad_arg) in KNOWN:
            continue
        where = f"{spec.qualified} with {grad_arg} requiring grad"
        if rt[0] != ro[0]:
            problems.append(f"{where}: torch {rt[0]} {rt[1]!r}, onion {ro[0]} {ro[1]!r}")
        elif rt[0] == "err":
            if type(ro[1]) is not type(rt[1]) or str(ro[1]) != str(rt[1]):
                problems.append(f"{where}: torch {rt[1]!r}, onion {ro[1]!r}")
            if out._version != before[1] or not np.array_equal(to_np(out), before[0]):
                problems.append(f"{where}: onion refused but wrote out")
    assert not problems, "\n".join(problems)


def test_known_differences_still_differ():
    for qualified, grad_arg in KNOWN:
        spec = next(p.values[0] for p in OUT_SPECS if p.values[0].qualified == qualified)
        template = sc.out_template(torch, spec)
        shape, dtype = template if template is not None else ((0,), "float32")
        rt, ro = _call(torch, spec, grad_arg, shape, dtype)[0], _call(onion, spec, grad_arg, shape, dtype)[0]
        assert rt[0] != ro[0] or str(rt[1]) != str(ro[1]), f"{qualified}: now matches torch; drop it from KNOWN"


def test_exp_out_into_a_leaf_that_requires_grad_raises_and_keeps_the_leaf():
    """The example of issue 7: the leaf was overwritten."""
    x = onion.full((3,), 2.0, requires_grad=True)
    with pytest.raises(RuntimeError) as e:
        onion.exp(onion.ones(3), out=x)
    xt = torch.full((3,), 2.0, requires_grad=True)
    with pytest.raises(RuntimeError) as et:
        torch.exp(torch.ones(3), out=xt)
    assert str(e.value) == str(et.value)
    assert (to_np(x) == 2.0).all() and x._version == 0 and x.grad_fn is None


@pytest.mark.parametrize("mode", ["no_grad", "inference_mode"])
def test_out_that_requires_grad_is_written_without_grad_mode(mode):
    x = onion.full((3,), 2.0, requires_grad=True)
    xt = torch.full((3,), 2.0, requires_grad=True)
    with getattr(onion, mode)():
        onion.exp(onion.ones(3), out=x)
    with getattr(torch, mode)():
        torch.exp(torch.ones(3), out=xt)
    np.testing.assert_allclose(to_np(x), xt.detach().numpy())
    assert x.requires_grad == xt.requires_grad


def test_comparison_out_accepts_inputs_that_require_grad():
    """eq/argmax are not differentiable: PyTorch runs their out= with inputs that require grad."""
    a = onion.tensor([1.0, 2.0], requires_grad=True)
    out = onion.empty(2, dtype=onion.bool)
    onion.eq(a, 1.0, out=out)
    assert to_np(out).tolist() == torch.eq(torch.tensor([1.0, 2.0], requires_grad=True), 1.0).tolist()
