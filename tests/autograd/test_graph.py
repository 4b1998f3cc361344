"""The autograd graph vs PyTorch: node names and next_functions, errors, in-place ops and views, the engine API.

Graph structure is compared recursively (``grad_fn.name()`` and the
``(node, input_nr)`` edges); the three user-facing errors are compared with
PyTorch's text; in-place ops on views, version counters, retain_graph,
create_graph, ``autograd.grad``, ``backward(inputs=...)``, hooks,
``retain_grad``, ``detach`` and ``requires_grad_`` are compared by value.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from conftest import assert_close, onion, torch

pytestmark = pytest.mark.oracle      # every test here compares with PyTorch


def data(*shape, seed=0):
    rng = np.random.default_rng(seed)
    return np.round(rng.uniform(-2, 2, shape), 3)


def leaves(m, *specs):
    """float64 leaves of ``m`` from (shape, seed, requires_grad) specs."""
    out = []
    for shape, seed, rg in specs:
        out.append(m.tensor(data(*shape, seed=seed), dtype=m.float64, requires_grad=rg))
    return out


def norm(name: str) -> str:
    return "AccumulateGrad" if name.endswith("AccumulateGrad") else name


def structure(fn, depth=0):
    """(name, ((child, input_nr), ...)) of a node and everything below it."""
    if fn is None:
        return None
    assert depth < 40
    return norm(fn.name()), tuple((structure(n, depth + 1), nr) for n, nr in fn.next_functions)


def aten(m):
    return m.ops.aten


def F(m):
    return m.nn.functional


# ------------------------------------------------------------------ 2. names and next_functions
def _inplace_view(m, x, y, w):
    a = x.clone()
    a[0].mul_(2)
    return a


def _inplace_slice_add(m, x, y, w):
    a = x * 1.0
    a[:, 1:3].add_(y[:, :2])
    return a


def _inplace_transpose(m, x, y, w):
    a = x.clone()
    a.t().add_(y.t())
    return a


def _view_after_inplace(m, x, y, w):
    a = x.clone()
    v = a[1]
    v.mul_(w)
    return v


def _stale_view(m, x, y, w):
    a = x.clone()
    v = a[:, 0]
    a.mul_(y)
    return v


def _setitem(m, x, y, w):
    z = m.zeros(3, 4, dtype=m.float64)
    z[1] = w
    return z


def _copy(m, x, y, w):
    z = m.zeros(3, 4, dtype=m.float64)
    z.copy_(x)
    return z


def _chain_inplace(m, x, y, w):
    a = x.exp()
    a.add_(y).mul_(2).sin_()
    return a


def _unary_inplace(m, x, y, w):
    a = x.clone()
    a.relu_()
    a.sigmoid_()
    a.tanh_()
    return a


GRAPHS = {
    "mul_scalar_sum": lambda m, x, y, w: (x * 2).sum(),
    "add": lambda m, x, y, w: x + y,
    "add_alpha": lambda m, x, y, w: m.add(x, y, alpha=2),
    "add_python_scalar": lambda m, x, y, w: x + 2,
    "radd": lambda m, x, y, w: 2 + x,
    "add_Scalar": lambda m, x, y, w: aten(m).add.Scalar(x, 2),
    "sub": lambda m, x, y, w: x - y,
    "sub_Scalar": lambda m, x, y, w: aten(m).sub.Scalar(x, 2),
    "rsub_python": lambda m, x, y, w: 2 - x,
    "rsub_Tensor": lambda m, x, y, w: m.rsub(x, y),
    "rsub_Scalar": lambda m, x, y, w: aten(m).rsub.Scalar(x, 2),
    "mul": lambda m, x, y, w: x * y,
    "mul_Scalar": lambda m, x, y, w: aten(m).mul.Scalar(x, 2),
    "div": lambda m, x, y, w: x / y,
    "div_python_scalar": lambda m, x, y, w: x / 2,
    "div_Scalar": lambda m, x, y, w: aten(m).div.Scalar(x, 2),
    "div_Tensor_mode": lambda m, x, y, w: m.div(x, y, rounding_mode="floor"),
    "div_Scalar_mode": lambda m, x, y, w: aten(m).div.Scalar_mode(x, 2, rounding_mode="trunc"),
    "pow_Tensor_Scalar": lambda m, x, y, w: x ** 2,
    "pow_Tensor_Tensor": lambda m, x, y, w: x.abs() ** y,
    "pow_Scalar": lambda m, x, y, w: 2 ** x,
    "clamp_Scalar": lambda m, x, y, w: x.clamp(-1, 1),
    "clamp_min_only": lambda m, x, y, w: m.clamp(x, min=0),
    "clamp_Tensor": lambda m, x, y, w: m.clamp(x, y, w),
    "clamp_Tensor_min_only": lambda m, x, y, w: m.clamp(x, min=y),
    "squeeze": lambda m, x, y, w: x.unsqueeze(0).squeeze(),
    "squeeze_dim": lambda m, x, y, w: aten(m).squeeze.dim(x.unsqueeze(1), 1),
    "squeeze_dims": lambda m, x, y, w: aten(m).squeeze.dims(x.unsqueeze(1), [1]),
    "view": lambda m, x, y, w: x.view(12),
    "reshape_view": lambda m, x, y, w: x.reshape(4, 3),
    "reshape_copy": lambda m, x, y, w: x.t().reshape(12),
    "t": lambda m, x, y, w: x.t(),
    "transpose": lambda m, x, y, w: x.transpose(0, 1),
    "permute": lambda m, x, y, w: x.permute(1, 0),
    "expand": lambda m, x, y, w: w.expand(3, 4),
    "unsqueeze": lambda m, x, y, w: x.unsqueeze(-1),
    "select": lambda m, x, y, w: x[1],
    "slice": lambda m, x, y, w: x[1:],
    "index_two": lambda m, x, y, w: x[0, 1:],
    "ellipsis": lambda m, x, y, w: x[...],
    "as_strided": lambda m, x, y, w: x.as_strided((2, 2), (1, 2)),
    "diagonal": lambda m, x, y, w: x.diagonal(),
    "clone": lambda m, x, y, w: x.clone(),
    "to_dtype": lambda m, x, y, w: x.to(m.float32),
    "sum_dim": lambda m, x, y, w: x.sum(1),
    "mean": lambda m, x, y, w: x.mean(),
    "mean_dim": lambda m, x, y, w: x.mean(0, keepdim=True),
    "prod": lambda m, x, y, w: x.prod(),
    "prod_dim": lambda m, x, y, w: x.prod(1),
    "amax": lambda m, x, y, w: x.amax(1),
    "amin": lambda m, x, y, w: x.amin(),
    "unary_chain": lambda m, x, y, w: x.neg().abs().exp().log().sqrt().rsqrt().sin().cos().tanh().sigmoid().relu(),
    "where": lambda m, x, y, w: m.where(x > 0, x, y),
    "maximum_minimum": lambda m, x, y, w: m.maximum(x, y) + m.minimum(x, w),
    "mm": lambda m, x, y, w: x.mm(y.t()),
    "bmm": lambda m, x, y, w: m.bmm(x.unsqueeze(0), y.t().unsqueeze(0)),
    "addmm": lambda m, x, y, w: m.addmm(w, x.t(), y),
    "linear": lambda m, x, y, w: F(m).linear(x, y, w[:3]),
    "linear_no_bias": lambda m, x, y, w: F(m).linear(x, y),
    "matmul_2d": lambda m, x, y, w: x @ y.t(),
    "no_grad_operand": lambda m, x, y, w: x * m.ones(3, 4, dtype=m.float64),
    "detached_operand": lambda m, x, y, w: x * y.detach(),
    "reuse": lambda m, x, y, w: (x * x).sum(),
    "broadcast": lambda m, x, y, w: x + w,
    "inplace_add": lambda m, x, y, w: x.clone().add_(y),
    "inplace_mul_scalar": lambda m, x, y, w: x.clone().mul_(2),
    "inplace_chain": _chain_inplace,
    "inplace_unary": _unary_inplace,
    "inplace_on_select": _inplace_view,
    "inplace_on_slice": _inplace_slice_add,
    "inplace_on_transpose": _inplace_transpose,
    "view_after_inplace": _view_after_inplace,
    "stale_view": _stale_view,
    "setitem": _setitem,
    "copy_": _copy,
}

NAME_GAPS = {
    "inplace_on_slice": "onion's indexing (onion/bindings/python_variable_methods.py _index) records a slice "
                        "for a full `:`; PyTorch skips it (applySlice returns self for start=0, stop=len, step=1), "
                        "so y[:, :2] has one SliceBackward0 in torch and two in onion",
}
ERROR_GAPS = {
    "int_requires_grad": "onion/core/tensor.py requires_grad_ says 'only Tensors of floating point and complex "
                         "dtype can require gradients'; torch 2.13 says 'only Tensors of floating point dtype can "
                         "require gradients'",
}


@pytest.mark.parametrize("name", list(GRAPHS))
def test_graph_structure_matches_torch(name):
    fn = GRAPHS[name]
    specs = ((3, 4), 0, True), ((3, 4), 1, True), ((4,), 2, True)
    out_t = fn(torch, *leaves(torch, *specs))
    out_o = fn(onion, *leaves(onion, *specs))
    st, so = structure(out_t.grad_fn), structure(out_o.grad_fn)
    if so != st and name in NAME_GAPS:
        pytest.xfail(NAME_GAPS[name])
    assert so == st
    assert out_o.requires_grad == out_t.requires_grad
    assert out_o.is_leaf == out_t.is_leaf
    assert_close(out_o, out_t, strides=False)


def test_accumulate_grad_is_shared_and_names_its_variable():
    x = onion.tensor([1.0, 2.0], requires_grad=True)
    a, b = (x * 2).grad_fn, (x + 1).grad_fn
    acc = a.next_functions[0][0]
    assert acc is b.next_functions[0][0]
    assert acc.name() == "torch::autograd::AccumulateGrad"
    assert acc.variable is x or acc.variable._impl is x._impl
    assert repr(acc).startswith("<AccumulateGrad object at")


def test_grad_fn_of_leaf_and_no_grad_results():
    x = onion.tensor([1.0, 2.0], requires_grad=True)
    assert x.grad_fn is None and x.is_leaf
    c = onion.tensor([1.0, 2.0])
    assert (c * 2).grad_fn is None and (c * 2).is_leaf
    with onion.no_grad():
        y = x * 2
    assert y.grad_fn is None and not y.requires_grad and y.is_leaf
    assert (x > 0).grad_fn is None and not (x > 0).requires_grad


def test_integer_results_do_not_require_grad():
    for m in (onion, torch):
        x = m.tensor([1.5, -2.5], requires_grad=True)
        for r in (x > 0, x.to(m.int64), x.argmax(), m.eq(x, x)):
            assert not r.requires_grad and r.grad_fn is None


# ------------------------------------------------------------------ 3. errors with PyTorch's wording
def _modified_saved_output(m):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.exp()
    y.add_(1)
    y.sum().backward()


def _modified_saved_input(m):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = m.tensor([0.5, -1.0, 2.0], requires_grad=True)
    a = x.clone()
    y = a * w
    a.add_(1)
    y.sum().backward()


def _modified_saved_leaf(m):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = m.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = x * w
    with m.no_grad():
        x.add_(1)
    y.sum().backward()


def _modified_saved_view(m):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    a = x.clone()
    v = a[:2]
    y = (v * v).sum()
    a.mul_(2)
    y.backward()


def _modified_through_view(m):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = m.tensor([0.5, -1.0, 2.0], requires_grad=True)
    a = x.clone()
    y = a * w
    a[0].mul_(2)
    y.sum().backward()


def _modified_by_copy(m):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = m.tensor([0.5, -1.0, 2.0], requires_grad=True)
    a = x.clone()
    y = a * w
    a.copy_(w)
    y.sum().backward()


def _modified_double_0d(m):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    a = x.double().sum()
    y = a * x.double()
    a.mul_(2)
    y.sum().backward()


def _modified_saved_mm_operand(m):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = m.tensor([0.5, -1.0, 2.0], requires_grad=True)
    b = x.clone().view(3, 1)
    y = b.mm(w.view(1, 3))
    b.mul_(2)
    y.sum().backward()


def _inplace_mul_by_own_view(m):
    """The saved operand is a view of the tensor being modified: PyTorch refuses at backward."""
    leaf = m.ones(3, 4, dtype=m.float64, requires_grad=True)
    x = leaf * 1.0
    x.t().mul_(x.t())
    x.sum().backward()


def _inplace_mul_by_sibling_view(m):
    leaf = m.ones(3, 4, dtype=m.float64, requires_grad=True)
    x = leaf.clone()
    v = x[1:]
    v[:, ::2].mul_(v[:, 1::2])
    x.sum().backward()


def _inplace_mul_by_itself(m):
    leaf = m.ones(3, 4, dtype=m.float64, requires_grad=True)
    x = leaf * 1.0
    x.mul_(x)
    x.sum().backward()


def _leaf_inplace(m):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x.add_(1)


def _leaf_view_inplace(m):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x[0].mul_(2)


def _no_grad_view_of_leaf_inplace(m):
    leaf = m.ones(3, 2, requires_grad=True)
    with m.no_grad():
        v = leaf[0]
    v.mul_(2)


def _no_grad_view_inplace(m):
    x = m.ones(3, 2, requires_grad=True).clone()
    with m.no_grad():
        v = x[0]
    v.mul_(2)


def _no_grad_view_inplace_with_grad_operand(m):
    x = m.ones(3, 2, requires_grad=True).clone()
    with m.no_grad():
        v = x[0]
    v.add_(m.ones(2, requires_grad=True))


def _backward_twice(m):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    y.backward()


def _backward_twice_partial(m):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    h = x.sigmoid()
    (h * 2).sum().backward()
    (h * 3).sum().backward()


def _grad_twice(m):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.exp().sum()
    m.autograd.grad(y, x)
    m.autograd.grad(y, x)


def _no_grad_fn(m):
    x = m.tensor([1.0, 2.0, 3.0])
    (x * 2).sum().backward()


def _non_scalar(m):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * 2).backward()


def _unused_input(m):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    z = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    m.autograd.grad((x * 2).sum(), (x, z))


def _grad_of_non_requiring(m):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    z = m.tensor([1.0, 2.0, 3.0])
    m.autograd.grad((x * 2).sum(), (x, z))


def _grad_output_shape(m):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * 2).backward(m.ones(2))


def _int_requires_grad(m):
    m.tensor([1, 2]).requires_grad_()


def _nonleaf_requires_grad_false(m):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * 2).requires_grad_(False)


def _hook_on_no_grad(m):
    m.tensor([1.0]).register_hook(lambda g: g)


def _retain_grad_no_grad(m):
    m.tensor([1.0]).retain_grad()


def _out_with_grad(m):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    m.add(x, x, out=m.empty(3))


ERRORS = {
    "modified_saved_output": _modified_saved_output,
    "modified_saved_input": _modified_saved_input,
    "modified_saved_leaf": _modified_saved_leaf,
    "modified_saved_view": _modified_saved_view,
    "modified_through_view": _modified_through_view,
    "modified_by_copy": _modified_by_copy,
    "modified_double_0d": _modified_double_0d,
    "modified_saved_mm_operand": _modified_saved_mm_operand,
    "inplace_mul_by_own_view": _inplace_mul_by_own_view,
    "inplace_mul_by_sibling_view": _inplace_mul_by_sibling_view,
    "inplace_mul_by_itself": _inplace_mul_by_itself,
    "leaf_inplace": _leaf_inplace,
    "leaf_view_inplace": _leaf_view_inplace,
    "no_grad_view_of_leaf_inplace": _no_grad_view_of_leaf_inplace,
    "no_grad_view_inplace": _no_grad_view_inplace,
    "no_grad_view_inplace_with_grad_operand": _no_grad_view_inplace_with_grad_operand,
    "backward_twice": _backward_twice,
    "backward_twice_partial": _backward_twice_partial,
    "grad_twice": _grad_twice,
    "no_grad_fn": _no_grad_fn,
    "non_scalar": _non_scalar,
    "unused_input": _unused_input,
    "grad_of_non_requiring": _grad_of_non_requiring,
    "grad_output_shape": _grad_output_shape,
    "int_requires_grad": _int_requires_grad,
    "nonleaf_requires_grad_false": _nonleaf_requires_grad_false,
    "hook_on_no_grad": _hook_on_no_grad,
    "retain_grad_no_grad": _retain_grad_no_grad,
    "out_with_grad": _out_with_grad,
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_error_text_matches_torch(name):
    fn = ERRORS[name]
    with pytest.raises(Exception) as et:
        fn(torch)
    with pytest.raises(Exception) as eo:
        fn(onion)
    assert isinstance(eo.value, type(et.value)), f"onion raised {eo.type.__name__}: {eo.value}"
    if str(eo.value) != str(et.value) and name in ERROR_GAPS:
        pytest.xfail(ERROR_GAPS[name])
    assert str(eo.value) == str(et.value)


def test_saved_tensor_error_names_the_version():
    x = onion.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.sigmoid()
    y.mul_(2)
    y.mul_(2)
    with pytest.raises(RuntimeError, match=r"\[torch.FloatTensor \[3\]\], which is output 0 of Sigmoid, "
                                           r"is at version 2; expected version 0 instead\. Hint:"):
        y.sum().backward()


def test_backward_twice_after_retain_then_free():
    x = onion.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert_close(x.grad, torch.tensor([4.0, 8.0, 12.0]))
    with pytest.raises(RuntimeError, match="^Trying to backward through the graph a second time"):
        y.backward()


# ------------------------------------------------------------------ 4. in-place on views, versions
def _view_case(fn):
    """Run ``fn(m, leaf)`` on both; gradients of the leaf and the returned output must agree."""
    res = []
    for m in (onion, torch):
        leaf = m.tensor(data(3, 4), dtype=m.float64, requires_grad=True)
        out = fn(m, leaf)
        out.backward(m.tensor(data(*tuple(out.shape), seed=9), dtype=m.float64))
        res.append((out.detach(), leaf.grad))
    assert_close(res[0][0], res[1][0], strides=False)
    assert_close(res[0][1], res[1][1], strides=False)


def _iv_select_mul(m, leaf):
    x = leaf.clone()
    x[0].mul_(2)
    return x


def _iv_select_then_sum(m, leaf):
    x = leaf.clone()
    x[0].mul_(2)
    return x.sum()


def _iv_slice_add(m, leaf):
    x = leaf.clone()
    x[:, 1:3].add_(x[:, :2] * 3)
    return x


def _iv_transpose_mul(m, leaf):
    x = leaf * 1.0
    x.t().mul_(leaf.t() * 2)
    return x


def _iv_select_add_tensor(m, leaf):
    x = leaf.clone()
    x.select(1, 2).add_(leaf[:, 0])
    return x


def _iv_nested_views(m, leaf):
    x = leaf.clone()
    v = x[1:]
    v[:, ::2].mul_(v[:, 1::2].clone())
    return x


def _iv_view_then_base(m, leaf):
    x = leaf.clone()
    v = x[1]
    x.mul_(3)
    return v * v


def _iv_sibling_views(m, leaf):
    x = leaf.clone()
    a, b = x[0], x[:, 0]
    a.mul_(5)
    return b * 1.0


def _iv_view_output_itself(m, leaf):
    x = leaf.clone()
    v = x[1:3]
    v.sin_()
    return v


def _iv_setitem(m, leaf):
    x = leaf.clone()
    x[1] = leaf[2] * 4
    return x


def _iv_setitem_scalar(m, leaf):
    x = leaf * 2
    x[:, 1] = 0.5
    return x


def _iv_zeros_setitem(m, leaf):
    z = m.zeros(4, 4, dtype=m.float64)
    z[1:, :] = leaf.exp()
    return z


def _iv_inplace_on_saved_view_ok(m, leaf):
    x = leaf.clone()
    y = x * 2               # x saved? no: mul by a scalar saves nothing
    x[0].add_(1)
    return y + x


def _iv_diagonal(m, leaf):
    x = leaf.clone()
    x.diagonal().mul_(-1)
    return x.exp()


def _iv_expand_read(m, leaf):
    x = leaf.clone()
    v = x[0]
    x[0].add_(10)
    return v.unsqueeze(0).expand(2, 4) * 1.0


def _iv_copy_into_view(m, leaf):
    x = leaf.clone()
    x[2].copy_(leaf[0].sin())
    return x


def _iv_float32_view(m, leaf):
    x = leaf.to(m.float32)
    x[0].mul_(2)
    return x.double()


INPLACE_VIEWS = {
    "select_mul": _iv_select_mul, "select_then_sum": _iv_select_then_sum, "slice_add": _iv_slice_add,
    "transpose_mul": _iv_transpose_mul, "select_add_tensor": _iv_select_add_tensor,
    "nested_views": _iv_nested_views, "view_then_base": _iv_view_then_base, "sibling_views": _iv_sibling_views,
    "view_output_itself": _iv_view_output_itself, "setitem": _iv_setitem, "setitem_scalar": _iv_setitem_scalar,
    "zeros_setitem": _iv_zeros_setitem, "inplace_unsaved": _iv_inplace_on_saved_view_ok,
    "diagonal": _iv_diagonal, "expand_read": _iv_expand_read, "copy_into_view": _iv_copy_into_view,
    "float32_view": _iv_float32_view,
}


@pytest.mark.parametrize("name", list(INPLACE_VIEWS))
def test_inplace_on_views_matches_torch(name):
    _view_case(INPLACE_VIEWS[name])


@pytest.mark.parametrize("name", ["select_mul", "slice_add", "nested_views", "view_then_base", "setitem",
                                  "diagonal", "copy_into_view"])
def test_inplace_on_views_second_order(name):
    """Gradients through CopySlices are themselves differentiable (create_graph)."""
    fn = INPLACE_VIEWS[name]
    res = []
    for m in (onion, torch):
        leaf = m.tensor(data(3, 4), dtype=m.float64, requires_grad=True)
        out = fn(m, leaf)
        (g,) = m.autograd.grad((out * out).sum(), leaf, create_graph=True)
        (gg,) = m.autograd.grad((g * g).sum(), leaf)
        res.append((g.detach(), gg))
    assert_close(res[0][0], res[1][0], strides=False)
    assert_close(res[0][1], res[1][1], strides=False)


def test_view_of_non_requiring_base_after_inplace():
    """A view of a tensor that gets history later (through an in-place op) requires grad too, as in PyTorch."""
    res = []
    for m in (onion, torch):
        y = m.tensor(data(4), dtype=m.float64, requires_grad=True)
        a = m.zeros(3, 4, dtype=m.float64)
        v = a[0]
        a.add_(y)
        res.append((v.requires_grad, y))
        if v.requires_grad:
            (v * 2).sum().backward()
    if not res[0][0]:
        pytest.xfail("a view made before its base got history does not see that history in onion: its "
                     "requires_grad is a plain TensorImpl attribute (onion/core/tensor_impl.py), not recomputed "
                     "from the base as PyTorch's DifferentiableViewMeta does")
    assert_close(res[0][1].grad, res[1][1].grad)


INPLACE_OPS = ["a.pow_(2)", "a.pow_(y)", "a.pow_(0.5)", "a.eq_(0)", "a.lt_(y)", "a.ge_(1.0)", "a.ne_(y)",
               "a.clamp_(-0.5, 0.5)", "a.clamp_(y)", "a.clamp_(max=y)", "a.clamp_(min=0.6)",
               "a.div_(y, rounding_mode='floor')", "a.div_(y)", "a.div_(2.0)", "a.fill_(2.0)", "a.fill_(y[0, 0])",
               "a.copy_(y)", "a.copy_(y[0])", "a.abs_()", "a.neg_()", "a.sqrt_()", "a.rsqrt_()", "a.log_()",
               "a.sub_(y, alpha=2)", "a.add_(y[1])", "a.mul_(y)", "a.mul_(y[:, :1])", "a.relu_()", "a.sigmoid_()",
               "a.tanh_()", "a.exp_()", "a.sin_()", "a.cos_()", "a.addmm_(y, y.t(), beta=0.5, alpha=2)",
               "a.mul_(2).add_(y).sqrt_()"]


@pytest.mark.parametrize("expr", INPLACE_OPS)
def test_inplace_op_gradients_match_torch(expr):
    """Each in-place op on a non-leaf: node name (the functional's), gradients of both operands, and
    second derivatives through it (the in-place op saved the old value when its formula needs it)."""
    res = []
    for m in (onion, torch):
        x = m.tensor([[1.5, 0.7], [0.3, 2.0]], dtype=m.float64, requires_grad=True)
        y = m.tensor([[0.5, 1.7], [1.3, 0.2]], dtype=m.float64, requires_grad=True)
        a = x.clone()
        eval(expr, {"a": a, "y": y})
        name = a.grad_fn.name()
        g = m.tensor([[1.0, -2.0], [3.0, 0.5]], dtype=m.float64)
        gx, gy = m.autograd.grad(a, (x, y), g, create_graph=True, allow_unused=True)
        firsts = [t for t in (gx, gy) if t is not None and t.requires_grad]
        second = m.autograd.grad(sum((t * t).sum() for t in firsts), (x, y), allow_unused=True) if firsts else None
        res.append((name, a.detach(), gx, gy, second))
    (no, ao, gxo, gyo, so), (nt, at, gxt, gyt, st) = res
    assert no == nt
    assert_close(ao, at)
    for o, t in ((gxo, gxt), (gyo, gyt)) + (tuple(zip(so, st)) if st is not None and so is not None else ()):
        assert (o is None) == (t is None)
        if t is not None:       # (torch may answer a ZeroTensor, which has no NumPy view)
            assert_close(o.detach(), t.detach() + torch.zeros_like(t), strides=False, rtol=1e-10, atol=1e-12)
    assert (so is None) == (st is None)


def test_no_grad_view_modified_under_no_grad_is_untracked():
    res = []
    for m in (onion, torch):
        leaf = m.tensor(data(3, 2), dtype=m.float64, requires_grad=True)
        x = leaf.clone()
        with m.no_grad():
            v = x[0]
            v.mul_(2)
        (x * x).sum().backward()
        res.append((x.detach(), leaf.grad))
    assert_close(res[0][0], res[1][0])
    assert_close(res[0][1], res[1][1])


def test_version_counters_match_torch():
    res = []
    for m in (onion, torch):
        x = m.tensor(data(3, 4), dtype=m.float64, requires_grad=True)
        seen = [x._version]
        a = x.clone()
        v = a[0]
        seen += [a._version, v._version]
        v.mul_(2)
        seen += [a._version, v._version]
        a.add_(1)
        seen += [a._version, v._version]
        a[1] = 3.0
        seen += [a._version, v._version]
        d = a.detach()
        d.zero_() if hasattr(d, "zero_") else d.mul_(0)
        seen += [a._version, d._version]
        with m.no_grad():
            x.mul_(1)
        seen.append(x._version)
        y = a * 2
        seen += [y._version, (y.view(12))._version]
        res.append(seen)
    assert res[0] == res[1]


def test_detach_shares_storage_and_version_not_graph():
    for m in (onion, torch):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        z = y * y                 # saves y at version 0
        d = y.detach()
        assert not d.requires_grad and d.grad_fn is None and d.is_leaf
        assert not d._is_view()
        d.add_(1)
        assert y._version == 1 and d._version == 1
        assert y.tolist() == [3.0, 5.0]
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.sum().backward()


def test_inplace_on_detached_view_of_leaf_is_allowed():
    """A detached view is not a differentiable view: in-place on it does not touch the leaf's history."""
    res = []
    for m in (onion, torch):
        leaf = m.tensor(data(3, 2), dtype=m.float64, requires_grad=True)
        w = m.tensor(data(2, seed=1), dtype=m.float64, requires_grad=True)
        d = leaf[0].detach()
        d.mul_(w)
        assert leaf.is_leaf and leaf.grad_fn is None
        assert d.grad_fn.name() == "MulBackward0"
        d.sum().backward()
        res.append(w.grad)
    assert_close(res[0], res[1])


def test_data_is_detached_with_its_own_version():
    for m in (onion, torch):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x * x
        x.data.mul_(3)       # .data bypasses the version check
        y.sum().backward()
        assert x.grad.tolist() == [6.0, 12.0]
        assert x._version == 0


# ------------------------------------------------------------------ 4. engine API
def test_retain_graph_allows_second_backward():
    res = []
    for m in (onion, torch):
        x = m.tensor(data(3), dtype=m.float64, requires_grad=True)
        y = (x.exp() * x).sum()
        y.backward(retain_graph=True)
        first = x.grad.clone()
        y.backward()
        res.append((first, x.grad))
    assert_close(res[0][0], res[1][0])
    assert_close(res[0][1], res[1][1])
    np.testing.assert_allclose(res[0][1].numpy(), res[0][0].numpy() * 2)


@pytest.mark.parametrize("expr", ["x ** 3", "x.sin() * x", "x.exp() / (1 + x * x)", "x.tanh().sigmoid()",
                                  "(x * x).sum() * x"])
def test_higher_order_grads_match_torch(expr):
    """First, second and third derivatives through create_graph=True."""
    res = []
    for m in (onion, torch):
        x = m.tensor(data(4), dtype=m.float64, requires_grad=True)
        y = eval(expr, {"x": x, "m": m}).sum()
        (g1,) = m.autograd.grad(y, x, create_graph=True)
        (g2,) = m.autograd.grad(g1.sum(), x, create_graph=True)
        (g3,) = m.autograd.grad(g2.sum(), x)
        res.append((g1, g2, g3))
        assert g1.requires_grad and g2.requires_grad and not g3.requires_grad
    for a, b in zip(*res):
        assert_close(a.detach(), b, strides=False, rtol=1e-10, atol=1e-10)


def test_grad_of_x_cubed_worked_value():
    x = onion.tensor([1.0, 2.0, -3.0], dtype=onion.float64, requires_grad=True)
    (g,) = onion.autograd.grad((x ** 3).sum(), x, create_graph=True)
    assert g.tolist() == [3.0, 12.0, 27.0]
    (gg,) = onion.autograd.grad(g.sum(), x, create_graph=True)
    assert gg.tolist() == [6.0, 12.0, -18.0]
    gg.sum().backward()
    assert x.grad.tolist() == [6.0, 6.0, 6.0]


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_backward_create_graph_accumulates_differentiable_grad():
    res = []
    for m in (onion, torch):
        x = m.tensor(data(3), dtype=m.float64, requires_grad=True)
        (x ** 3).sum().backward(create_graph=True)
        g = x.grad
        assert g.requires_grad
        (gg,) = m.autograd.grad(g.sum(), x)
        res.append((g.detach(), gg))
        x.grad = None
    assert_close(res[0][0], res[1][0])
    assert_close(res[0][1], res[1][1])


def test_autograd_grad_allow_unused_and_materialize():
    for m in (onion, torch):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        z = m.tensor([3.0, 4.0], requires_grad=True)
        gx, gz = m.autograd.grad((x * x).sum(), (x, z), allow_unused=True)
        assert gx.tolist() == [2.0, 4.0] and gz is None
        gx, gz = m.autograd.grad((x * x).sum(), (x, z), materialize_grads=True)
        assert gz.tolist() == [0.0, 0.0]
        assert x.grad is None and z.grad is None        # grad() does not accumulate


def test_autograd_grad_with_grad_outputs_and_multiple_outputs():
    res = []
    for m in (onion, torch):
        x = m.tensor(data(3, 2), dtype=m.float64, requires_grad=True)
        w = m.tensor(data(2, seed=1), dtype=m.float64, requires_grad=True)
        a, b = x * w, (x.sin() * w).sum(0)
        ga = m.tensor(data(3, 2, seed=2), dtype=m.float64)
        gb = m.tensor(data(2, seed=3), dtype=m.float64)
        res.append(m.autograd.grad((a, b), (x, w), (ga, gb)))
    for a, b in zip(*res):
        assert_close(a, b, strides=False)


def test_autograd_grad_of_intermediate():
    res = []
    for m in (onion, torch):
        x = m.tensor(data(3), dtype=m.float64, requires_grad=True)
        h = x.exp()
        y = (h * h).sum()
        res.append(m.autograd.grad(y, h)[0])
        assert x.grad is None
    assert_close(res[0], res[1])


def test_backward_inputs_restricts_accumulation():
    res = []
    for m in (onion, torch):
        x = m.tensor(data(3), dtype=m.float64, requires_grad=True)
        w = m.tensor(data(3, seed=1), dtype=m.float64, requires_grad=True)
        y = (x * w).sum()
        y.backward(inputs=[w], retain_graph=True)
        assert x.grad is None
        gw = w.grad.clone()
        y.backward(inputs=x)
        res.append((gw, x.grad, w.grad))
    for a, b in zip(*res):
        assert_close(a, b)


def test_backward_inputs_non_leaf_populates_grad():
    res = []
    for m in (onion, torch):
        x = m.tensor(data(3), dtype=m.float64, requires_grad=True)
        h = x * 2
        (h.sin()).sum().backward(inputs=[h])
        res.append((h.grad, x.grad))
    assert_close(res[0][0], res[1][0])
    assert res[0][1] is None and res[1][1] is None


def test_backward_with_gradient_argument():
    res = []
    for m in (onion, torch):
        x = m.tensor(data(2, 3), dtype=m.float64, requires_grad=True)
        (x * x).backward(m.tensor(data(2, 3, seed=4), dtype=m.float64))
        res.append(x.grad)
    assert_close(res[0], res[1])


def test_hooks_modify_gradients_on_leaf_and_non_leaf():
    res = []
    for m in (onion, torch):
        calls = []
        x = m.tensor(data(3), dtype=m.float64, requires_grad=True)
        h = x * 3
        h.register_hook(lambda g: calls.append("h") or g * 2)
        x.register_hook(lambda g: calls.append("x") or g + 1)
        handle = x.register_hook(lambda g: calls.append("removed") or g * 100)
        handle.remove()
        y = (h * h).sum()
        y.backward()
        res.append((x.grad, calls))
    assert_close(res[0][0], res[1][0])
    assert res[0][1] == res[1][1] == ["h", "x"]


def test_hook_observing_without_change_and_returning_none():
    res = []
    for m in (onion, torch):
        seen = []
        x = m.tensor(data(3), dtype=m.float64, requires_grad=True)
        y = x.exp()
        y.register_hook(lambda g: seen.append(g.clone()))
        y.sum().backward()
        res.append((seen[0], x.grad))
    assert_close(res[0][0], res[1][0])
    assert_close(res[0][1], res[1][1])


def test_retain_grad_on_non_leaf():
    res = []
    for m in (onion, torch):
        x = m.tensor(data(3), dtype=m.float64, requires_grad=True)
        h = x.sin()
        h.retain_grad()
        assert h.retains_grad and not x.retains_grad
        k = h * 2
        (k * h).sum().backward()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")       # torch warns when .grad of a non-leaf is read
            assert k.grad is None
        res.append(h.grad)
    assert_close(res[0], res[1])


def test_retain_grad_accumulates_across_backwards():
    res = []
    for m in (onion, torch):
        x = m.tensor(data(3), dtype=m.float64, requires_grad=True)
        h = x * 2
        h.retain_grad()
        y = (h ** 2).sum()
        y.backward(retain_graph=True)
        y.backward()
        res.append(h.grad)
    assert_close(res[0], res[1])


def _retain_then_inplace(m, retain):
    x = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)
    h = x * 2
    retain(h)
    h.mul_(3)                       # the retained gradient is the new value's
    k = x * 1
    retain(k)
    k[1:].mul_(5)                   # ... also after an in-place op on a view of it (CopySlices)
    (h * h + k * k).sum().backward()
    return h.grad.tolist(), k.grad.tolist()


def test_retain_grad_follows_inplace_ops():
    expected = _retain_then_inplace(torch, lambda t: t.retain_grad())
    from onion.autograd.history import retain_grad
    assert _retain_then_inplace(onion, retain_grad) == expected
    if _retain_then_inplace(onion, lambda t: t.retain_grad()) != expected:
        pytest.xfail("Tensor.retain_grad (onion/bindings/python_variable_methods.py) registers its own hook on the "
                     "current grad_fn, which an in-place op then leaves behind; it should delegate to "
                     "onion.autograd.history.retain_grad, which moves the hook to the tensor's new grad_fn (and holds "
                     "the tensor weakly, no cycle)")


def test_requires_grad_and_is_leaf():
    for m in (onion, torch):
        x = m.tensor([1.0, 2.0])
        assert not x.requires_grad and x.is_leaf
        assert x.requires_grad_() is x
        assert x.requires_grad and x.is_leaf
        y = x * 2
        assert y.requires_grad and not y.is_leaf
        x.requires_grad_(False)
        assert not x.requires_grad and not (x * 2).requires_grad
        x.requires_grad = True
        assert x.requires_grad
        z = m.zeros(2, requires_grad=True)
        assert z.requires_grad and z.is_leaf


def test_grad_is_accumulated_not_replaced_and_can_be_reset():
    x = onion.tensor([1.0, 2.0], requires_grad=True)
    (x * 3).sum().backward()
    g = x.grad
    (x * 3).sum().backward()
    assert x.grad.tolist() == [6.0, 6.0]
    assert g.tolist() in ([3.0, 3.0], [6.0, 6.0])
    x.grad = None
    (x * 1).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_diamond_graph_runs_each_node_once():
    res = []
    for m in (onion, torch):
        calls = []
        x = m.tensor(data(3), dtype=m.float64, requires_grad=True)
        a = x.exp()
        a.register_hook(lambda g: calls.append(1))
        b, c = a.sin(), a.cos()
        (b * c + a).sum().backward()
        res.append((x.grad, len(calls)))
    assert_close(res[0][0], res[1][0])
    assert res[0][1] == res[1][1] == 1


def test_backward_twice_without_saved_tensors_is_allowed():
    for m in (onion, torch):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = (x + 1).sum()
        y.backward()
        y.backward()
        assert x.grad.tolist() == [2.0, 2.0]


def test_backward_on_a_leaf_and_functional_backward():
    res = []
    for m in (onion, torch):
        x = m.tensor(data(3), dtype=m.float64, requires_grad=True)
        w = m.tensor(data(3, seed=1), dtype=m.float64, requires_grad=True)
        x.backward(m.tensor([1.0, 2.0, 3.0], dtype=m.float64))
        a, b = x * w, (x * x).sum()
        m.autograd.backward([a, b], [m.ones(3, dtype=m.float64), None])
        res.append((x.grad, w.grad))
    assert_close(res[0][0], res[1][0])
    assert_close(res[0][1], res[1][1])


def test_node_hooks_and_prehooks():
    res = []
    for m in (onion, torch):
        seen = []
        x = m.tensor(data(3), dtype=m.float64, requires_grad=True)
        y = x.exp()
        z = (y * 2).sum()

        def prehook(grad_outputs):
            seen.append(("pre", len(grad_outputs)))
            return (grad_outputs[0] * 10,)

        def hook(grad_inputs, grad_outputs):
            seen.append(("post", len(grad_inputs), len(grad_outputs)))
            return (grad_inputs[0] + 1,)
        y.grad_fn.register_prehook(prehook)
        h = y.grad_fn.register_hook(hook)
        z.backward(retain_graph=True)
        first = x.grad.clone()
        h.remove()
        x.grad = None
        z.backward()
        res.append((first, x.grad, seen))
    assert_close(res[0][0], res[1][0])
    assert_close(res[0][1], res[1][1])
    assert res[0][2] == res[1][2]


def test_next_functions_input_nr_for_multi_output_function():
    """Edges carry the output number of a multi-output node (here a Function returning two tensors)."""
    res = []
    for m in (onion, torch):
        class Split(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 1.0, x * 2.0

            @staticmethod
            def backward(ctx, g1, g2):
                return g1 + 2 * g2
        x = m.tensor(data(3), dtype=m.float64, requires_grad=True)
        a, b = Split.apply(x)
        y = b * a
        res.append([(n.name(), nr) for n, nr in y.grad_fn.next_functions])
        y.sum().backward()
        res.append(x.grad)
    assert res[0] == res[2] == [("SplitBackward", 1), ("SplitBackward", 0)]
    assert_close(res[1], res[3])
