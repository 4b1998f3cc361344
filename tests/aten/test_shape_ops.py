"""Joining, splitting and reshaping operators vs PyTorch: errors and their texts, dtypes, strides, aliasing,
out=, Meta, gradients, and the in-place rules of multi-output views."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from conftest import assert_close, check_same, make, onion, outcome, torch

pytestmark = pytest.mark.oracle      # every test here compares with PyTorch


def both(fn_o, fn_t, *shapes_and_dtypes, layout="contiguous"):
    """Make inputs for both libraries and compare fn's outcome (exact values, message text)."""
    pairs = [make(s, d, seed=i, layout=layout) for i, (s, d) in enumerate(shapes_and_dtypes)]
    return check_same(lambda: fn_o(*[p[0] for p in pairs]), lambda: fn_t(*[p[1] for p in pairs]), msg=True,
                      exact=True)


def same_list(fo, ft):
    ro, rt = outcome(fo), outcome(ft)
    if rt[0] == "err":
        assert ro[0] == "err", f"torch raised {rt[1]!r}; onion returned {ro[1]!r}"
        # a message that prints a tensor (meshgrid's) shows it as each library prints tensors
        assert type(ro[1]) is type(rt[1]) and str(ro[1]).split(": tensor(")[0] == str(rt[1]).split(":  ")[0], \
            (ro[1], rt[1])
        return None
    assert ro[0] == "ok", ro[1]
    assert type(ro[1]) is type(rt[1]) and len(ro[1]) == len(rt[1])
    for a, b in zip(ro[1], rt[1]):
        assert_close(a, b, exact=True)
        assert a.storage_offset() == b.storage_offset()
    return ro[1], rt[1]


# ----------------------------------------------------------------------------- cat
CAT_CASES = [
    ([(2, 3), (2, 2)], 1),
    ([(2, 3), (3, 3)], 1),                  # sizes differ outside the cat dim
    ([(2, 3), (3,)], 0),                    # ranks differ
    ([(2, 3), (0,)], 1),                    # the legacy skipped 1-D empty tensor
    ([(0,), (0,)], 3),                      # all skipped: any dim goes
    ([(2, 3)], 2),                          # dim out of range (IndexError)
    ([(), (3,)], 0),                        # zero-dim
    ([(0, 3), (2, 3)], 0),
    ([(2, 3, 4, 5)] * 3, -3),
]


@pytest.mark.parametrize("shapes,dim", CAT_CASES)
def test_cat_matches_torch(shapes, dim):
    pairs = [make(s, "float32", seed=i) for i, s in enumerate(shapes)]
    check_same(lambda: onion.cat([p[0] for p in pairs], dim), lambda: torch.cat([p[1] for p in pairs], dim),
               msg=True, exact=True)


def test_cat_empty_list_is_value_error():
    check_same(lambda: onion.cat([]), lambda: torch.cat([]), msg=True)


@pytest.mark.parametrize("dts", [("int32", "float32"), ("bool", "int64"), ("bfloat16", "float16"),
                                 ("float32", "complex64"), ("uint8", "int8")])
def test_cat_promotes_across_inputs(dts):
    both(lambda a, b: onion.cat([a, b], 1), lambda a, b: torch.cat([a, b], 1), ((2, 3), dts[0]), ((2, 2), dts[1]))


def test_cat_promotes_with_skipped_empty_tensor():
    a, at_ = make((2, 3), "float32")
    check_same(lambda: onion.cat([a, onion.zeros(0, dtype=onion.float64)]),
               lambda: torch.cat([at_, torch.zeros(0, dtype=torch.float64)]), exact=True)


def test_cat_memory_format():
    o = onion.ones(2, 3, 4, 5).contiguous(memory_format=onion.channels_last)
    t = torch.ones(2, 3, 4, 5).contiguous(memory_format=torch.channels_last)
    check_same(lambda: onion.cat([o, o], 1), lambda: torch.cat([t, t], 1))
    # one contiguous input: the result is contiguous
    check_same(lambda: onion.cat([o, onion.ones(2, 3, 4, 5)], 1), lambda: torch.cat([t, torch.ones(2, 3, 4, 5)], 1))
    # on Meta too
    om = onion.empty_strided(o.shape, o.stride(), device="meta")
    r = onion.cat([om, om], 0)
    assert r.device.type == "meta" and r.stride() == torch.cat([t, t], 0).stride()


def test_cat_non_contiguous_inputs():
    both(lambda a, b: onion.cat([a, b], 0), lambda a, b: torch.cat([a, b], 0), ((3, 4), "float64"),
         ((3, 4), "float64"), layout="transposed")
    both(lambda a, b: onion.cat([a, b], -1), lambda a, b: torch.cat([a, b], -1), ((3, 4), "int64"),
         ((3, 4), "int64"), layout="stepped")


def test_cat_out():
    a, at_ = make((2, 3), "int32")
    for odt in ("int64", "float64", "int16"):
        check_same(lambda: onion.cat([a, a], 1, out=onion.empty(0, dtype=getattr(onion, odt))),
                   lambda: torch.cat([at_, at_], 1, out=torch.empty(0, dtype=getattr(torch, odt))), exact=True)
    # float into an integer out: TypeError, out untouched
    f, ft = make((2, 3), "float32")
    o_out, t_out = onion.zeros(4, dtype=onion.int64), torch.zeros(4, dtype=torch.int64)
    check_same(lambda: onion.cat([f], 0, out=o_out), lambda: torch.cat([ft], 0, out=t_out), msg=True)
    assert o_out.shape == (4,) and o_out.tolist() == [0, 0, 0, 0]
    # an out that is one of the inputs, and an expanded out
    x, xt = onion.ones(4, 3), torch.ones(4, 3)
    check_same(lambda: onion.cat([x[:2], x[2:]], 0, out=x), lambda: torch.cat([xt[:2], xt[2:]], 0, out=xt), msg=True)
    check_same(lambda: onion.cat([x[:2], x[:2]], 0, out=x), lambda: torch.cat([xt[:2], xt[:2]], 0, out=xt), msg=True)
    e = onion.ones(1, 3).expand(4, 3)
    et = torch.ones(1, 3).expand(4, 3)
    y, yt = make((2, 3), "float32")
    check_same(lambda: onion.cat([y, y], 0, out=e), lambda: torch.cat([yt, yt], 0, out=et), msg=True)


def test_cat_out_resized_keeps_memory_format():
    o = onion.ones(2, 3, 4, 5).contiguous(memory_format=onion.channels_last)
    t = torch.ones(2, 3, 4, 5).contiguous(memory_format=torch.channels_last)
    ro, rt = onion.empty(0), torch.empty(0)
    onion.cat([o, o], 0, out=ro)
    torch.cat([t, t], 0, out=rt)
    assert ro.stride() == rt.stride()


def test_cat_grad_and_r_to_c():
    a = onion.tensor([[1.0, 2.0]], requires_grad=True)
    b = onion.tensor([[3.0 + 1j, 4.0]], requires_grad=True)
    e = onion.zeros(0, requires_grad=True)
    r = onion.cat([a, e, b], 0)
    assert r.grad_fn.name() == "CatBackward0"
    g = onion.tensor([[1 + 2j, 3 + 4j], [5 + 6j, 7 + 8j]])
    ga, ge, gb = onion.autograd.grad(r, [a, e, b], g)
    assert ga.dtype is onion.float32 and ga.tolist() == [[1.0, 3.0]]      # real input: real part
    assert ge.shape == (0,)
    assert gb.tolist() == [[5 + 6j, 7 + 8j]]


def test_cat_speed_is_measured_in_benchmarks():
    """cat of 100 tensors: one NumPy call over the arrays (no per-row work); the value is exact."""
    parts_o = [onion.full((10000,), float(i)) for i in range(100)]
    r = onion.cat(parts_o)
    assert r.shape == (1_000_000,) and r[10000 * 57].item() == 57.0 and r[-1].item() == 99.0


# ----------------------------------------------------------------------------- stack family
@pytest.mark.parametrize("name", ["stack", "hstack", "vstack", "row_stack", "dstack", "column_stack"])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 3, 4)])
def test_stack_family(name, shape):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both(lambda a, b: getattr(onion, name)([a, b]), lambda a, b: getattr(torch, name)([a, b]),
             (shape, "float32"), (shape, "int64"))
        check_same(lambda: getattr(onion, name)([]), lambda: getattr(torch, name)([]), msg=True)
        a, at_ = make(shape, "float64")
        check_same(lambda: getattr(onion, name)([a, a], out=onion.empty(0, dtype=onion.float64)),
                   lambda: getattr(torch, name)([at_, at_], out=torch.empty(0, dtype=torch.float64)), exact=True)


def test_stack_errors_and_dims():
    both(lambda a, b: onion.stack([a, b]), lambda a, b: torch.stack([a, b]), ((2,), "float32"), ((3,), "float32"))
    for d in (-3, -1, 2, 3):
        both(lambda a, b: onion.stack([a, b], d), lambda a, b: torch.stack([a, b], d), ((2, 3), "float32"),
             ((2, 3), "float32"))
    both(lambda a, b: onion.stack([a, b], 1), lambda a, b: torch.stack([a, b], 1), ((2, 3), "float32"),
         ((2, 3), "float32"), layout="transposed")


def test_chunk_cat():
    xs = [make((2, 5), "float32", seed=0), make((2, 3), "float32", seed=1)]
    for dim, n in ((1, 2), (0, 3), (1, 4)):
        check_same(lambda: onion._chunk_cat([x[0] for x in xs], dim, n),
                   lambda: torch._chunk_cat([x[1] for x in xs], dim, n), exact=True)


# ----------------------------------------------------------------------------- split family
SPLITS = [
    ("split", (2,)), ("split", (2, 1)), ("split", ([1, 3],)), ("split", ([1, 1],)), ("split", (0,)),
    ("split", (-1,)), ("split", (2, 5)), ("split_with_sizes", ([2, 2],)), ("split_with_sizes", ([1, -1, 4],)),
    ("chunk", (3,)), ("chunk", (0,)), ("chunk", (2, 1)), ("unsafe_chunk", (3,)), ("unsafe_split", (3,)),
    ("tensor_split", (3,)), ("tensor_split", ([1, 3],)), ("tensor_split", ([3, 1], 1)), ("tensor_split", (0,)),
    ("hsplit", (2,)), ("hsplit", (3,)), ("hsplit", ([1],)), ("vsplit", (2,)), ("vsplit", ([1, 5],)),
    ("dsplit", (2,)), ("unbind", ()), ("unbind", (1,)), ("unbind", (3,)),
]


@pytest.mark.parametrize("name,args", SPLITS)
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_split_family(name, args, layout):
    xo, xt = make((4, 4), "float32", layout=layout)
    same_list(lambda: getattr(onion, name)(xo, *args), lambda: getattr(torch, name)(xt, *args))
    if name not in ("hsplit", "vsplit", "dsplit") or True:
        same_list(lambda: getattr(xo, name)(*args), lambda: getattr(xt, name)(*args))


def test_split_outputs_are_views_of_the_input():
    xo, xt = make((6, 2), "float64")
    for ro, rt in zip(xo.split(2), xt.split(2)):
        assert ro._base is xo and ro.storage_offset() == rt.storage_offset()
    for ro in onion.unsafe_split(xo, 2):
        assert ro._base is None          # unsafe_split's outputs are no views for autograd


def test_tensor_split_tensor_argument():
    xo, xt = make((7,), "int64")
    for arg in ([1, 4], 3):
        same_list(lambda: onion.tensor_split(xo, onion.tensor(arg)), lambda: torch.tensor_split(xt, torch.tensor(arg)))
    same_list(lambda: onion.tensor_split(xo, onion.tensor([1.0])), lambda: torch.tensor_split(xt, torch.tensor([1.])))
    same_list(lambda: onion.tensor_split(xo, onion.ones(1, 1, dtype=onion.int64)),
              lambda: torch.tensor_split(xt, torch.ones(1, 1, dtype=torch.int64)))


def test_zero_dim_errors():
    for name, args in (("split", (1,)), ("chunk", (2,)), ("unbind", ()), ("tensor_split", (2,)), ("hsplit", (1,)),
                       ("narrow", (0, 0, 1))):
        same_list(lambda: [getattr(onion, name)(onion.tensor(1.0), *args)],
                  lambda: [getattr(torch, name)(torch.tensor(1.0), *args)])


def test_split_copies_and_outs():
    xo, xt = make((4, 3), "float32", layout="transposed")
    same_list(lambda: onion.split_with_sizes_copy(xo, [1, 2], 1), lambda: torch.split_with_sizes_copy(xt, [1, 2], 1))
    same_list(lambda: onion.unbind_copy(xo, 1), lambda: torch.unbind_copy(xt, 1))
    for outs in ([("float32", 0), ("float32", 5)], [("float32", 0)], [("float32", 0), ("int64", 0)]):
        oo = [onion.empty(n, dtype=getattr(onion, d)) for d, n in outs]
        to = [torch.empty(n, dtype=getattr(torch, d)) for d, n in outs]
        ro = outcome(lambda: onion.split_with_sizes_copy(xo, [1, 2], 1, out=oo))
        rt = outcome(lambda: torch.split_with_sizes_copy(xt, [1, 2], 1, out=to))
        assert ro[0] == rt[0] and (ro[0] == "ok" or str(ro[1]) == str(rt[1])), (ro, rt)
        if rt[0] == "ok":
            for a, b in zip(oo, to):
                assert_close(a, b, exact=True)
        ro = outcome(lambda: onion.unbind_copy(xo, 0, out=[onion.empty(0) for _ in range(len(outs))]))
        rt = outcome(lambda: torch.unbind_copy(xt, 0, out=[torch.empty(0) for _ in range(len(outs))]))
        assert ro[0] == rt[0] and (ro[0] == "ok" or str(ro[1]) == str(rt[1])), (ro, rt)


def test_split_grad_with_unused_parts():
    x = onion.arange(12.0, dtype=onion.float64).reshape(4, 3).requires_grad_()
    xt = torch.arange(12.0, dtype=torch.float64).reshape(4, 3).requires_grad_()
    for f in (lambda x: x.split(3), lambda x: x.split([1, 3]), lambda x: x.unbind(1), lambda x: x.chunk(2, 1),
              lambda x: torch_or_onion(x).unsafe_split(2), lambda x: torch_or_onion(x).split_with_sizes_copy([2, 2])):
        po, pt = f(x), f(xt)
        assert po[0].grad_fn.name() == pt[0].grad_fn.name()
        go = onion.autograd.grad([(po[0] * 2).sum(), po[-1].sum()], [x])[0]
        gt = torch.autograd.grad([(pt[0] * 2).sum(), pt[-1].sum()], [xt])[0]
        assert_close(go, gt, exact=True)


def torch_or_onion(x):
    """The module a tensor belongs to, for a lambda run on both libraries."""
    class _M:
        def __init__(self, t):
            self.t = t
            self.mod = onion if isinstance(t, onion.Tensor) else torch

        def unsafe_split(self, n):
            return self.mod.unsafe_split(self.t, n)

        def split_with_sizes_copy(self, s):
            return self.mod.split_with_sizes_copy(self.t, s)
    return _M(x)


def test_multi_output_views_refuse_in_place():
    for lib in (onion, torch):
        pass
    results = []
    for lib in (onion, torch):
        x = lib.ones(4, requires_grad=True)
        a, _ = x.split(2)
        u = x.unbind(0)
        y = lib.ones(4)
        a2, _ = y.split(2)
        with lib.no_grad():
            a3, _ = x.split(2)
        row = []
        for f in (lambda: a.mul_(2), lambda: u[1].add_(1), lambda: a2.mul_(2), lambda: a2.add_(lib.ones(2, requires_grad=True)),
                  lambda: a3.mul_(2), lambda: x.chunk(2)[0].zero_(), lambda: lib.unsafe_split(x * 1, 2)[0].mul_(2)):
            r = outcome(f)
            row.append((r[0], str(r[1]) if r[0] == "err" else None))
        results.append(row)
    assert results[0] == results[1]


# ----------------------------------------------------------------------------- reshaping views
VIEW_CASES = [
    ("flatten", ()), ("flatten", (1,)), ("flatten", (0, 1)), ("flatten", (1, 0)), ("flatten", (0, 5)),
    ("unflatten", (1, (2, 2))), ("unflatten", (1, (-1, 2))), ("unflatten", (1, ())), ("unflatten", (1, (3, -1))),
    ("ravel", ()), ("narrow", (1, 1, 2)), ("narrow", (0, -2, 2)), ("narrow", (0, 5, 1)), ("narrow", (0, 1, -1)),
    ("narrow", (0, -2, 3)), ("narrow_copy", (1, 1, 2)), ("narrow_copy", (0, 1, -1)), ("movedim", (0, 1)),
    ("movedim", ([0, 1], [1, 0])), ("movedim", ([0, 1], [1])), ("movedim", ([0, 0], [1, 0])),
    ("movedim", ([0, 1], [1, 1])), ("moveaxis", (-1, 0)), ("swapaxes", (0, 1)), ("swapdims", (1, -2)),
    ("swapaxes", (0, 3)), ("broadcast_to", ((3, 4, 4),)), ("broadcast_to", ((4, 5),)), ("unfold", (1, 2, 1)),
    ("unfold", (0, 4, 3)), ("unfold", (0, 5, 1)), ("unfold", (0, 2, 0)), ("unfold", (0, -1, 1)),
    ("sum_to_size", ((1, 4),)), ("sum_to_size", ((4,),)), ("sum_to_size", ((2, 4),)),
]


@pytest.mark.parametrize("name,args", VIEW_CASES)
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_reshaping_ops(name, args, layout):
    xo, xt = make((4, 4), "float32", layout=layout)
    fo = getattr(onion, name, None) or (lambda x, *a: getattr(x, name)(*a))
    ft = getattr(torch, name, None) or (lambda x, *a: getattr(x, name)(*a))
    r = check_same(lambda: fo(xo, *args), lambda: ft(xt, *args), msg=True, exact=True)
    if r is not None:
        ro, rt = r
        views_t = rt.untyped_storage().data_ptr() == xt.untyped_storage().data_ptr()
        assert (ro.untyped_storage().data_ptr() == xo.untyped_storage().data_ptr()) == views_t
        if views_t:
            assert ro.storage_offset() == rt.storage_offset()


def test_narrow_tensor_start():
    xo, xt = make((5, 2), "float32")
    for s in (1, -2):
        check_same(lambda: xo.narrow(0, onion.tensor(s), 2), lambda: xt.narrow(0, torch.tensor(s), 2), exact=True)
    check_same(lambda: xo.narrow(0, onion.tensor(1.0), 2), lambda: xt.narrow(0, torch.tensor(1.0), 2), msg=True)


def test_as_and_broadcast_helpers():
    xo, xt = make((3, 1), "int64")
    yo, yt = make((2, 3, 4), "float32")
    check_same(lambda: xo.expand_as(yo), lambda: xt.expand_as(yt), exact=True)
    check_same(lambda: yo.reshape_as(onion.ones(4, 6)), lambda: yt.reshape_as(torch.ones(4, 6)), exact=True)
    check_same(lambda: yo.view_as(onion.ones(24)), lambda: yt.view_as(torch.ones(24)), exact=True)
    check_same(lambda: yo.transpose(0, 1).view_as(onion.ones(24)), lambda: yt.transpose(0, 1).view_as(torch.ones(24)),
               msg=True)
    same_list(lambda: onion.broadcast_tensors(xo, yo), lambda: torch.broadcast_tensors(xt, yt))
    same_list(lambda: onion.broadcast_tensors(xo, onion.ones(2)), lambda: torch.broadcast_tensors(xt, torch.ones(2)))
    for shapes in (((2, 3), (3, 1)), ((2, 3), (3, 2)), (3, (2, 1)), ((2, 0), (1,)), ()):
        check_same(lambda: tuple(onion.broadcast_shapes(*shapes)), lambda: tuple(torch.broadcast_shapes(*shapes)),
                   msg=True)


@pytest.mark.parametrize("indexing", ["ij", "xy", "bad"])
def test_meshgrid(indexing):
    a, at_ = make((3,), "float32", seed=0)
    b, bt = make((2,), "float32", seed=1)
    c, ct = make((), "float32", seed=2)
    same_list(lambda: onion.meshgrid(a, b, c, indexing=indexing), lambda: torch.meshgrid(at_, bt, ct,
                                                                                         indexing=indexing))
    same_list(lambda: onion.meshgrid([a, b], indexing=indexing), lambda: torch.meshgrid([at_, bt], indexing=indexing))
    same_list(lambda: onion.meshgrid([a, onion.ones(2, 2)], indexing="ij"),
              lambda: torch.meshgrid([at_, torch.ones(2, 2)], indexing="ij"))
    same_list(lambda: onion.meshgrid([a, b.double()], indexing="ij"),
              lambda: torch.meshgrid([at_, bt.double()], indexing="ij"))


@pytest.mark.parametrize("n", [1, 2, 3])
def test_atleast(n):
    pairs = [make(s, "float32", seed=i) for i, s in enumerate([(), (2,), (2, 3), (2, 3, 4)])]
    fo, ft = getattr(onion, f"atleast_{n}d"), getattr(torch, f"atleast_{n}d")
    for o, t in pairs:
        r = check_same(lambda: fo(o), lambda: ft(t), exact=True)
        assert (r[0] is o) == (r[1] is t)
    same_list(lambda: fo(*[p[0] for p in pairs]), lambda: ft(*[p[1] for p in pairs]))
    same_list(lambda: fo([p[0] for p in pairs]), lambda: ft([p[1] for p in pairs]))


# ----------------------------------------------------------------------------- *_copy ops
COPY_CASES = [
    ("alias_copy", ()), ("as_strided_copy", ((2, 2), (1, 2))), ("diagonal_copy", (1,)), ("expand_copy", ((2, 3, 4),)),
    ("permute_copy", ((1, 0),)), ("slice_copy", (1, 1, 3)), ("squeeze_copy", ()), ("squeeze_copy", (0,)),
    ("t_copy", ()), ("transpose_copy", (0, 1)), ("unfold_copy", (0, 2, 1)), ("unsqueeze_copy", (1,)),
    ("view_copy", ((4, 3),)), ("view_copy", ((5,),)),
]


@pytest.mark.parametrize("name,args", COPY_CASES)
def test_copy_variants(name, args):
    xo, xt = make((3, 4), "float64", layout="transposed")
    xo, xt = xo.transpose(0, 1), xt.transpose(0, 1)
    r = check_same(lambda: getattr(onion, name)(xo, *args), lambda: getattr(torch, name)(xt, *args), msg=True,
                   exact=True)
    if r is None:
        return
    ro, rt = r
    assert rt.untyped_storage().data_ptr() != xt.untyped_storage().data_ptr()
    assert ro.untyped_storage().data_ptr() != xo.untyped_storage().data_ptr()
    check_same(lambda: getattr(onion, name)(xo, *args, out=onion.empty(0, dtype=onion.float64)),
               lambda: getattr(torch, name)(xt, *args, out=torch.empty(0, dtype=torch.float64)), exact=True)
    check_same(lambda: getattr(onion, name)(xo, *args, out=onion.empty(0, dtype=onion.float32)),
               lambda: getattr(torch, name)(xt, *args, out=torch.empty(0, dtype=torch.float32)), msg=True)
    # gradients and node names follow the view's
    xg = xo.detach().requires_grad_()
    xtg = xt.detach().requires_grad_()
    go, gt = getattr(onion, name)(xg, *args), getattr(torch, name)(xtg, *args)
    assert go.grad_fn.name() == gt.grad_fn.name()
    assert_close(onion.autograd.grad(go.sum(), xg)[0], torch.autograd.grad(gt.sum(), xtg)[0], exact=True)


def test_unfold_grad_overlapping_windows():
    xo = onion.arange(10.0, dtype=onion.float64).requires_grad_()
    xt = torch.arange(10.0, dtype=torch.float64).requires_grad_()
    for size, step in ((3, 1), (2, 3), (4, 2)):
        go = onion.autograd.grad((xo.unfold(0, size, step) * onion.arange(1.0, size + 1.0, dtype=onion.float64)).sum(),
                                 xo)[0]
        gt = torch.autograd.grad((xt.unfold(0, size, step) * torch.arange(1.0, size + 1.0, dtype=torch.float64)).sum(),
                                 xt)[0]
        assert_close(go, gt, exact=True)


# ----------------------------------------------------------------------------- factories and the rest
def test_new_factories():
    xo, xt = make((2, 3), "int32")
    for name, args, kw in (("new_zeros", ((2, 2),), {}), ("new_ones", ((3,),), {"dtype": "float64"}),
                           ("new_full", ((2,), 3.5), {}), ("new_full", ((2,), 3.5), {"dtype": "float32"}),
                           ("new_empty", ((2, 0),), {}), ("new_empty_strided", ((2, 2), (1, 2)), {})):
        ro = getattr(xo, name)(*args, **{k: getattr(onion, v) for k, v in kw.items()})
        rt = getattr(xt, name)(*args, **{k: getattr(torch, v) for k, v in kw.items()})
        assert_close(ro, rt, exact=not name.startswith("new_empty"), strides=True) if "empty" not in name else None
        assert (str(ro.dtype).split(".")[-1], tuple(ro.shape), ro.stride()) == \
            (str(rt.dtype).split(".")[-1], tuple(rt.shape), rt.stride())
    assert not xo.double().requires_grad_().new_zeros(2).requires_grad


def test_empty_permuted_eye_logspace():
    for size, perm in (((2, 3, 4), (2, 0, 1)), ((2, 3, 4), (2, 0)), ((2, 3, 4), (2, 0, 3)), ((2, 3), (1, 1))):
        ro, rt = outcome(lambda: onion.empty_permuted(size, perm)), outcome(lambda: torch.empty_permuted(size, perm))
        assert ro[0] == rt[0]
        if ro[0] == "ok":
            assert ro[1].stride() == rt[1].stride()
        else:
            assert str(ro[1]) == str(rt[1])
    for args, kw in (((3,), {}), ((2, 4), {"dtype": "bool"}), ((-1,), {}), ((2, -1), {}), ((0, 3), {})):
        check_same(lambda: onion.eye(*args, **{k: getattr(onion, v) for k, v in kw.items()}),
                   lambda: torch.eye(*args, **{k: getattr(torch, v) for k, v in kw.items()}), msg=True, exact=True)
    check_same(lambda: onion.eye(3, 2, out=onion.empty(0, dtype=onion.int32)),
               lambda: torch.eye(3, 2, out=torch.empty(0, dtype=torch.int32)), exact=True)
    for args, dt in (((0, 3, 4), None), ((0, 3.5, 4, 2.5), "int64"), ((1, -2, 5, 3.0), "float64"),
                     ((0, 2, 1), "int32"), ((0, 3, -1), None), ((2, 3, 0), None), ((0, 1, 3), "complex64"),
                     ((0, 3, 4, 2), "bfloat16")):
        kw_o = {} if dt is None else {"dtype": getattr(onion, dt)}
        kw_t = {} if dt is None else {"dtype": getattr(torch, dt)}
        check_same(lambda: onion.logspace(*args, **kw_o), lambda: torch.logspace(*args, **kw_t), msg=True)
    check_same(lambda: onion.logspace(onion.tensor(1), 3, 3), lambda: torch.logspace(torch.tensor(1), 3, 3))
    check_same(lambda: onion.logspace(onion.tensor([1.0]), 3, 3), lambda: torch.logspace(torch.tensor([1.0]), 3, 3),
               msg=True)
    check_same(lambda: onion.logspace(0, 3, 4, out=onion.empty(0, dtype=onion.int64)),
               lambda: torch.logspace(0, 3, 4, out=torch.empty(0, dtype=torch.int64)), exact=True)


def test_fill_zero_equal_item():
    xo, xt = make((2, 3), "float32", layout="transposed")
    check_same(lambda: onion.fill(xo, 2), lambda: torch.fill(xt, 2), exact=True)
    check_same(lambda: onion.fill(xo, onion.tensor(3.0)), lambda: torch.fill(xt, torch.tensor(3.0)), exact=True)
    check_same(lambda: onion.fill(xo, onion.tensor([3.0])), lambda: torch.fill(xt, torch.tensor([3.0])), msg=True)
    check_same(lambda: onion.zero_(xo.clone()), lambda: torch.zero_(xt.clone()), exact=True)
    a = onion.tensor([1.0, 2.0], requires_grad=True)
    v = onion.tensor(2.0, requires_grad=True)
    r = onion.fill(a, v)
    assert r.grad_fn.name() == "FillBackward1"
    ga, gv = onion.autograd.grad(r.sum(), [a, v])
    assert ga.tolist() == [0.0, 0.0] and gv.item() == 2.0
    nan_o, nan_t = onion.tensor([float("nan")]), torch.tensor([float("nan")])
    for p, q in ((xo, xo.clone()), (xo, xo.long()), (xo, onion.ones(3)), (nan_o, nan_o)):
        pt = xt if p is xo else nan_t
        qt = {id(xo): xt}.get(id(q))
        if qt is None:
            qt = torch.from_numpy(np.asarray(q.numpy()).copy()) if q.dtype is not onion.bfloat16 else None
        assert onion.equal(p, q) == torch.equal(pt, qt)
    assert onion.tensor([[5]]).item() == 5 and isinstance(onion.tensor(2.5).item(), float)


def test_resize():
    for size, fmt in (((1, 2), None), ((4, 5), None), ((2, 3, 4, 5), "channels_last"), ((2,), "channels_last"),
                      ((-1,), None)):
        xo, xt = onion.arange(6.0).reshape(2, 3), torch.arange(6.0).reshape(2, 3)
        ro = outcome(lambda: xo.resize_(size, **({} if fmt is None else {"memory_format": getattr(onion, fmt)})))
        rt = outcome(lambda: xt.resize_(size, **({} if fmt is None else {"memory_format": getattr(torch, fmt)})))
        assert ro[0] == rt[0], (ro, rt)
        if ro[0] == "ok":
            assert ro[1] is xo and xo.shape == xt.shape and xo.stride() == xt.stride()
            n = min(6, xo.numel()) if fmt is None else 0
            assert to_list(xo.reshape(-1)[:n]) == to_list(xt.reshape(-1)[:n])     # old values kept
        else:
            assert str(ro[1]) == str(rt[1])
    g = onion.ones(2, requires_grad=True)
    check_same(lambda: g.resize_(3), lambda: torch.ones(2, requires_grad=True).resize_(3), msg=True)
    tmpl_o = onion.ones(2, 1, 3, 3).contiguous(memory_format=onion.channels_last)
    tmpl_t = torch.ones(2, 1, 3, 3).contiguous(memory_format=torch.channels_last)
    for kw in ({}, {"memory_format": "preserve_format"}):
        ro = onion.ones(2, 3).resize_as_(tmpl_o, **{k: getattr(onion, v) for k, v in kw.items()})
        rt = torch.ones(2, 3).resize_as_(tmpl_t, **{k: getattr(torch, v) for k, v in kw.items()})
        assert ro.shape == rt.shape and ro.stride() == rt.stride()


def to_list(x):
    return x.tolist()
