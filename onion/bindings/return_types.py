"""``torch.return_types``: the named tuples that operators with several named returns give Python.

``torch.max(x, 1)`` returns ``torch.return_types.max(values=..., indices=...)``, a tuple subclass (a
CPython structseq in PyTorch) whose fields are the schema's return names; the ``out=`` overload returns
``max_out``.  ``ops.aten.max.dim`` itself returns a plain tuple, as in PyTorch: only the Python binding
wraps.  The classes are made once per operator name, when the binding is built.
"""
from __future__ import annotations

import operator
import sys

_CLASSES: dict = {}


class _ReturnType(tuple):
    """Base of every return type: a tuple whose items are also reachable by field name."""

    __slots__ = ()
    _fields: tuple = ()
    n_fields = n_sequence_fields = 0
    n_unnamed_fields = 0

    def __new__(cls, sequence):
        items = tuple(sequence)
        if len(items) != len(cls._fields):
            raise TypeError(f"torch.return_types.{cls.__name__}() takes a {len(cls._fields)}-sequence "
                            f"({len(items)}-sequence given)")
        return tuple.__new__(cls, items)

    def __repr__(self) -> str:
        body = ",\n".join(f"{name}={value!r}" for name, value in zip(self._fields, self))
        return f"torch.return_types.{type(self).__name__}(\n{body})"

    def __reduce__(self):
        return (type(self), (tuple(self),))


def return_type(name: str, fields: tuple) -> type:
    """The class for operator ``name`` (``max``, ``max_out``, ``linalg_qr``), made on first use."""
    cls = _CLASSES.get(name)
    if cls is None:
        ns = {"__slots__": (), "_fields": tuple(fields), "n_fields": len(fields),
              "n_sequence_fields": len(fields), "__module__": "onion.return_types"}
        ns.update({f: property(operator.itemgetter(i), doc=f"Alias for field number {i}")
                   for i, f in enumerate(fields)})
        cls = _CLASSES[name] = type(name, (_ReturnType,), ns)
        module = sys.modules.get("onion.return_types")
        if module is not None:
            setattr(module, name, cls)
    return cls


def for_schema(schema):
    """The return type of an operator's Python binding, or None for one return / unnamed returns."""
    rets = schema.returns
    if len(rets) < 2 or not all(r.name for r in rets):
        return None
    return return_type(schema.name.split("::")[-1] + ("_out" if schema.is_out_fn else ""), tuple(r.name for r in rets))


def all_return_types() -> dict:
    return dict(_CLASSES)
