"""``custom_op``: a Python function made into a dispatcher operator (PyTorch's ``torch/_library/custom_ops.py``).

``@custom_op("mylib::foo", mutates_args=())`` defines ``mylib::foo`` in a FRAGMENT library of its own and
registers, on the operator's keys: the function as its kernel (CompositeExplicitAutograd, or the keys of
``device_types``), an Autograd kernel (``register_autograd`` gives it a formula), a fake implementation and
a Meta kernel that runs it, and, when the schema mutates, an ADInplaceOrView kernel that bumps the version
counters of what is written.  Calling the ``CustomOpDef`` calls the operator through an entry written for
its schema at registration (keyset, cached kernel, call), as the built-in operators are entered.
"""
from __future__ import annotations

import inspect
import keyword
import logging
import weakref
from contextlib import contextmanager

from ..core.dispatch_key import AFTER_ADINPLACE, DispatchKey, bit
from ..core.tensor import Tensor
from ..core.tls import state as _state
from ..dispatch.arguments import REQUIRED, python_default
from ..dispatch.library import Library
from ..dispatch.schema import parse_schema
from . import autograd as _autograd
from .fake_impl import check_fake_signature, fake_mode_ctx_getter, meta_ctx_error, set_ctx_getter
from .infer_schema import infer_schema
from ..dispatch.specialize import arg_names, compile_function, keyset_terms
from .torch_dispatch_rules import register_torch_dispatch_rule

log = logging.getLogger(__name__)

OPDEFS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()   # "ns::name" -> CustomOpDef
OPDEF_TO_LIB: dict = {}                                               # "ns::name" -> its Library

_DEVICE_KEYS = {"cpu": "CPU", "cuda": "CUDA", "meta": "Meta", "privateuseone": "PrivateUse1", "xla": "XLA",
                "mps": "MPS", "xpu": "XPU", "hpu": "HPU", "ipu": "IPU", "mtia": "MTIA", "lazy": "Lazy",
                "hip": "HIP", "ve": "VE", "vulkan": "Vulkan", "maia": "MAIA"}


def dispatch_key_for_device(device_type: str) -> str:
    """The backend key of a device type (``"cpu"`` -> ``"CPU"``), as ``_dispatch_key_for_device``."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected a device type string such as 'cpu' or 'cuda', got {device_type!r}")
    name = _DEVICE_KEYS.get(device_type)
    if name is None:
        from ..core.device import _BACKEND_OF_TYPE   # a renamed PrivateUse1 backend, a registered device type
        key = _BACKEND_OF_TYPE.get(device_type)
        if key is not None:
            name = key.name
    if name is None or name not in DispatchKey.__members__:
        raise RuntimeError(f"Expected one of cpu, cuda, meta, privateuseone device type at start of device "
                           f"string: {device_type}")
    return name


def parse_namespace(qualname: str) -> tuple[str, str]:
    splits = qualname.split("::")
    if len(splits) != 2:
        raise ValueError(f"Expected `qualname` to be of the form \"namespace::name\", but got {qualname}. The "
                         f"qualname passed to the torch.library APIs must consist of a namespace and a name, "
                         f"e.g. aten::sin")
    return splits[0], splits[1]


def _normalize_tags(tags) -> tuple:
    if tags is None:
        return ()
    if isinstance(tags, str) or not hasattr(tags, "__iter__"):
        tags = (tags,)
    return tuple(dict.fromkeys(tags))


def custom_op(name: str, fn=None, /, *, mutates_args, device_types=None, schema: str | None = None, tags=None):
    """Wrap ``fn`` (type-annotated) into the operator ``name`` ("namespace::name"); usable as a decorator.
    ``mutates_args``: the names of the arguments ``fn`` writes to ("unknown": every Tensor argument);
    ``device_types``: the device type(s) ``fn`` serves (None: every one); ``schema``: the schema instead of
    inferring it, e.g. ``"(Tensor x, int y) -> (Tensor, Tensor)"``."""

    def inner(fn):
        normalized_tags = _normalize_tags(tags)
        schema_str = infer_schema(fn, mutates_args=mutates_args) if schema is None else schema
        namespace, opname = parse_namespace(name)
        parsed = parse_schema(opname + schema_str)       # a schema that does not parse fails before anything
        if schema is not None:
            expected = {a.name for a in parsed.arguments if a.alias_info is not None and a.is_write}
            if mutates_args != "unknown" and expected != set(mutates_args):
                raise ValueError(f"Attempted to create a custom op with `mutates_args={mutates_args}` and "
                                 f"`schema={schema}. The schema suggests that the op mutates {expected}which is "
                                 f"different from what was provided to us in `mutates_args`. Please make these "
                                 f"consistent.")
        result = CustomOpDef(namespace, opname, schema_str, fn, normalized_tags, _parsed=parsed)
        try:
            result.register_kernel(device_types)(fn)
        except BaseException:
            result._destroy()
            raise
        return result

    if fn is None:
        return inner
    return inner(fn)


class CustomOpDef:
    """A function turned into an operator by ``custom_op``; its methods register more behaviour."""

    def __init__(self, namespace: str, name: str, schema: str, fn, tags=(), *, _parsed=None):
        self._namespace = namespace
        self._name = name
        self._schema = schema
        self._tags = _normalize_tags(tags)
        self._init_fn = fn
        self._backend_fns: dict = {}       # device type (None: every one) -> the registered function
        self._active: dict = {}            # device type -> what its kernel calls now (set_kernel_enabled)
        self._disabled_kernel: set = set()
        self._abstract_fn = None
        self._setup_context_fn = None
        self._backward_fn = None
        self._torch_dispatch_fns: dict = {}
        self._autocast_dtype: dict = {}
        parsed = _parsed if _parsed is not None else parse_schema(name + schema)
        if any(a.kwarg_only and a.type.base == "Tensor" for a in parsed.arguments):
            raise NotImplementedError(f"custom_op with kwarg-only Tensor args. Please make your tensors not "
                                      f"kwarg-only. Got: {name + schema}")
        qualname = self._qualname
        old = OPDEF_TO_LIB.pop(qualname, None)
        if old is not None:             # a redefinition replaces the previous operator, as in PyTorch
            old._destroy()
        self._lib = Library(namespace, "FRAGMENT")
        try:
            self._register_to_dispatcher(parsed)
        except BaseException:
            self._lib._destroy()
            raise
        OPDEF_TO_LIB[qualname] = self._lib
        OPDEFS[qualname] = self

    @property
    def _qualname(self) -> str:
        return f"{self._namespace}::{self._name}"

    def __repr__(self):
        return f"<CustomOpDef({self._qualname})>"

    def _destroy(self) -> None:
        if OPDEF_TO_LIB.get(self._qualname) is self._lib:
            del OPDEF_TO_LIB[self._qualname]
        if OPDEFS.get(self._qualname) is self:
            del OPDEFS[self._qualname]
        self._lib._destroy()

    # --- calling ------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        return self._opoverload(*args, **kwargs)

    # --- registration with the dispatcher -----------------------------------------------
    def _register_to_dispatcher(self, parsed) -> None:
        lib = self._lib
        # as in PyTorch, a custom op is marked as working with tracing and compilation
        tags = ("pt2_compliant_tag",) + tuple(t for t in self._tags if t != "pt2_compliant_tag")
        lib.define(self._name + self._schema, tags=tags)
        from ..dispatch.dispatcher import dispatcher
        self._handle = dispatcher.find(self._qualname)
        self._opoverload = self._handle.opoverload
        self._op_schema = self._handle.schema
        self._register_fake_dispatcher_impl()
        lib.impl_kernel(self._name, _autograd.make_autograd_kernel(self._handle, self), "Autograd")
        if self._op_schema.is_mutable:
            lib.impl_kernel(self._name, _version_bump_kernel(self._handle), "ADInplaceOrView")
        self._install_entry()

    def _register_fake_dispatcher_impl(self) -> None:
        schema = self._op_schema
        trivial = schema.is_mutable and not schema.returns
        opdef = self
        op = self._opoverload

        def run_fake(args, kwargs):
            fn = opdef._abstract_fn
            if fn is None:
                if trivial:         # an operator that only writes its inputs: nothing to make
                    return None
                raise RuntimeError(f"There was no fake impl registered for {opdef}. This is necessary for "
                                   f"torch.compile/export/fx tracing to work. Please use "
                                   f"`{getattr(opdef._init_fn, '__name__', opdef._name)}.register_fake` to add "
                                   f"an fake impl.")
            return fn(*args, **kwargs)

        def fake_impl(*args, **kwargs):          # what a FakeTensorMode runs
            with set_ctx_getter(fake_mode_ctx_getter(op)):
                return run_fake(args, kwargs)

        def meta_kernel(*args, **kwargs):        # the same on meta tensors, without a mode
            with set_ctx_getter(meta_ctx_error(opdef._qualname)):
                return run_fake(args, kwargs)

        self._lib._register_fake(self._name, fake_impl)
        if not self._handle.has_kernel_for(DispatchKey.Meta):
            self._lib.impl(self._name, meta_kernel, "Meta")

    def _install_entry(self) -> None:
        """Give this object a ``__call__`` written for the schema (see ``_make_entry``)."""
        entry = _make_entry(self._handle, _generic_call(self._opoverload))
        if entry is not None:
            self.__class__ = type("CustomOpDef", (CustomOpDef,), {"__call__": entry, "__module__": __name__})

    # --- kernels ------------------------------------------------------------------------
    @contextmanager
    def set_kernel_enabled(self, device_type: str, enabled: bool = True):
        """Within the block, the kernel registered for ``device_type`` is on (or off: the function given
        to ``custom_op`` runs instead)."""
        action = "enable" if enabled else "disable"
        originally_disabled = device_type in self._disabled_kernel
        if device_type not in self._backend_fns:
            log.warning("Attempted to %s kernel for %s but no kernel was registered for this device type.",
                        action, device_type)
        if not enabled:
            if originally_disabled:
                log.warning("Attempted to disable kernel for %s but it was already disabled.", device_type)
            self._set_disabled(device_type, True)
        else:
            if not originally_disabled:
                log.warning("Attempted to enable kernel for  %s but it was already enabled.", device_type)
            self._set_disabled(device_type, False)
        try:
            yield
        finally:
            self._set_disabled(device_type, originally_disabled)

    def _set_disabled(self, device_type, disabled: bool) -> None:
        if disabled:
            self._disabled_kernel.add(device_type)
        else:
            self._disabled_kernel.discard(device_type)
        fn = self._backend_fns.get(device_type)
        if fn is not None:
            self._active[device_type] = self._init_fn if disabled else fn

    def register_kernel(self, device_types, fn=None, /):
        """Register ``fn`` as this operator's implementation for ``device_types`` ("cpu", "cuda", a
        sequence of them, or None for every device type); usable as a decorator."""
        if device_types is None or isinstance(device_types, str):
            dtypes = [device_types]
        else:
            dtypes = list(device_types)
        keys = {dt: ("CompositeExplicitAutograd" if dt is None else dispatch_key_for_device(dt)) for dt in dtypes}

        def inner(fn):
            if not callable(fn):
                raise TypeError(f"register_kernel({self._qualname}): the kernel must be callable, "
                                f"got {type(fn).__name__}")
            for dt in dtypes:
                first = dt not in self._backend_fns
                self._backend_fns[dt] = fn
                self._active[dt] = self._init_fn if dt in self._disabled_kernel else fn
                if first:
                    self._lib.impl_kernel(self._name, _backend_kernel(self, dt), keys[dt])
            return fn

        if device_types is not None and not _has_tensor_arg(self._op_schema):
            index = next((i for i, a in enumerate(self._op_schema.arguments)
                          if a.type.base == "Device" and a.name == "device"), None)
            if index is None:
                raise ValueError("Functions without tensor inputs are required to have a `device: torch.device` "
                                 "argument")
            if not self._handle.has_kernel_for(DispatchKey.BackendSelect):
                self._lib.impl_kernel(self._name, _backend_select_kernel(self, index), "BackendSelect")
        if fn is None:
            return inner
        return inner(fn)

    def register_fake(self, fn, /):
        """Register the fake implementation (what ``FakeTensorMode`` and meta tensors run); its signature
        is checked against the schema now."""
        if not callable(fn):
            raise TypeError(f"register_fake({self._qualname}): expected a callable, got {type(fn).__name__}")
        check_fake_signature(self._qualname, self._op_schema, fn)
        self._abstract_fn = fn
        return fn

    def register_autograd(self, backward, /, *, setup_context=None) -> None:
        """Give the operator a backward formula: ``backward(ctx, *grads)`` returns one gradient per
        (positional) input; ``setup_context(ctx, inputs, output)`` saves what it needs."""
        schema = self._op_schema
        if not _is_functional(schema):
            raise RuntimeError(f"Cannot register autograd formula for non-functional operator {self} with "
                               f"schema {schema}. Please create a functional operator and register an autograd "
                               f"formula for that.")
        self._backward_fn = backward
        self._setup_context_fn = setup_context

    def register_autocast(self, device_type: str, cast_inputs):
        """Under autocast for ``device_type``, cast the floating-point tensor inputs on that device (float64
        excepted) to ``cast_inputs`` and run the operator with autocast off."""
        if self._autocast_dtype.get(device_type) is None:
            register_autocast_kernel(self._lib, self._handle, device_type, cast_inputs)
        self._autocast_dtype[device_type] = cast_inputs

    def register_torch_dispatch(self, torch_dispatch_class, fn=None, /):
        """``fn(mode_or_cls, func, types, args, kwargs)`` handles this operator for ``torch_dispatch_class``
        (a TorchDispatchMode or a tensor subclass) instead of its ``__torch_dispatch__``."""
        def register(fn):
            register_torch_dispatch_rule(self._lib, self._handle, torch_dispatch_class, fn)
            self._torch_dispatch_fns[torch_dispatch_class] = fn
            return fn
        if fn is None:
            return register
        return register(fn)


# --- the pieces registered per operator ------------------------------------------------------------

def _has_tensor_arg(schema) -> bool:
    return any(a.type.base == "Tensor" for a in schema.arguments)


def _is_functional(schema) -> bool:
    if schema.is_mutable or not schema.returns:
        return False
    return not any(r.alias_info is not None and not r.alias_info.is_write for r in schema.returns)


def _backend_kernel(opdef: CustomOpDef, device_type):
    """The kernel for one device type: the user's function (read from ``opdef._active`` per call, so
    ``register_kernel`` again or ``set_kernel_enabled`` take effect without re-registering), then the check
    that no output aliases an input or another output."""
    schema = opdef._op_schema
    args = schema.arguments
    names = arg_names(len(args))
    call_args = [n if not a.kwarg_only else f"{a.name}={n}" for a, n in zip(args, names)]
    params = ", ".join(["ks"] + names)
    view = any(r.alias_info is not None for r in schema.returns)
    lines = [f"def kernel({params}):", f"    r = _fns[_dt]({', '.join(call_args)})"]
    tensors_in = [(a, n) for a, n in zip(args, names) if a.type.base == "Tensor"]
    simple = (not view and len(schema.returns) == 1 and schema.returns[0].type.base == "Tensor"
              and not schema.returns[0].type.is_list and all(not a.type.is_list for a, _ in tensors_in))
    if view or not schema.returns:
        pass
    elif simple:
        # one Tensor out, plain Tensor inputs: a fresh output is no view and has no version counter yet
        # (views, detached copies and in-place results have one); only such an output is compared in full
        same = [f"s is {n}._impl" if not a.type.optional else f"({n} is not None and s is {n}._impl)"
                for a, n in tensors_in]
        lines += ["    try:", "        s = r._impl", "    except AttributeError:", "        _bad_return(r)",
                  f"    if {' or '.join(['s._base is not None', 's._vc is not None'] + same)}:",
                  f"        _check_aliasing(({', '.join(n for _, n in tensors_in)}{',' if tensors_in else ''}), r)"]
    else:
        lines.append(f"    _check_aliasing(({', '.join(n for _, n in tensors_in)}{',' if tensors_in else ''}), r)")
    lines.append("    return r")
    qual = opdef._qualname

    def alias_error():
        raise RuntimeError(_alias_message(opdef, device_type))

    def bad_return(r):
        raise TypeError(f"{qual}: the kernel must return a Tensor (schema {schema}), got {type(r).__name__}")

    def check_aliasing(inputs, result):
        seen = set()
        for t in inputs:
            for x in (t if isinstance(t, (list, tuple)) else (t,)):
                if isinstance(x, Tensor):
                    seen.add(id(_memory_of(x._impl)))
        outs = result if isinstance(result, (tuple, list)) else (result,)
        for o in outs:
            for x in (o if isinstance(o, (list, tuple)) else (o,)):
                if isinstance(x, Tensor):
                    key = id(_memory_of(x._impl))
                    if key in seen:
                        alias_error()
                    seen.add(key)

    return compile_function("\n".join(lines) + "\n", "kernel", f"{qual} kernel for {device_type or 'all devices'}",
                            _fns=opdef._active, _dt=device_type, _alias_error=alias_error, _bad_return=bad_return,
                            _check_aliasing=check_aliasing)


def _memory_of(impl):
    """What identifies an impl's memory: its root base's array (views and detached copies share it)."""
    root = impl._base if impl._base is not None else impl
    return root._array



def _alias_message(opdef, device_type) -> str:
    fn = opdef._backend_fns.get(device_type)
    module = inspect.getmodule(fn) if fn is not None else None
    return (f"{opdef._name} (with implementation in {module}): The output of this custom operator (1) must not "
            f"also be an input to this custom operator and (2) may not alias any inputs to this custom operator "
            f"or other returns. The most common way to trigger this error is if we have y = custom_op(x) and y "
            f"and x are the same Tensor. Please instead return a clone of the offending output tensor(s) (e.g. "
            f"return x.clone()) or refactor the custom operator to not return y.")


def _version_bump_kernel(handle):
    """ADInplaceOrView for a schema that writes: bump each written tensor's version, then go on."""
    schema = handle.schema
    args = schema.arguments
    names = arg_names(len(args))
    lines = [f"def kernel({', '.join(['ks'] + names)}):"]
    for a, n in zip(args, names):
        if not (a.alias_info is not None and a.is_write):
            continue
        if a.type.is_list:
            lines += [f"    for t in {n}:", "        if t is not None:", "            t._impl.bump_version()"]
        elif a.type.optional:
            lines += [f"    if {n} is not None:", f"        {n}._impl.bump_version()"]
        else:
            lines.append(f"    {n}._impl.bump_version()")
    lines += ["    ks &= _AFTER", f"    return _redispatch[ks]({', '.join(['ks'] + names)})"]
    return compile_function("\n".join(lines) + "\n", "kernel", f"{handle.qualified_name} ADInplaceOrView",
                            _AFTER=AFTER_ADINPLACE, _redispatch=handle.redispatch_cache)


def _backend_select_kernel(opdef: CustomOpDef, index: int):
    """BackendSelect for an operator without tensor arguments: the ``device`` argument picks the backend."""
    handle = opdef._handle

    def kernel(ks, *args):
        device = args[index]
        dt = getattr(device, "type", device) if device is not None else "cpu"
        if dt not in opdef._backend_fns and None not in opdef._backend_fns:
            raise RuntimeError(f"{opdef._name} does not have a kernel registered for {dt}. Please use "
                               f"register_kernel to do so.")
        key = DispatchKey[dispatch_key_for_device(dt)]
        new_ks = bit(key)
        return handle.redispatch(new_ks, *args)
    return kernel


def _generic_call(ov):
    from ..dispatch.ops import OpOverload
    call = OpOverload.__call__

    def generic(*args, **kwargs):
        return call(ov, *args, **kwargs)
    return generic


def _make_entry(handle, slow):
    """``__call__(self, <the schema's arguments>)``: checks the argument types a plain call passes (tensors
    by their keyset, numbers by type), computes the keyset and calls the cached kernel; anything else goes
    through the operator's generic call (``slow``), which converts or raises as for any operator.  None when
    the schema's names or order do not make a Python signature (the generic call serves)."""
    schema = handle.schema
    args = schema.arguments
    seen_default = False
    for a in args:
        if not a.name.isidentifier() or keyword.iskeyword(a.name) or a.name.startswith("_"):
            return None
        if not a.kwarg_only:
            if a.has_default:
                seen_default = True
            elif seen_default:
                return None
    simple_types = {"int": "int", "SymInt": "int", "float": "float", "bool": "bool", "str": "str"}
    params = ["_op_self", "/"]
    checks = []
    env = {"_op_state": _state, "_op_cache": handle.dispatch_cache, "_op_slow": slow,
           "_op_scalars": (int, float, bool, complex)}
    kw_started = False
    for i, a in enumerate(args):
        t = a.type
        if a.kwarg_only and not kw_started:
            params.append("*")
            kw_started = True
        if a.has_default:
            d = python_default(a)
            if d is REQUIRED:
                return None
            env[f"_op_d{i}"] = d
            params.append(f"{a.name}=_op_d{i}")
        else:
            params.append(a.name)
        if t.base == "Tensor":
            if t.is_list:
                checks.append(f"type({a.name}) is not list")
            continue
        if t.is_list or t.base not in simple_types and t.base != "Scalar":
            return None             # dtype, device, lists of numbers...: the generic call converts them
        test = (f"type({a.name}) not in _op_scalars" if t.base == "Scalar"
                else f"type({a.name}) is not {simple_types[t.base]}")
        if t.optional:
            test = f"({a.name} is not None and {test})"
        checks.append(test)
    names = [a.name for a in args]
    slow_call = ", ".join(a.name if not a.kwarg_only else f"{a.name}={a.name}" for a in args)
    terms = keyset_terms(args, names)
    lines = [f"def __call__({', '.join(params)}):"]
    if checks:
        lines += [f"    if {' or '.join(checks)}:", f"        return _op_slow({slow_call})"]
    lines.append("    _op_st = _op_state()")
    if terms:
        lines += ["    try:", f"        _op_ks = ({' | '.join(terms)} | _op_st.include) & _op_st.mask",
                  "    except AttributeError:", f"        return _op_slow({slow_call})"]
    else:
        lines.append("    _op_ks = _op_st.include & _op_st.mask")
    lines.append(f"    return _op_cache[_op_ks]({', '.join(['_op_ks'] + names)})")
    return compile_function("\n".join(lines) + "\n", "__call__", f"{handle.qualified_name} entry", **env)


def specialize_operator_entry(handle, removed: bool = False) -> None:
    """A new operator defined from Python (its schema parsed, unlike the generated ones declared from
    text): its ``OpOverload`` gets a ``__call__`` written for its schema, so ``ops.ns.op.default(x, y)``
    costs what a generated operator entry costs (a dispatcher ``on_new_operator`` listener)."""
    if removed or "schema" not in handle.__dict__:
        return
    ov = handle.opoverload
    if ov is None or type(ov).__name__ != "OpOverload":
        return
    entry = _make_entry(handle, _generic_call(ov))
    if entry is not None:
        ov.__class__ = type("OpOverload", (type(ov),), {"__call__": entry, "__module__": type(ov).__module__})


def _listen() -> None:
    from ..dispatch import ops as _ops  # noqa: F401  (its listener makes the OpOverload first)
    from ..dispatch.dispatcher import dispatcher
    if specialize_operator_entry not in dispatcher.on_new_operator:
        dispatcher.on_new_operator.append(specialize_operator_entry)


_listen()


# --- torch_dispatch rules ---------------------------------------------------------------------------

def register_autocast_kernel(lib: Library, handle, device_type: str, cast_inputs) -> None:
    """The Autocast<device> kernel of ``register_autocast``."""
    from ..amp.autocast_mode import is_autocast_available
    from ..core.dtype import float64
    from ..core.tls import ExcludeDispatchKeyGuard
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if not is_autocast_available(device_type):
        raise ValueError(f"Device type '{device_type}' does not support autocast.")
    key_name = "Autocast" + dispatch_key_for_device(device_type)
    guard_keys = bit(DispatchKey[key_name])

    def cast(v):
        if isinstance(v, Tensor):
            dt = v.dtype
            if dt.is_floating_point and dt is not float64 and v.device.type == device_type:
                return v.to(cast_inputs)
            return v
        if isinstance(v, (list, tuple)):
            return type(v)(cast(x) for x in v)
        return v

    def kernel(ks, *args):
        with ExcludeDispatchKeyGuard(guard_keys):
            return handle.call(*[cast(a) for a in args])

    lib.impl_kernel(handle.qualified_name.partition("::")[2], kernel, key_name)


def maybe_get_opdef(op):
    if isinstance(op, CustomOpDef):
        return op
    name = op.name() if hasattr(op, "name") and callable(op.name) else op
    if not isinstance(name, str):
        return None
    opdef = OPDEFS.get(name)
    if opdef is None:
        return None
    from ..dispatch.dispatcher import dispatcher
    if dispatcher.find(name) is not opdef._handle:      # replaced or destroyed since: not this operator's
        return None
    return opdef


__all__ = ["custom_op", "CustomOpDef"]
