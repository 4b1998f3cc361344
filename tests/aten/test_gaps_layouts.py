"""Layouts of results PyTorch does not let TensorIterator lay out, compared with PyTorch: composites over
empty_like (complex abs, _conj_physical, deg2rad/rad2deg: an empty input keeps its exact strides, as every
empty tensor counts as dense), complex-to-real results copied into a row-major one (angle, abs into a
real out=), cholesky of an empty input (empty_like, contiguous, before any check), cholesky_inverse's
column-major out=, complex()/polar() (TensorIterator's layout over both inputs), mvlgamma's row-major
out=; and complex pow's values at a zero base (exp(y log x), 0 ** 0 NaN for a tensor exponent)."""
import warnings

import numpy as np
import pytest

import onion

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

LAYOUTS = {
    "empty_stepped": lambda lib, dt, dev: lib.ones(0, 3, 6, dtype=dt, device=dev)[..., ::2],
    "empty_permuted": lambda lib, dt, dev: lib.ones(6, 3, 0, dtype=dt, device=dev).permute(2, 0, 1),
    "empty_t": lambda lib, dt, dev: lib.ones(0, 5, dtype=dt, device=dev).t(),
    "transposed": lambda lib, dt, dev: lib.ones(4, 5, dtype=dt, device=dev).t(),
    "permuted": lambda lib, dt, dev: lib.ones(2, 3, 4, dtype=dt, device=dev).permute(1, 2, 0),
    "stepped": lambda lib, dt, dev: lib.ones(4, 6, dtype=dt, device=dev)[:, ::2],
}

UNARY = {   # name -> dtypes (names) it is called with
    "abs": ("complex64", "float32"),
    "conj_physical": ("complex64", "float32"),
    "_conj_physical": ("complex64", "float32"),
    "deg2rad": ("float32", "int64"),
    "rad2deg": ("float32",),
    "angle": ("complex64", "float32"),
    "nan_to_num": ("float32", "int64"),
    "empty_like": ("float32",),
}


def _geometry(r):
    return tuple(r.shape), tuple(st for st, n in zip(r.stride(), r.shape) if n > 1)


def _call(lib, name, x, out_dtype=None):
    fn = getattr(lib, name)
    if out_dtype is None:
        return _geometry(fn(x))
    out = lib.empty(0, dtype=getattr(lib, out_dtype))
    r = fn(x, out=out)
    assert r is out
    return _geometry(out)


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_result_strides(name, layout):
    for dtn in UNARY[name]:
        got = {}
        for lib in (onion, torch):
            x = LAYOUTS[layout](lib, getattr(lib, dtn), "cpu")
            got[lib.__name__] = _call(lib, name, x)
        assert got["onion"] == got["torch"], (name, dtn)


OUT_CASES = [("abs", "complex64", "float32"), ("abs", "complex64", "complex64"), ("angle", "complex64", "float32"),
             ("angle", "float32", "float32"), ("deg2rad", "float32", "float32"), ("nan_to_num", "int64", "int64"),
             ("conj_physical", "complex64", "complex64")]


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("name,dtn,out_dtn", OUT_CASES)
def test_resized_out_strides(name, dtn, out_dtn, layout):
    got = {}
    for lib in (onion, torch):
        x = LAYOUTS[layout](lib, getattr(lib, dtn), "cpu")
        got[lib.__name__] = _call(lib, name, x, out_dtn)
    assert got["onion"] == got["torch"]


@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_meta_like_follows_pytorchs_meta(device):
    """On Meta PyTorch runs its references for empty_like/nan_to_num: another layout than on CPU."""
    for layout in ("empty_stepped", "empty_permuted", "transposed", "permuted"):
        got = {}
        for lib in (onion, torch):
            x = LAYOUTS[layout](lib, lib.float32, device)
            got[lib.__name__] = [_geometry(getattr(lib, n)(x)) for n in ("empty_like", "nan_to_num", "abs",
                                                                      "zeros_like")]
        assert got["onion"] == got["torch"], layout


MATRICES = {
    "empty_batch": lambda lib, dev: lib.ones(0, 3, 3, dtype=lib.float64, device=dev),
    "empty_stepped": lambda lib, dev: lib.ones(0, 3, 6, dtype=lib.float64, device=dev)[..., ::2],
    "empty_nonsquare": lambda lib, dev: lib.ones(0, 6, 3, dtype=lib.float64, device=dev),
    "empty_1d": lambda lib, dev: lib.ones(0, dtype=lib.float64, device=dev),
    "empty_int": lambda lib, dev: lib.ones(0, 3, dtype=lib.int64, device=dev),
    "spd": lambda lib, dev: (lib.eye(3, dtype=lib.float64, device=dev) * 2).expand(2, 3, 3).contiguous(),
}


def _outcome(fn, device="cpu"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = fn()
        except Exception as e:      # noqa: BLE001 - the exception type is what is compared
            # (on Meta PyTorch's Python checks raise AssertionError where its C++ ones raise RuntimeError)
            return "error" if device == "meta" else type(e).__name__.lstrip("_")
    return tuple(r.shape), tuple(r.stride()), str(r.dtype).split(".")[-1]


@pytest.mark.parametrize("device", ["cpu", "meta"])
@pytest.mark.parametrize("case", sorted(MATRICES))
def test_cholesky_family_geometry(case, device):
    got = {}
    for lib in (onion, torch):
        a = MATRICES[case](lib, device)
        res = [_outcome(lambda: lib.cholesky(a), device), _outcome(lambda: lib.cholesky_inverse(a), device)]
        for fn in (lib.cholesky, lib.cholesky_inverse):
            out = lib.empty(0, dtype=a.dtype, device=device)
            res.append(_outcome(lambda: fn(a, out=out), device))
        got[lib.__name__] = res
    assert got["onion"] == got["torch"]


@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_complex_and_polar_strides(device):
    def inputs(lib):
        t = lib.ones(3, 4, dtype=lib.float64, device=device).t()
        c = lib.ones(4, 3, dtype=lib.float64, device=device)
        e = lib.ones(0, 3, 6, dtype=lib.float64, device=device)[..., ::2]
        v = lib.ones(3, dtype=lib.float64, device=device)
        return [(t, t), (t, c), (c, t), (e, e), (t, v)]
    got = {}
    for lib in (onion, torch):
        res = []
        for a, b in inputs(lib):
            for fn in (lib.complex, lib.polar):
                res.append(fn(a, b).stride())
                out = lib.empty(0, dtype=lib.complex128, device=device)
                fn(a, b, out=out)
                res.append(out.stride())
        got[lib.__name__] = res
    assert got["onion"] == got["torch"]


def test_complex_gradient_strides():
    got = {}
    for lib in (onion, torch):
        x = lib.ones(3, 4, dtype=lib.float64).t().requires_grad_()
        y = lib.ones(4, 3, dtype=lib.float64).requires_grad_()
        g = lib.ones(3, 4, dtype=lib.complex128).t()
        gx, gy = lib.autograd.grad(lib.complex(x, y), (x, y), g)
        got[lib.__name__] = (gx.stride(), gy.stride(), gx.storage_offset(), gy.storage_offset())
    assert got["onion"] == got["torch"]


def test_mvlgamma_out_is_row_major():
    got = {}
    for lib in (onion, torch):
        x = lib.full((4, 5), 3.0, dtype=lib.float64).t()
        out = lib.empty(0, dtype=lib.float64)
        lib.mvlgamma(x, 3, out=out)
        got[lib.__name__] = (out.stride(), out.tolist())
    assert got["onion"][0] == got["torch"][0]
    np.testing.assert_allclose(got["onion"][1], got["torch"][1], rtol=1e-12)


POW_CASES = {
    "tensor_0d_exponent": lambda lib, c: lib.pow(lib.zeros(3, dtype=c), lib.tensor(0j, dtype=c)),
    "both_0d": lambda lib, c: lib.pow(lib.tensor(0j, dtype=c), lib.tensor(0j, dtype=c)),
    "tensor_exponents": lambda lib, c: lib.pow(lib.zeros(14, dtype=c), lib.tensor(
        [0, 1, 2, -1, -2, 0.5, -0.5, 1j, -1j, 1 + 1j, -1 + 1j, 2 - 3j, 0j, -0.0 + 0j], dtype=c)),
    "number_exponent_0": lambda lib, c: lib.pow(lib.zeros(3, dtype=c), 0j),
    "number_exponent_1": lambda lib, c: lib.pow(lib.tensor([0j, 1j, 2 + 1j], dtype=c), 1),
    "number_exponent_neg": lambda lib, c: lib.pow(lib.tensor([0j, 4 + 0j], dtype=c), -0.5),
    "number_base": lambda lib, c: lib.pow(0j, lib.zeros(3, dtype=c)),
    "float_tensor_exponent": lambda lib, c: lib.pow(lib.zeros(3, dtype=c), lib.tensor(0.0, dtype=lib.float64)),
    "inplace": lambda lib, c: lib.zeros(3, dtype=c).pow_(lib.tensor(0j, dtype=c)),
    "inplace_number": lambda lib, c: lib.zeros(3, dtype=c).pow_(0),
}


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("case", sorted(POW_CASES))
def test_complex_pow_at_zero(case, dtype):
    r_o = POW_CASES[case](onion, getattr(onion, dtype))
    r_t = POW_CASES[case](torch, getattr(torch, dtype))
    a = np.asarray(r_o.tolist(), dtype=np.complex128)
    b = np.asarray(r_t.tolist(), dtype=np.complex128)
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6, equal_nan=True)
    # NaN/inf in the same parts, not only somewhere in the number
    assert np.array_equal(np.isnan(a.real), np.isnan(b.real)) and np.array_equal(np.isinf(a.real), np.isinf(b.real))


def test_meta_zero_dim_tensor_with_number_exponent():
    """A 0-d Meta tensor has no value to read as a Scalar: the Tensor-Scalar overload takes the call."""
    x = onion.ones((), dtype=onion.complex128, device="meta")
    xt = torch.ones((), dtype=torch.complex128, device="meta")
    assert onion.pow(x, 1 + 2j).shape == xt.pow(1 + 2j).shape == ()
    assert str(onion.pow(x, 2.5).dtype).split(".")[-1] == str(torch.pow(xt, 2.5).dtype).split(".")[-1]


@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 4), (0, 3, 4)])
def test_lu_solve_gradient_is_column_major(shape):
    """PyTorch's gradient for B is itself a LAPACK solve: each matrix column-major."""
    got = {}
    for lib in (onion, torch):
        a = lib.tensor([[4.0, 1, 0], [1, 3, 1], [0, 1, 2]], dtype=lib.float64)
        lu, piv, _ = lib.linalg.lu_factor_ex(a)
        b = lib.arange(float(np.prod(shape)), dtype=lib.float64).reshape(shape).requires_grad_()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x = lib.lu_solve(b, lu, piv)
        g, = lib.autograd.grad(x, b, lib.ones(shape, dtype=lib.float64))
        got[lib.__name__] = (g.stride(), np.array(g.tolist()))
    assert got["onion"][0] == got["torch"][0]
    np.testing.assert_allclose(got["onion"][1], got["torch"][1], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "nearest", "midpoint"])
def test_quantile_gradient_for_q(name, interpolation):
    """ATen's composite is differentiable in q through the linear weights only (None otherwise)."""
    nan = float("nan")
    for data in ([[1.0, 5.0, 3.0, 0.5], [2.0, 7.0, -1.0, 4.0]], [[1.0, nan, 3.0, 0.5], [2.0, 7.0, -1.0, 4.0], [nan] * 4]):
        got = {}
        for lib in (onion, torch):
            x = lib.tensor(data, dtype=lib.float64, requires_grad=True)
            q = lib.tensor([0.0, 0.3, 0.75, 1.0], dtype=lib.float64, requires_grad=True)
            r = getattr(lib, name)(x, q, dim=1, interpolation=interpolation)
            gx, gq = lib.autograd.grad(r, (x, q), lib.ones(r.shape, dtype=lib.float64), allow_unused=True)
            got[lib.__name__] = (None if gq is None else np.array(gq.tolist()), np.array(gx.tolist()))
        (oq, ox), (tq, tx) = got["onion"], got["torch"]
        assert (oq is None) == (tq is None)
        if tq is not None:
            np.testing.assert_allclose(oq, tq, rtol=1e-12, equal_nan=True)
        if nan not in data[0]:      # (the gradient for x where rows hold NaN is another matter)
            np.testing.assert_allclose(ox, tx, rtol=1e-12)


SPACES = [(-2.0, 1, 50), (4.3, -3, 50), (0, 10, 100), (-3, 7, 1000), (0.1, 1, 5000), (1e4, -1e4, 70000), (1, 2, 2)]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("name", ["linspace", "logspace"])
def test_low_precision_spaces_bit_exact(name, dtype):
    """ATen computes Half/BFloat16 linspace in the dtype (each operation rounded), and logspace's powers
    in double from dtype-rounded bounds: onion's values are the same bits."""
    for start, end, steps in SPACES:
        if name == "logspace":
            start, end = start / 1000 if abs(start) > 100 else start, end / 1000 if abs(end) > 100 else end
        if name == "linspace" and dtype == "float32":
            continue
        t = getattr(torch, name)(start, end, steps, dtype=getattr(torch, dtype)).double().numpy()
        o = np.array(getattr(onion, name)(start, end, steps, dtype=getattr(onion, dtype)).double().tolist())
        assert np.array_equal(o, t, equal_nan=True), (start, end, steps)


COPIES = {
    "select_copy": lambda lib: lib.select_copy(lib.arange(6.0).reshape(2, 3).t(), 1, 0),
    "select_copy_negative": lambda lib: lib.select_copy(lib.arange(6.0).reshape(2, 3), 0, -1),
    "detach_copy": lambda lib: lib.detach_copy(lib.arange(6.0).reshape(2, 3).t()),
    "split_copy": lambda lib: lib.split_copy(lib.arange(5.0), 2),
    "view_as_real_copy": lambda lib: lib.view_as_real_copy(lib.tensor([1 + 2j, 3 - 1j])),
    "view_as_complex_copy": lambda lib: lib.view_as_complex_copy(lib.ones(2, 2)),
    "conj_copy": lambda lib: lib._conj_copy(lib.tensor([1 + 2j, 3 - 1j])),
    "conj_copy_of_conj": lambda lib: lib._conj_copy(lib.tensor([1 + 2j, 3 - 1j]).conj()),
    "neg_view_copy": lambda lib: lib._neg_view_copy(lib.tensor([1 + 2j, 3 - 1j])),
}


def _described(r):
    if isinstance(r, (list, tuple)):
        return [_described(v) for v in r]
    return (tuple(r.shape), r.stride(), str(r.dtype).split(".")[-1], r.tolist(), r.is_conj(), r.is_neg())


@pytest.mark.parametrize("case", sorted(COPIES))
def test_view_copies(case):
    assert _described(COPIES[case](onion)) == _described(COPIES[case](torch))


def test_view_copies_are_composite_explicit_non_functional():
    for name in ("aten::select_copy.int", "aten::view_copy", "aten::t_copy", "aten::split_copy.Tensor",
                 "aten::narrow_copy", "aten::_conj_copy"):
        assert "CompositeExplicitAutogradNonFunctional[alias]" in onion._C._dispatch_dump(name), name
    for name in ("aten::select_copy.int_out", "aten::view_copy.out"):
        assert "CompositeExplicitAutograd[alias]" in onion._C._dispatch_dump(name), name


def test_view_copy_gradients_and_outs():
    got = {}
    for lib in (onion, torch):
        a = lib.arange(6.0, dtype=lib.float64).reshape(3, 2).requires_grad_()
        g1, = lib.autograd.grad((lib.select_copy(a, 1, 1) ** 2).sum(), a)
        g2, = lib.autograd.grad(sum((p ** 2).sum() for p in lib.split_copy(a, 2, 0)), a)
        c = lib.tensor([1 + 2j, 3 - 1j], dtype=lib.complex128, requires_grad=True)
        g3, = lib.autograd.grad((lib.view_as_real_copy(c) ** 2).sum(), c)
        res = [g1.tolist(), g2.tolist(), g3.tolist(), lib.detach_copy(a).requires_grad]
        try:
            lib.autograd.grad(lib.detach_copy(a).sum(), a)
        except RuntimeError as e:
            res.append(str(e))
        out = lib.empty(0)
        lib.select_copy(lib.arange(6.0).reshape(2, 3).t(), 1, 0, out=out)
        res.append((out.tolist(), out.stride()))
        try:
            lib.select_copy(lib.ones(3), 0, 1, out=lib.empty(0, dtype=lib.float64))
        except RuntimeError as e:
            res.append(str(e))
        outs = [lib.empty(2, dtype=lib.float64), lib.empty(2, dtype=lib.float64), lib.empty(1, dtype=lib.float64)]
        lib.split_copy(lib.arange(5.0), 2, out=outs)     # copied into as they are (another dtype too)
        res.append([o.tolist() for o in outs])
        with pytest.raises(RuntimeError, match="must match the size"):
            lib.split_copy(lib.arange(5.0), 2, out=[lib.empty(0), lib.empty(0), lib.empty(0)])
        got[lib.__name__] = res
    assert got["onion"] == got["torch"]


def _uint_cases(lib, dt):
    x = lib.tensor([1, 2, 3], dtype=dt)
    m = lib.ones(2, 2, dtype=dt)
    i0 = lib.tensor([0])
    return {
        # PyTorch runs these for uint16/32/64
        "eq": lambda: x == x, "ne_scalar": lambda: x != 2, "mul": lambda: x * x, "mul_scalar": lambda: x * 2,
        "bitwise_and": lambda: x & x, "bitwise_or": lambda: x | 1, "bitwise_xor": lambda: x ^ x,
        "ceil": lambda: x.ceil(), "floor": lambda: x.floor(), "round": lambda: x.round(), "trunc": lambda: x.trunc(),
        "isnan": lambda: x.isnan(), "isposinf": lambda: x.isposinf(), "signbit": lambda: x.signbit(),
        "nan_to_num": lambda: x.nan_to_num(), "isclose": lambda: lib.isclose(x, x), "outer": lambda: lib.outer(x, x),
        "sort": lambda: x.sort()[0], "sum": lambda: x.sum(), "cumsum": lambda: x.cumsum(0),
        "repeat_interleave": lambda: x.repeat_interleave(2), "index_select_2d": lambda: m.index_select(0, i0),
        "randint": lambda: lib.randint(0, 5, (3,), dtype=dt), "clone": lambda: x.clone(),
        # and refuses these (NotImplementedError naming the kernel)
        "arange": lambda: lib.arange(3, dtype=dt), "arange_out": lambda: lib.arange(0, 3, out=lib.empty(0, dtype=dt)),
        "linspace": lambda: lib.linspace(0, 1, 3, dtype=dt), "logspace": lambda: lib.logspace(0, 1, 3, dtype=dt),
        "randperm": lambda: lib.randperm(3, dtype=dt), "max": lambda: x.max(), "min": lambda: x.min(),
        "max_dim": lambda: x.max(0)[0], "min_dim": lambda: x.min(0)[0], "amax": lambda: x.amax(),
        "amin": lambda: x.amin(), "aminmax": lambda: x.aminmax()[0], "argmax": lambda: x.argmax(),
        "argmin": lambda: x.argmin(), "nonzero": lambda: x.nonzero(), "count_nonzero": lambda: x.count_nonzero(),
        "bincount": lambda: x.bincount(), "searchsorted": lambda: lib.searchsorted(x, x), "isin": lambda: lib.isin(x, x),
        "kthvalue": lambda: x.kthvalue(1)[0], "median": lambda: x.median(), "median_dim": lambda: x.median(0)[0],
        "nanmedian": lambda: x.nanmedian(), "mode": lambda: x.mode()[0], "topk": lambda: x.topk(1)[0],
        "cummax": lambda: x.cummax(0)[0], "dot": lambda: x.dot(x), "mm": lambda: m.mm(m), "trace": lambda: m.trace(),
        "cross": lambda: lib.cross(x, x, dim=0), "tril": lambda: m.tril(), "triu": lambda: m.triu(),
        "index_select_1d": lambda: x.index_select(0, i0), "take": lambda: x.take(i0),
        "index_fill": lambda: x.index_fill(0, i0, 1), "index_add": lambda: x.index_add(0, i0, x[1:2].clone()),
        "index_put": lambda: x.clone().index_put_((i0,), lib.tensor([7], dtype=dt)),
    }


@pytest.mark.parametrize("dtype", ["uint16", "uint32", "uint64"])
def test_barebones_unsigned_support_matches(dtype):
    got = {}
    for lib in (onion, torch):
        res = {}
        for name, f in _uint_cases(lib, getattr(lib, dtype)).items():
            if name == "randint":
                lib.manual_seed(0)
            try:
                r = f()
                res[name] = ("ok", str(r.dtype).split(".")[-1], r.tolist())
            except NotImplementedError as e:
                res[name] = ("NotImplementedError", str(e))
        got[lib.__name__] = res
    assert got["onion"] == got["torch"]


def test_resize_growing_storage_moves_every_view():
    """PyTorch grows the storage itself: views and storages handed out see the new memory."""
    got = {}
    for lib in (onion, torch):
        res = []
        a = lib.arange(4.0)
        v = a[1:3]
        st = a.untyped_storage()
        a.resize_(10)
        a[:4] = lib.arange(4.0) * 10
        res.append((v.tolist(), v.storage_offset(), v.untyped_storage().nbytes(), st.nbytes(),
                    a.untyped_storage().data_ptr() == v.untyped_storage().data_ptr()))
        v.fill_(7)
        res.append(a[:4].tolist())
        c = lib.arange(4.0)
        d = c[2:]
        d.resize_(5)
        d.fill_(1)
        res.append((c.tolist(), d.tolist(), c.untyped_storage().nbytes()))
        e = lib.arange(4.0)
        f = e.view(2, 2)
        e.resize_(2)
        e.resize_(8)
        e[:] = 3
        res.append((f.tolist(), e.untyped_storage().nbytes()))
        got[lib.__name__] = res
    assert got["onion"] == got["torch"]


def _conj_view_cases(lib):
    c64 = lib.complex64
    weights = lib.tensor([2 + 1j, 1, 1j, 3], dtype=c64)

    def copy_into_conj():
        w = lib.tensor([1 + 2j, 3 - 1j], requires_grad=True)
        y = lib.zeros(2, dtype=c64)
        y.conj().copy_(w)
        return y, lib.autograd.grad((y * weights[:2]).real.sum(), w)[0]

    def mul_into_conj():
        w = lib.tensor([1 + 2j, 3 - 1j], requires_grad=True)
        y = lib.ones(2, dtype=c64)
        y.conj().mul_(w)
        return y, lib.autograd.grad((y * weights[:2]).real.sum(), w)[0]

    def setitem_conj():
        w = lib.tensor([1 + 2j, 3 - 1j], requires_grad=True)
        y = lib.zeros(2, dtype=c64)
        y.conj()[0] = w[1]
        return y, lib.autograd.grad((y * weights[:2]).real.sum(), w)[0]

    def slice_conj_through_view():
        w = lib.tensor([1 + 2j, 3 - 1j, 2j], requires_grad=True)
        y = lib.zeros(4, dtype=c64)
        c = y[1:].conj()
        c.mul_(2).add_(w)
        out = (y * weights).real.sum() + (c * 1j).imag.sum()
        return y, lib.autograd.grad(out, w)[0]

    def neg_view():
        w = lib.tensor([1 + 2j, 3 - 1j], requires_grad=True)
        y = lib.zeros(2, dtype=c64)
        c = lib._neg_view(y)
        c.add_(w)
        return y, lib.autograd.grad((y * weights[:2]).real.sum() + (c * c).real.sum(), w)[0]
    return {"copy_into_conj": copy_into_conj, "mul_into_conj": mul_into_conj, "setitem_conj": setitem_conj,
            "slice_conj_through_view": slice_conj_through_view, "neg_view": neg_view}


@pytest.mark.parametrize("case", sorted(_conj_view_cases(torch)))
def test_inplace_through_conj_view_gradients(case):
    y_o, g_o = _conj_view_cases(onion)[case]()
    y_t, g_t = _conj_view_cases(torch)[case]()
    np.testing.assert_allclose(np.array(y_o.tolist()), np.array(y_t.tolist()), rtol=1e-6)
    np.testing.assert_allclose(np.array(g_o.tolist()), np.array(g_t.tolist()), rtol=1e-6)


def test_pow_scalar_exponent_lays_out_as_a_unary_op():
    """pow.Tensor_Scalar (square) builds a unary TensorIterator: an empty input's odd strides do not reorder it."""
    got = {}
    for lib in (onion, torch):
        x = lib.ones(6, 3, 0, dtype=lib.complex128).permute(2, 0, 1)
        y = lib.ones(3, 0, 1, 0, dtype=lib.float64)
        out = lib.empty(0, dtype=lib.complex128)
        lib.pow(x, 2, out=out)
        got[lib.__name__] = [lib.square(x).stride(), (y ** 3).stride(), out.stride(),
                             (lib.ones(4, 5).t() ** 2).stride(), (x + 1).stride()]
    assert got["onion"] == got["torch"]
