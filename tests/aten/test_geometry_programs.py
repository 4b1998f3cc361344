"""Random small programs of views, broadcasting elementwise ops, reductions and copies, run in onion and in
PyTorch: after every step the shapes, strides and is_contiguous() must agree (on CPU and on Meta).

The strides PyTorch picks on size-1 dims and for freshly allocated outputs come from several rules
(computeStride for view, unsqueeze's size*stride, TensorIterator's dim permutation, preserve_format's
infer_dense_strides); a generator is the cheap way to meet their combinations.  Each program is drawn
from its seed while it runs on PyTorch (so every step fits the shape at hand), then replayed on onion.
"""
from __future__ import annotations

import random

import pytest

import onion

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

N_PROGRAMS = 300
CHUNK = 25


def _index(dim, sl):
    return (slice(None),) * dim + (sl,)


def _rand_shape(rng, ndim):
    return tuple(rng.choice((1, 1, 2, 3, 4)) for _ in range(ndim))


def _broadcast_partner(rng, shape):
    """A shape that broadcasts with ``shape``: some dims set to 1, maybe fewer dims, maybe more."""
    out = [1 if rng.random() < 0.4 else s for s in shape]
    if out and rng.random() < 0.3:
        out = out[rng.randrange(len(out) + 1):]
    if rng.random() < 0.15:
        out = [rng.choice((1, 2))] + out
    return tuple(out)


def _layout(rng, ndim):
    """A way to lay out a fresh operand: contiguous, permuted, stepped or expanded."""
    kind = rng.choice(("contig", "contig", "perm", "step", "t"))
    if kind == "perm" and ndim >= 2:
        perm = list(range(ndim))
        rng.shuffle(perm)
        inv = [perm.index(i) for i in range(ndim)]
        return f"perm{tuple(inv)}", lambda L, shape: L.ones([shape[p] for p in perm]).permute(*inv)
    if kind == "step" and ndim >= 1:
        d = rng.randrange(ndim)

        def stepped(L, shape):
            big = list(shape)
            big[d] *= 2
            return L.ones(big)[_index(d, slice(None, None, 2))]
        return f"step{d}", stepped
    if kind == "t" and ndim == 2:
        return "t", lambda L, shape: L.ones(shape[::-1]).t()
    return "", lambda L, shape: L.ones(shape)


def _step(rng, x):
    """One random step (name, fn(L, x)) that is valid for the torch tensor ``x``."""
    n = x.dim()
    shape = tuple(x.shape)
    choices = ["unsqueeze", "binary", "binary", "scalar", "sum", "clone", "like", "contiguous", "reshape",
               "reduce", "unary", "where", "convert", "none-index", "inplace", "int-operand"]
    if n == 4:
        choices += ["channels-last"]
    if n >= 2:
        choices += ["permute", "transpose", "transpose", "diagonal"]
    if n >= 1:
        choices += ["slice", "slice", "select", "expand", "expand", "squeeze"]
    name = rng.choice(choices)
    if name == "permute":
        perm = list(range(n))
        rng.shuffle(perm)
        return f"permute{tuple(perm)}", lambda L, x: x.permute(*perm)
    if name == "transpose":
        d0, d1 = rng.randrange(n), rng.randrange(n)
        return f"transpose({d0},{d1})", lambda L, x: x.transpose(d0, d1)
    if name == "slice":
        d = rng.randrange(n)
        start = rng.choice((None, 0, 1))
        step = rng.choice((1, 2, 3))
        sl = slice(start, None, step)
        return f"slice(dim={d},{start}::{step})", lambda L, x: x[_index(d, sl)]
    if name == "select":
        d = rng.randrange(n)
        if shape[d] == 0:
            return "alias", lambda L, x: x[:]
        i = rng.randrange(shape[d])
        return f"select({d},{i})", lambda L, x: x.select(d, i)
    if name == "unsqueeze":
        d = rng.randrange(-n - 1, n + 1)
        return f"unsqueeze({d})", lambda L, x: x.unsqueeze(d)
    if name == "squeeze":
        d = rng.randrange(n)
        return f"squeeze({d})", lambda L, x: x.squeeze(d)
    if name == "expand":
        target = [rng.choice((2, 3)) if s == 1 and rng.random() < 0.6 else (-1 if rng.random() < 0.3 else s)
                  for s in shape]
        if rng.random() < 0.3:
            target = [rng.choice((1, 2))] + target
        return f"expand{tuple(target)}", lambda L, x: x.expand(*target)
    if name == "reshape":
        numel = x.numel()
        dims = []
        rest = numel
        for f in (2, 3, 2, 1):
            if rest % f == 0 and rng.random() < 0.5:
                dims.append(f)
                rest //= f
        dims.append(rest)
        rng.shuffle(dims)
        if rng.random() < 0.3:
            dims.insert(rng.randrange(len(dims) + 1), 1)
        if rng.random() < 0.3:
            dims[rng.randrange(len(dims))] = -1 if dims.count(-1) == 0 else dims[0]
        use_view = rng.random() < 0.5
        if use_view:
            return f"view{tuple(dims)}", lambda L, x: x.view(*dims)
        return f"reshape{tuple(dims)}", lambda L, x: x.reshape(*dims)
    if name == "binary":
        other = _broadcast_partner(rng, shape)
        how, make = _layout(rng, len(other))
        op = rng.choice(("add", "mul", "sub"))
        swap = rng.random() < 0.5

        def binary(L, x):
            y = make(L, other).to(x.device)
            a, b = (y, x) if swap else (x, y)
            return getattr(L, op)(a, b)
        return f"{op}({'other, x' if swap else 'x, other'}{other}{how})", binary
    if name == "scalar":
        kind = rng.choice(("python", "zero-dim", "unary"))
        if kind == "python":
            return "x * 2", lambda L, x: x * 2
        if kind == "zero-dim":
            return "x + tensor(1.)", lambda L, x: x + L.tensor(1.0).to(x.device)
        return "exp", lambda L, x: x.exp()
    if name == "sum":
        if n == 0:
            return "sum()", lambda L, x: x.sum()
        k = rng.randrange(1, n + 1)
        dims = sorted(rng.sample(range(n), k))
        keep = rng.random() < 0.6
        return f"sum({dims}, keepdim={keep})", lambda L, x: x.sum(dims, keepdim=keep)
    if name == "reduce":
        if n == 0:
            return "mean()", lambda L, x: x.mean()
        d = rng.randrange(-n, n)
        keep = rng.random() < 0.6
        op = rng.choice(("mean", "amax"))
        if op == "amax" and x.numel() == 0:
            op = "mean"
        return f"{op}({d}, keepdim={keep})", lambda L, x: getattr(x, op)(d, keepdim=keep)
    if name == "unary":
        op = rng.choice(("neg", "abs", "sin"))
        return op, lambda L, x: getattr(x, op)()
    if name == "where":
        cond_shape = _broadcast_partner(rng, shape)
        how, make = _layout(rng, len(cond_shape))

        def where(L, x):
            cond = make(L, cond_shape).to(x.device) > 0
            return L.where(cond, x, 0.0 * x)
        return f"where(cond{cond_shape}{how}, x, 0*x)", where
    if name == "convert":
        kind = rng.choice(("double", "to-float64", "to-copy", "half"))
        if kind == "double":
            return "double", lambda L, x: x.double()
        if kind == "half":
            return "half", lambda L, x: x.half()
        if kind == "to-float64":
            return "to(float64)", lambda L, x: x.to(L.float64)
        return "to(copy=True)", lambda L, x: x.to(x.dtype, copy=True)
    if name == "inplace":
        other = tuple(1 if rng.random() < 0.5 else sz for sz in shape)
        how, make = _layout(rng, len(other))
        return f"add_(other{other}{how})", lambda L, x: x.add_(make(L, other).to(x.device))
    if name == "int-operand":
        other = _broadcast_partner(rng, shape)
        how, make = _layout(rng, len(other))
        return f"mul(x, int other{other}{how})", lambda L, x: L.mul(x, make(L, other).to(x.device).to(L.int64))
    if name == "channels-last":
        kind = rng.choice(("contiguous", "clone", "to"))
        if kind == "contiguous":
            return "contiguous(channels_last)", lambda L, x: x.contiguous(memory_format=L.channels_last)
        if kind == "clone":
            return "clone(channels_last)", lambda L, x: x.clone(memory_format=L.channels_last)
        return "to(float64, channels_last)", lambda L, x: x.to(L.float64, memory_format=L.channels_last)
    if name == "none-index":
        return "x[None, ..., None]", lambda L, x: x[None, ..., None]
    if name == "diagonal":
        d0, d1 = rng.sample(range(n), 2)
        off = rng.choice((0, 0, 1, -1))
        return f"diagonal({off},{d0},{d1})", lambda L, x: x.diagonal(off, d0, d1)
    if name == "clone":
        return "clone", lambda L, x: x.clone()
    if name == "contiguous":
        return "contiguous", lambda L, x: x.contiguous()
    like = rng.choice(("empty_like", "zeros_like", "ones_like"))
    return like, lambda L, x: getattr(L, like)(x)


def _outcome(fn):
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001 - the exception type is what is compared
        return "raised", e


def _geom(t):
    return tuple(t.shape), tuple(t.stride()), t.is_contiguous()


def _program(seed, device):
    """Run one random program on torch, drawing its steps; returns (steps, torch geometries)."""
    rng = random.Random(seed)
    ndim = rng.randrange(1, 5)
    shape = _rand_shape(rng, ndim)
    how, make = _layout(rng, ndim)
    steps = [(f"start{shape}{how}", lambda L, x, shape=shape, make=make: make(L, shape).to(device))]
    x = steps[0][1](torch, None)
    geoms = [("ok", _geom(x))]
    for _ in range(rng.randrange(2, 7)):
        name, fn = _step(rng, x)
        res = _outcome(lambda: fn(torch, x))
        steps.append((name, fn))
        if res[0] != "ok":
            geoms.append(("raised", type(res[1])))
            break
        x = res[1]
        geoms.append(("ok", _geom(x)))
        if x.numel() > 400:
            break
    return steps, geoms


def _replay(steps):
    x = None
    geoms = []
    for _name, fn in steps:
        res = _outcome(lambda: fn(onion, x))
        if res[0] != "ok":
            geoms.append(("raised", res[1]))
            break
        x = res[1]
        geoms.append(("ok", _geom(x)))
    return geoms


def _same(og, tg):
    if og[0] != tg[0]:
        return False
    if og[0] == "raised":
        return type(og[1]).__name__ == tg[1].__name__
    return og[1] == tg[1]


@pytest.mark.parametrize("device", ("cpu", "meta"))
@pytest.mark.parametrize("first", range(0, N_PROGRAMS, CHUNK))
def test_random_programs_match_torch_geometry(first, device):
    bad = []
    for seed in range(first, first + CHUNK):
        steps, want = _program(seed, device)
        got = _replay(steps)
        for i, (g, w) in enumerate(zip(got, want)):
            if not _same(g, w):
                bad.append(f"seed {seed}: " + " -> ".join(n for n, _ in steps[:i + 1]) + f": onion {g} torch {w}")
                break
    assert not bad, "\n".join(bad)
