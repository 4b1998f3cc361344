"""``opcheck``: run the operator checks on one sample and report each, as ``torch.library.opcheck``.

Each check gets its own copies of the inputs (and skips itself where its inputs are fake or meta); the
result is ``{test name: "SUCCESS" or the exception}``, or, with ``raise_exception``, an ``OpCheckError``
naming the first check that failed and why, chained to the check's own exception.
"""
from __future__ import annotations

import functools

from ...._subclasses.fake_tensor import _owner
from ....core.tensor import Tensor
from ....dispatch.ops import OpOverload, OpOverloadPacket
from ....utils import _pytree as pytree
from .aot_autograd import aot_autograd_check
from .autograd_registration import autograd_registration_check
from .fake_tensor import fake_check
from .schema_check import SchemaCheckMode
from .tensor_facts import clone_inputs

__all__ = ["opcheck", "OpCheckError", "ALL_TEST_UTILS", "DEFAULT_TEST_UTILS"]


class OpCheckError(Exception):
    pass


def is_abstract(t: Tensor) -> bool:
    return t.device.type == "meta" or _owner(t) is not None


def _any_abstract(args, kwargs) -> bool:
    return any(is_abstract(x) for x in pytree.tree_leaves((args, kwargs)) if isinstance(x, Tensor))


def safe_schema_check(op, args, kwargs, *, copy_inputs: bool = True, rtol=None, atol=None):
    if copy_inputs:
        args, kwargs = clone_inputs((args, kwargs))
    if _any_abstract(args, kwargs):
        return None
    with SchemaCheckMode():
        return op(*args, **kwargs)


def safe_autograd_registration_check(op, args, kwargs, *, copy_inputs: bool = True, rtol=None, atol=None):
    if _any_abstract(args, kwargs):
        return None
    if copy_inputs:
        args, kwargs = clone_inputs((args, kwargs))
    if not any(x.requires_grad for x in pytree.tree_leaves((args, kwargs)) if isinstance(x, Tensor)):
        return None     # nothing to differentiate: nothing to check
    return autograd_registration_check(op, args, kwargs)


def safe_fake_check(op, args, kwargs, *, copy_inputs: bool = True, rtol=None, atol=None):
    if _any_abstract(args, kwargs):
        return None
    if copy_inputs:
        args, kwargs = clone_inputs((args, kwargs))
    return fake_check(op, args, kwargs)


def safe_aot_autograd_check(op, args, kwargs, dynamic: bool, *, copy_inputs: bool = True, rtol=None, atol=None):
    if _any_abstract(args, kwargs):
        return None
    return aot_autograd_check(op, args, kwargs, dynamic, rtol=rtol, atol=atol)


# run in this order by opcheck; no name is a prefix of another
ALL_TEST_UTILS = {
    "test_schema": safe_schema_check,
    "test_autograd_registration": safe_autograd_registration_check,
    "test_faketensor": safe_fake_check,
    "test_aot_dispatch_static": functools.partial(safe_aot_autograd_check, dynamic=False),
    "test_aot_dispatch_dynamic": functools.partial(safe_aot_autograd_check, dynamic=True),
}

DEFAULT_TEST_UTILS = ["test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic"]


def resolve_unique_overload_or_throw(op: OpOverloadPacket) -> OpOverload:
    overloads = op.overloads()
    if len(overloads) != 1:
        raise RuntimeError(f"opcheck can only test operators without overloads. Got the following overloads for "
                           f"{op}: {overloads}")
    return getattr(op, overloads[0])


def opcheck(op, args, kwargs=None, *, test_utils=DEFAULT_TEST_UTILS, raise_exception: bool = True,
            rtol=None, atol=None) -> dict:
    """Check that an operator's registrations agree with its real kernel on ``args``/``kwargs``: the schema
    (mutations, aliases), the autograd registration, the fake implementation, and tracing.

    ``op``: an ``OpOverload`` (``onion.ops.ns.op.default``), an ``OpOverloadPacket`` with one overload, or an
    operator made by ``onion.library.custom_op``.  ``test_utils``: the checks to run (names of
    ``ALL_TEST_UTILS``, one name, or ``"ALL"``).  Returns ``{name: "SUCCESS" | exception}``; with
    ``raise_exception`` the first failure raises ``OpCheckError`` instead."""
    if (rtol is None) ^ (atol is None):
        raise ValueError("opcheck(op, ...): if you specify one of rtol/atol, you must specify both")
    if kwargs is None:
        kwargs = {}
    inner = getattr(op, "_opoverload", None)
    if inner is not None:
        op = inner
    if isinstance(op, OpOverloadPacket):
        op = resolve_unique_overload_or_throw(op)
    if not isinstance(op, OpOverload):
        raise ValueError(f"opcheck(op, ...): op must be instance of onion._ops.OpOverload, e.g. "
                         f"onion.ops.aten.sin.default, got {type(op)}")
    if test_utils == "ALL":
        test_utils = tuple(ALL_TEST_UTILS)
    if isinstance(test_utils, str):
        test_utils = (test_utils,)
    if not isinstance(test_utils, (tuple, list)) or not set(test_utils) <= set(ALL_TEST_UTILS):
        raise ValueError(f"opcheck(op, ..., test_utils={test_utils}), expected test_utils to be subset of "
                         f"{tuple(ALL_TEST_UTILS)} but it was not")
    results: dict = {}
    for name in test_utils:
        try:
            ALL_TEST_UTILS[name](op, args, kwargs, rtol=rtol, atol=atol)
            results[name] = "SUCCESS"
        except Exception as ex:
            if raise_exception:
                raise OpCheckError(f"opcheck(op, ...): {name} failed with {ex} (scroll up for stack trace)") from ex
            results[name] = ex
    return results
