"""The Conjugate and Negative bits: lazy ``conj()`` and ``_neg_view()`` views, resolved by a boxed fallback.

``x.conj()`` of a complex tensor is a view of the same memory whose keyset carries ``Conjugate``; the values
it stands for are the conjugates of what is stored.  ``x.conj().imag`` is likewise a view with ``Negative``.
Nothing is computed until an operator needs the values.  Then the key's fallback (PyTorch's
MathBitsFallback) does what the kernels below need:

- a view operator (an argument aliased by the output, not written) passes on: views keep the bit, since
  they copy the keyset of their base;
- every other operator gets resolved copies of its arguments that carry the bit (``clone`` resolves); an
  argument it writes (in-place, ``out=``) is computed on a resolved copy and then copied back, and
  ``copy_`` writes through the bit.

``copy_``, ``clone`` (through ``_to_copy``) and ``empty_like``/``empty_strided`` fall through: they understand
the bits.  (PyTorch also registers every view as a fallthrough; here the fallback passes views on itself,
which costs one call only for tensors that carry a bit.)  A conj tensor's physical values are ``conj(logical)``; a neg one's ``-logical``.
"""
from __future__ import annotations

from ..core.dispatch_key import K, bit, mask_below
from ..core.tensor import Tensor
from ..dispatch.dispatch_table import FALLTHROUGH
from ..dispatch.dispatcher import dispatcher
from ..dispatch.library import Library
from .iterator import resize_out

CONJ = bit(K.Conjugate)
NEG = bit(K.Negative)
MATH_BITS = CONJ | NEG

# operators that understand the bits themselves (PyTorch's list, for the operators onion has)
_FALLTHROUGH_OPS = ("copy_", "clone", "_to_copy", "empty_like", "empty_strided", "resolve_conj", "resolve_neg",
                    "conj", "_conj", "_neg_view", "is_complex", "is_floating_point", "requires_grad_")


def apply_bits(arr, keyset_delta: int, is_complex: bool):
    """``arr`` with the bits in ``keyset_delta`` applied (each is its own inverse)."""
    if keyset_delta & CONJ and is_complex:
        arr = arr.conj()
    if keyset_delta & NEG:
        arr = -arr
    return arr


def _plan(schema):
    """(view?, tensor argument positions, written positions) of an operator, read once from its schema."""
    view = any(a.alias_info is not None and not a.alias_info.writes for a in schema.arguments)
    tensors = [i for i, a in enumerate(schema.arguments) if a.type.is_tensor_like]
    written = {i for i, a in enumerate(schema.arguments) if a.alias_info is not None and a.alias_info.writes}
    return view, tensors, written


_PLANS: dict = {}


def _make_fallback(key, name: str):
    flag = bit(key)
    below = mask_below(key)
    clone = dispatcher.find("aten::clone")
    copy_ = dispatcher.find("aten::copy_")

    def resolved(t, ks):
        return clone.redispatch(ks, t, None)

    def fallback(op, ks, values):
        h = op._handle
        plan = _PLANS.get(h)
        if plan is None:
            plan = _PLANS[h] = _plan(h.schema)
        view, tensors, written = plan
        ks &= below
        if view:
            return h.redispatch(ks, *values)
        values = list(values)
        mutated = None
        for i in tensors:
            v = values[i]
            if isinstance(v, Tensor):
                if v._impl.keyset & flag:
                    values[i] = resolved(v, ks)
                    if i in written:
                        if mutated is not None:
                            raise RuntimeError(f"{name} fallback does not support operators with more than one "
                                               f"mutable tensors with {name}bit set to true.")
                        mutated = (v, values[i])
            elif isinstance(v, (list, tuple)):
                if any(isinstance(t, Tensor) and t._impl.keyset & flag for t in v):
                    if i in written:
                        raise RuntimeError(f" fallback doesn't currently support mutable TensorLists with {name} "
                                           f"inputs. Please materialize all the {name} input tensor(s) in the "
                                           f"mutable TensorList inputs before calling {h.schema.name}")
                    values[i] = [resolved(t, ks) if isinstance(t, Tensor) and t._impl.keyset & flag else t
                                 for t in v]
        result = h.redispatch(ks, *values)
        if mutated is None:
            return result
        original, copy = mutated
        resize_out(original, copy._impl._array.shape)
        copy_.redispatch(ks, original, copy, False)
        return original

    return fallback


def register_math_bit_fallbacks() -> Library:
    """The boxed fallbacks of Conjugate and Negative, and the fallthroughs of the operators that need none."""
    lib = Library("_", "IMPL")
    for key, name in ((K.Conjugate, "conjugate"), (K.Negative, "negation")):
        lib._fallback_internal(key, _make_fallback(key, name),
                               "registered at onion/aten/math_bits.py (resolve the bit, then redispatch)")
    aten = Library("aten", "IMPL")
    for qname, h in list(dispatcher.ops.items()):
        if qname.startswith("aten::") and qname[len("aten::"):].split(".")[0] in _FALLTHROUGH_OPS:
            for key in (K.Conjugate, K.Negative):
                aten._impl_internal(h, key, FALLTHROUGH, "registered at onion/aten/math_bits.py (fallthrough)")
    return lib, aten
