"""``onion.return_types`` (``torch.return_types``): the named tuples of operators with several named returns.

One class per ``aten`` operator name whose returns are all named (``max``, ``max_out``, ``sort``,
``linalg_qr``), made from the registered schemas; the Python bindings use the same classes
(``onion.bindings.return_types``).  They are made on the first attribute read of this module, not when it
loads: that needs every operator's schema parsed, which ``import onion`` otherwise avoids.
"""
from .bindings.return_types import all_return_types, for_schema

_built = False


def _build() -> dict:
    global _built
    if not _built:
        from .dispatch.dispatcher import dispatcher
        for qname, handle in list(dispatcher.ops.items()):
            if qname.startswith("aten::"):
                for_schema(handle.schema)
        _built = True
    found = all_return_types()
    globals().update(found)
    return found


def __getattr__(name: str):
    found = _build()
    if name in found:
        return found[name]
    raise AttributeError(f"module 'onion.return_types' has no attribute '{name}'")


def __dir__():
    return sorted(set(globals()) | set(_build()))
