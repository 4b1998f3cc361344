"""Fake implementations: ``get_ctx()`` for the ones that need a data-dependent size, and the check, at
registration, that a fake implementation can be called the way the operator calls it."""
from __future__ import annotations

import contextlib
import inspect

_P = inspect.Parameter


class FakeImplCtx:
    """What ``onion.library.get_ctx()`` returns inside a fake implementation run by a ``FakeTensorMode``."""

    def __init__(self, fake_mode, op):
        self._fake_mode = fake_mode
        self._shape_env = getattr(fake_mode, "shape_env", None)
        self._op = op

    def new_dynamic_size(self, *, min=0, max=None):  # noqa: A002 - PyTorch's keyword names
        """A size known only from the data. onion has no symbolic shapes, so, as PyTorch without a shape
        environment, the mode reports an operator with a data-dependent output shape."""
        if not isinstance(min, int) or (max is not None and not isinstance(max, int)):
            raise ValueError(f"ctx.new_dynamic_size(min={min}, max={max}): expected min and max to be "
                             f"statically known ints but got SymInt. This is not supported.")
        if min < 0:
            raise ValueError(f"ctx.new_dynamic_size(min={min}, ...): expected min to be greater than or equal "
                             f"to 0: this API can only create non-negative sizes.")
        from .._subclasses.fake_tensor import DynamicOutputShapeException
        raise DynamicOutputShapeException(self._op)

    def create_unbacked_symint(self, *, min=2, max=None):  # noqa: A002
        return self.new_dynamic_size(min=min, max=max)


def _no_ctx():
    return None


_ctx_getter = [_no_ctx]


def get_ctx():
    """The context of the fake implementation now running (None outside of one)."""
    return _ctx_getter[0]()


@contextlib.contextmanager
def set_ctx_getter(getter):
    prev = _ctx_getter[0]
    _ctx_getter[0] = getter
    try:
        yield
    finally:
        _ctx_getter[0] = prev


def fake_mode_ctx_getter(op):
    """The getter a FakeTensorMode call installs: a ``FakeImplCtx`` for the innermost fake mode."""
    def getter():
        from .._subclasses.fake_tensor import FakeTensorMode
        from ..utils._python_dispatch import _get_current_dispatch_mode_stack
        mode = next((m for m in reversed(_get_current_dispatch_mode_stack()) if isinstance(m, FakeTensorMode)),
                    None)
        return FakeImplCtx(mode, op)
    return getter


def meta_ctx_error(qualname: str):
    def getter():
        raise RuntimeError(f"{qualname}: You're trying to run this operator with meta Tensors (as opposed to "
                           f"FakeTensors), but this operator may return an output Tensor with data-dependent "
                           f"shape. Meta Tensors don't support operators with outputs that have data-dependent "
                           f"shapes but FakeTensors do. If your operator does not return an output with "
                           f"data-dependent shape, make sure the FakeTensor and/or meta kernel does not call "
                           f"onion.library.get_ctx(). Otherwise, please use FakeTensors.")
    return getter


def check_fake_signature(qualname: str, schema, fn) -> None:
    """Raise TypeError unless ``fn`` accepts every way the operator calls a fake implementation: its
    positional arguments by position (under the schema's names, trailing defaults possibly left out) and
    its keyword-only arguments by name.  Functions taking ``*args``/``**kwargs`` are accepted as they are."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return                      # a builtin or C callable: nothing to read
    params = list(sig.parameters.values())
    var_pos = any(p.kind == _P.VAR_POSITIONAL for p in params)
    var_kw = any(p.kind == _P.VAR_KEYWORD for p in params)
    positional = [p for p in params if p.kind in (_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD)]
    kwonly = {p.name: p for p in params if p.kind == _P.KEYWORD_ONLY}
    schema_pos = [a for a in schema.arguments if not a.kwarg_only]
    schema_kw = [a for a in schema.arguments if a.kwarg_only]
    problems = []
    if not var_pos:
        if len(positional) != len(schema_pos):
            problems.append(f"it takes {len(positional)} positional argument(s) but the schema has "
                            f"{len(schema_pos)} ({', '.join(a.name for a in schema_pos) or 'none'})")
        for p, a in zip(positional, schema_pos):
            if p.name != a.name:
                problems.append(f"positional argument '{p.name}' is named '{a.name}' in the schema")
            elif a.has_default and p.default is _P.empty:
                problems.append(f"argument '{a.name}' has a default in the schema ({a.name}={a.default}) but not "
                                f"in the fake implementation, which is called without it when the caller "
                                f"leaves it out")
        for p in positional[len(schema_pos):]:
            if p.default is _P.empty and p.name not in {a.name for a in schema_kw}:
                problems.append(f"argument '{p.name}' is not in the schema")
    for a in schema_kw:
        p = kwonly.get(a.name)
        if p is None:
            in_pos = next((q for q in positional if q.name == a.name), None)
            if in_pos is not None:
                problems.append(f"argument '{a.name}' is keyword-only in the schema but positional in the fake "
                                f"implementation")
            elif not var_kw:
                problems.append(f"keyword-only argument '{a.name}' of the schema is missing")
        elif a.has_default and p.default is _P.empty:
            problems.append(f"argument '{a.name}' has a default in the schema ({a.name}={a.default}) but not in "
                            f"the fake implementation")
    names = {a.name for a in schema.arguments}
    for name, p in kwonly.items():
        if name not in names and p.default is _P.empty:
            problems.append(f"keyword-only argument '{name}' is not in the schema")
    if problems:
        raise TypeError(f"register_fake({qualname}): the fake implementation's signature {sig} does not match "
                        f"the operator's schema {schema}: " + "; ".join(problems))
