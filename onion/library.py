"""``onion.library``: register operators and kernels from Python, as ``torch.library``.

Three levels, as in PyTorch: ``Library.define`` / ``impl`` / ``_register_fake`` on a library object; the free
functions ``define``, ``impl``, ``register_kernel``, ``register_fake``, ``register_autograd``,
``register_torch_dispatch`` (by qualified name, operator overload or ``CustomOpDef``); and the ``custom_op``
decorator.
"""
from __future__ import annotations

import contextlib
import re

from . import types as _types  # noqa: F401  (onion.types: the annotations infer_schema reads)
from ._library import autograd as _autograd
from ._library.custom_ops import (CustomOpDef, custom_op, dispatch_key_for_device, maybe_get_opdef,  # noqa: F401
                                  parse_namespace, register_autocast_kernel, register_torch_dispatch_rule)
from ._library.fake_impl import check_fake_signature, fake_mode_ctx_getter, get_ctx, set_ctx_getter  # noqa: F401
from ._library.infer_schema import infer_schema  # noqa: F401
from .core.dispatch_key import DispatchKey
from .dispatch.library import FAKE_IMPLS, Library, fallthrough_kernel  # noqa: F401
from .testing._internal.optests import opcheck  # noqa: F401

__all__ = ["Library", "fallthrough_kernel", "custom_op", "infer_schema", "define", "impl", "register_kernel",
           "register_fake", "register_autograd", "register_torch_dispatch", "register_autocast", "impl_abstract",
           "get_ctx", "CustomOpDef"]

_keep_alive: list = []      # libraries made for registrations without ``lib``: they live as long as the process
_FAKE_LIBS: dict = {}       # namespace -> the FRAGMENT library that owns fakes registered without ``lib``
_NAMELESS_SCHEMA = re.compile(r"\(.*\) -> .*")


def _library_for(namespace: str, lib):
    if lib is not None:
        return lib
    use = Library(namespace, "FRAGMENT")
    _keep_alive.append(use)
    return use


def _op_name(op, api: str):
    """``op`` (a qualified name, an operator overload or a CustomOpDef) as a CustomOpDef or "ns::name"."""
    if isinstance(op, CustomOpDef):
        return op
    if isinstance(op, str):
        name = op
    elif hasattr(op, "_handle") and hasattr(op, "name"):
        name = op.name()
    else:
        raise ValueError(f"{api}({op}): got unexpected type for op: {type(op)}")
    opdef = maybe_get_opdef(name)
    return opdef if opdef is not None else name


def _find(qualname: str):
    from .dispatch.dispatcher import dispatcher
    handle = dispatcher.find(qualname)
    if handle is None:
        raise RuntimeError(f"operator {qualname} does not exist")
    return handle


@contextlib.contextmanager
def _scoped_library(*args, **kwargs):
    """A ``Library`` destroyed (all its registrations undone) when the block exits."""
    lib = Library(*args, **kwargs)
    try:
        yield lib
    finally:
        lib._destroy()


def define(qualname, schema, *, lib=None, tags=(), alias_analysis=""):
    """Define the operator ``qualname`` ("ns::name") with ``schema`` ("(Tensor x) -> Tensor"); with ``lib``
    it lives as long as that library.  The older form ``define(lib, "name(Tensor x) -> Tensor")`` returns a
    decorator that defines the operator in ``lib`` and registers the function as its kernel."""
    if isinstance(qualname, Library):
        legacy_lib, legacy_schema = qualname, schema

        def wrap(f):
            name = legacy_lib.define(legacy_schema, alias_analysis)
            legacy_lib.impl(name, f)
            return f
        return wrap
    if not isinstance(qualname, str):
        raise ValueError(f"define(qualname, schema): expected qualname to be instance of str, got {type(qualname)}")
    namespace, name = parse_namespace(qualname)
    if not isinstance(schema, str) or not _NAMELESS_SCHEMA.fullmatch(schema):
        raise ValueError(f'define(qualname, schema, ...): expected schema to look like e.g. "(Tensor x) -> Tensor" '
                         f'but got "{schema}"')
    use = lib if lib is not None else Library(namespace, "FRAGMENT")
    use.define(name + schema, alias_analysis="", tags=tags)
    if lib is None:
        _keep_alive.append(use)


def _keys_of(types) -> list:
    if isinstance(types, str):
        types = (types,)
    keys = []
    for typ in types:
        if typ in DispatchKey.__members__:
            keys.append(typ)
        elif typ == "default":
            keys.append("CompositeExplicitAutograd")
        else:
            keys.append(dispatch_key_for_device(typ))
    return keys


def impl(qualname, types, func=None, *, lib=None):
    """Register ``func`` for ``qualname`` on device types ("cpu", "cuda", "meta", "default") or dispatch keys
    ("CompositeImplicitAutograd", ...); usable as a decorator.  The older form ``impl(lib, name,
    dispatch_key)`` returns a decorator that registers into ``lib``."""
    if isinstance(qualname, Library):
        legacy_lib, name, key = qualname, types, func if func is not None else ""

        def wrap(f):
            legacy_lib.impl(name, f, key)
            return f
        return wrap
    keys = _keys_of(types)

    def register(func):
        namespace, _ = parse_namespace(qualname)
        use = _library_for(namespace, lib)
        for key in keys:
            use.impl(qualname, func, key)
        return func

    if func is None:
        return register
    register(func)
    return None


def register_kernel(op, device_types, func=None, /, *, lib=None):
    """Register ``func`` as ``op``'s implementation for ``device_types`` (None: every device type)."""
    target = _op_name(op, "register_kernel")
    if isinstance(target, CustomOpDef):
        return target.register_kernel(device_types, func)
    return impl(target, "CompositeExplicitAutograd" if device_types is None else device_types, func, lib=lib)


def register_fake(op, func=None, /, *, lib=None, _stacklevel: int = 1, allow_override: bool = True):
    """Register ``func`` as the fake implementation of ``op`` (what ``FakeTensorMode`` runs instead of a Meta
    kernel); its signature is checked against the operator's schema now.  Usable as a decorator."""
    target = _op_name(op, "register_fake")
    if isinstance(target, CustomOpDef):
        if func is None:
            return target.register_fake
        return target.register_fake(func)
    if "::" not in target:
        raise ValueError(f"register_fake(op): expected op to be a qualified name 'namespace::name', got '{target}'")

    def register(fn):
        handle = _find(target)
        if not callable(fn):
            raise TypeError(f"register_fake({target}): expected a callable, got {type(fn).__name__}")
        check_fake_signature(target, handle.schema, fn)
        owner = lib
        if owner is None:
            ns = target.partition("::")[0]
            owner = _FAKE_LIBS.get(ns)
            if owner is None:
                owner = _FAKE_LIBS[ns] = Library(ns, "FRAGMENT")
        getter = fake_mode_ctx_getter(handle.opoverload)

        def fake_impl(*args, **kwargs):
            with set_ctx_getter(getter):
                return fn(*args, **kwargs)
        fake_impl.__wrapped__ = fn
        owner._register_fake(target, fake_impl, _stacklevel + 1, allow_override=allow_override)
        return fn

    if func is None:
        return register
    return register(func)


def register_autograd(op, backward, /, *, setup_context=None, lib=None) -> None:
    """Register a backward formula for ``op``: ``backward(ctx, *grads)``, with ``setup_context(ctx, inputs,
    output)`` (``(ctx, inputs, keyword_only_inputs, output)`` when the schema has keyword-only arguments)
    run in forward."""
    target = _op_name(op, "register_autograd")
    if isinstance(target, CustomOpDef):
        target.register_autograd(backward, setup_context=setup_context)
        return
    handle = _find(target)
    schema = handle.schema
    from ._library.custom_ops import _is_functional
    if not _is_functional(schema):
        raise RuntimeError(f"Cannot register autograd formula for non-functional operator {handle.opoverload} "
                           f"with schema {schema}. Please create a functional operator and register an autograd "
                           f"formula for that.")
    if any(a.kwarg_only and a.type.base == "Tensor" for a in schema.arguments):
        raise NotImplementedError(f"register_autograd with kwarg-only Tensor args. In the original definition of "
                                  f"the op, please make your tensors not kwarg-only. Got: {schema}")
    kernel = _autograd.make_autograd_kernel(handle, _autograd.Info(backward, setup_context))
    namespace, name = parse_namespace(target)
    _library_for(namespace, lib).impl_kernel(name, kernel, "Autograd")


def register_torch_dispatch(op, torch_dispatch_class, func=None, /, *, lib=None):
    """``func(mode_or_cls, func, types, args, kwargs)`` handles ``op`` for ``torch_dispatch_class`` (a
    ``TorchDispatchMode`` or a tensor subclass) in place of its ``__torch_dispatch__``."""
    target = _op_name(op, "register_torch_dispatch")
    if isinstance(target, CustomOpDef):
        return target.register_torch_dispatch(torch_dispatch_class, func)

    def register(fn):
        namespace, _ = parse_namespace(target)
        register_torch_dispatch_rule(_library_for(namespace, lib), _find(target), torch_dispatch_class, fn)
        return fn

    if func is None:
        return register
    return register(func)


def register_autocast(op, device_type: str, cast_inputs, /, *, lib=None):
    """Under autocast for ``device_type``, ``op``'s floating-point tensor inputs on that device are cast to
    ``cast_inputs`` and the operator runs with autocast off."""
    target = _op_name(op, "register_autocast")
    if isinstance(target, CustomOpDef):
        return target.register_autocast(device_type, cast_inputs)
    namespace, _ = parse_namespace(target)
    register_autocast_kernel(_library_for(namespace, lib), _find(target), device_type, cast_inputs)
    return None


def impl_abstract(qualname, func=None, *, lib=None, _stacklevel: int = 1):
    """The former name of ``register_fake``."""
    import warnings
    warnings.warn("`onion.library.impl_abstract` was renamed to `onion.library.register_fake`. Please use that "
                  "instead; we will remove `onion.library.impl_abstract` in a future version of PyTorch.",
                  FutureWarning, stacklevel=2)
    return register_fake(qualname, func, lib=lib, _stacklevel=_stacklevel + 1)
