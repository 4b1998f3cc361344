"""c10's contiguity rules (onion.core.geometry) against PyTorch, over random sizes and strides:
is_contiguous (any memory format), non-overlapping-and-dense, the strides preserve_format infers,
the memory format the strides suggest."""
from __future__ import annotations

import random

import pytest

import onion
from onion.core import geometry as geo

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle


def _cases(n=400, seed=7):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        ndim = rng.choice((0, 1, 2, 3, 4, 4, 5))
        sizes = tuple(rng.choice((0, 1, 1, 2, 3, 4)) if rng.random() < 0.15 else rng.choice((1, 2, 3, 4))
                      for _ in range(ndim))
        kind = rng.random()
        if kind < 0.4:      # a permutation of dense strides, maybe with a step or a zero
            perm = list(range(ndim))
            rng.shuffle(perm)
            strides = [0] * ndim
            acc = 1
            for d in reversed(perm):
                strides[d] = acc
                acc *= max(sizes[d], 1)
            if ndim and rng.random() < 0.3:
                strides[rng.randrange(ndim)] *= rng.choice((0, 2))
        else:
            strides = [rng.choice((0, 1, 2, 3, 4, 6, 12, 24)) for _ in range(ndim)]
        out.append((sizes, tuple(strides)))
    return out


CASES = _cases()


def _torch_view(sizes, strides):
    return torch.empty(1000).as_strided(sizes, strides)


@pytest.mark.parametrize("chunk", range(8))
def test_contiguity_flags_match_torch(chunk):
    for sizes, strides in CASES[chunk::8]:
        t = _torch_view(sizes, strides)
        got = (geo.is_contiguous(sizes, strides),
               geo.is_contiguous_as(sizes, strides, "channels_last"),
               geo.is_contiguous_as(sizes, strides, "channels_last_3d"),
               geo.is_non_overlapping_and_dense(sizes, strides),
               geo.suggest_memory_format(sizes, strides))
        want = (t.is_contiguous(), t.is_contiguous(memory_format=torch.channels_last),
                t.is_contiguous(memory_format=torch.channels_last_3d),
                torch.empty_like(t).stride() == t.stride(),     # preserve_format keeps exactly the dense ones
                _suggested(t))
        assert got == want, (sizes, strides)


def _suggested(t):
    """torch's suggest_memory_format, read from what contiguous() leaves alone in to(memory_format=...)."""
    for name in ("channels_last", "channels_last_3d"):
        if t.dim() == (4 if name == "channels_last" else 5) and t.to(memory_format=getattr(torch, name)) is t:
            return name
    return "contiguous_format"


@pytest.mark.parametrize("chunk", range(8))
def test_preserve_format_strides_match_empty_like(chunk):
    for sizes, strides in CASES[chunk::8]:
        t = _torch_view(sizes, strides)
        assert geo.preserve_strides(sizes, strides) == torch.empty_like(t).stride(), (sizes, strides)
        o = onion.empty(1000).as_strided(sizes, strides)
        for fn in (lambda x: x.clone(), lambda x: onion.empty_like(x) if isinstance(x, onion.Tensor)
                   else torch.empty_like(x), lambda x: x.to(x.dtype, copy=True), lambda x: x.double()):
            assert fn(o).stride() == fn(t).stride(), (sizes, strides)
        assert (o.is_contiguous(), o.is_contiguous(memory_format=onion.channels_last)) == \
            (t.is_contiguous(), t.is_contiguous(memory_format=torch.channels_last))


def test_empty_strided_view_is_contiguous():
    o, t = onion.ones(2, 1, 4)[:, 1:, ::2], torch.ones(2, 1, 4)[:, 1:, ::2]
    assert (o.shape, o.stride(), o.is_contiguous()) == (tuple(t.shape), t.stride(), t.is_contiguous()) == \
        ((2, 0, 2), (4, 4, 2), True)


@pytest.mark.parametrize("chunk", range(4))
def test_meta_like_strides_match_torch_meta(chunk):
    """On Meta PyTorch's *_like follow its Python reference's rule, not ATen's: so does onion's."""
    for sizes, strides in CASES[chunk::4]:
        t = torch.empty_strided(sizes, strides, device="meta")
        o = onion.empty_strided(sizes, strides, device="meta")
        assert o.stride() == t.stride()
        assert geo.meta_like_strides(sizes, strides) == torch.empty_like(t).stride(), (sizes, strides)
        assert onion.zeros_like(o).stride() == torch.zeros_like(t).stride(), (sizes, strides)
        assert o.clone().stride() == t.clone().stride(), (sizes, strides)
