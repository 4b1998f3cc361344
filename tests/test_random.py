"""Random sampling against PyTorch: after the same seed, onion draws PyTorch's CPU stream.

Exact equality (values and the generator's state bytes afterwards) for every sampler, float32 and
float64, sizes on both sides of PyTorch's algorithm switches (normal's 16-element Box-Muller blocks,
randint's 2^28 range, Fisher-Yates for randperm).  Two exceptions, each named where it is tested:
float32 ``normal_``/``randn`` of 16 or more contiguous elements go through PyTorch's AVX2 kernel, whose
vectorised log/sin/cos differ from the C library's in the last bits (agreement to float rounding), and
``bernoulli_(p)`` with a scalar p draws from MKL's own generator on Intel CPUs with an MKL build (compared
in distribution there).
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import onion

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

SEEDS = (0, 12345)
SIZES = (1, 15, 16, 17, 1000, 100000)
DTYPES = ("float32", "float64")


def arr(t):
    return np.asarray(t._impl._array)


def tarr(t):
    return t.detach().numpy()


def gens(seed):
    return onion.Generator().manual_seed(seed), torch.Generator().manual_seed(seed)


def same_state(go, gt):
    return np.array_equal(arr(go.get_state()), tarr(gt.get_state()))


def assert_same(a, b, exact=True, dtype=None):
    assert a.shape == b.shape
    if exact:
        assert np.array_equal(a, b, equal_nan=True), f"{int((a != b).sum())} of {a.size} values differ"
    else:
        tol = dict(rtol=3e-6, atol=3e-6) if dtype == "float32" else dict(rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(a, b, equal_nan=True, **tol)


def _mkl_bernoulli() -> bool:
    """PyTorch's scalar-p bernoulli_ uses MKL's VSL stream on Intel CPUs when built with MKL."""
    if not torch.backends.mkl.is_available():
        return False
    try:
        with open("/proc/cpuinfo") as f:
            return "GenuineIntel" in f.read(4096)
    except OSError:
        return False


# (name, onion sampler, torch sampler, exact): each takes (generator, dtype name, n)
def _on(dt):
    return getattr(onion, dt)


def _tn(dt):
    return getattr(torch, dt)


SAMPLERS = [
    ("rand", lambda g, d, n: onion.rand(n, generator=g, dtype=_on(d)),
     lambda g, d, n: torch.rand(n, generator=g, dtype=_tn(d)), True),
    ("uniform_", lambda g, d, n: onion.empty(n, dtype=_on(d)).uniform_(-2.5, 7.1, generator=g),
     lambda g, d, n: torch.empty(n, dtype=_tn(d)).uniform_(-2.5, 7.1, generator=g), True),
    ("randn", lambda g, d, n: onion.randn(n, generator=g, dtype=_on(d)),
     lambda g, d, n: torch.randn(n, generator=g, dtype=_tn(d)), "float64"),
    ("normal_", lambda g, d, n: onion.empty(n, dtype=_on(d)).normal_(1.5, 3.0, generator=g),
     lambda g, d, n: torch.empty(n, dtype=_tn(d)).normal_(1.5, 3.0, generator=g), "float64"),
    ("normal_noncontiguous", lambda g, d, n: onion.empty(n, 2, dtype=_on(d)).t().normal_(-1.0, 0.5, generator=g),
     lambda g, d, n: torch.empty(n, 2, dtype=_tn(d)).t().normal_(-1.0, 0.5, generator=g), True),
    ("exponential_", lambda g, d, n: onion.empty(n, dtype=_on(d)).exponential_(2.5, generator=g),
     lambda g, d, n: torch.empty(n, dtype=_tn(d)).exponential_(2.5, generator=g), True),
    ("geometric_", lambda g, d, n: onion.empty(n, dtype=_on(d)).geometric_(0.3, generator=g),
     lambda g, d, n: torch.empty(n, dtype=_tn(d)).geometric_(0.3, generator=g), True),
    ("cauchy_", lambda g, d, n: onion.empty(n, dtype=_on(d)).cauchy_(0.5, 2.0, generator=g),
     lambda g, d, n: torch.empty(n, dtype=_tn(d)).cauchy_(0.5, 2.0, generator=g), True),
    ("log_normal_", lambda g, d, n: onion.empty(n, dtype=_on(d)).log_normal_(0.5, 0.7, generator=g),
     lambda g, d, n: torch.empty(n, dtype=_tn(d)).log_normal_(0.5, 0.7, generator=g), True),
    ("randint", lambda g, d, n: onion.randint(-5, 1000, (n,), generator=g, dtype=_on(d)),
     lambda g, d, n: torch.randint(-5, 1000, (n,), generator=g, dtype=_tn(d)), True),
    ("randint_64bit_draws", lambda g, d, n: onion.randint(-5, 2 ** 30, (n,), generator=g, dtype=_on(d)),
     lambda g, d, n: torch.randint(-5, 2 ** 30, (n,), generator=g, dtype=_tn(d)), True),
    ("random_", lambda g, d, n: onion.empty(n, dtype=_on(d)).random_(generator=g),
     lambda g, d, n: torch.empty(n, dtype=_tn(d)).random_(generator=g), True),
    ("random_to", lambda g, d, n: onion.empty(n, dtype=_on(d)).random_(77, generator=g),
     lambda g, d, n: torch.empty(n, dtype=_tn(d)).random_(77, generator=g), True),
    ("random_from_to", lambda g, d, n: onion.empty(n, dtype=_on(d)).random_(-3, 9, generator=g),
     lambda g, d, n: torch.empty(n, dtype=_tn(d)).random_(-3, 9, generator=g), True),
    ("bernoulli_tensor_p", lambda g, d, n: onion.bernoulli(onion.linspace(0, 1, n, dtype=_on(d)), generator=g),
     lambda g, d, n: torch.bernoulli(torch.linspace(0, 1, n, dtype=_tn(d)), generator=g), True),
    ("bernoulli_float_p", lambda g, d, n: onion.empty(n, dtype=_on(d)).bernoulli_(0.3, generator=g),
     lambda g, d, n: torch.empty(n, dtype=_tn(d)).bernoulli_(0.3, generator=g), "no-mkl"),
    ("multinomial_replacement", lambda g, d, n: onion.multinomial(onion.arange(1., 8., dtype=_on(d)), n, True,
                                                                  generator=g),
     lambda g, d, n: torch.multinomial(torch.arange(1., 8., dtype=_tn(d)), n, True, generator=g), True),
    ("multinomial_2d_no_replacement",
     lambda g, d, n: onion.multinomial(onion.arange(1., n + 1., dtype=_on(d)).reshape(1, -1).expand(3, -1) + 0,
                                       min(n, 5), generator=g),
     lambda g, d, n: torch.multinomial(torch.arange(1., n + 1., dtype=_tn(d)).reshape(1, -1).expand(3, -1) + 0,
                                       min(n, 5), generator=g), True),
    ("randperm", lambda g, d, n: onion.randperm(n, generator=g, dtype=_on(d)),
     lambda g, d, n: torch.randperm(n, generator=g, dtype=_tn(d)), True),
]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,o_fn,t_fn,exact", SAMPLERS, ids=[s[0] for s in SAMPLERS])
def test_sampler_matches_torch(name, o_fn, t_fn, exact, dtype, n):
    if exact == "no-mkl" and _mkl_bernoulli():
        pytest.skip("PyTorch draws scalar-p bernoulli_ from MKL here (test_bernoulli_scalar_distribution)")
    if name == "randperm" and n == 100000 and dtype == "float32":
        n = 1000          # the sequential shuffle costs ~20 ms per 10^5; one large size per dtype is enough
    for seed in SEEDS:
        go, gt = gens(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a, b = arr(o_fn(go, dtype, n)), tarr(t_fn(gt, dtype, n))
        is_exact = exact is True or exact == "no-mkl" or exact == dtype or n < 16
        assert_same(a, b, is_exact, dtype)
        assert same_state(go, gt), "the generators' states differ after the call"
        assert a.dtype == b.dtype


def test_bernoulli_scalar_distribution():
    """Whatever generator PyTorch's build uses for scalar p, the rate matches p."""
    onion.manual_seed(3)
    x = arr(onion.empty(200000).bernoulli_(0.3))
    assert set(np.unique(x)) <= {0.0, 1.0}
    assert abs(x.mean() - 0.3) < 0.005


# ----------------------------------------------------------------------------- the generator
@pytest.mark.parametrize("seed", [0, 1, 42, 2 ** 32 + 7, 2 ** 63 + 5, -1])
def test_generator_state_bytes_match_torch(seed):
    go, gt = gens(seed)
    assert go.initial_seed() == gt.initial_seed()
    assert same_state(go, gt)
    for n in (1, 623, 624, 625, 2000):
        onion.rand(n, generator=go)
        torch.rand(n, generator=gt)
        assert same_state(go, gt)
    onion.randn(3, generator=go, dtype=onion.float64)       # leaves the cached second Box-Muller sample
    torch.randn(3, generator=gt, dtype=torch.float64)
    assert same_state(go, gt)


def test_state_moves_between_libraries():
    gt = torch.Generator().manual_seed(9)
    torch.randn(5, generator=gt, dtype=torch.float64)        # odd count: a cached normal sample travels too
    go = onion.Generator().set_state(onion.tensor(tarr(gt.get_state())))
    assert_same(arr(onion.randn(7, generator=go, dtype=onion.float64)),
                tarr(torch.randn(7, generator=gt, dtype=torch.float64)))
    back = torch.Generator().set_state(torch.from_numpy(arr(go.get_state()).copy()))
    assert_same(tarr(torch.rand(4, generator=back)), arr(onion.rand(4, generator=go)))


def test_clone_state_and_offset():
    go, gt = gens(21)
    onion.rand(5, generator=go)
    torch.rand(5, generator=gt)
    co, ct = go.clone_state(), gt.clone_state()
    assert isinstance(co, onion.Generator) and co is not go
    assert_same(arr(onion.rand(9, generator=co)), tarr(torch.rand(9, generator=ct)))
    assert_same(arr(onion.rand(9, generator=go)), tarr(torch.rand(9, generator=gt)))     # the original is untouched
    for call in (lambda g: g.get_offset(), lambda g: g.set_offset(1)):
        with pytest.raises(RuntimeError) as et:
            call(gt)
        with pytest.raises(RuntimeError) as eo:
            call(go)
        assert str(eo.value) == str(et.value)


def test_default_generator_functions():
    onion.manual_seed(123)
    torch.manual_seed(123)
    assert onion.initial_seed() == torch.initial_seed() == 123
    assert np.array_equal(arr(onion.get_rng_state()), tarr(torch.get_rng_state()))
    assert_same(arr(onion.rand(5)), tarr(torch.rand(5)))
    state = onion.get_rng_state()
    first = arr(onion.randn(20)).copy()
    onion.set_rng_state(state)
    assert_same(arr(onion.randn(20)), first)
    with onion.random.fork_rng():
        onion.rand(100)
    assert np.array_equal(arr(onion.get_rng_state()), arr(state)) is False      # randn(20) moved it on
    s = onion.random.get_rng_state()
    with onion.random.fork_rng():
        onion.manual_seed(5)
        onion.rand(10)
    assert np.array_equal(arr(onion.random.get_rng_state()), arr(s))
    fresh = onion.seed()
    assert onion.initial_seed() == fresh and 0 <= fresh < 2 ** 64
    assert onion.manual_seed(7) is onion.default_generator


def test_generator_errors_match_torch():
    for bad in (2 ** 64, -2 ** 63 - 1):
        with pytest.raises(ValueError, match="Overflow when unpacking long long"):
            onion.Generator().manual_seed(bad)
        with pytest.raises(ValueError):
            torch.Generator().manual_seed(bad)
    with pytest.raises(RuntimeError, match="manual_seed expected a long, but got float"):
        onion.Generator().manual_seed(1.5)
    with pytest.raises(RuntimeError, match="Expected a CPUGeneratorImplState of size 5056 but found the input RNG "
                                           "state size to be 10"):
        onion.Generator().set_state(onion.zeros(10, dtype=onion.uint8))
    with pytest.raises(TypeError, match="RNG state must be a torch.ByteTensor"):
        onion.Generator().set_state(onion.zeros(5056))
    with pytest.raises(RuntimeError, match="Invalid mt19937 state"):
        onion.Generator().set_state(onion.zeros(5056, dtype=onion.uint8))
    with pytest.raises(TypeError):
        onion.rand(3, generator=5)


# ----------------------------------------------------------------------------- overloads and layouts
def _pair_call(fn_o, fn_t, seed=11):
    onion.manual_seed(seed)
    torch.manual_seed(seed)
    return fn_o(), fn_t()


@pytest.mark.parametrize("dtype", DTYPES)
def test_normal_overloads(dtype):
    m = np.linspace(-3, 3, 24).reshape(4, 6)
    s = np.linspace(0.1, 2, 6)
    mo, mt = onion.tensor(m, dtype=_on(dtype)), torch.tensor(m, dtype=_tn(dtype))
    so, st = onion.tensor(s, dtype=_on(dtype)), torch.tensor(s, dtype=_tn(dtype))
    cases = [
        (lambda: onion.normal(mo, 2.0), lambda: torch.normal(mt, 2.0)),
        (lambda: onion.normal(1.5, so), lambda: torch.normal(1.5, st)),
        (lambda: onion.normal(mo, so), lambda: torch.normal(mt, st)),
        (lambda: onion.normal(0.5, 2.0, (3, 7), dtype=_on(dtype)), lambda: torch.normal(0.5, 2.0, (3, 7),
                                                                                       dtype=_tn(dtype))),
        (lambda: onion.normal(mo, so, out=onion.empty(4, 6, dtype=_on(dtype))),
         lambda: torch.normal(mt, st, out=torch.empty(4, 6, dtype=_tn(dtype)))),
        (lambda: onion.normal(1.5, so, out=onion.empty(0, dtype=_on(dtype))),
         lambda: torch.normal(1.5, st, out=torch.empty(0, dtype=_tn(dtype)))),
        (lambda: onion.normal(mo, 1.0, out=onion.empty(4, 6, dtype=_on(dtype))),
         lambda: torch.normal(mt, 1.0, out=torch.empty(4, 6, dtype=_tn(dtype)))),
        (lambda: onion.normal(0.0, 1.0, (20,), out=onion.empty(0, dtype=_on(dtype))),
         lambda: torch.normal(0.0, 1.0, (20,), out=torch.empty(0, dtype=_tn(dtype)))),
    ]
    for fo, ft in cases:
        a, b = _pair_call(fo, ft)
        assert_same(arr(a), tarr(b), exact=dtype == "float64", dtype=dtype)


@pytest.mark.parametrize("dtype", ("float32", "float64", "bfloat16", "float16"))
def test_like_factories_and_layouts(dtype):
    base_o = onion.empty(6, 5, dtype=_on(dtype)).t()
    base_t = torch.empty(6, 5, dtype=_tn(dtype)).t()
    for name in ("rand_like", "randn_like"):
        a, b = _pair_call(lambda: getattr(onion, name)(base_o), lambda: getattr(torch, name)(base_t))
        assert a.stride() == b.stride() and a.dtype == getattr(onion, str(b.dtype).split(".")[-1])
        assert_same(arr(a).astype(np.float64), tarr(b.double()), exact=dtype != "float32" or name == "rand_like",
                    dtype="float32")
    a, b = _pair_call(lambda: onion.randint_like(base_o, 3, 50), lambda: torch.randint_like(base_t, 3, 50))
    assert_same(arr(a).astype(np.float64), tarr(b.double()))
    a, b = _pair_call(lambda: onion.randint_like(base_o, 50), lambda: torch.randint_like(base_t, 50))
    assert_same(arr(a).astype(np.float64), tarr(b.double()))


def test_inplace_noncontiguous_follows_memory_order():
    for fo, ft in [(lambda t: t.uniform_(), lambda t: t.uniform_()),
                   (lambda t: t.exponential_(), lambda t: t.exponential_()),
                   (lambda t: t.random_(0, 100), lambda t: t.random_(0, 100))]:
        o = onion.zeros(4, 5, 3).permute(2, 0, 1)
        t = torch.zeros(4, 5, 3).permute(2, 0, 1)
        _pair_call(lambda: fo(o), lambda: ft(t))
        assert_same(arr(o), tarr(t))
        o, t = onion.zeros(6, 8)[:, ::2], torch.zeros(6, 8)[:, ::2]
        _pair_call(lambda: fo(o), lambda: ft(t))
        assert_same(arr(o), tarr(t))


@pytest.mark.parametrize("dtype", ("int64", "int32", "int16", "int8", "uint8", "bool", "float32", "float64"))
def test_random_overloads_per_dtype(dtype):
    for fo, ft in [(lambda t: t.random_(), lambda t: t.random_()),
                   (lambda t: t.random_(2), lambda t: t.random_(2)),
                   (lambda t: t.random_(0, None), lambda t: t.random_(0, None))]:
        o, t = onion.empty(300, dtype=_on(dtype)), torch.empty(300, dtype=_tn(dtype))
        _pair_call(lambda: fo(o), lambda: ft(t))
        assert_same(arr(o), tarr(t))
    if dtype in ("int64", "float64", "float32"):
        o, t = onion.empty(300, dtype=_on(dtype)), torch.empty(300, dtype=_tn(dtype))
        _pair_call(lambda: o.random_(-2 ** 63, None), lambda: t.random_(-2 ** 63, None))
        assert_same(arr(o), tarr(t))


def test_normal_cache_is_shared_across_calls():
    """Serial Box-Muller keeps its second sample in the generator, for the next call (normal_, log_normal_)."""
    go, gt = gens(4)
    outs = []
    for lib, g in ((onion, go), (torch, gt)):
        a = lib.empty(3, dtype=lib.float64).normal_(generator=g)
        b = lib.empty(1, dtype=lib.float64).log_normal_(generator=g)
        c = lib.empty(5, 2, dtype=lib.float64).t().normal_(generator=g)
        outs.append([a, b, c])
    for x, y in zip(*outs):
        assert_same(arr(x), tarr(y))
    assert same_state(go, gt)


def test_dropout_masks_match_torch():
    x = np.linspace(-1, 1, 60).reshape(6, 10).astype(np.float32)
    xo, xt = onion.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (oo, mo), (ot, mt) = _pair_call(lambda: onion.native_dropout(xo, 0.3, True),
                                    lambda: torch.native_dropout(xt, 0.3, True))
    assert_same(arr(mo), tarr(mt))
    assert_same(arr(oo.detach()), tarr(ot))
    g = np.arange(60, dtype=np.float32).reshape(6, 10)
    oo.backward(onion.tensor(g))
    ot.backward(torch.tensor(g))
    assert_same(arr(xo.grad), tarr(xt.grad))
    a, b = _pair_call(lambda: onion.nn.functional.dropout(onion.tensor(x), 0.4),
                      lambda: torch.nn.functional.dropout(torch.tensor(x), 0.4))
    assert_same(arr(a), tarr(b))
    a, b = _pair_call(lambda: onion.nn.functional.dropout(onion.tensor(x), 0.4, inplace=True),
                      lambda: torch.nn.functional.dropout(torch.tensor(x), 0.4, inplace=True))
    assert_same(arr(a), tarr(b))
    xe = onion.tensor(x)
    assert onion.nn.functional.dropout(xe, 0.5, training=False) is xe
    (e, m) = onion.native_dropout(xe, 0.5, False)
    assert arr(m).all() and np.array_equal(arr(e), x)
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        onion.nn.functional.dropout(xe, 1.5)


def test_gradients_of_random_ops_are_zero():
    m = np.linspace(0, 1, 6)
    mo, mt = onion.tensor(m, requires_grad=True), torch.tensor(m, requires_grad=True)
    a, b = _pair_call(lambda: onion.normal(mo, 2.0), lambda: torch.normal(mt, 2.0))
    a.sum().backward()
    b.sum().backward()
    assert_same(arr(mo.grad), tarr(mt.grad))
    assert not onion.multinomial(onion.tensor([0.2, 0.8], requires_grad=True), 2, True).requires_grad
    leaf = onion.zeros(3, requires_grad=True)
    y = leaf * 2
    y.uniform_()
    y.sum().backward()
    assert np.array_equal(arr(leaf.grad), np.zeros(3))


def test_meta_tensors_draw_nothing():
    onion.manual_seed(0)
    before = arr(onion.get_rng_state()).copy()
    t = onion.rand(3, 4, device="meta")
    assert t.device.type == "meta" and tuple(t.shape) == (3, 4)
    onion.empty(5, device="meta").normal_()
    m = onion.multinomial(onion.empty(2, 5, device="meta"), 3)
    assert tuple(m.shape) == (2, 3) and m.dtype == onion.int64
    assert np.array_equal(arr(onion.get_rng_state()), before)


ERRORS = [
    ("uniform_ from > to", lambda lib: lib.empty(3).uniform_(1, 0)),
    ("normal_ std < 0", lambda lib: lib.empty(3).normal_(0, -1)),
    ("normal tensor std < 0", lambda lib: lib.normal(0.0, lib.tensor([1.0, -1.0]))),
    ("exponential_ lambda <= 0", lambda lib: lib.empty(3).exponential_(0)),
    ("geometric_ p outside (0, 1)", lambda lib: lib.empty(3).geometric_(1.5)),
    ("cauchy_ sigma <= 0", lambda lib: lib.empty(3).cauchy_(0, -1)),
    ("log_normal_ std <= 0", lambda lib: lib.empty(3).log_normal_(0, 0)),
    ("bernoulli_ p outside [0, 1]", lambda lib: lib.empty(3).bernoulli_(1.5)),
    ("bernoulli integer p", lambda lib: lib.empty(3).bernoulli_(lib.ones(3, dtype=lib.int64))),
    ("random_ from >= to", lambda lib: lib.empty(3).random_(5, 5)),
    ("random_ to beyond int8", lambda lib: lib.empty(3, dtype=lib.int8).random_(0, 1000)),
    ("randint low >= high", lambda lib: lib.randint(5, 3, (2,))),
    ("randperm negative", lambda lib: lib.randperm(-1)),
    ("multinomial 3-d", lambda lib: lib.multinomial(lib.ones(2, 2, 2), 1)),
    ("multinomial integer", lambda lib: lib.multinomial(lib.ones(3, dtype=lib.int64), 1)),
    ("multinomial too many", lambda lib: lib.multinomial(lib.ones(3), 4)),
    ("multinomial zero samples", lambda lib: lib.multinomial(lib.ones(3), 0)),
    ("multinomial negative", lambda lib: lib.multinomial(lib.tensor([1.0, -1.0]), 1)),
    ("multinomial zero sum", lambda lib: lib.multinomial(lib.zeros(3), 2, True)),
    ("multinomial out dtype", lambda lib: lib.multinomial(lib.ones(3), 1, out=lib.empty(1))),
    ("uniform_ int", lambda lib: lib.empty(3, dtype=lib.int64).uniform_()),
    ("normal_ int", lambda lib: lib.empty(3, dtype=lib.int64).normal_()),
    ("expanded output", lambda lib: lib.empty(1).expand(3).uniform_()),
]


@pytest.mark.parametrize("what,call", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(what, call):
    with pytest.raises(Exception) as et:
        call(torch)
    with pytest.raises(type(et.value)) as eo:
        call(onion)
    assert str(eo.value) == str(et.value)


def test_bad_input_modifies_nothing():
    t = onion.full((4,), 2.0)
    for bad in (lambda: t.uniform_(1, 0), lambda: t.normal_(0, -1), lambda: t.bernoulli_(2.0),
                lambda: t.bernoulli_(onion.tensor([0.5, 1.5, 0.1, 0.2]))):
        with pytest.raises(RuntimeError):
            bad()
        assert np.array_equal(arr(t), np.full(4, 2.0, np.float32))


def test_randperm_sizes_and_dtypes():
    for n, dt in ((0, "int64"), (1, "int64"), (2, "int32"), (300, "int16"), (256, "uint8"), (50, "float32")):
        a, b = _pair_call(lambda: onion.randperm(n, dtype=_on(dt)), lambda: torch.randperm(n, dtype=_tn(dt)))
        assert_same(arr(a), tarr(b))
    for n, dt in ((300, "int8"), (257, "uint8"), (2 ** 24 + 2, "float32")):
        with pytest.raises(RuntimeError) as et:
            torch.randperm(n, dtype=_tn(dt))
        with pytest.raises(RuntimeError) as eo:
            onion.randperm(n, dtype=_on(dt))
        assert str(eo.value) == str(et.value)


def test_reduced_precision_samplers():
    for dt in ("float16", "bfloat16"):
        for n in (5, 16, 17, 40):
            for fo, ft in [(lambda: onion.rand(n, dtype=_on(dt)), lambda: torch.rand(n, dtype=_tn(dt))),
                           (lambda: onion.randn(n, dtype=_on(dt)), lambda: torch.randn(n, dtype=_tn(dt))),
                           (lambda: onion.empty(n, dtype=_on(dt)).exponential_(),
                            lambda: torch.empty(n, dtype=_tn(dt)).exponential_())]:
                a, b = _pair_call(fo, ft)
                assert_same(arr(a).astype(np.float32), tarr(b.float()))



@pytest.mark.parametrize("bits", [1, 24, 31])
def test_random_low_is_masked_stream(bits):
    """Generator.random_low(n, bits) is random(n) masked to its low bits, and leaves the stream where
    random(n) does (the next draws and PyTorch's state bytes agree)."""
    a, b = onion.Generator(), onion.Generator()
    a.manual_seed(123)
    b.manual_seed(123)
    for n in (5, 700, 1300):
        np.testing.assert_array_equal(a.random_low(n, bits), b.random(n) & np.uint32((1 << bits) - 1))
        assert a.get_state().tolist() == b.get_state().tolist()
    np.testing.assert_array_equal(a.random(10), b.random(10))
    tg = torch.Generator()
    tg.manual_seed(7)
    a.manual_seed(7)
    t = torch.empty(700, dtype=torch.int32).random_(generator=tg).numpy().astype(np.uint32)   # [0, 2^31)
    np.testing.assert_array_equal(a.random_low(700, bits), t & np.uint32((1 << bits) - 1))
    assert a.get_state().tolist() == tg.get_state().tolist()
