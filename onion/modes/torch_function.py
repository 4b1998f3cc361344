"""``__torch_function__``: Python code that sees calls of the public API (``onion.add``, ``Tensor.add``).

Two ways in, as PyTorch has them: an argument whose type defines ``__torch_function__`` (a Tensor
subclass, or any object that wants to stand in for a tensor), and a ``TorchFunctionMode`` pushed on the
thread's stack.  Only a binding's slow path looks for them (the parser, ``PyFunction.call``): a subclass
fails the generated fast path's ``type(x) is Tensor`` test by itself, and while any thread has a mode
pushed the bindings' ``Tensor`` global (and the factories' ``_small_ints`` gate) is swapped for a stand-in
no object is exactly, so plain calls take the slow path too and the fast path pays nothing for modes at
all.  Tensor's hand-written methods and properties (indexing, ``shape``...) get wrappers: on each subclass
when it is defined, and on ``Tensor`` itself only while a mode is pushed.
"""
from __future__ import annotations

import sys
import threading
import warnings

from ..core.tensor import Tensor


# --- thread state -----------------------------------------------------------------------------------
class _TorchFunctionState(threading.local):
    """Per thread: the mode stack and the two ``Disable*`` switches."""

    def __init__(self):
        self.stack = []
        self.subclass_disabled = False      # DisableTorchFunctionSubclass
        self.all_disabled = False           # DisableTorchFunction


_state = _TorchFunctionState()
_modes_pushed = [0]                         # modes pushed on all threads together (for the fast-path swap)
_swap_lock = threading.Lock()
_BINDING_MODULES: list = []                 # the generated binding modules whose ``_T`` is swapped


def _never(values) -> bool:
    return False


_SMALL_INTS: list = [None]      # the bindings' own ``_small_ints`` (restored when the last mode is popped)


class _TensorCheck(type):
    """The stand-in's metaclass: ``isinstance(x, stand_in)`` still answers for ``Tensor``."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor)

    def __subclasscheck__(cls, sub):
        return issubclass(sub, Tensor)


class _AnyTensor(metaclass=_TensorCheck):
    """What the bindings' ``_T`` is while a mode is pushed: no object's type *is* it."""


def _activate_parser_hook() -> None:
    """From now on the parser's slow path looks for overrides (a subclass exists, or a mode was pushed)."""
    from ..bindings import python_arg_parser as parser
    parser._tf_active = True


def _count_mode(delta: int) -> None:
    if delta > 0:
        _activate_parser_hook()
    with _swap_lock:
        before = _modes_pushed[0]
        _modes_pushed[0] = after = before + delta
        if (before == 0) != (after == 0):
            stand_in = _AnyTensor if after else Tensor
            for mod in _BINDING_MODULES:
                mod._T = stand_in
                mod._small_ints = _never if after else _SMALL_INTS[0]     # the factories' fast-path gate
            _swap_tensor_attributes(bool(after))


# --- the Disable guards -------------------------------------------------------------------------------
class DisableTorchFunctionSubclass:
    """Inside, subclass ``__torch_function__`` overrides are skipped (modes still run)."""

    def __enter__(self):
        self._saved = _state.subclass_disabled
        _state.subclass_disabled = True
        return self

    def __exit__(self, *exc):
        _state.subclass_disabled = self._saved
        return False


class DisableTorchFunction:
    """Inside, neither subclass overrides nor torch function modes run."""

    def __enter__(self):
        self._saved = (_state.subclass_disabled, _state.all_disabled)
        _state.subclass_disabled = _state.all_disabled = True
        return self

    def __exit__(self, *exc):
        _state.subclass_disabled, _state.all_disabled = self._saved
        return False


def _is_torch_function_enabled() -> bool:
    return not _state.subclass_disabled


def _is_torch_function_all_disabled() -> bool:
    return _state.all_disabled


def _is_torch_function_mode_enabled() -> bool:
    return not _state.all_disabled and bool(_state.stack)


def _disabled_torch_function_impl(func, types, args=(), kwargs=None):
    """Put as ``__torch_function__`` on a subclass: its instances then take no part in it."""
    with DisableTorchFunctionSubclass():
        return func(*args, **(kwargs or {}))


# --- the mode stack -------------------------------------------------------------------------------------
def _push_on_torch_function_stack(mode) -> None:
    _state.stack.append(mode)
    _count_mode(1)


def _pop_torch_function_stack():
    if not _state.stack:
        raise RuntimeError("Trying to pop from an empty torch function mode stack")
    mode = _state.stack.pop()
    _count_mode(-1)
    return mode


def _len_torch_function_stack() -> int:
    return len(_state.stack)


def _get_function_stack_at(i: int):
    return _state.stack[i]


def _get_current_function_mode():
    return _state.stack[-1] if _state.stack else None


def _get_current_function_mode_stack() -> list:
    return list(_state.stack)


class _PopModeTemporarily:
    """The running mode is off the stack while its own ``__torch_function__`` runs (restored on error)."""

    # the thread's stack only: the fast-path swap stays on meanwhile (the mode is coming back), so a call
    # under a mode costs no swap of the bindings and Tensor's attributes
    def __enter__(self):
        if not _state.stack:
            raise RuntimeError("Trying to pop from an empty torch function mode stack")
        self.mode = _state.stack.pop()
        return self.mode

    def __exit__(self, *exc):
        _state.stack.append(self.mode)
        return False


_pop_mode_temporarily = _PopModeTemporarily


class TorchFunctionMode:
    """Subclass and override ``__torch_function__(self, func, types, args=(), kwargs=None)``; use in ``with``."""

    def __init__(self):
        pass

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        _push_on_torch_function_stack(self)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        stack = _state.stack
        if stack and stack[-1] is self:
            _pop_torch_function_stack()
        elif self in stack:         # left out of order: take it out wherever it is
            stack.remove(self)
            _count_mode(-1)
        return False

    @classmethod
    def push(cls, *args, **kwargs):
        warnings.warn("`Mode.push()` is no longer necessary and can be replaced with just `with Mode()`",
                      stacklevel=2)
        return cls(*args, **kwargs)


class BaseTorchFunctionMode(TorchFunctionMode):
    """A mode that runs every function unchanged (subclass it and call ``super()``)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


# --- finding the overloaded arguments -----------------------------------------------------------------
# argument types that never define __torch_function__: the slow path's scan skips them with one set test
_PLAIN_TYPES = {Tensor, int, float, bool, complex, str, type(None), slice, type(Ellipsis)}


def _torch_function_of(tp):
    """The type's ``__torch_function__`` when it takes part (not plain Tensor, not the disabled one)."""
    if tp is Tensor:
        return None
    tf = getattr(tp, "__torch_function__", None)
    if tf is None or tf is _disabled_torch_function_impl or \
            getattr(tf, "__func__", None) is _disabled_torch_function_impl:
        return None
    return tf


def _append_overloaded(obj, out: list) -> None:
    """PyTorch's order: left to right, each type once, a subclass before any of its parent classes."""
    tp = type(obj)
    for o in out:
        if type(o) is tp:
            return
    at = len(out)
    for i, o in enumerate(out):
        if issubclass(tp, type(o)):
            at = i
            break
    out.insert(at, obj)


def _get_overloaded_args(relevant_args, get_type_fn=None) -> list:
    out: list = []
    for a in relevant_args:
        tp = type(a) if get_type_fn is None else get_type_fn(a)
        if tp not in _PLAIN_TYPES and _torch_function_of(tp) is not None:
            _append_overloaded(a, out)
    return out


def _scan(values, out: list) -> None:
    for a in values:
        tp = type(a)
        if tp in _PLAIN_TYPES:
            continue
        if tp is list or tp is tuple:
            for x in a:
                if type(x) not in _PLAIN_TYPES and _torch_function_of(type(x)) is not None:
                    _append_overloaded(x, out)
        elif _torch_function_of(tp) is not None:
            _append_overloaded(a, out)


def overloaded_args_of(args, kwargs, self_tensor=None) -> list:
    """The arguments of a binding call whose ``__torch_function__`` takes part (the parser's hook)."""
    out: list = []
    if self_tensor is not None and type(self_tensor) is not Tensor and \
            _torch_function_of(type(self_tensor)) is not None:
        out.append(self_tensor)
    _scan(args, out)
    if kwargs:
        _scan(kwargs.values(), out)
    return out


def _plain(args, kwargs) -> bool:
    """No argument can take part: the test the parser's slow path pays on every call."""
    for a in args:
        if type(a) not in _PLAIN_TYPES:
            return False
    if kwargs:
        for a in kwargs.values():
            if type(a) not in _PLAIN_TYPES:
                return False
    return True


def binding_wants_torch_function(args, kwargs, self_tensor=None) -> bool:
    """Whether a binding call must go to ``handle_torch_function`` (modes, or overloaded arguments)."""
    st = _state
    if st.stack and not st.all_disabled:
        return True
    if st.subclass_disabled:
        return False
    if self_tensor is not None and type(self_tensor) is not Tensor:
        return True
    return not _plain(args, kwargs)


def has_torch_function(relevant_args) -> bool:
    """True when a mode is active or an argument overrides ``__torch_function__``."""
    if _is_torch_function_mode_enabled():
        return True
    if _state.subclass_disabled:
        return False
    return any(type(a) not in _PLAIN_TYPES and _torch_function_of(type(a)) is not None for a in relevant_args)


def has_torch_function_unary(obj) -> bool:
    return has_torch_function((obj,))


def has_torch_function_variadic(*args) -> bool:
    return has_torch_function(args)


def _function_name(public_api) -> str:
    """How PyTorch names the function in its errors: ``torch.add``, ``torch.Tensor.add``."""
    qual = getattr(public_api, "__qualname__", None) or getattr(public_api, "__name__", repr(public_api))
    mod = getattr(public_api, "__module__", None) or ""
    if mod.startswith("onion._generated") or getattr(public_api, "_onion_binding", False):
        return f"onion.{qual}"
    return f"{mod}.{qual}" if mod else qual


def _call_override(owner, func, types, args, kwargs):
    """Call an overloaded argument's ``__torch_function__`` (PyTorch warns about a plain method)."""
    bound = owner.__torch_function__
    if getattr(bound, "__self__", None) is owner:
        warnings.warn("Defining your `__torch_function__` as a plain method is deprecated and will be an "
                      "error in future, please define it as a classmethod.", UserWarning, stacklevel=4)
    return bound(func, types, args, kwargs)


_PROCEED = object()     # dispatch_binding's answer when nothing overrides the call: bind and dispatch as usual


def _dispatch(public_api, overloaded, args, kwargs, from_binding: bool):
    types = tuple(type(a) for a in overloaded)
    mode = None
    if _state.stack and not _state.all_disabled:
        with _pop_mode_temporarily() as mode:
            handler = mode.__torch_function__
            if getattr(handler, "__self__", None) is type(mode):
                raise RuntimeError(f"{type(mode).__name__}.__torch_function__: defining a mode's "
                                   "`__torch_function__` as a classmethod is not supported, please make it a "
                                   "plain method")
            ret = handler(public_api, types, args, kwargs)
        if ret is not NotImplemented:
            return ret
        if not from_binding:
            mode = None         # PyTorch's Python-level handler goes on to the arguments without naming the mode
    elif not overloaded:
        return _PROCEED
    for a in overloaded:
        ret = _call_override(a, public_api, types, args, kwargs)
        if ret is not NotImplemented:
            return ret
    name = _function_name(public_api)
    if not from_binding:
        raise TypeError(f"no implementation found for '{name}' on types that implement __torch_function__: "
                        f"[{', '.join(repr(t) for t in types)}]")
    lines = [f"Multiple dispatch failed for '{name}'; all __torch_function__ handlers returned NotImplemented:",
             ""]
    if mode is not None:
        lines.append(f"  - mode object {mode!r}")
    lines += [f"  - tensor subclass {t!r}" for t in types]
    lines += ["", "For more information, try re-running with TORCH_LOGS=not_implemented"]
    err = TypeError("\n".join(lines))
    err._onion_all_not_implemented = True      # a binary operator turns this into its own NotImplemented
    raise err


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Run ``public_api(*args, **kwargs)`` through the active mode and the overloaded arguments' overrides
    (for functions written in Python; call it when ``has_torch_function(relevant_args)``)."""
    overloaded = [] if _state.subclass_disabled else _get_overloaded_args(relevant_args)
    ret = _dispatch(public_api, overloaded, args, kwargs, False)
    if ret is _PROCEED:
        return public_api(*args, **kwargs)
    return ret


def dispatch_binding(pyfunc, args, kwargs, self_tensor=None):
    """The parser's hook: ``_PROCEED``, or the result of the mode or overloaded argument that took the call."""
    public_api = getattr(pyfunc, "public", None)
    if public_api is None:
        public_api = pyfunc.public = _stand_in_function(pyfunc)
    if self_tensor is not None:
        args = (self_tensor,) + tuple(args)
    overloaded = [] if _state.subclass_disabled else overloaded_args_of(args, kwargs)
    try:
        return _dispatch(public_api, overloaded, tuple(args), kwargs or {}, True)
    except TypeError as e:
        # ``a + 1``: PyTorch's binary operators turn this TypeError into NotImplemented, so Python tries the
        # reflected operator and then says "unsupported operand type(s)"
        if getattr(e, "_onion_all_not_implemented", False) and self_tensor is not None and \
                sys._getframe(2).f_code.co_name in _BINARY_OPERATORS:
            return NotImplemented
        raise


_BINARY_OPERATORS = frozenset(f"__{p}{n}__" for n in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow",
                                                      "matmul", "and", "or", "xor", "lshift", "rshift", "div")
                              for p in ("", "r", "i"))


def _stand_in_function(pyfunc):
    """A public function object for a binding the loader did not see (so a mode has something to call)."""
    if pyfunc.method:
        def fn(self, *args, **kwargs):
            return pyfunc.call(args, kwargs, self)
        fn.__qualname__ = "Tensor." + pyfunc.name
    else:
        def fn(*args, **kwargs):
            return pyfunc.call(args, kwargs)
        fn.__qualname__ = pyfunc.name
    fn.__name__ = pyfunc.name
    fn._onion_binding = True
    return fn


# --- Tensor's own __torch_function__ ---------------------------------------------------------------------
def get_default_nowrap_functions() -> set:
    """Functions whose results the default ``__torch_function__`` leaves as they are (not cast to the subclass)."""
    return {_WRAPPED["_base"].__get__, _WRAPPED["grad"].__get__}


def _convert(ret, cls):
    if cls is Tensor:
        return ret
    if isinstance(ret, Tensor) and not isinstance(ret, cls):
        ret = ret.as_subclass(cls)
    if isinstance(ret, (tuple, list)):
        ret = type(ret)(_convert(r, cls) for r in ret)     # return types take an iterable, as structseqs do
    return ret


def _tensor_torch_function(cls, func, types, args=(), kwargs=None):
    """The default: run ``func`` with subclass overrides off, and cast Tensor results to ``cls``."""
    if kwargs is None:
        kwargs = {}
    if not all(issubclass(cls, t) for t in types):
        return NotImplemented
    with DisableTorchFunctionSubclass():
        ret = func(*args, **kwargs)
        if func in get_default_nowrap_functions():
            return ret
        return _convert(ret, cls)


# --- Tensor's hand-written methods and properties ------------------------------------------------------------
# They read the impl directly (no parser), so they get a wrapper that asks __torch_function__ first.  Plain
# Tensor keeps the originals (no cost): the wrappers are set on each subclass when it is defined, and on
# Tensor itself only while some thread has a torch function mode pushed.
_HANDWRITTEN_METHODS = (
    "__repr__", "backward", "register_hook", "retain_grad", "detach", "detach_", "to", "__getitem__", "__setitem__",
    "cpu", "cuda", "float", "double", "half", "cfloat", "cdouble", "bfloat16", "long", "int", "short", "bool",
    "byte", "char", "is_neg", "is_conj", "__rsub__", "__rtruediv__", "__rdiv__", "__rmod__", "__rfloordiv__",
    "__rlshift__", "__rrshift__", "__rmatmul__", "__rand__", "__ror__", "__rxor__", "__rpow__", "__eq__",
    "adjoint", "conj", "unique", "unique_consecutive", "nonzero", "norm", "size", "stride", "dim", "ndimension",
    "numel", "nelement", "element_size", "storage_offset", "is_contiguous", "is_floating_point", "is_complex",
    "item", "tolist", "numpy", "requires_grad_", "data_ptr", "untyped_storage", "__len__", "__bool__",
    "__float__", "__int__", "__complex__", "__index__", "is_inference", "_is_view")
_HANDWRITTEN_PROPERTIES = (
    "shape", "dtype", "device", "ndim", "layout", "is_meta", "is_cpu", "is_cuda", "requires_grad", "grad",
    "grad_fn", "is_leaf", "_base", "_version", "data", "T", "mT", "H", "mH", "real", "imag", "retains_grad")
_ORIGINALS: dict = {}          # name -> Tensor's own attribute
_WRAPPED: dict = {}            # name -> the torch-function-aware stand-in


def _wants(self, args, kwargs) -> bool:
    st = _state
    if st.stack and not st.all_disabled:
        return True
    return not st.subclass_disabled and (type(self) is not Tensor or not _plain(args, kwargs))


def _wrap_method(name: str, fn):
    def method(self, *args, **kwargs):
        if _wants(self, args, kwargs):
            full = (self,) + args
            overloaded = [] if _state.subclass_disabled else overloaded_args_of(full, kwargs)
            ret = _dispatch(method, overloaded, full, kwargs, True)
            if ret is not _PROCEED:
                return ret
        return fn(self, *args, **kwargs)
    method.__name__ = name
    method.__qualname__ = "Tensor." + name
    method._onion_binding = True
    return method


def _wrap_property(name: str, prop):
    fget = prop.fget

    def getter(self):
        if _wants(self, (), None):
            overloaded = [] if _state.subclass_disabled else overloaded_args_of((self,), None)
            ret = _dispatch(wrapped.__get__, overloaded, (self,), {}, True)
            if ret is not _PROCEED:
                return ret
        return fget(self)
    wrapped = property(getter, prop.fset, prop.fdel, prop.__doc__)
    return wrapped


def _init_subclass(cls, **kwargs):
    """Every Tensor subclass gets the torch-function-aware hand-written methods (unless it defines its own)."""
    _activate_parser_hook()
    own = set()
    for klass in cls.__mro__:
        if klass is Tensor:
            break
        own.update(klass.__dict__)
    for name, wrapped in _WRAPPED.items():
        if name not in own:
            setattr(cls, name, wrapped)


def _swap_tensor_attributes(on: bool) -> None:
    for name in _WRAPPED:
        setattr(Tensor, name, _WRAPPED[name] if on else _ORIGINALS[name])


def wrap_function(fn, name: str):
    """A hand-written public function (``onion.tensor``) that a torch function mode sees; without a mode
    pushed it costs one global read.  The wrapper has ``fn``'s own signature (a call that does not bind fails
    where it is made, as before); a mode gets the arguments as the caller gave them."""
    import inspect
    params, plain, given = [], [], []
    env = {"_modes_pushed": _modes_pushed, "_state": _state, "_PROCEED": _PROCEED, "_fn": fn,
           "_mode_call": _mode_call, "_UNSET": _UNSET}
    star = False
    for p in inspect.signature(fn).parameters.values():
        if p.kind is p.VAR_POSITIONAL or p.kind is p.VAR_KEYWORD:
            raise TypeError(f"wrap_function: {name} takes *args/**kwargs")
        if p.kind is p.KEYWORD_ONLY and not star:
            params.append("*")
            star = True
        if p.default is p.empty:
            params.append(p.name)
            value = p.name
            given.append(f"_a.append({p.name})" if p.kind is not p.KEYWORD_ONLY else
                         f"_k['{p.name}'] = {p.name}")
        else:
            env[f"_d_{p.name}"] = p.default
            params.append(f"{p.name}=_UNSET")
            value = f"(_d_{p.name} if {p.name} is _UNSET else {p.name})"
            given.append(f"if {p.name} is not _UNSET: _k['{p.name}'] = {p.name}")
        plain.append(value if p.kind is not p.KEYWORD_ONLY else f"{p.name}={value}")
    body = "\n".join("        " + g for g in given)
    src = (f"def {name}({', '.join(params)}):\n"
           f"    if _modes_pushed[0] and _state.stack and not _state.all_disabled:\n"
           f"        _a, _k = [], {{}}\n{body}\n"
           f"        ret = _mode_call({name}, *_a, **_k)\n"
           f"        if ret is not _PROCEED:\n"
           f"            return ret\n"
           f"    return _fn({', '.join(plain)})\n")
    exec(src, env)  # noqa: S102 - a wrapper with the wrapped function's signature
    function = env[name]
    function.__doc__ = fn.__doc__
    function._onion_binding = True
    return function


_UNSET = object()


def _mode_call(public_api, *args, **kwargs):
    return _dispatch(public_api, [], args, kwargs, True)


def install(tensor_cls, binding_modules) -> None:
    """Called once by onion's loader: Tensor's default override and the bindings whose ``_T`` is swapped."""
    tensor_cls.__torch_function__ = classmethod(_tensor_torch_function)
    for name in _HANDWRITTEN_METHODS + _HANDWRITTEN_PROPERTIES:
        attr = tensor_cls.__dict__.get(name)
        if attr is None:
            continue
        _ORIGINALS[name] = attr
        _WRAPPED[name] = _wrap_property(name, attr) if isinstance(attr, property) else _wrap_method(name, attr)
    tensor_cls.__init_subclass__ = classmethod(_init_subclass)
    _BINDING_MODULES.extend(binding_modules)
    _SMALL_INTS[0] = binding_modules[0]._small_ints
    from ..bindings.python_arg_parser import PyFunction
    for mod in binding_modules:
        g = vars(mod)
        for key, obj in list(g.items()):
            if isinstance(obj, PyFunction) and key[:3] in ("_F_", "_M_"):
                fn = g.get(key[3:])
                if fn is not None:
                    fn._onion_binding = True
                    obj.public = fn
    from ..bindings import python_arg_parser as parser
    parser._tf_wants = binding_wants_torch_function
    parser._tf_dispatch = dispatch_binding
    parser._TF_PROCEED = _PROCEED
