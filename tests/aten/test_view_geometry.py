"""View geometry vs PyTorch: sizes, strides, storage offset, and error type + text."""
import importlib.util
import itertools
import pathlib
import random

import pytest

from conftest import torch  # (a stand-in without PyTorch)

pytestmark = pytest.mark.oracle      # every test here compares with PyTorch

try:
    from onion.aten import view_geometry as vg
except Exception:  # the package may be mid-build; load the module on its own
    _path = pathlib.Path(__file__).resolve().parents[2] / "onion" / "aten" / "view_geometry.py"
    _spec = importlib.util.spec_from_file_location("_onion_view_geometry", _path)
    vg = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(vg)


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------

def make(sizes, strides, offset=0):
    """A float32 torch tensor with exactly this geometry."""
    need = offset + 1
    if 0 in sizes:
        need = offset
    else:
        need += sum((s - 1) * st for s, st in zip(sizes, strides))
    base = torch.empty(max(need, 1))
    return base.as_strided(tuple(sizes), tuple(strides), offset)


def geom(x):
    return tuple(x.shape), tuple(x.stride()), x.storage_offset()


def outcome(fn):
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 - the type is what we compare
        return ("err", type(e), str(e))
    if isinstance(r, torch.Tensor):
        return ("ok", geom(r))
    if isinstance(r, torch.Size):
        return ("ok", tuple(r))
    return ("ok", r)


def check(torch_fn, onion_fn, case):
    expected = outcome(torch_fn)
    got = outcome(onion_fn)
    assert got == expected, f"{case}: onion {got} != torch {expected}"
    return expected


def rand_geometry(rng, max_ndim=4, max_size=4, allow_zero=True):
    """Random (sizes, strides, offset): permuted / sliced / expanded / arbitrary strides."""
    ndim = rng.randint(0, max_ndim)
    lo = 0 if allow_zero and rng.random() < 0.15 else 1
    sizes = tuple(rng.choice([lo, 1, 1, 2, 3, max_size]) for _ in range(ndim))
    kind = rng.random()
    if kind < 0.25:
        strides = vg.contiguous_strides(sizes)
    elif kind < 0.6:
        # a permuted, maybe sliced-with-steps, maybe expanded dense tensor
        steps = [rng.choice([1, 1, 2, 3]) for _ in range(ndim)]
        big = [s * st + rng.choice([0, 0, 1]) for s, st in zip(sizes, steps)]
        perm = list(range(ndim))
        rng.shuffle(perm)
        dense = [0] * ndim
        acc = 1
        for p in reversed(perm):
            dense[p] = acc
            acc *= max(big[p], 1)
        strides = tuple(d * st for d, st in zip(dense, steps))
        strides = tuple(0 if rng.random() < 0.15 else s for s in strides)
    else:
        strides = tuple(rng.choice([0, 1, 1, 2, 3, 4, 6, 12, 24]) for _ in range(ndim))
    offset = rng.choice([0, 0, 1, 5])
    return sizes, strides, offset


# --------------------------------------------------------------------------
# wrap_dim, infer_size, contiguity
# --------------------------------------------------------------------------

def test_wrap_dim():
    for ndim in range(0, 4):
        x = torch.empty((2,) * ndim)
        for d in range(-5, 5):
            expected = outcome(lambda: x.transpose(d, d))
            got = outcome(lambda: vg.wrap_dim(d, ndim))
            if expected[0] == "err":
                assert got == expected, (ndim, d)
            else:
                assert got == ("ok", d % max(ndim, 1)), (ndim, d)


def test_wrap_dim_message():
    with pytest.raises(IndexError, match=r"^Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)$"):
        vg.wrap_dim(2, 2)
    assert vg.wrap_dim(-1, 0) == 0 and vg.wrap_dim(0, 0) == 0


INFER_CASES = [
    ((2, 3), 6), ((-1,), 6), ((-1, 3), 6), ((2, -1), 6), ((-1, -1), 6), ((2, 5), 6),
    ((-1, 4), 6), ((-2, 3), 6), ((-1, 0), 6), ((-1, 0), 0), ((0, -1), 0), ((-1,), 0),
    ((), 6), ((), 1), ((-1,), 1), ((1, -1, 1), 1), ((0, 3), 0), ((3, 0, -1), 0),
    ((2, -1, 0), 0), ((-3,), 0), ((4, -1), 6), ((-1, 1, 1), 0),
]


@pytest.mark.parametrize("shape,n", INFER_CASES)
def test_infer_size(shape, n):
    x = torch.empty(n)
    check(lambda: x.view(shape), lambda: (vg.infer_size(shape, n), vg.contiguous_strides(vg.infer_size(shape, n)), 0),
          (shape, n))


def test_contiguity_predicates():
    rng = random.Random(0)
    for _ in range(1500):
        sizes, strides, off = rand_geometry(rng, max_ndim=5)
        x = make(sizes, strides, off)
        assert vg.is_contiguous(sizes, strides) == x.is_contiguous(), (sizes, strides)
        assert vg.is_channels_last_contiguous(sizes, strides) == x.is_contiguous(
            memory_format=torch.channels_last), (sizes, strides)
        # empty_like(preserve_format) keeps the strides exactly when the input is non-overlapping and dense
        assert vg.is_non_overlapping_and_dense(sizes, strides) == (torch.empty_like(x).stride() == x.stride()), \
            (sizes, strides)


def test_contiguous_and_channels_last_strides():
    for sizes in [(), (0,), (3,), (2, 0, 3), (0, 0), (2, 3, 4), (1, 1), (2, 1, 0, 4)]:
        assert vg.contiguous_strides(sizes) == torch.empty(sizes).stride()
    for sizes in [(2, 3, 4, 5), (2, 0, 3, 4), (1, 3, 1, 1), (0, 2, 2, 2), (2, 3, 0, 4)]:
        assert vg.channels_last_strides(sizes) == torch.empty(sizes, memory_format=torch.channels_last).stride()


# --------------------------------------------------------------------------
# view / reshape
# --------------------------------------------------------------------------

def _factor_shapes(n, rng, count):
    out = []
    for _ in range(count):
        shape = []
        rem = n
        while rem > 1 and len(shape) < 5:
            divs = [d for d in range(1, rem + 1) if rem % d == 0]
            d = rng.choice(divs)
            shape.append(d)
            rem //= d
        if rem != 1 or not shape:
            shape.append(rem)
        for _ in range(rng.randint(0, 2)):
            shape.insert(rng.randint(0, len(shape)), 1)
        if rng.random() < 0.3:
            shape[rng.randrange(len(shape))] = -1
        out.append(tuple(shape))
    return out


def test_view_random():
    rng = random.Random(1)
    ok = err = 0
    for _ in range(1500):
        sizes, strides, off = rand_geometry(rng)
        if rng.random() < 0.3:
            strides = tuple(1 if s == 0 else s for s in strides)
        x = make(sizes, strides, off)
        n = x.numel()
        shapes = _factor_shapes(n, rng, 3) if n else [(0,), (0, -1), (2, 0), (-1,), (0, 3, 1), sizes]
        shapes.append((n + 1,))
        shapes.append(tuple(sizes))
        for shape in shapes:
            r = check(lambda: x.view(shape), lambda: vg.view(sizes, strides, off, shape),
                      ("view", sizes, strides, off, shape))
            ok += r[0] == "ok"
            err += r[0] == "err"
    assert ok > 1000 and err > 300


def test_view_hand_picked():
    cases = [
        ((2, 3), (1, 2), 0, (6,)),                 # transposed: impossible
        ((2, 3), (1, 2), 0, (3, 2)),
        ((2, 3), (1, 2), 0, (2, 3, 1)),
        ((2, 1, 3), (3, 100, 1), 0, (2, 1, 3)),    # size-1 stride gets recomputed
        ((4, 3), (6, 1), 2, (2, 2, 3)),            # sliced rows stay viewable
        ((4, 3), (6, 1), 2, (12,)),
        ((4, 3), (6, 2), 0, (2, 6)),
        ((2, 3, 4), (12, 1, 3), 0, (2, 12)),
        ((2, 3, 4), (12, 1, 3), 0, (6, 4)),
        ((2, 3, 4), (1, 8, 2), 0, (6, 4)),
        ((3, 4), (0, 1), 0, (12,)),
        ((3, 4), (0, 1), 0, (3, 2, 2)),
        ((0, 3), (1, 1), 5, (0, 3)),
        ((0, 3), (1, 1), 5, (3, 0)),
        ((0, 3), (7, 7), 5, (-1,)),
        ((), (), 3, (1, 1)),
        ((), (), 3, ()),
        ((1,), (9,), 0, ()),
    ]
    for sizes, strides, off, shape in cases:
        x = make(sizes, strides, off)
        check(lambda: x.view(shape), lambda: vg.view(sizes, strides, off, shape), (sizes, strides, off, shape))


def _reshape_outcome(x, shape):
    r = x.reshape(shape)
    if r.untyped_storage().data_ptr() == x.untyped_storage().data_ptr() and x.numel():
        return (tuple(r.shape), tuple(r.stride()))
    if x.numel() == 0:
        return (tuple(r.shape), tuple(r.stride()))
    return None


def test_reshape_is_view():
    rng = random.Random(2)
    views = copies = 0
    for _ in range(1000):
        sizes, strides, off = rand_geometry(rng)
        x = make(sizes, strides, off)
        n = x.numel()
        shapes = _factor_shapes(n, rng, 3) if n else [(0,), (2, 0), (0, 1, 5)]
        shapes.append((n + 1, 1))
        for shape in shapes:
            r = check(lambda: _reshape_outcome(x, shape), lambda: vg.reshape_is_view(sizes, strides, shape),
                      ("reshape", sizes, strides, shape))
            if r[0] == "ok":
                views += r[1] is not None
                copies += r[1] is None
    assert views > 300 and copies > 100


# --------------------------------------------------------------------------
# dimension shuffles
# --------------------------------------------------------------------------

def test_t_and_transpose():
    rng = random.Random(3)
    for _ in range(600):
        sizes, strides, off = rand_geometry(rng)
        x = make(sizes, strides, off)
        check(lambda: x.t(), lambda: vg.t(sizes, strides, off), ("t", sizes))
        n = len(sizes)
        d0 = rng.randint(-n - 1, n)
        d1 = rng.randint(-n - 1, n)
        check(lambda: x.transpose(d0, d1), lambda: vg.transpose(sizes, strides, off, d0, d1),
              ("transpose", sizes, d0, d1))


def test_permute():
    rng = random.Random(4)
    for _ in range(600):
        sizes, strides, off = rand_geometry(rng)
        x = make(sizes, strides, off)
        n = len(sizes)
        dims = list(range(n))
        rng.shuffle(dims)
        dims = [d - n if rng.random() < 0.3 else d for d in dims]
        r = rng.random()
        if r < 0.1 and n:
            dims[rng.randrange(n)] = dims[rng.randrange(n)]      # maybe a duplicate
        elif r < 0.2:
            dims.append(rng.randint(0, n))                        # wrong length
        elif r < 0.3 and n:
            dims[rng.randrange(n)] = rng.choice([n, -n - 1])      # out of range
        dims = tuple(dims)
        check(lambda: x.permute(dims), lambda: vg.permute(sizes, strides, off, dims), ("permute", sizes, dims))


def test_expand():
    rng = random.Random(5)
    for _ in range(1000):
        sizes, strides, off = rand_geometry(rng)
        x = make(sizes, strides, off)
        target = []
        for s in sizes:
            if s == 1:
                target.append(rng.choice([1, 3, -1, 0]))
            else:
                target.append(rng.choice([s, s, -1, s + 1]) if rng.random() < 0.9 else rng.choice([1, -2]))
        for _ in range(rng.choice([0, 0, 1, 2])):
            target.insert(0, rng.choice([1, 2, 0, -1] if rng.random() < 0.1 else [1, 2, 3]))
        if rng.random() < 0.05 and target:
            target.pop()
        target = tuple(target)
        check(lambda: x.expand(target), lambda: vg.expand(sizes, strides, off, target), ("expand", sizes, target))


def test_expand_messages_and_type_str():
    x = torch.empty(2, 3)
    check(lambda: x.expand(3), lambda: vg.expand((2, 3), (3, 1), 0, (3,)), "rank")
    d = x.double()
    check(lambda: d.expand(3), lambda: vg.expand((2, 3), (3, 1), 0, (3,), vg.legacy_type_str("Double")), "double")
    b = x.bool()
    check(lambda: b.expand(3), lambda: vg.expand((2, 3), (3, 1), 0, (3,), vg.legacy_type_str("Bool")), "bool")
    m = torch.empty(2, 3, device="meta")
    check(lambda: m.expand(3), lambda: vg.expand((2, 3), (3, 1), 0, (3,), vg.legacy_type_str("Float", "meta")), "m")
    s = torch.empty(())
    for shape in [(-1,), (3, -1), (0, 2), (2, 3)]:
        check(lambda: s.expand(shape), lambda: vg.expand((), (), 0, shape), shape)
    e = torch.empty(0)
    check(lambda: e.expand(-2, 0), lambda: vg.expand((0,), (1,), 0, (-2, 0)), "neg-size with zero")


def test_unsqueeze_squeeze():
    rng = random.Random(6)
    for _ in range(800):
        sizes, strides, off = rand_geometry(rng)
        x = make(sizes, strides, off)
        n = len(sizes)
        d = rng.randint(-n - 2, n + 1)
        check(lambda: x.unsqueeze(d), lambda: vg.unsqueeze(sizes, strides, off, d), ("unsqueeze", sizes, d))
        check(lambda: x.squeeze(), lambda: vg.squeeze(sizes, strides, off), ("squeeze", sizes))
        d = rng.randint(-n - 1, n)
        check(lambda: x.squeeze(d), lambda: vg.squeeze(sizes, strides, off, d), ("squeeze", sizes, d))
        dims = tuple(rng.randint(-n - 1 if rng.random() < 0.1 else -max(n, 1), max(n, 1) - 1)
                     for _ in range(rng.randint(0, n + 1)))
        check(lambda: x.squeeze(dims), lambda: vg.squeeze(sizes, strides, off, dims), ("squeeze", sizes, dims))


# --------------------------------------------------------------------------
# indexing views
# --------------------------------------------------------------------------

def test_select():
    rng = random.Random(7)
    for _ in range(800):
        sizes, strides, off = rand_geometry(rng)
        x = make(sizes, strides, off)
        n = len(sizes)
        d = rng.randint(-n - 1, n)
        i = rng.randint(-6, 6)
        check(lambda: x.select(d, i), lambda: vg.select(sizes, strides, off, d, i), ("select", sizes, d, i))


def test_select_message():
    x = torch.empty(3, 4)
    with pytest.raises(IndexError) as e:
        x.select(0, 5)
    with pytest.raises(IndexError) as f:
        vg.select((3, 4), (4, 1), 0, 0, 5)
    assert str(e.value) == str(f.value) == "select(): index 5 out of range for tensor of size [3, 4] at dimension 0"


def test_slice():
    rng = random.Random(8)
    big = 2 ** 63 - 1
    choices = [None, None, -8, -3, -1, 0, 1, 2, 3, 8, big, -big]
    for _ in range(1500):
        sizes, strides, off = rand_geometry(rng)
        x = make(sizes, strides, off)
        n = len(sizes)
        d = rng.randint(-n - 1, n)
        st = rng.choice([1, 1, 2, 3, 5, 0, -1])
        a = rng.choice(choices)
        b = rng.choice(choices)
        check(lambda: torch.ops.aten.slice.Tensor(x, d, a, b, st),
              lambda: vg.slice(sizes, strides, off, d, a, b, st), ("slice", sizes, d, a, b, st))


def test_diagonal():
    rng = random.Random(9)
    for _ in range(800):
        sizes, strides, off = rand_geometry(rng)
        x = make(sizes, strides, off)
        n = len(sizes)
        o = rng.randint(-5, 5)
        d1 = rng.randint(-n - 1, n)
        d2 = rng.randint(-n - 1, n)
        check(lambda: x.diagonal(o, d1, d2), lambda: vg.diagonal(sizes, strides, off, o, d1, d2),
              ("diagonal", sizes, o, d1, d2))
        check(lambda: x.diagonal(), lambda: vg.diagonal(sizes, strides, off), ("diagonal", sizes))


def test_alias():
    x = make((2, 3), (1, 4), 3)
    check(lambda: torch.ops.aten.alias(x), lambda: vg.alias((2, 3), (1, 4), 3), "alias")


AS_STRIDED_CASES = [
    ((2, 3), (3, 1), None), ((2, 3), (1, 1), -1), ((2, 3), (-1, 1), None), ((2, 3), (1,), None),
    ((2, -3), (1, 1), None), ((-3,), (0,), None), ((3,), (0,), 100), ((3,), (1,), -1), ((3, 0), (1, 1), -1),
    ((3, 0), (1, 1), 1000), ((2, 3), (2 ** 62, 1), None), ((2, 3), (1, 1), 2 ** 62), ((2, 3), (1, 1), 5),
    ((2, 3), (1, 1), 3), ((2, 3), (1, 1), 2), ((2, 3), (2 ** 60, 1), None), ((2, 2 ** 61), (0, 0), None),
    ((2, -1), (0, 0), None), ((2, -1), (0, 1), None), ((2, -1), (1, 0), None), ((1, -2), (1, 1), None),
    ((2, 2 ** 62, 2 ** 62), (0, 0, 0), None), ((0, -3), (1, 1), None), ((-3, 0), (1, 1), None),
    ((), (), None), ((), (), 23), ((), (), 24), ((6,), (1,), 0), ((7,), (1,), 0), ((2, 2), (0, 0), 7),
    ((2, 3), (1, 1), -2 ** 63), ((2, 3), (1, 1), 2 ** 63 - 1),
]


@pytest.mark.parametrize("size,stride,storage_offset", AS_STRIDED_CASES)
def test_as_strided(size, stride, storage_offset):
    x = torch.empty(24)[2:8]            # storage of 96 bytes, offset 2
    args = (size, stride) if storage_offset is None else (size, stride, storage_offset)
    check(lambda: x.as_strided(*args),
          lambda: vg.as_strided((6,), (1,), 2, size, stride, storage_offset, itemsize=4, storage_nbytes=96),
          (size, stride, storage_offset))


def test_as_strided_random():
    rng = random.Random(10)
    for _ in range(600):
        sizes, strides, off = rand_geometry(rng)
        x = make(sizes, strides, off)
        nbytes = x.untyped_storage().nbytes()
        sz, st, o = rand_geometry(rng)
        o = rng.choice([None, o, o + 3])
        args = (sz, st) if o is None else (sz, st, o)
        check(lambda: x.as_strided(*args),
              lambda: vg.as_strided(sizes, strides, off, sz, st, o, itemsize=4, storage_nbytes=nbytes),
              ("as_strided", sizes, off, nbytes, args))


# --------------------------------------------------------------------------
# broadcasting
# --------------------------------------------------------------------------

BROADCAST_CASES = [
    [(2,), (3,)], [(2, 3), (3, 2)], [(2, 3), (3, 2), (5,)], [(3,), (2, 3), (4,)], [(5,), (1,)], [3, (3,)],
    [()], [], [(1, -1), (1,)], [(2,), (0,)], [(0,), (1,)], [(0,), (2,)], [(2, 0), (2, 1)], [[2, 3], None],
    [[2, 3], [4]], [(-1,), (-1,)], [(-1,), (2,)], [(2,), (-1,)], [(2,), (3, 1), (1, 1, 1)],
    [(1, 4), (3, 1), (2, 1, 1)], [(5, 1, 3), (4, 1)],
]


@pytest.mark.parametrize("shapes", BROADCAST_CASES)
def test_broadcast_shapes(shapes):
    check(lambda: torch.broadcast_shapes(*shapes), lambda: vg.broadcast_shapes(*shapes), shapes)


def test_broadcast_shapes_random():
    rng = random.Random(11)
    for _ in range(1000):
        shapes = [tuple(rng.choice([0, 1, 1, 2, 3]) for _ in range(rng.randint(0, 3)))
                  for _ in range(rng.randint(1, 4))]
        check(lambda: torch.broadcast_shapes(*shapes), lambda: vg.broadcast_shapes(*shapes), shapes)


def test_broadcast_pair_for_op():
    rng = random.Random(12)
    for _ in range(1000):
        a = tuple(rng.choice([0, 1, 1, 2, 3]) for _ in range(rng.randint(0, 4)))
        b = tuple(rng.choice([0, 1, 1, 2, 3]) for _ in range(rng.randint(0, 4)))
        check(lambda: tuple((torch.empty(a) + torch.empty(b)).shape), lambda: vg.broadcast_pair_for_op(a, b), (a, b))


# --------------------------------------------------------------------------
# TensorIterator output layout
# --------------------------------------------------------------------------

def _layout(rng, shape):
    """A random input layout broadcastable to ``shape``: drop leading dims, size-1 dims,
    permutations, stepped slices, expands, odd strides on size-1 dims."""
    nd = len(shape)
    keep = rng.randint(0, nd) if rng.random() < 0.3 else nd
    sizes = list(shape[nd - keep:])
    for i in range(len(sizes)):
        if rng.random() < 0.2:
            sizes[i] = 1
    sizes = tuple(sizes)
    n = len(sizes)
    kind = rng.random()
    if kind < 0.3:
        strides = list(vg.contiguous_strides(sizes))
    else:
        perm = list(range(n))
        rng.shuffle(perm)
        if kind < 0.5 and n == 4:
            perm = [0, 2, 3, 1]                     # channels-last
        steps = [rng.choice([1, 1, 1, 2]) for _ in range(n)]
        dense = [0] * n
        acc = 1
        for p in reversed(perm):
            dense[p] = acc
            acc *= max(sizes[p] * steps[p] + rng.choice([0, 0, 1]), 1)
        strides = [d * s for d, s in zip(dense, steps)]
    for i in range(n):
        if rng.random() < 0.1:
            strides[i] = 0                          # expanded
        if sizes[i] == 1 and rng.random() < 0.3:
            strides[i] = rng.choice([0, 1, 7, 100])  # arbitrary stride on a size-1 dim
    return sizes, tuple(strides)


def _rand_out_shape(rng):
    nd = rng.randint(0, 5)
    return tuple(rng.choice([0, 1, 2, 2, 3, 3, 4, 5]) if rng.random() > 0.05 else 0 for _ in range(nd))


def _torch_out_strides(fn, layouts):
    ts = [make(s, st, 0) for s, st in layouts]
    return fn(*ts).stride()


def test_output_strides_binary_random():
    rng = random.Random(13)
    non_contig = 0
    for _ in range(1500):
        shape = _rand_out_shape(rng)
        if rng.random() < 0.3:
            a = b = _layout(rng, shape)             # identical layouts: fast path
        else:
            a, b = _layout(rng, shape), _layout(rng, shape)
        out_shape = vg.broadcast_shapes(a[0], b[0])
        expected = _torch_out_strides(torch.add, [a, b])
        got = vg.output_strides_like(out_shape, [a, b])
        assert got == expected, ("add", a, b, out_shape, got, expected)
        non_contig += expected != vg.contiguous_strides(out_shape)
    assert non_contig > 300


def test_output_strides_unary_and_ternary_random():
    rng = random.Random(14)
    for _ in range(600):
        shape = _rand_out_shape(rng)
        a = _layout(rng, shape)
        expected = _torch_out_strides(torch.neg, [a])
        assert vg.output_strides_like(a[0], [a]) == expected, ("neg", a, expected)
        lays = [_layout(rng, shape) for _ in range(3)]
        out_shape = vg.broadcast_shapes(*[s for s, _ in lays])
        expected = _torch_out_strides(torch.addcmul, lays)
        assert vg.output_strides_like(out_shape, lays) == expected, ("addcmul", lays, expected)


OUT_CASES = [
    # both transposed -> transposed output
    [((3, 4), (1, 3)), ((3, 4), (1, 3))],
    # contiguous + transposed -> contiguous
    [((3, 4), (4, 1)), ((3, 4), (1, 3))],
    [((3, 4), (1, 3)), ((3, 4), (4, 1))],
    # broadcast row with a transposed matrix
    [((3, 4), (1, 3)), ((4,), (1,))],
    [((4,), (1,)), ((3, 4), (1, 3))],
    [((3, 1), (1, 1)), ((1, 4), (4, 1))],
    # 0-dim operands
    [((), ()), ((3, 4), (1, 3))],
    [((), ()), ((), ())],
    # expanded inputs only
    [((3, 4), (0, 1)), ((3, 4), (1, 0))],
    [((3, 4), (0, 0)), ((3, 4), (0, 0))],
    # 0-size dims
    [((2, 0, 3), (1, 6, 2)), ((2, 0, 3), (1, 6, 2))],
    [((2, 0, 3), (1, 6, 2)), ((3,), (1,))],
    [((0, 3), (1, 0)), ((0, 1), (1, 3))],
    [((2, 0, 3), (0, 1, 0)), ((2, 1, 3), (1, 1, 2))],
    # channels-last, ties and size-1 dims
    [((2, 3, 4, 5), (60, 1, 15, 3)), ((2, 3, 4, 5), (60, 1, 15, 3))],
    [((2, 3, 4, 5), (60, 1, 15, 3)), ((2, 3, 4, 5), (60, 20, 5, 1))],
    [((2, 3, 1, 1), (3, 1, 3, 3)), ((2, 3, 1, 1), (3, 1, 1, 1))],
    [((2, 3, 4, 5), (60, 1, 15, 3)), ((3, 1, 1), (1, 1, 1))],
    [((2, 2), (2, 2)), ((2, 2), (1, 1))],
    [((2, 3, 4), (1, 2, 6)), ((2, 3, 4), (12, 4, 1))],
    [((2, 3, 4), (1, 2, 6)), ((2, 3, 4), (1, 2, 6))],
    [((1, 3, 1), (100, 1, 7)), ((1, 3, 1), (100, 1, 7))],
    [((4, 1, 3), (3, 50, 1)), ((4, 5, 3), (15, 1, 5))],
    # non-dense permuted (stepped) layouts
    [((3, 4), (2, 12)), ((3, 4), (2, 12))],
    [((3, 4), (2, 12)), ((3, 4), (1, 3))],
]


@pytest.mark.parametrize("operands", OUT_CASES)
def test_output_strides_hand_picked(operands):
    out_shape = vg.broadcast_shapes(*[s for s, _ in operands])
    fn = torch.add if len(operands) == 2 else torch.neg
    expected = _torch_out_strides(fn, operands)
    assert vg.output_strides_like(out_shape, operands) == expected


def test_output_strides_permutations_exhaustive():
    """Every pair of dim permutations of a 3-D and a 4-D dense tensor."""
    for shape in [(2, 3, 4), (2, 3, 2, 5), (2, 2, 3)]:
        n = len(shape)
        perms = list(itertools.permutations(range(n)))
        layouts = []
        for p in perms:
            dense = [0] * n
            acc = 1
            for d in reversed(p):
                dense[d] = acc
                acc *= shape[d]
            layouts.append((shape, tuple(dense)))
        for a in layouts:
            for b in layouts[:: 3 if n == 4 else 1]:
                expected = _torch_out_strides(torch.add, [a, b])
                assert vg.output_strides_like(shape, [a, b]) == expected, (a, b, expected)
