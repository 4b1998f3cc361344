"""Advanced indexing and the indexing operators against PyTorch.

The cases follow the sections of PyTorch's test/test_indexing.py (integer-array indexing, bool and
byte masks, mixing with slices / None / ``...``, where the indexed dims land, broadcasting of index
tensors and of assigned values, accumulate, errors, autograd, the NumPy-compatibility cases) and the
examples of PyTorch's docs for nonzero, masked_select, take, put_, isin and unravel_index, each run
on onion and torch and compared (values, dtype, shape, strides; exception type and text).
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from conftest import assert_close, onion, outcome, torch
from conftest import check_same as _check_same

pytestmark = pytest.mark.oracle


def check_same(fo, ft, msg=False, **kw):
    """conftest's check_same, tuples of tensors compared one by one."""
    ro, rt = outcome(fo), outcome(ft)
    if ro[0] == rt[0] == "ok" and isinstance(rt[1], tuple):
        assert isinstance(ro[1], tuple) and len(ro[1]) == len(rt[1]), (ro[1], rt[1])
        for a, b in zip(ro[1], rt[1]):
            assert_close(a, b, **kw)
        return
    _check_same(fo, ft, msg, **kw)


def pair(shape=(3, 4, 5), dtype="float32", seed=0, layout="contiguous"):
    rng = np.random.default_rng(seed)
    a = rng.integers(-9, 10, shape).astype(dtype)
    o, t = onion.tensor(a), torch.tensor(a)
    if layout == "transposed":
        o, t = o.transpose(0, -1), t.transpose(0, -1)
    elif layout == "stepped":
        o, t = o[..., ::2], t[..., ::2]
    return o, t


def both(key):
    """A key for onion and the same key for torch (tensors converted, lists and the rest kept)."""
    def conv(k, lib):
        if isinstance(k, np.ndarray):
            return lib.tensor(k)
        if isinstance(k, tuple):
            return tuple(conv(x, lib) for x in k)
        return k
    return conv(key, onion), conv(key, torch)


L = np.array


def _has_mask(key):
    items = key if isinstance(key, tuple) else (key,)
    return any((isinstance(k, np.ndarray) and k.dtype in (np.bool_, np.uint8) and k.ndim)
               or (isinstance(k, list) and k and isinstance(k[0], bool)) for k in items)


# ---- getitem: the cases of test_indexing's test_index / test_advancedindex / TestNumpy ------------
GET_KEYS = [
    L([0, 2]), L([[0, 1], [2, 0]]), L([-1, 0, -3]), L([], dtype=np.int64),
    (L([0, 2]), L([1, 3])), (L([[0], [2]]), L([1, 3])),               # broadcast index tensors
    (slice(None), L([0, 3])), (Ellipsis, L([4, 0])), (1, L([0, 3])),   # adjacent after basic parts
    (L([0, 2]), slice(None), L([1, 4])),                              # separated: advanced dims in front
    (L([0, 2]), 1, L([1, 4])),                                        # an int between splits them too
    (None, L([0, 1]), None, L([2, 3])), (slice(1, 3), L([[0, 1]]), slice(None, None, 2)),
    L([True, False, True]), (slice(None), L([True, False, True, True])),
    L([[True, False, True, False]] * 3), (L([[True] * 4] * 3), L([1, 0, 4])),
    (L([[True] * 4] * 3), 0), (Ellipsis, L([True, False] * 2 + [True])),
    L([True, False, True], dtype=np.uint8),
    (L(1, dtype=np.int64),), (0, L(2, dtype=np.int64), L([1, 2])),  # 0-dim integer tensors select
    (L(True),), (L(False),), (Ellipsis, L(True)),                      # 0-dim bool tensors
    True, False, (None, True, Ellipsis, False), (0, True, 1),          # Python bools
    [0, 2], [[0, 1], [1, 2]], [True, False, True], (slice(None), [0, 0, 3]), ([0, 1], [2, 3], [0, 4]),
    ([[0]], slice(None), [1, 2]), (L([0, 2], dtype=np.int32),), ([0.7, 1.2],),
]


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "stepped"])
@pytest.mark.parametrize("key", GET_KEYS, ids=[f"k{i}" for i in range(len(GET_KEYS))])
def test_getitem(key, layout):
    o, t = pair(layout=layout)
    if layout == "transposed" and _has_mask(key):
        pytest.skip("masks are shaped for the (3, 4, 5) tensor")
    ko, kt = both(key)
    check_same(lambda: o[ko], lambda: t[kt], msg=True)


def test_getitem_sequence_as_tuple_warns():
    o, t = pair()
    with warnings.catch_warnings(record=True) as wo:
        warnings.simplefilter("always")
        ro = o[[[0, 1], [1, 2]]]
    with warnings.catch_warnings(record=True) as wt:
        warnings.simplefilter("always")
        rt = t[[[0, 1], [1, 2]]]
    assert_close(ro, rt)
    assert [str(w.message) for w in wo] == [str(w.message).split(" (Triggered")[0] for w in wt]


@pytest.mark.parametrize("key", [
    L([0, 3]), (slice(None), L([0, 5])), (L([0, 1]), L([0, 1, 2])), L([0.0]), L([True, False]),
    (Ellipsis, L([True, False, True])), (0, 0, 0, 0), (L([0]), L([0]), L([0]), L([0])), 0.0, "a",
    (L([0]), slice(None), L([9])), (L([0]), slice(None), L([-9])), (L([[True] * 4] * 3), 0, 0),
])
def test_getitem_errors(key):
    o, t = pair()
    ko, kt = both(key)
    check_same(lambda: o[ko], lambda: t[kt], msg=True)


def test_size_zero_dims():
    for shape, key in [((2, 0), (slice(None), L([0]))), ((2, 0), L([0])), ((0, 3), (slice(None), L([1]))),
                       ((0, 3), L([], dtype=np.int64)), ((2, 0), (L([], dtype=np.int64), L([], dtype=np.int64)))]:
        o, t = onion.zeros(shape), torch.zeros(shape)
        ko, kt = both(key)
        check_same(lambda: o[ko], lambda: t[kt], msg=True)


def test_every_result_is_a_copy_and_views_stay_views():
    o, _ = pair()
    r = o[L([0, 1]).tolist()]
    r[0, 0, 0] = 100
    assert o[0, 0, 0].item() != 100
    v = o[1:, None, ..., 0]                 # basic indexing only: a view
    v[0, 0, 0] = 77
    assert o[1, 0, 0].item() == 77


# ---- setitem: index_put_ under the hood (test_advancedindex's setting, test_index_put_* ) ------------
SET_CASES = [
    (L([0, 2]), 1.5), (L([0, 2]), "row"), (L([[0, 1]]), "row"), ((L([0, 2]), L([1, 3])), "vec2"),
    ((slice(None), L([0, 3])), "col"), ((L([0, 2]), slice(None), L([1, 4])), "sep"),
    (L([True, False, True]), 7), (L([[True, False, True, False]] * 3), -1.0),
    (L([[True, False, True, False]] * 3), "masked"), ((Ellipsis, L([True, False] * 2 + [True])), 3),
    (L([0, 0, 1]), "dup"), ([0, 2], 2), (True, 5), (False, 5), ((None, L([1])), 4), (L(1, dtype=np.int64), 9),
    ((L(True),), 6), (L([0, 2]), "lead1"), (L([True, False, True]), "one_elem_long"),
]


def _value(spec, lib, t_shape):
    if not isinstance(spec, str):
        return spec
    shapes = {"row": (4, 5), "vec2": (2, 5), "col": (3, 2, 5), "sep": (2, 4), "masked": (6, 5), "dup": (3, 4, 5),
              "lead1": (1, 1, 4, 5)}
    if spec == "one_elem_long":
        return lib.tensor([3])
    shape = shapes[spec]
    return lib.arange(float(np.prod(shape))).reshape(shape)


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("case", SET_CASES, ids=[f"s{i}" for i in range(len(SET_CASES))])
def test_setitem(case, layout):
    key, spec = case
    if layout == "transposed" and spec not in (1.5, 2, 5, 9, 4):
        pytest.skip("values and masks are shaped for the contiguous (3, 4, 5) tensor")
    o, t = pair(layout=layout)
    ko, kt = both(key)
    vo, vt = _value(spec, onion, None), _value(spec, torch, None)

    def set_o():
        o[ko] = vo
        return o

    def set_t():
        t[kt] = vt
        return t
    check_same(set_o, set_t, msg=True)


@pytest.mark.parametrize("value", ["long_tensor", "bad_shape", "list", "too_big", "complex"])
def test_setitem_errors_write_nothing(value):
    o, t = pair()
    before = o.clone()
    v = {"long_tensor": lambda lib: lib.tensor([1, 2, 3, 4, 5]), "bad_shape": lambda lib: lib.ones(3, 5),
         "list": lambda lib: [1.0, 2.0], "too_big": lambda lib: 1e300, "complex": lambda lib: 1 + 2j}[value]

    def set_o():
        o[onion.tensor([0, 1])] = v(onion)

    def set_t():
        t[torch.tensor([0, 1])] = v(torch)
    check_same(set_o, set_t, msg=True)
    assert_close(o, torch.tensor(before.numpy()))


def test_setitem_out_of_bounds_writes_nothing():
    o, t = pair()
    before = o.clone()
    ro = outcome(lambda: o.__setitem__((onion.tensor([0, 1]), onion.tensor([0, 9])), 1.0))
    rt = outcome(lambda: t.__setitem__((torch.tensor([0, 1]), torch.tensor([0, 9])), 1.0))
    assert ro[0] == rt[0] == "err" and str(ro[1]) == str(rt[1]) and type(ro[1]) is type(rt[1])
    assert np.array_equal(o.numpy(), before.numpy())


def test_augmented_assignment_does_not_accumulate():
    o, t = onion.zeros(5), torch.zeros(5)
    io, it = onion.tensor([0, 0, 1]), torch.tensor([0, 0, 1])
    o[io] += 1
    t[it] += 1
    assert_close(o, t)


def test_version_counter_bumps_once():
    for key in (L([0]), L([True, False, True]), (slice(None), L([1, 2]))):
        o, t = pair()
        ko, kt = both(key)
        vo, vt = o._version, t._version
        o[ko] = 1.0
        t[kt] = 1.0
        assert o._version - vo == t._version - vt


# ---- index_put_ and the operators directly -----------------------------------------------------------
@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "float16", "complex64", "bool"])
def test_index_put_accumulate_duplicates(dtype, accumulate):
    o, t = pair((6, 3), dtype=dtype)
    idx = L([0, 5, 0, 2, 5, 5])
    vals = np.arange(18).reshape(6, 3).astype(dtype)
    check_same(lambda: o.index_put_((onion.tensor(idx),), onion.tensor(vals), accumulate),
               lambda: t.index_put_((torch.tensor(idx),), torch.tensor(vals), accumulate))


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "complex64"])
def test_index_put_accumulate_negative_duplicates_1d(dtype):
    """The 1-D road (one index into a contiguous vector): negative positions wrap, repeats all add."""
    o, t = onion.zeros(10, dtype=getattr(onion, dtype)), torch.zeros(10, dtype=getattr(torch, dtype))
    idx = L([0, -1, -1, 3, -10, 9, 0])
    vals = (np.arange(7) + 0.5).astype(dtype)
    check_same(lambda: o.index_put_((onion.tensor(idx),), onion.tensor(vals), True),
               lambda: t.index_put_((torch.tensor(idx),), torch.tensor(vals), True))


@pytest.mark.parametrize("layout", ["transposed", "stepped"])
def test_index_put_accumulate_non_contiguous(layout):
    o, t = pair(layout=layout)
    idx = L([1, 1, 0])
    shape = tuple(t[torch.tensor(idx)].shape)
    vals = np.ones(shape, np.float32)
    check_same(lambda: o.index_put_((onion.tensor(idx),), onion.tensor(vals), True),
               lambda: t.index_put_((torch.tensor(idx),), torch.tensor(vals), True))
    check_same(lambda: onion.ops.aten.index_put_(o, [None, onion.tensor(idx)], onion.tensor(1.0), True),
               lambda: torch.ops.aten.index_put_(t, [None, torch.tensor(idx)], torch.tensor(1.0), True))


def test_index_put_accumulate_expanded_values():
    o, t = onion.zeros(5, 2), torch.zeros(5, 2)
    io, it = (onion.tensor([0, 4]), onion.tensor([0, 0])), (torch.tensor([0, 4]), torch.tensor([0, 0]))
    assert_close(o.index_put_(io, onion.tensor([1.0]).expand(2), True), t.index_put_(it, torch.tensor([1.0]).expand(2), True))


def test_index_put_functional_leaves_input():
    o, t = pair()
    idx = (onion.tensor([0, 1]),), (torch.tensor([0, 1]),)
    check_same(lambda: onion.index_put(o, idx[0], onion.tensor(3.0)), lambda: torch.index_put(t, idx[1], torch.tensor(3.0)))
    assert_close(o, t)


@pytest.mark.parametrize("indices,values", [
    ([L([0, 1]), L([0, 1]), L([0, 1]), L([0])], 1.0),     # too many indices
    ([L([0.0])], 1.0), ([L([4])], 1.0), ([L([0, 1]), L([0, 1, 2])], 1.0),
    ([L([0, 1])], "double"), ([L([0, 1])], "bad_shape"), ([L([True, False])], 1.0),
])
def test_index_put_errors(indices, values):
    o, t = pair()

    def val(lib):
        if values == "double":
            return lib.ones(4, 5, dtype=lib.float64)
        if values == "bad_shape":
            return lib.ones(3, 5)
        return lib.tensor(values)
    check_same(lambda: onion.ops.aten.index_put_(o, [onion.tensor(i) for i in indices], val(onion)),
               lambda: torch.ops.aten.index_put_(t, [torch.tensor(i) for i in indices], val(torch)), msg=True)


def test_index_out():
    o, t = pair()
    oo, to = onion.empty(0), torch.empty(0)
    check_same(lambda: onion.ops.aten.index.Tensor_out(o, [None, onion.tensor([0, 2])], out=oo),
               lambda: torch.ops.aten.index.Tensor_out(t, [None, torch.tensor([0, 2])], out=to))
    assert_close(oo, to)


# ---- where the result's memory goes: TensorIterator's layout over the input's -------------------------
@pytest.mark.parametrize("perm", [(0, 1, 2, 3), (3, 2, 1, 0), (1, 3, 0, 2)])
@pytest.mark.parametrize("key", [(slice(None), [0, 1]), ([[0, 1]], slice(None), [0, 1]), (Ellipsis, [1, 0, 1]),
                                 ([0, 1], [1, 2]), (slice(None), slice(None), [[1], [0]], [0, 2])])
def test_result_strides(perm, key):
    a = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    o, t = onion.tensor(a).permute(*perm), torch.tensor(a).permute(*perm)
    check_same(lambda: o[key], lambda: t[key])
    check_same(lambda: o.to("meta")[key], lambda: t.to("meta")[key])


# ---- autograd ------------------------------------------------------------------------------------
def _grads(lib, fn):
    x = lib.tensor(np.arange(60, dtype=np.float64).reshape(3, 4, 5) / 7, requires_grad=True)
    out = fn(lib, x)
    out.backward(lib.ones_like(out) * 1.5)
    return x.grad


@pytest.mark.parametrize("fn", [
    lambda lib, x: x[lib.tensor([0, 0, 2])],
    lambda lib, x: x[:, [1, 1, 3], [0, 4, 4]],
    lambda lib, x: x[x > 3],
    lambda lib, x: x[[0, 2], :, [1, 1]] * x[0, 0, 0],
    lambda lib, x: (x * 1).index_put((lib.tensor([0, 0]),), lib.tensor(2.0, dtype=lib.float64)),
    lambda lib, x: lib.zeros(3, 4, 5, dtype=lib.float64).index_put((lib.tensor([1, 1]),), x[0], True),
    lambda lib, x: x.masked_fill(x > 3, 0.5),
    lambda lib, x: x.masked_select(lib.tensor([True, False, True, True, False])),
    lambda lib, x: lib.take(x, lib.tensor([[0, 59], [0, 7]])),
    lambda lib, x: x.put(lib.tensor([0, 0, 3]), x[0, 0, :3], True),
    lambda lib, x: x.put(lib.tensor([0, 0, 3]), x[0, 0, :3] * 2, False),
    lambda lib, x: x.masked_scatter(lib.tensor([True, False, True, True, False]), x * 3),
    lambda lib, x: x.masked_fill(lib.tensor([True, False, True, True, False]), x[0, 0, 0]),
], ids=[f"f{i}" for i in range(13)])
def test_gradients(fn):
    assert_close(_grads(onion, fn), _grads(torch, fn))


def _setitem_grads(lib):
    x = lib.tensor(np.arange(12, dtype=np.float64).reshape(3, 4), requires_grad=True)
    v = lib.tensor([10.0, 20.0], dtype=lib.float64, requires_grad=True)
    y = x * 2
    y[lib.tensor([0, 2]), 1] = v
    y[y > 15] = 0.0
    (y * lib.arange(12.0, dtype=lib.float64).reshape(3, 4)).sum().backward()
    return x.grad, v.grad, y.grad_fn.name()


def test_setitem_gradients():
    (xo, vo, no), (xt, vt, nt) = _setitem_grads(onion), _setitem_grads(torch)
    assert_close(xo, xt)
    assert_close(vo, vt)
    assert no == nt


def test_double_backward_through_index():
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        y = (x[lib.tensor([0, 0, 2])] ** 3).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        g.sum().backward()
        return g, x.grad
    for a, b in zip(run(onion), run(torch)):
        assert_close(a.detach(), b.detach())


def test_grad_fn_names():
    for lib_pair in [(onion, torch)]:
        names = []
        for lib in lib_pair:
            x = lib.ones(3, requires_grad=True)
            y = x * 1
            y[lib.tensor([0])] = 2.0
            names.append((x[[0, 1]].grad_fn.name(), y.grad_fn.name(), x.masked_fill(x > 0, 1).grad_fn.name(),
                          lib.take(x, lib.tensor([0])).grad_fn.name()))
        assert names[0] == names[1]


# ---- masked_fill / masked_scatter / masked_select ---------------------------------------------------
MASKS = [L([True, False, True, False, True]), L([[True], [False], [True], [True]]), L(True), L(False),
         L([[[True, False, True, False, False]]])]


@pytest.mark.parametrize("mask", MASKS, ids=[f"m{i}" for i in range(len(MASKS))])
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "complex64"])
def test_masked_fill(mask, dtype):
    o, t = pair((4, 5), dtype=dtype)
    for value in (3, 0.5, True):
        check_same(lambda: o.masked_fill(onion.tensor(mask), value), lambda: t.masked_fill(torch.tensor(mask), value))
        check_same(lambda: o.masked_fill(onion.tensor(mask), onion.tensor(value)),
                   lambda: t.masked_fill(torch.tensor(mask), torch.tensor(value)))
        check_same(lambda: o.clone().masked_fill_(onion.tensor(mask), value),
                   lambda: t.clone().masked_fill_(torch.tensor(mask), value), msg=True)


@pytest.mark.parametrize("case", ["int_mask", "byte_mask", "vector_value", "complex_into_float", "big_mask",
                                  "nonbroadcast"])
def test_masked_fill_errors(case):
    o, t = pair((4, 5))

    def call(lib, x):
        m = lib.tensor([1, 0, 1, 0, 1])
        b = m.bool()
        if case == "int_mask":
            return x.masked_fill(m, 1.0)
        if case == "byte_mask":
            return x.masked_fill(m.to(lib.uint8), 1.0)
        if case == "vector_value":
            return x.masked_fill(b, lib.tensor([1.0]))
        if case == "complex_into_float":
            return x.masked_fill(b, 1j)
        if case == "big_mask":
            return x.clone().masked_fill_(lib.ones(2, 4, 5, dtype=lib.bool), 1.0)
        return x.masked_fill(lib.ones(3, 1, dtype=lib.bool), 1.0)
    check_same(lambda: call(onion, o), lambda: call(torch, t), msg=True)


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_masked_scatter(layout):
    o, t = pair((4, 5), layout=layout)
    for mask in ([True, False, True, False], [[True], [False], [True], [False], [True]], [False] * 4):
        if layout == "contiguous" and len(mask) == 5:
            mask = [m[0] for m in mask] * 1
            mask = mask[:5]
        so, st = onion.arange(30.0), torch.arange(30.0)
        check_same(lambda: o.masked_scatter(onion.tensor(mask), so), lambda: t.masked_scatter(torch.tensor(mask), st))
        check_same(lambda: o.clone().masked_scatter_(onion.tensor(mask), so),
                   lambda: t.clone().masked_scatter_(torch.tensor(mask), st))
    for bad in ("few", "dtype", "int_mask"):
        def call(lib, x):
            m = lib.ones(5, dtype=lib.bool)
            if bad == "few":
                return x.masked_scatter(m, lib.ones(3))
            if bad == "dtype":
                return x.clone().masked_scatter_(m, lib.ones(30, dtype=lib.int64))
            return x.masked_scatter(m.long(), lib.ones(30))
        if layout == "contiguous":
            check_same(lambda: call(onion, o), lambda: call(torch, t), msg=True)


def test_masked_select():
    o, t = pair((4, 5))
    for mask in (L([True, False, True, False, True]), L([[True], [False], [False], [True]]), L(True),
                 L([[[True], [False]]])):
        check_same(lambda: onion.masked_select(o, onion.tensor(mask)), lambda: torch.masked_select(t, torch.tensor(mask)))
    out_o, out_t = onion.empty(0), torch.empty(0)
    check_same(lambda: onion.masked_select(o, o > 0, out=out_o), lambda: torch.masked_select(t, t > 0, out=out_t))
    check_same(lambda: o.masked_select(onion.tensor([1, 0, 1, 0, 1])), lambda: t.masked_select(torch.tensor([1, 0, 1, 0, 1])),
               msg=True)
    # no Meta kernel in PyTorch either: its size depends on the data
    check_same(lambda: onion.masked_select(o.to("meta"), o.to("meta") > 0),
               lambda: torch.masked_select(t.to("meta"), t.to("meta") > 0))


# ---- nonzero / argwhere / nonzero_static ------------------------------------------------------------
@pytest.mark.parametrize("shape", [(), (0,), (5,), (3, 4), (2, 0, 3), (2, 3, 4)])
@pytest.mark.parametrize("dtype", ["float32", "bool", "int8", "complex64", "bfloat16"])
def test_nonzero(shape, dtype):
    rng = np.random.default_rng(1)
    a = (rng.integers(0, 3, shape) * (rng.integers(0, 2, shape))).astype("float32")
    o, t = onion.tensor(a).to(getattr(onion, dtype)), torch.tensor(a).to(getattr(torch, dtype))
    check_same(lambda: onion.nonzero(o), lambda: torch.nonzero(t))
    check_same(lambda: o.nonzero(), lambda: t.nonzero())
    check_same(lambda: onion.argwhere(o), lambda: torch.argwhere(t))
    check_same(lambda: onion.nonzero(o, as_tuple=True), lambda: torch.nonzero(t, as_tuple=True))
    check_same(lambda: o.nonzero(as_tuple=True), lambda: t.nonzero(as_tuple=True))
    for size, fill in ((0, -1), (3, -1), (30, 7)):
        check_same(lambda: onion.nonzero_static(o, size=size, fill_value=fill),
                   lambda: torch.nonzero_static(t, size=size, fill_value=fill))


def test_nonzero_out_and_errors():
    o, t = pair((3, 4))
    for out in ("empty", "sized", "float"):
        def mk(lib):
            return {"empty": lib.empty(0, dtype=lib.int64), "sized": lib.empty(2, 5, dtype=lib.int64),
                    "float": lib.empty(0)}[out]
        oo, to = mk(onion), mk(torch)
        check_same(lambda: onion.nonzero(o, out=oo), lambda: torch.nonzero(t, out=to), msg=out == "float")
    check_same(lambda: onion.nonzero_static(o, size=-1), lambda: torch.nonzero_static(t, size=-1), msg=True)
    # Meta: nonzero's size depends on the data, and PyTorch's meta kernel refuses
    check_same(lambda: onion.nonzero(o.to("meta")), lambda: torch.nonzero(t.to("meta")), msg=True)
    check_same(lambda: o.to("meta")[o.to("meta") > 0], lambda: t.to("meta")[t.to("meta") > 0], msg=True)
    ro = outcome(lambda: onion.nonzero_static(o.to("meta"), size=4))
    assert ro[0] == "ok" and tuple(ro[1].shape) == (4, 2)


# ---- take / put_ ------------------------------------------------------------------------------------
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "stepped"])
def test_take_put(layout):
    o, t = pair((3, 4, 6), layout=layout)
    for idx in (L([[0, 5], [-1, -6]]), L(3), L([], dtype=np.int64), L([0, 0, 11])):
        check_same(lambda: onion.take(o, onion.tensor(idx)), lambda: torch.take(t, torch.tensor(idx)))
        src = np.arange(idx.size, dtype=np.float32).reshape(idx.shape) + 100
        for acc in (False, True):
            check_same(lambda: o.clone().put_(onion.tensor(idx), onion.tensor(src), acc),
                       lambda: t.clone().put_(torch.tensor(idx), torch.tensor(src), acc))
            check_same(lambda: o.put(onion.tensor(idx), onion.tensor(src), acc),
                       lambda: t.put(torch.tensor(idx), torch.tensor(src), acc))


def test_take_put_errors():
    o, t = pair((2, 3))
    for fo, ft in [
        (lambda: onion.take(o, onion.tensor([6])), lambda: torch.take(t, torch.tensor([6]))),
        (lambda: onion.take(o, onion.tensor([-7])), lambda: torch.take(t, torch.tensor([-7]))),
        (lambda: onion.take(o, onion.tensor([1.0])), lambda: torch.take(t, torch.tensor([1.0]))),
        (lambda: onion.take(o, onion.tensor([1], dtype=onion.int32)),
         lambda: torch.take(t, torch.tensor([1], dtype=torch.int32))),
        (lambda: o.clone().put_(onion.tensor([0, 6]), onion.tensor([1.0, 2.0])),
         lambda: t.clone().put_(torch.tensor([0, 6]), torch.tensor([1.0, 2.0]))),
        (lambda: o.clone().put_(onion.tensor([0, 0]), onion.tensor([1.0, 2.0, 3.0])),
         lambda: t.clone().put_(torch.tensor([0, 0]), torch.tensor([1.0, 2.0, 3.0]))),
        (lambda: o.clone().put_(onion.tensor([0, 0]), onion.tensor([1, 2])),
         lambda: t.clone().put_(torch.tensor([0, 0]), torch.tensor([1, 2]))),
    ]:
        check_same(fo, ft, msg=True)


# ---- isin --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "int64", "uint8", "float64"])
def test_isin(dtype):
    o, t = pair((3, 4), dtype=dtype)
    for test in (L([1, 5, -3, 2]), L([[0], [7]]), L([], dtype=np.float32)):
        for invert in (False, True):
            test_d = test.astype(dtype) if dtype != "uint8" else np.abs(test).astype(dtype)
            check_same(lambda: onion.isin(o, onion.tensor(test_d), invert=invert),
                       lambda: torch.isin(t, torch.tensor(test_d), invert=invert))
            check_same(lambda: onion.isin(o.t(), onion.tensor(test_d), assume_unique=True, invert=invert),
                       lambda: torch.isin(t.t(), torch.tensor(test_d), assume_unique=True, invert=invert))
    check_same(lambda: onion.isin(o, 5), lambda: torch.isin(t, 5))
    check_same(lambda: onion.isin(5, o), lambda: torch.isin(5, t))
    check_same(lambda: onion.isin(o, onion.tensor([1.5, 2.0])), lambda: torch.isin(t, torch.tensor([1.5, 2.0])))
    out_o, out_t = onion.empty(0, dtype=onion.bool), torch.empty(0, dtype=torch.bool)
    check_same(lambda: onion.isin(o, onion.tensor([1]), out=out_o), lambda: torch.isin(t, torch.tensor([1]), out=out_t))
    check_same(lambda: onion.isin(o, onion.tensor([1j])), lambda: torch.isin(t, torch.tensor([1j])), msg=True)


# ---- unravel_index (the docs' examples) ---------------------------------------------------------------
@pytest.mark.parametrize("indices,shape", [
    ([4], (2, 3)), ([4, 1], (2, 3)), ([[4, 1], [0, 5]], (2, 3)), (3, (5,)), ([1234], (10, 10, 10, 10)),
    ([-1, 5, -6], (2, 3)), ([7], (2, 3)), ([0, 0], ()), ([0], (4, 0)),
])
def test_unravel_index(indices, shape):
    check_same(lambda: onion.unravel_index(onion.tensor(indices), shape),
               lambda: torch.unravel_index(torch.tensor(indices), shape))


def test_unravel_index_errors():
    check_same(lambda: onion.unravel_index(onion.tensor([1.0]), (2, 3)),
               lambda: torch.unravel_index(torch.tensor([1.0]), (2, 3)))
    check_same(lambda: onion.unravel_index(onion.tensor([1]), (2, -3)),
               lambda: torch.unravel_index(torch.tensor([1]), (2, -3)), msg=True)


# ---- the docs' examples ----------------------------------------------------------------------------
def test_docs_examples():
    x = [[0.6, 0.0, 0.0, 0.0], [0.0, 0.4, 0.0, 0.0], [0.0, 0.0, 1.2, 0.0], [0.0, 0.0, 0.0, -0.4]]
    check_same(lambda: onion.nonzero(onion.tensor(x)), lambda: torch.nonzero(torch.tensor(x)))
    check_same(lambda: onion.nonzero(onion.tensor([1, 1, 1, 0, 1]), as_tuple=True),
               lambda: torch.nonzero(torch.tensor([1, 1, 1, 0, 1]), as_tuple=True))
    src = [[4, 3, 5], [6, 7, 8]]
    check_same(lambda: onion.take(onion.tensor(src), onion.tensor([0, 2, 5])),
               lambda: torch.take(torch.tensor(src), torch.tensor([0, 2, 5])))
    check_same(lambda: onion.tensor(src).put_(onion.tensor([1, 3]), onion.tensor([9, 10])),
               lambda: torch.tensor(src).put_(torch.tensor([1, 3]), torch.tensor([9, 10])))
    check_same(lambda: onion.isin(onion.tensor([[1, 2], [3, 4]]), onion.tensor([2, 3])),
               lambda: torch.isin(torch.tensor([[1, 2], [3, 4]]), torch.tensor([2, 3])))
    check_same(lambda: onion.argwhere(onion.tensor([[1, 0, 1], [0, 1, 1]])),
               lambda: torch.argwhere(torch.tensor([[1, 0, 1], [0, 1, 1]])))
    m = [[True, False, True, False], [False, True, False, True]]
    check_same(lambda: onion.tensor([[1.0, 2, 3, 4], [5, 6, 7, 8]]).masked_fill(onion.tensor(m), -1),
               lambda: torch.tensor([[1.0, 2, 3, 4], [5, 6, 7, 8]]).masked_fill(torch.tensor(m), -1))


def test_unsafe_masked_index():
    o, t = pair((4, 5))
    mask = L([[True, False, True]])
    idx = (L([[0, 9, 3]]), L([[1, -20, 4]]))         # out-of-range where the mask is False
    check_same(lambda: onion.ops.aten._unsafe_masked_index(o, onion.tensor(mask), [onion.tensor(i) for i in idx], 0.5),
               lambda: torch.ops.aten._unsafe_masked_index(t, torch.tensor(mask), [torch.tensor(i) for i in idx], 0.5))
    vo, vt = onion.ones(1, 3), torch.ones(1, 3)
    check_same(lambda: onion.ops.aten._unsafe_masked_index_put_accumulate(o, onion.tensor(mask),
                                                                          [onion.tensor(i) for i in idx], vo),
               lambda: torch.ops.aten._unsafe_masked_index_put_accumulate(t, torch.tensor(mask),
                                                                          [torch.tensor(i) for i in idx], vt))


def test_large_mask_and_accumulate_agree():
    """The vectorised paths (flatnonzero + take, sorted sums) on a large input give torch's values."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal(20000).astype(np.float32)
    o, t = onion.tensor(a), torch.tensor(a)
    check_same(lambda: o[o > 0.5], lambda: t[t > 0.5])
    idx = rng.integers(-20000, 20000, 50000)
    vals = rng.standard_normal(50000)
    o64, t64 = onion.tensor(a.astype(np.float64)), torch.tensor(a.astype(np.float64))
    check_same(lambda: o64.index_put_((onion.tensor(idx),), onion.tensor(vals), True),
               lambda: t64.index_put_((torch.tensor(idx),), torch.tensor(vals), True), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("case", range(3))
@pytest.mark.parametrize("op", ["take", "masked_select"])
def test_out_sharing_memory_with_an_input(op, case):
    """PyTorch's error inputs of take / masked_select: an expanded out=, out= an input, out= a view of one."""
    def call(lib):
        x = lib.arange(6.0)
        second = lib.tensor([0, 2, 4]) if op == "take" else x > 2
        out = [lib.zeros(1).expand(3), x, second][case]
        if case == 2 and op == "masked_select":
            out = x[:3]
        if case == 2 and op == "take":
            second = lib.tensor([0, 1])
            out = x[1:3]
        return getattr(lib, op)(x, second, out=out)
    check_same(lambda: call(onion), lambda: call(torch), msg=True)
