"""Complex gradients vs PyTorch: every differentiable operator on complex128, and real leaves in complex graphs.

PyTorch's gradient of a complex function is the conjugate Wirtinger one (``grad * f'(z).conj()``), and
a real input whose gradient comes out complex gets its real part (``handle_r_to_c``).  Each case is one
expression written once against a module ``m`` (onion or torch), run on the same seeded data; the
gradients of all inputs for a fixed complex grad_output are compared, then (for a few) the second
derivatives with ``create_graph=True``.  The last tests pin ``conj``'s own forward behaviour.
"""
from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_close, onion, torch

pytestmark = pytest.mark.oracle


def cdata(*shape, seed=0, away=0.3):
    """complex128 data with modulus at least ``away`` (log, rsqrt, abs and div stay away from their poles)."""
    rng = np.random.default_rng(1000 + seed + 7 * len(shape) + sum(shape))
    z = rng.uniform(-2, 2, shape) + 1j * rng.uniform(-2, 2, shape)
    small = np.abs(z) < away
    return np.where(small, z + away * (1 + 1j), z)


def rdata(*shape, seed=0):
    rng = np.random.default_rng(2000 + seed + 7 * len(shape) + sum(shape))
    return rng.uniform(0.5, 2.0, shape)


def grads(m, fn, arrays, seed=0):
    """Output and the gradients of every input of ``fn(m, *inputs)`` for a seeded complex grad_output."""
    leaves = [m.tensor(a, requires_grad=True) for a in arrays]
    out = fn(m, *leaves)
    rng = np.random.default_rng(3000 + seed)
    shape = tuple(out.shape)
    g = rng.uniform(-1, 1, shape) + (1j * rng.uniform(-1, 1, shape) if out.is_complex() else 0)
    gs = m.autograd.grad(out, leaves, m.tensor(np.asarray(g, dtype=np.complex128 if out.is_complex()
                                                          else np.float64)), allow_unused=True)
    return out, gs


def check(fn, *arrays, rtol=None, atol=None):
    """onion's output and gradients equal torch's (dtype, shape, values)."""
    (oo, og), (to, tg) = grads(onion, fn, arrays), grads(torch, fn, arrays)
    assert_close(oo, to.detach().resolve_conj(), strides=False, rtol=rtol, atol=atol)   # torch's conj: a lazy view
    for i, (a, b) in enumerate(zip(og, tg)):
        assert (a is None) == (b is None), f"input {i}: onion grad {a!r}, torch grad {b!r}"
        if b is not None:
            assert_close(a, b.resolve_conj(), strides=False, rtol=rtol, atol=atol)


A, B = cdata(3, 4), cdata(3, 4, seed=1)
M, N, V = cdata(3, 4), cdata(4, 2, seed=2), cdata(3, 2, seed=3)
BM, BN = cdata(2, 3, 4), cdata(2, 4, 2, seed=4)

UNARY = {
    "neg": lambda m, a: -a,
    "abs": lambda m, a: m.abs(a),
    "exp": lambda m, a: m.exp(a),
    "log": lambda m, a: m.log(a),
    "sqrt": lambda m, a: m.sqrt(a),
    "rsqrt": lambda m, a: m.rsqrt(a),
    "sin": lambda m, a: m.sin(a),
    "cos": lambda m, a: m.cos(a),
    "tanh": lambda m, a: m.tanh(a),
    "sigmoid": lambda m, a: m.sigmoid(a),
    "conj": lambda m, a: m.conj(a),
    "conj_physical": lambda m, a: m.conj_physical(a),
    "conj_then_mul": lambda m, a: a.conj() * a,
    "mH": lambda m, a: a.mH * 2,
    "adjoint_mm": lambda m, a: a.adjoint().mm(a),
    "pow_int": lambda m, a: a ** 3,
    "pow_float": lambda m, a: m.pow(a, 2.5),
    "pow_complex": lambda m, a: m.pow(a, 1.5 - 0.5j),
    "pow_zero": lambda m, a: m.pow(a, 0),
    "scalar_pow": lambda m, a: m.pow(2.0, a),
    "complex_scalar_pow": lambda m, a: m.pow(1 + 1j, a),
    "negative_scalar_pow": lambda m, a: m.pow(-2.0, a),
    "mul_scalar": lambda m, a: a * (2 - 3j),
    "div_scalar": lambda m, a: a / (2 - 3j),
    "add_scalar": lambda m, a: a + (1 + 1j),
    "rsub_scalar": lambda m, a: (1 + 1j) - a,
    "sum": lambda m, a: a.sum(),
    "sum_dim": lambda m, a: a.sum(1),
    "mean": lambda m, a: a.mean(),
    "mean_dim": lambda m, a: a.mean(0, True),
    "prod": lambda m, a: a.prod(),
    "prod_dim": lambda m, a: a.prod(1),
    "clone": lambda m, a: a.clone(),
    "views": lambda m, a: a.t().reshape(2, 6).unsqueeze(0).expand(2, 2, 6).permute(2, 0, 1)[1:4, 0].sin(),
    "select_diagonal": lambda m, a: a.diagonal() * a[1, :3],
    "where": lambda m, a: m.where(a.abs() > 1.5, a, a * a),
    "exp_log_chain": lambda m, a: (a.exp() * a.sin() / a.cos()).log(),
}


@pytest.mark.parametrize("name", UNARY)
def test_unary_complex_gradients_match_torch(name):
    check(UNARY[name], A)


def _prod_with_zeros(zeros):
    a = cdata(2, 4)
    for i, j in zeros:
        a[i, j] = 0
    return a


@pytest.mark.parametrize("zeros", [[(0, 1)], [(0, 1), (1, 2)], [(0, 1), (0, 3)]], ids=["one", "two_rows", "same_row"])
def test_prod_complex_gradients_with_zeros_match_torch(zeros):
    a = _prod_with_zeros(zeros)
    check(lambda m, x: x.prod(), a)
    check(lambda m, x: x.prod(1), a)


BINARY = {
    "add": lambda m, a, b: a + b,
    "add_alpha": lambda m, a, b: m.add(a, b, alpha=2 - 1j),
    "sub_alpha": lambda m, a, b: m.sub(a, b, alpha=1 + 3j),
    "rsub": lambda m, a, b: m.rsub(a, b, alpha=0.5j),
    "mul": lambda m, a, b: a * b,
    "div": lambda m, a, b: a / b,
    "div_trunc": lambda m, a, b: a / b + m.div(a.abs(), b.abs(), rounding_mode="trunc"),
    "pow": lambda m, a, b: a ** (b / 4),
    "mul_broadcast": lambda m, a, b: a * b[0],
    "maximum_of_abs": lambda m, a, b: m.maximum(a.abs(), b.abs()) * a,
}


@pytest.mark.parametrize("name", BINARY)
def test_binary_complex_gradients_match_torch(name):
    check(BINARY[name], A, B)


MATRIX = {
    "mm": (lambda m, x, y: x.mm(y), (M, N)),
    "matmul": (lambda m, x, y: x @ y, (M, N)),
    "matmul_vector": (lambda m, x, y: x @ y[:, 0], (M, N)),
    "bmm": (lambda m, x, y: x.bmm(y), (BM, BN)),
    "matmul_batched": (lambda m, x, y: x @ y, (BM, BN)),
    "addmm": (lambda m, v, x, y: m.addmm(v, x, y), (V, M, N)),
    "linear": (lambda m, x, w: m.nn.functional.linear(x, w), (M, N.T.copy())),
    "dot": (lambda m, x, y: x[0] @ y, (M, M[1].copy())),
    "vector_matmul": (lambda m, x, y: x[0] @ y, (M, N)),
    "addmm_alpha_beta": (lambda m, v, x, y: m.addmm(v, x, y, beta=1 - 2j, alpha=0.5 + 1j), (V, M, N)),
}


@pytest.mark.parametrize("name", MATRIX)
def test_matrix_complex_gradients_match_torch(name):
    fn, arrays = MATRIX[name]
    check(fn, *arrays)


# A real leaf in a complex computation: its gradient is the real part (handle_r_to_c), of the real dtype.
R = rdata(3, 4)
MIXED = {
    "real_times_complex_tensor": (lambda m, r, c: r * c, (R, A)),
    "real_times_complex_scalar": (lambda m, r: r * (2 - 3j), (R,)),
    "real_div_complex": (lambda m, r, c: r / c, (R, A)),
    "complex_div_real": (lambda m, c, r: c / r, (A, R)),
    "real_plus_complex_alpha": (lambda m, r, c: m.add(r, c, alpha=1 + 2j), (R, A)),
    "complex_minus_real_alpha": (lambda m, c, r: m.sub(c, r, alpha=2j), (A, R)),
    "real_plus_complex_scalar": (lambda m, r: (r + 1j).exp(), (R,)),
    "real_to_complex": (lambda m, r: r.to(m.complex128).sin(), (R,)),
    "complex_base_real_exponent": (lambda m, c, r: c ** r, (A, R)),
    "real_base_complex_exponent": (lambda m, r, c: (-r) ** c, (R, A)),
    "real_pow_complex_scalar": (lambda m, r: r ** (1 + 1j), (R,)),
    "python_base_real_exponent": (lambda m, r: m.pow(1 - 1j, r), (R,)),
    "copy_real_into_complex": (lambda m, r: m.zeros(3, 4, dtype=m.complex128).copy_(r) * (1 + 2j), (R,)),
    "complex_to_real": (lambda m, c: c.to(m.float64) * 2, (A,)),
}


@pytest.mark.filterwarnings("ignore:Casting complex values to real")    # complex_to_real's forward, in both
@pytest.mark.parametrize("name", MIXED)
def test_real_leaf_in_complex_graph_gets_real_gradient_as_torch(name):
    fn, arrays = MIXED[name]
    check(fn, *arrays)


def test_real_leaf_gradient_is_real_and_raises_no_warning():
    import warnings
    r = onion.tensor(R, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (r * onion.tensor(A)).sum().abs().backward()
    tr = torch.tensor(R, requires_grad=True)
    (tr * torch.tensor(A)).sum().abs().backward()
    assert r.grad.dtype is onion.float64
    assert_close(r.grad, tr.grad)


# Where no formula takes the real part, PyTorch's engine refuses a complex gradient for a real input.
REFUSED = {
    "where": lambda m, r: m.where(r > 1, r, m.tensor(A)),
    "sum_dtype": lambda m, r: m.sum(r, dtype=m.complex128) * (1 + 1j),
    "fill_tensor": lambda m, r: m.zeros(3, dtype=m.complex128).fill_(r[0, 0]) * (1 + 2j),
}


@pytest.mark.parametrize("name", REFUSED)
def test_complex_gradient_for_a_real_input_raises_as_torch(name):
    r = onion.tensor(R, requires_grad=True)
    tr = torch.tensor(R, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"input_is_complex == grad_is_complex"):
        torch.autograd.grad(REFUSED[name](torch, tr).sum().abs(), tr)
    with pytest.raises(RuntimeError, match=r"returned a complex gradient \(ComplexDouble\) at index \d for a real "
                                           r"input \(Double\).*input_is_complex == grad_is_complex"):
        onion.autograd.grad(REFUSED[name](onion, r).sum().abs(), r)
    assert r.grad is None


SECOND = {
    "mul": (lambda m, a, b: a * b, (A, B)),
    "sin": (lambda m, a: a.sin(), (A,)),
    "exp_div": (lambda m, a, b: a.exp() / b, (A, B)),
    "abs": (lambda m, a: a.abs() * a, (A,)),
    "mm": (lambda m, x, y: x.mm(y), (M, N)),
    "real_times_complex": (lambda m, r, c: (r * c).tanh(), (R, A)),
}


def _second(m, fn, arrays):
    leaves = [m.tensor(a, requires_grad=True) for a in arrays]
    out = fn(m, *leaves)
    rng = np.random.default_rng(5)
    g = m.tensor(rng.uniform(-1, 1, tuple(out.shape)) + 1j * rng.uniform(-1, 1, tuple(out.shape)))
    first = m.autograd.grad(out, leaves, g, create_graph=True)
    total = sum((f * f.conj()).sum() if f.is_complex() else (f * f).sum() for f in first)
    return m.autograd.grad(total.abs(), leaves)


@pytest.mark.parametrize("name", SECOND)
def test_second_derivatives_of_complex_gradients_match_torch(name):
    fn, arrays = SECOND[name]
    for a, b in zip(_second(onion, fn, arrays), _second(torch, fn, arrays)):
        assert_close(a, b.resolve_conj(), strides=False)


def test_issue_repro_sin_gradient_is_conjugated():
    a = onion.tensor([1 + 2j], requires_grad=True)
    onion.sin(a).backward(onion.tensor([1 + 0j]))
    # d sin(z) = cos(z), conjugated: cos(1 + 2j) = 2.0327 - 3.0519j, so the gradient is 2.0327 + 3.0519j
    np.testing.assert_allclose(a.grad.numpy(), [np.conj(np.cos(1 + 2j))])
    assert a.grad.numpy()[0].imag > 3


# ----------------------------------------------------------------------------- conj's forward behaviour
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_conj_of_a_real_tensor_is_the_tensor_itself_as_torch(dtype):
    o = onion.tensor([1, 0, 2]).to(getattr(onion, dtype))
    t = torch.tensor([1, 0, 2]).to(getattr(torch, dtype))
    for fn in (lambda m, x: m.conj(x), lambda m, x: x.conj(), lambda m, x: m.conj_physical(x),
               lambda m, x: m.resolve_conj(x)):
        assert (fn(onion, o) is o) == (fn(torch, t) is t) is True
    assert onion.is_conj(o) is o.is_conj() is torch.is_conj(t) is False


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_conj_of_a_complex_tensor_matches_torch_values(dtype):
    data = cdata(2, 3)
    o = onion.tensor(data).to(getattr(onion, dtype))
    t = torch.tensor(data).to(getattr(torch, dtype))
    assert_close(onion.conj(o), t.conj())
    assert_close(o.conj_physical(), t.conj_physical())
    assert_close(o.mH, t.mH)
    assert_close(o.adjoint(), t.adjoint())
    # a lazy view with the Conjugate bit, over the same memory, as PyTorch's
    c = o.conj()
    assert c.is_conj() is t.conj().is_conj() is True and c._base is o and onion.resolve_conj(o) is o
    assert c.resolve_conj().is_conj() is False and c.resolve_conj()._base is None


def test_conj_physical_out_and_inplace_match_torch():
    data = cdata(4)
    o, t = onion.tensor(data), torch.tensor(data)
    oo, to = onion.empty(4, dtype=onion.complex128), torch.empty(4, dtype=torch.complex128)
    onion.conj_physical(o, out=oo)
    torch.conj_physical(t, out=to)
    assert_close(oo, to)
    assert o.conj_physical_() is o
    t.conj_physical_()
    assert_close(o, t)


def test_adjoint_of_a_vector_raises_as_torch():
    with pytest.raises(RuntimeError) as eo:
        onion.tensor([1j, 2]).adjoint()
    with pytest.raises(RuntimeError) as et:
        torch.tensor([1j, 2]).adjoint()
    assert str(eo.value) == str(et.value)
    with pytest.raises(RuntimeError, match=r"tensor\.mH is only supported on matrices"):
        _ = onion.tensor([1j, 2]).mH


def test_conj_physical_inplace_gradient_and_node_names_match_torch():
    def run(m):
        a = m.tensor(A, requires_grad=True)
        t = a.clone()
        t.conj_physical_()
        names = (t.grad_fn.name(), a.conj_physical().grad_fn.name())
        (t * m.tensor(B)).sum().abs().backward()
        return a.grad, names
    (og, onames), (tg, tnames) = run(onion), run(torch)
    assert_close(og, tg)
    assert onames == tnames == ("ConjPhysicalBackward1", "ConjPhysicalBackward0")
