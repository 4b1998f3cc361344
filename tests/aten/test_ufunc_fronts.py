"""The one-frame CPU fronts of the ufunc kernels and Tensor.sum()'s short road give PyTorch's results.

The fronts take NumPy's broadcast check for the shape compare (at most 1-D operands; a self that owns
its memory for in-place), store the result inline, and leave every other case to the general path;
``x.sum()`` on a small CPU tensor sums without the second dispatch.  Each case runs in both libraries:
same values, dtype and strides, or the same exception type.
"""
from __future__ import annotations

import pytest

from conftest import check_same, onion, torch  # (torch: a stand-in without PyTorch)

pytestmark = pytest.mark.oracle


def _v(L, n=4, dtype="float32", start=0.0):
    return (L.arange(n, dtype=L.float64) * 0.75 + start).to(getattr(L, dtype))


def _inplace(L, make_self, make_other, alpha=None):
    s = make_self(L)
    o = make_other(L, s)
    r = s.add_(o) if alpha is None else s.add_(o, alpha=alpha)
    # the result, self, and (as numbers) whether the result is self and self's version
    return L.cat([r.reshape(-1), s.reshape(-1), L.tensor([float(r is s), float(s._version)], dtype=s.dtype)])


# (x, a layout below) -> a result whose strides are compared too
_LAYOUT_OPS = {
    "mul number": lambda L, x: x * 2.0,
    "div number": lambda L, x: x / 3,
    "sub tensor": lambda L, x: x - L.ones(tuple(x.shape), dtype=x.dtype),
    "mul same layout": lambda L, x: x * x,
    "add 0-d": lambda L, x: x + L.tensor(1.0, dtype=x.dtype),
    "div_Scalar op": lambda L, x: L.ops.aten.div.Scalar(x, 4),
    "mul row vector": lambda L, x: x * _v(L, x.shape[-1], _dtname(x)),
    "add column": lambda L, x: x + _v(L, x.shape[-2], _dtname(x)).view(-1, 1),
    "sub 0-d tensor": lambda L, x: x - L.tensor(0.5, dtype=x.dtype),
    "neg": lambda L, x: -x,
    "exp": lambda L, x: x.exp(),
    "abs": lambda L, x: x.abs(),
    "sqrt": lambda L, x: x.sqrt(),
    "mul by expanded row": lambda L, x: x * _v(L, x.shape[-1], _dtname(x)).expand(tuple(x.shape)),
}


def _dtname(x):
    return str(x.dtype).split(".")[-1]

CASES = {
    # functional, at most 1-D
    "add 1-D": lambda L: L.add(_v(L), _v(L, start=1)),
    "add 1-D broadcast [1]": lambda L: L.add(_v(L), _v(L, 1)),
    "add 1-D broadcast 0-d": lambda L: L.add(_v(L), L.tensor(2.0)),
    "add 0-d 0-d": lambda L: L.add(L.tensor(1.5), L.tensor(2.0)),
    "add [4] + [3] error": lambda L: L.add(_v(L), _v(L, 3)),
    "mul [4] * [2] error": lambda L: _v(L) * _v(L, 2),
    "add two numbers": lambda L: L.add(2.0, 3.0),
    "mul two ints": lambda L: L.mul(2, 3),
    "add float64 number + tensor": lambda L: L.add(2.5, _v(L, dtype="float64")),
    "sub alpha=2": lambda L: L.sub(_v(L), _v(L, start=3), alpha=2),
    "add alpha=1.5": lambda L: L.add(_v(L), _v(L, start=3), alpha=1.5),
    "eq 1-D": lambda L: L.eq(_v(L), _v(L)),
    "add int8 1-D": lambda L: L.add(_v(L, dtype="int8"), _v(L, dtype="int8")),
    "add 2-D contiguous": lambda L: L.add(_v(L, 6).view(2, 3), _v(L, 6).view(2, 3)),
    "add 2-D transposed": lambda L: L.add(_v(L, 6).view(2, 3).t(), _v(L, 6).view(3, 2)),
    "add 2-D broadcast row": lambda L: L.add(_v(L, 6).view(2, 3), _v(L, 3)),
    "h * 1.01": lambda L: _v(L) * 1.01,
    "h + 0.1 float16": lambda L: _v(L, dtype="float16") + 0.1,
    "exp 1-D": lambda L: _v(L).exp(),
    "exp 2-D transposed": lambda L: _v(L, 6).view(2, 3).t().exp(),
    "exp 0-d": lambda L: L.tensor(0.5).exp(),
    # in place
    "add_ owner, owner": lambda L: _inplace(L, _v, lambda L, s: _v(L, start=2)),
    "add_ owner, broadcast [1]": lambda L: _inplace(L, _v, lambda L, s: _v(L, 1)),
    "add_ owner, needs broadcast error": lambda L: _inplace(L, lambda L: _v(L, 1), lambda L, s: _v(L)),
    "add_ self": lambda L: _inplace(L, _v, lambda L, s: s),
    "add_ detached self": lambda L: _inplace(L, _v, lambda L, s: s.detach()),
    "add_ overlapping view": lambda L: _inplace(L, _v, lambda L, s: s[1:]),
    "add_ alpha=2": lambda L: _inplace(L, _v, lambda L, s: _v(L), alpha=2),
    "add_ view self": lambda L: _inplace(L, lambda L: _v(L, 8)[::2], lambda L, s: _v(L)),
    "add_ expanded self error": lambda L: _inplace(L, lambda L: _v(L, 3).expand(2, 3), lambda L, s: _v(L, 6).view(2, 3)),
    "add_ other dtype": lambda L: _inplace(L, _v, lambda L, s: _v(L, dtype="float64")),
    "add_ int self, float other error": lambda L: _inplace(L, lambda L: _v(L, dtype="int64"), lambda L, s: _v(L)),
    # non-contiguous operands whose result PyTorch lays out row-major (TensorIterator keeps the dims in order):
    # the fronts keep NumPy's result; the others (a transposed operand, size-1 dims) take the general path
    **{f"{op} {name}": (lambda op, make: lambda L: _LAYOUT_OPS[op](L, make(L)))(op, make)
       for op in _LAYOUT_OPS for name, make in {
           "expanded 0-d": lambda L: L.tensor(1.5).expand(3, 4),
           "expanded row": lambda L: _v(L).expand(3, 4),
           "expanded column": lambda L: _v(L, 3).view(3, 1).expand(3, 4),
           "rows with gaps": lambda L: _v(L, 24).view(3, 8)[:, ::2],
           "sliced rows": lambda L: _v(L, 20).view(5, 4)[1:4],
           "3-D expanded middle": lambda L: _v(L, 8).view(2, 1, 4).expand(2, 3, 4),
           "transposed": lambda L: _v(L, 12).view(4, 3).t(),
           "expanded then transposed": lambda L: _v(L, 3).view(3, 1).expand(3, 4).t(),
           "size-1 dim sliced": lambda L: _v(L, 8).view(2, 4)[:1, ::2],
           "float64 gaps": lambda L: _v(L, 24, "float64").view(3, 8)[:, 1::2],
       }.items()},
    "mul [3,4] * [5] error": lambda L: _v(L, 12).view(3, 4)[:, ::1].t() * _v(L, 5),
    "add broadcast both": lambda L: _v(L, 3).view(3, 1) + _v(L, 4),
    "mul [2,3,4] gaps * [4]": lambda L: _v(L, 48).view(2, 3, 8)[:, :, ::2] * _v(L, 4),
    # where's short road (a bool mask and values of one shape, all contiguous; the other value that or 0-d)
    "where mask grad 0-d": lambda L: L.where(_v(L, 12).view(3, 4) > 3, _v(L, 12).view(3, 4), L.scalar_tensor(0.0)),
    "where size-1 dims": lambda L: L.where(_v(L, 4).view(4, 1) > 1, _v(L, 4).view(4, 1), _v(L, 4).view(4, 1) * 2),
    "where int64": lambda L: L.where(_v(L, 6, "int64") > 1, _v(L, 6, "int64"), L.tensor(7)),
    "where float64 other float32": lambda L: L.where(_v(L) > 1, _v(L, dtype="float64"), _v(L)),
    "where transposed mask": lambda L: L.where(_v(L, 6).view(2, 3).t() > 1, _v(L, 6).view(3, 2), L.tensor(0.5)),
    "scalar_tensor int8": lambda L: L.scalar_tensor(-3, dtype=L.int8),
    "scalar_tensor overflow": lambda L: L.scalar_tensor(300, dtype=L.uint8),
    # sum
    **{f"sum {dt}": (lambda dt: lambda L: _v(L, 5, dt).sum())(dt)
       for dt in ("float32", "float16", "bfloat16", "float64", "int8", "uint8", "int64", "bool", "complex64")},
    "sum 2-D float32": lambda L: _v(L, 6).view(2, 3).sum(),
    "sum float32 long": lambda L: (L.arange(3000, dtype=L.float32) * 0.1).sum(),
    "sum dtype=float64": lambda L: _v(L).sum(dtype=L.float64),
}


@pytest.mark.parametrize("name", list(CASES))
def test_same_as_torch(name):
    fn = CASES[name]
    out = check_same(lambda: fn(onion), lambda: fn(torch))
    if out is not None:
        o, t = out
        if not isinstance(o, tuple):
            o, t = (o,), (t,)
        for a, b in zip(o, t):
            if hasattr(a, "stride"):
                assert a.dtype.__repr__().split(".")[-1] == repr(b.dtype).split(".")[-1]
                assert tuple(a.stride()) == tuple(b.stride())


def test_inference_mode_results():
    for lib in (onion, torch):
        x, y = _v(lib), _v(lib, start=1)
        with lib.inference_mode():
            outs = [x + y, x.exp(), x.sum(), x * 2.0]
        assert [o.is_inference() for o in outs] == [True] * 4
        assert not (x + y).is_inference()
