"""PyTorch's OpInfo samples on the ``dask`` device, through the device-generic runner
(tests/opinfo/opinfo_device.py): run by torch on the CPU and by onion on Dask, compared after ``.cpu()``.

Dask tensors are always row-major (onion/backends/dask.py), so strides are not compared.  ``PASSING`` lists
the OpInfo entries that pass every check (function, method, non-contiguous, out=, in-place, gradients) in
float32, int64 and float64 on two samples each (294 of the harness's 433 entries; FAST in the default tier,
the rest in the slow one).  Most of the others need a kernel only the CPU has (indexing with tensors,
scatter/gather, flip, cumulative ops, linear algebra, ...): on dask they raise the backend's error naming
the operator.
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


from .dask_fallback import dask_fallback  # noqa: E402,F401 (autouse: the module's own fallback)

PASSING = [
    'H', 'T', '__radd__', '__rand__', '__rdiv__', '__rmatmul__', '__rmod__', '__rmul__', '__ror__', '__rpow__',
    '__rsub__', '__rxor__', '_chunk_cat', '_softmax_backward_data', 'abs', 'acos', 'acosh', 'add', 'addcdiv',
    'addcmul', 'addmm', 'addmm.decomposed', 'addmv', 'addr', 'alias_copy', 'all', 'allclose', 'amax', 'amin',
    'angle', 'any', 'argmax', 'argmin', 'argsort', 'argwhere', 'as_strided_copy', 'as_strided_scatter', 'asin',
    'asinh', 'atan', 'atan2', 'atanh', 'atleast_1d', 'atleast_2d', 'atleast_3d', 'baddbmm', 'bfloat16',
    'bitwise_and', 'bitwise_left_shift', 'bitwise_not', 'bitwise_or', 'bitwise_right_shift', 'bitwise_xor',
    'block_diag', 'bmm', 'bmm.triton_optimized', 'bool', 'broadcast_shapes', 'broadcast_tensors', 'broadcast_to',
    'byte', 'cartesian_prod', 'cat', 'cdouble', 'ceil', 'cfloat', 'char', 'chunk', 'clamp', 'clamp_max', 'clamp_min',
    'clone', 'column_stack', 'conj', 'conj_physical', 'copysign', 'corrcoef', 'cos', 'cosh', 'count_nonzero', 'cov',
    'cross', 'deg2rad', 'diagonal', 'diagonal_copy', 'diff', 'digamma', 'dist', 'div.floor_rounding',
    'div.no_rounding_mode', 'div.trunc_rounding', 'dot', 'double', 'dsplit', 'dstack', 'einsum', 'empty',
    'empty_like', 'empty_permuted', 'empty_strided', 'eq', 'erf', 'erfc', 'erfinv', 'exp', 'exp2', 'expand',
    'expand_as', 'expand_copy', 'expm1', 'eye', 'fill', 'flatten', 'float', 'float_power', 'floor', 'floor_divide',
    'fmax', 'fmin', 'fmod', 'frac', 'frexp', 'full_like', 'ge', 'gradient', 'gt', 'half', 'heaviside', 'hsplit',
    'hstack', 'hypot', 'i0', 'igamma', 'igammac', 'inner', 'int', 'isclose', 'isfinite', 'isinf', 'isnan',
    'isneginf', 'isposinf', 'isreal', 'item', 'kron', 'ldexp', 'le', 'lerp', 'lgamma', 'log', 'log10', 'log1p',
    'log2', 'log_softmax', 'log_softmax.with_dtype', 'logaddexp', 'logaddexp2', 'logical_and', 'logical_not',
    'logical_or', 'logical_xor', 'logit', 'logsumexp', 'long', 'lt', 'mH', 'mT', 'matmul', 'max.binary', 'maximum',
    'mean', 'meshgrid.list_of_tensors', 'meshgrid.variadic_tensors', 'min.binary', 'minimum', 'mm', 'movedim', 'mul',
    'mv', 'mvlgamma.mvlgamma_p_1', 'mvlgamma.mvlgamma_p_3', 'mvlgamma.mvlgamma_p_5', 'nan_to_num', 'nanmean',
    'nansum', 'narrow', 'narrow_copy', 'ne', 'neg', 'new_empty', 'new_empty_strided', 'new_full', 'new_ones',
    'new_zeros', 'nextafter', 'norm.fro', 'norm.inf', 'normal.in_place', 'normal.number_mean', 'ones_like', 'outer',
    'permute', 'permute_copy', 'positive', 'pow', 'prod', 'rad2deg', 'randint', 'randn', 'real', 'reciprocal',
    'remainder', 'renorm', 'repeat', 'repeat_interleave', 'reshape', 'reshape_as', 'resize_', 'resize_as_',
    'resolve_conj', 'resolve_neg', 'rsqrt', 'rsub', 'scalar_tensor', 'select', 'sgn', 'short', 'sigmoid', 'sign',
    'signbit', 'sin', 'sinc', 'sinh', 'slice', 'softmax', 'softmax.with_dtype', 'sort', 'split', 'split.list_args',
    'split_with_sizes_copy', 'sqrt', 'square', 'squeeze', 'squeeze.multiple', 'squeeze_copy', 'stack', 'std',
    'std.unbiased', 'std_mean', 'std_mean.unbiased', 'sub', 'sum', 'sum_to_size', 't', 't_copy', 'tan', 'tanh',
    'tensordot', 'tile', 'torch.ops.aten._safe_softmax.default', 'trace', 'transpose', 'transpose_copy', 'trapezoid',
    'trapz', 'tril_indices', 'triu_indices', 'true_divide', 'trunc', 'unbind', 'unbind_copy', 'unflatten', 'unfold',
    'unfold_copy', 'unique', 'unravel_index', 'unsafe_chunk', 'unsafe_split', 'unsqueeze', 'unsqueeze_copy', 'var',
    'var.unbiased', 'var_mean', 'var_mean.unbiased', 'vdot', 'view', 'view_as', 'view_copy', 'vsplit', 'vstack',
    'where', 'xlogy', 'zero_', 'zeros_like',
]

# the default tier: a few entries across the families (elementwise, reductions, matmul, views, whole-array)
FAST = ["exp", "sum", "matmul", "t"]


def _to_dask(t):
    return t.to("dask")


@pytest.fixture(autouse=True)
def _sync():
    with dask.config.set(scheduler="sync"):
        yield


def _run(name):
    failures = opinfo_device.run_device_opinfo([name], to_device=_to_dask, device="dask", check_strides=False,
                                               samples=2)
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("name", FAST)
def test_opinfo_on_dask(name):
    _run(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(PASSING) - set(FAST)))
def test_opinfo_on_dask_all(name):
    _run(name)
