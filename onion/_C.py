"""``onion._C``: what PyTorch users import from ``torch._C``, at the same path.

A public address only: the functions live in the bindings layer
(onion/bindings/dispatch_introspection.py), below the generated code.
``dispatcher`` and ``tls`` are onion's own, for tools and tests.
"""
from .bindings.dispatch_introspection import (DispatchKey, DispatchKeySet, FunctionSchema,  # noqa: F401
                                              __all__, _dispatch_dump, _dispatch_dump_table,
                                              _dispatch_has_kernel_for_dispatch_key, _dispatch_key_set,
                                              _dispatch_keys, _dispatch_tls_local_exclude_set,
                                              _dispatch_tls_local_include_set,
                                              _dispatch_tls_set_dispatch_key_excluded,
                                              _dispatch_tls_set_dispatch_key_included, _set_dispatch_trace,
                                              parse_schema)
from .core.tls import tls  # noqa: F401
from .dispatch.dispatcher import dispatcher  # noqa: F401
from .modes.torch_function import (DisableTorchFunction, DisableTorchFunctionSubclass,  # noqa: F401,E402
                                   _disabled_torch_function_impl, _get_function_stack_at,
                                   _is_torch_function_all_disabled, _is_torch_function_enabled,
                                   _is_torch_function_mode_enabled, _len_torch_function_stack,
                                   _pop_torch_function_stack, _push_on_torch_function_stack)
from .modes.subclasses import _disabled_torch_dispatch_impl  # noqa: F401,E402
from .modes.python_dispatch import _DisableTorchDispatch, _RestorePythonTLSSnapshot  # noqa: F401,E402
