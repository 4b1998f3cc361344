"""``onion._C``: what PyTorch users import from ``torch._C``, at the same path.

A public address only: the functions live in the bindings layer
(onion/bindings/dispatch_introspection.py), below the generated code.
``dispatcher`` and ``tls`` are onion's own, for tools and tests.
"""
from .bindings.dispatch_introspection import (  # noqa: F401
    DispatchKey, DispatchKeySet, FunctionSchema, __all__, _DispatchModule, _DispatchOperatorHandle,
    _dispatch_autogradother_backends, _dispatch_call_boxed, _dispatch_check_all_invariants,
    _dispatch_check_invariants, _dispatch_dump, _dispatch_dump_table, _dispatch_find_dangling_impls,
    _dispatch_find_schema_or_throw, _dispatch_get_all_op_names, _dispatch_get_backend_keyset_from_autograd,
    _dispatch_get_registrations_for_dispatch_key, _dispatch_has_backend_fallback,
    _dispatch_has_computed_kernel_for_dispatch_key, _dispatch_has_kernel, _dispatch_has_kernel_for_any_dispatch_key,
    _dispatch_has_kernel_for_dispatch_key, _dispatch_is_alias_key, _dispatch_is_included_in_alias,
    _dispatch_kernel_for_dispatch_key_is_fallthrough, _dispatch_print_registrations_for_dispatch_key, _dispatch_key_name, _dispatch_key_parse, _dispatch_key_set,
    _dispatch_keys, _dispatch_keyset_full, _dispatch_keyset_full_after, _dispatch_library,
    _dispatch_tls_local_exclude_set, _dispatch_tls_local_include_set, _dispatch_tls_set_dispatch_key_excluded,
    _dispatch_tls_set_dispatch_key_included, _get_autograd_fallback_mode, _set_autograd_fallback_mode,
    _set_dispatch_trace, parse_schema)
from .core.tls import tls  # noqa: F401
from .dispatch.dispatcher import dispatcher  # noqa: F401
from .modes.torch_function import (DisableTorchFunction, DisableTorchFunctionSubclass,  # noqa: F401,E402
                                   _disabled_torch_function_impl, _get_function_stack_at,
                                   _is_torch_function_all_disabled, _is_torch_function_enabled,
                                   _is_torch_function_mode_enabled, _len_torch_function_stack,
                                   _pop_torch_function_stack, _push_on_torch_function_stack)
from .modes.subclasses import _disabled_torch_dispatch_impl  # noqa: F401,E402
from .modes.python_dispatch import _DisableTorchDispatch, _RestorePythonTLSSnapshot  # noqa: F401,E402
