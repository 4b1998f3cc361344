"""``onion.library``: register operators and kernels from Python, as ``torch.library``."""
from .dispatch.library import FAKE_IMPLS, Library, fallthrough_kernel  # noqa: F401
from .testing._internal.optests import opcheck  # noqa: F401

_FAKE_LIBS: dict = {}   # namespace -> the FRAGMENT library that owns fakes registered without ``lib``


def register_fake(op, func=None, /, *, lib=None, _stacklevel: int = 1, allow_override: bool = True):
    """Register ``func`` as the fake implementation of ``op`` ("ns::name" or an operator overload): under a
    ``FakeTensorMode`` the operator runs it (with fake arguments, under the mode) instead of a Meta kernel.
    Usable as a decorator (``@register_fake("mylib::foo")``)."""
    name = op if isinstance(op, str) else (op.name() if hasattr(op, "name") else str(op))
    if isinstance(op, str) and "::" not in op:
        raise ValueError(f"register_fake(op): expected op to be a qualified name 'namespace::name', got '{op}'")

    def register(fn):
        owner = lib
        if owner is None:
            ns = name.partition("::")[0]
            owner = _FAKE_LIBS.get(ns)
            if owner is None:
                owner = _FAKE_LIBS[ns] = Library(ns, "FRAGMENT")
        from .dispatch.dispatcher import dispatcher
        if dispatcher.find(name) is None:
            raise RuntimeError(f"operator {name} does not exist")
        owner._register_fake(name, fn, _stacklevel + 1, allow_override=allow_override)
        return fn

    if func is None:
        return register
    return register(func)
