"""``TorchDispatchMode``: Python code that sees every operator call, via the Python key.

The modes live on a per-thread stack (``DispatchState.mode_stack``).  While it is non-empty the thread
includes ``Python | PythonTLSSnapshot``, so every call reaches the Python key's fallback below autograd.
The fallback, as PyTorch's:

- pops the innermost mode for the time its ``__torch_dispatch__`` runs (so calling ``func`` there goes
  to the next mode, or to the kernels) and pushes it back afterwards, exceptions included;
- excludes every key above Python meanwhile (autograd, ADInplaceOrView, autocast, the math bits...):
  the call was already through those layers once;
- hands the mode the arguments as PyTorch's ``__torch_dispatch__`` receives them: schema order,
  trailing positional defaults and default keyword-only values left out, a wrapped number back as its
  Python number, int lists as lists, memory formats and layouts as their objects; ``types`` holds
  the argument types that override ``__torch_dispatch__`` (``()`` for plain tensors).

While any mode is pushed, a tensor autograd saves as an output is also detached through the innermost
mode when saved and when unpacked (``types`` the tensor's type), as PyTorch's ``shallow_copy_and_detach``
asks the mode: make_fx records those ``detach`` nodes.
"""
from __future__ import annotations

import contextlib
import inspect
import warnings

from ..autograd.graph import set_mode_detach
from ..core.dispatch_key import AFTER_PYTHON, FULL, K, bit, mask_below
from ..core.layout import layout as _layout
from ..core.memory_format import memory_format as _memory_format
from ..core.tensor import Tensor
from ..core.tls import make_state, set_state, state
from ..dispatch.arguments import REQUIRED
from ..dispatch.library import Library

PYTHON_KEYS = bit(K.Python) | bit(K.PythonTLSSnapshot)
# every key above Python: excluded while a mode's ``__torch_dispatch__`` runs (PyTorch 2.13 excludes the
# math bits too: a Conjugate tensor is resolved above Python, so the mode sees that ``clone``)
ABOVE_PYTHON = FULL & ~mask_below(int(K.Python) + 1)


# --- the stack ---------------------------------------------------------------------------------------

_PUSHED = [0]      # modes on the stacks of all threads


def _set_stack(stack: tuple) -> None:
    """Install the thread's mode stack; the Python keys are included exactly while it is non-empty."""
    st = state()
    include = (st.include | PYTHON_KEYS) if stack else (st.include & ~PYTHON_KEYS)
    set_state(st.replace(mode_stack=stack, include=include))
    before = _PUSHED[0]
    now = _PUSHED[0] = before + len(stack) - len(st.mode_stack)
    if (before == 0) != (now == 0):     # saved outputs are detached through the modes while any is pushed
        set_mode_detach(_detach_through_mode if now else None)


def _push_mode(mode) -> None:
    _set_stack(state().mode_stack + (mode,))


def _pop_mode(k=None):
    """Pop and return the innermost mode (``k``, a dispatch key, is accepted for PyTorch's signature)."""
    stack = state().mode_stack
    if not stack:
        raise RuntimeError("trying to pop from empty mode stack")
    _set_stack(stack[:-1])
    return stack[-1]


def _get_current_dispatch_mode():
    stack = state().mode_stack
    return stack[-1] if stack else None


def _get_current_dispatch_mode_stack() -> list:
    """The thread's modes, outermost first."""
    return list(state().mode_stack)


def _len_torch_dispatch_stack() -> int:
    return len(state().mode_stack)


@contextlib.contextmanager
def _pop_mode_temporarily(k=None):
    """Run the body without the innermost mode (yielded); pushed back afterwards, exceptions included."""
    old = _pop_mode(k)
    try:
        yield old
    finally:
        _push_mode(old)


@contextlib.contextmanager
def _disable_current_modes():
    """Run the body with no mode at all; yields the modes popped, innermost first."""
    popped = []
    while state().mode_stack:
        popped.append(_pop_mode())
    try:
        yield popped
    finally:
        for mode in reversed(popped):
            _push_mode(mode)


# ``is_in_torch_dispatch_mode`` reads flags kept by ``__enter__``/``__exit__`` (process-wide, as PyTorch
# keeps them): true inside a mode's own ``__torch_dispatch__`` as well, where the stack is popped
_is_in_torch_dispatch_mode = False
_is_in_non_infra_torch_dispatch_mode = False


def is_in_torch_dispatch_mode(include_infra_modes: bool = True) -> bool:
    return _is_in_torch_dispatch_mode if include_infra_modes else _is_in_non_infra_torch_dispatch_mode


class TorchDispatchMode:
    """Subclass and override ``__torch_dispatch__(self, func, types, args=(), kwargs=None)`` (a plain
    method); ``with MyMode():`` makes it see every operator called in the block, on this thread."""

    def __init__(self, _dispatch_key=None):
        if _dispatch_key is not None and not isinstance(_dispatch_key, K):
            raise AssertionError("_dispatch_key must be a onion._C.DispatchKey")
        if _dispatch_key is not None:
            self.__dict__["_dispatch_key"] = _dispatch_key
        self.old_dispatch_mode_flags = []
        self.old_non_infra_dispatch_mode_flags = []

    def _lazy_init_old_dispatch_mode_flags(self):
        # subclasses need not call ``super().__init__()``
        if not hasattr(self, "old_dispatch_mode_flags"):
            self.old_dispatch_mode_flags = []
        if not hasattr(self, "old_non_infra_dispatch_mode_flags"):
            self.old_non_infra_dispatch_mode_flags = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        global _is_in_torch_dispatch_mode, _is_in_non_infra_torch_dispatch_mode
        self._lazy_init_old_dispatch_mode_flags()
        self.old_dispatch_mode_flags.append(_is_in_torch_dispatch_mode)
        self.old_non_infra_dispatch_mode_flags.append(_is_in_non_infra_torch_dispatch_mode)
        _is_in_torch_dispatch_mode = True
        _is_in_non_infra_torch_dispatch_mode = _is_in_non_infra_torch_dispatch_mode or not self.is_infra_mode()
        _push_mode(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        global _is_in_torch_dispatch_mode, _is_in_non_infra_torch_dispatch_mode
        _is_in_torch_dispatch_mode = self.old_dispatch_mode_flags.pop()
        _is_in_non_infra_torch_dispatch_mode = self.old_non_infra_dispatch_mode_flags.pop()
        _pop_mode(self.__dict__.get("_dispatch_key"))
        return False

    @classmethod
    def push(cls, *args, **kwargs):
        warnings.warn("`Mode.push()` is no longer necessary and can be replaced with just `with Mode()`",
                      stacklevel=2)
        return cls(*args, **kwargs)

    @classmethod
    def is_infra_mode(cls) -> bool:
        return False


# --- the Python key's fallback -----------------------------------------------------------------------

_CHECKED_MODE_TYPES: set = set()


def _check_mode_type(tp) -> None:
    if isinstance(inspect.getattr_static(tp, "__torch_dispatch__", None), classmethod):
        raise RuntimeError("Defining your mode's `__torch_dispatch__` as a classmethod is not supported, "
                           "please make it a plain method")
    _CHECKED_MODE_TYPES.add(tp)


_AS_LIST, _AS_FORMAT, _AS_NUMBER, _TENSORS, _AS_LAYOUT = 1, 2, 3, 4, 5
_NUMBER_OF_CATEGORY = (bool, int, float, complex)
_RET_ANY, _RET_TENSOR, _RET_TUPLE, _RET_LIST = 0, 1, 2, 3


class _Plan:
    """What the fallback does for one operator, read once from its schema (kept on the ``OpOverload``)."""

    __slots__ = ("convert", "returns", "n_returns", "num_positional", "defaults", "names", "n_args")

    def __init__(self, op):
        schema = op._schema
        spec = op._spec
        conv = []
        for i, a in enumerate(schema.arguments):
            t = a.type
            if t.base == "Tensor":
                conv.append((i, _TENSORS if t.is_list else _AS_NUMBER))
            elif t.is_list and t.base in ("int", "SymInt", "float", "bool"):
                conv.append((i, _AS_LIST))
            elif t.base == "MemoryFormat":
                conv.append((i, _AS_FORMAT))
            elif t.base == "Layout":
                conv.append((i, _AS_LAYOUT))
        self.convert = tuple(conv)
        self.num_positional = spec.num_positional
        self.defaults = tuple(spec.defaults)
        self.names = tuple(spec.names)
        self.n_args = len(spec.names)
        rets = schema.returns
        self.n_returns = len(rets)
        if len(rets) == 1 and rets[0].type.base == "Tensor":
            self.returns = _RET_LIST if rets[0].type.is_list else (_RET_ANY if rets[0].type.optional else _RET_TENSOR)
        elif len(rets) > 1:
            self.returns = _RET_TUPLE
        else:
            self.returns = _RET_ANY


def _plan_of(op) -> _Plan:
    try:
        return op._mode_plan
    except AttributeError:
        plan = op._mode_plan = _Plan(op)
        return plan


def python_arguments(op, values, plan=None):
    """``(types, args, kwargs)`` as PyTorch hands them to ``__torch_dispatch__``, from the normalized
    values: ``types`` the argument types that override ``__torch_dispatch__``, each once."""
    plan = plan or _plan_of(op)
    values = list(values)
    types = None
    for i, kind in plan.convert:
        v = values[i]
        if v is None:
            continue
        if kind == _AS_NUMBER:
            tp = type(v)
            if tp is not Tensor:
                if not _overrides_dispatch(tp):
                    pass
                elif types is None:
                    types = [tp]
                elif tp not in types:
                    types.append(tp)
            impl = v._impl
            if impl.is_wrapped_number:
                w = impl.wrapped_value
                values[i] = _NUMBER_OF_CATEGORY[impl.dtype.category](w if w is not None else v.item())
        elif kind == _AS_LIST:
            if type(v) is not list:
                values[i] = list(v)
        elif kind == _TENSORS:
            for t in v:
                tp = type(t)
                if tp is not Tensor and t is not None and _overrides_dispatch(tp):
                    if types is None:
                        types = [tp]
                    elif tp not in types:
                        types.append(tp)
        elif type(v) is str:
            values[i] = _memory_format(v) if kind == _AS_FORMAT else _layout(v)
    # PyTorch's split: positional arguments up to the last one that differs from its default, then the
    # keyword-only ones that differ from theirs
    defaults = plan.defaults
    npos = plan.num_positional
    end = npos
    while end and _is_default(values[end - 1], defaults[end - 1]):
        end -= 1
    args = tuple(values[:end]) if end != len(values) else tuple(values)
    kwargs = {}
    if npos != plan.n_args:
        names = plan.names
        for i in range(npos, plan.n_args):
            if not _is_default(values[i], defaults[i]):
                kwargs[names[i]] = values[i]
    return (tuple(types) if types else ()), args, kwargs


def _is_default(v, d) -> bool:
    if v is d:
        return d is not REQUIRED
    if d is REQUIRED or d is None or v is None or isinstance(v, Tensor):
        return False
    try:
        return type(v) is type(d) and v == d or (type(v) is list and type(d) in (list, tuple) and v == list(d))
    except Exception:  # noqa: BLE001 - odd objects are simply "not equal"
        return False


def _overrides_dispatch(tp) -> bool:
    own = getattr(tp, "__torch_dispatch__", None)
    if own is None:
        return False
    base = getattr(Tensor, "__torch_dispatch__", None)
    return base is None or getattr(own, "__func__", own) is not getattr(base, "__func__", base)


def _not_implemented(op, mode) -> TypeError:
    return TypeError(f"Multiple dispatch failed for '{op.__module__}.{op.__name__}'; all __torch_dispatch__ "
                     f"handlers returned NotImplemented:\n\n  - mode object {mode!r}\n")


def check_result(plan: _Plan, result):
    """The value a ``__torch_dispatch__`` returned, checked against the schema's returns as PyTorch's
    conversion back to C++ checks it."""
    kind = plan.returns
    if kind == _RET_TENSOR:
        if result is None or isinstance(result, Tensor):
            return result
        raise RuntimeError(f"Unable to cast {result} to Tensor")
    if kind == _RET_TUPLE:
        if not isinstance(result, (tuple, list)):
            raise RuntimeError(f"Object of type '{type(result).__name__}' is not an instance of 'sequence'")
        if len(result) != plan.n_returns:
            raise RuntimeError(f"Expected {plan.n_returns} values to be returned but got {len(result)}")
        for r in result:
            if r is None:
                raise RuntimeError("Expected Tensor but got None")
        return tuple(result)
    if kind == _RET_LIST:
        if not isinstance(result, (tuple, list)) or not all(isinstance(r, Tensor) for r in result):
            raise RuntimeError(f"Unable to cast Python instance of type {type(result)} to Tensor[]")
        return list(result)
    return result


def _mode_state(st):
    """The state a mode's ``__torch_dispatch__`` runs under: the mode popped, the keys above Python
    excluded; made once per state (a ``with`` block keeps one)."""
    inner = st._memo.get("mode")
    if inner is None:
        rest = st.mode_stack[:-1]
        include = st.include if rest else st.include & ~PYTHON_KEYS
        inner = st._memo["mode"] = make_state(include, st.exclude | ABOVE_PYTHON, st.grad_enabled,
                                              st.inference_mode, rest)
    return inner


def _python_fallback(op, ks, values):
    """The boxed kernel at the Python key: hand the call to the innermost mode."""
    st = state()
    stack = st.mode_stack
    if not stack:
        return _no_mode(op, ks, values)
    mode = stack[-1]
    try:
        plan = op._mode_plan
    except AttributeError:
        plan = _plan_of(op)
    if type(mode) not in _CHECKED_MODE_TYPES:
        _check_mode_type(type(mode))
    set_state(_mode_state(st))
    try:
        types, args, kwargs = python_arguments(op, values, plan)
        result = mode.__torch_dispatch__(op, types, args, kwargs)
    finally:
        set_state(st)
    if result is NotImplemented:
        if types:       # PyTorch then asks the subclasses' __torch_dispatch__, the mode back on the stack
            return SUBCLASS_DISPATCH[0](op, ks, values, mode=mode)
        raise _not_implemented(op, mode)
    return check_result(plan, result)


def _detach_through_mode(t):
    """``detach`` of a tensor autograd saves as an output (or unpacks), handed to this thread's innermost
    mode as PyTorch's ``shallow_copy_and_detach`` hands it (``types`` the tensor's type); None without one."""
    st = state()
    stack = st.mode_stack
    if not stack or st.exclude & _PYTHON_BIT:
        return None
    mode = stack[-1]
    op = _DETACH[0]
    if op is None:
        from ..dispatch.ops import ops
        op = _DETACH[0] = ops.aten.detach.default
    if type(mode) not in _CHECKED_MODE_TYPES:
        _check_mode_type(type(mode))
    set_state(_mode_state(st))
    try:
        result = mode.__torch_dispatch__(op, (type(t),), (t,), {})
    finally:
        set_state(st)
    if result is NotImplemented:
        raise _not_implemented(op, mode)
    return check_result(_plan_of(op), result)


_DETACH = [None]
_PYTHON_BIT = bit(K.Python)


def _no_mode(op, ks, values):
    """The Python key without a mode: a subclass tensor carries it."""
    return SUBCLASS_DISPATCH[0](op, ks, values)


def _below_python(op, ks, values, mode=None):
    return op._handle.redispatch(ks & AFTER_PYTHON, *values)


# how a subclass tensor's call is dispatched: onion/modes/subclasses.py installs its __torch_dispatch__ handling
SUBCLASS_DISPATCH = [_below_python]


class _DisableTorchDispatch:
    """``onion._C._DisableTorchDispatch``: neither modes nor ``__torch_dispatch__`` subclasses run inside
    (the Python keys are excluded; the stack itself is kept)."""

    __slots__ = ("_saved",)

    def __enter__(self):
        st = self._saved = state()
        set_state(st.with_exclude(st.exclude | PYTHON_KEYS))
        return self

    def __exit__(self, *exc):
        st = state()
        set_state(st.with_exclude((st.exclude & ~PYTHON_KEYS) | (self._saved.exclude & PYTHON_KEYS)))
        return False


def register_python_fallback() -> Library:
    lib = Library("_", "IMPL")
    lib._fallback_internal(K.Python, _python_fallback, "registered at onion/modes/python_dispatch.py")
    return lib
