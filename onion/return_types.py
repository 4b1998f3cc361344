"""``onion.return_types`` (``torch.return_types``): the named tuples of operators with several named returns.

One class per ``aten`` operator name whose returns are all named (``max``, ``max_out``, ``sort``,
``linalg_qr``), made from the registered schemas when this module loads; the Python bindings use the same
classes (``onion.bindings.return_types``).
"""
from .bindings.return_types import all_return_types, for_schema
from .dispatch.dispatcher import dispatcher

for _qname, _handle in list(dispatcher.ops.items()):
    if _qname.startswith("aten::"):
        for_schema(_handle.schema)
globals().update(all_return_types())
del _qname, _handle
