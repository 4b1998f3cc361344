"""``fake_check``: the operator's fake implementation against its real kernel.

The operator runs under ``CrossRefFakeMode``: once on fake copies of its arguments (under a
``FakeTensorMode``, so the registered fake implementation or Meta kernel answers) and once for real, and
the two results must agree in structure, aliasing, and each tensor's sizes, dtype, device, strides (of the
dimensions longer than one) and storage offset, and requires_grad.  Built-in (``aten``) operators are
trusted.  A fake implementation that is missing or raises fails the check with a message that says so.
"""
from __future__ import annotations

from ...._subclasses.fake_tensor import FakeTensorMode, UnsupportedOperatorException
from ....core.tensor import Tensor
from ....modes.python_dispatch import TorchDispatchMode
from ....utils import _pytree as pytree
from .tensor_facts import overlaps

__all__ = ["MetadataMismatchError", "CrossRefFakeMode", "fake_check", "is_builtin"]


class MetadataMismatchError(RuntimeError):
    """A fake result's metadata differs from the real one's (PyTorch's name for it)."""


class MissingFakeImplError(UnsupportedOperatorException):
    """FakeTensorMode could not run the operator: it has neither a fake implementation nor a Meta kernel."""

    def __str__(self):
        return (f"{self.func} has no fake implementation (and no Meta kernel), so it cannot run under "
                f"FakeTensorMode; register one with onion.library.register_fake or Library._register_fake")


def is_builtin(op) -> bool:
    return op.namespace in ("aten", "prims", "prim")


def _tensors(tree) -> list:
    return [x for x in pytree.tree_leaves(tree) if isinstance(x, Tensor)]


def outputs_alias_inputs(outputs, inputs) -> bool:
    ins = _tensors(inputs)
    return any(overlaps(o, i) for o in _tensors(outputs) for i in ins)


def outputs_are_inputs(outputs, inputs) -> bool:
    ins = {id(i._impl) for i in _tensors(inputs)}
    return any(id(o._impl) in ins for o in _tensors(outputs))


def output_alias_each_other(outputs) -> bool:
    outs = _tensors(outputs)
    return any(overlaps(a, b) for k, a in enumerate(outs) for b in outs[k + 1:])


def _significant_strides_equal(real, fake) -> tuple[bool, int]:
    for idx, (n, a, b) in enumerate(zip(real.shape, real.stride(), fake.stride())):
        if n > 1 and a != b:
            return False, idx
    return True, -1


def compare_tensor_meta(real: Tensor, fake: Tensor, *, check_strides: bool = True) -> None:
    """Raise ``MetadataMismatchError`` (PyTorch's wording) where ``fake`` does not describe ``real``."""
    if tuple(real.shape) != tuple(fake.shape):
        raise MetadataMismatchError(f"Shapes {real.shape} and {fake.shape} are not equal!")
    if real.dtype is not fake.dtype:
        raise MetadataMismatchError(f"Dtypes {real.dtype} and {fake.dtype} are not equal!")
    if real.device != fake.device:
        raise MetadataMismatchError(f"Devices {real.device} and {fake.device} are not equal!")
    if check_strides:
        same, idx = _significant_strides_equal(real, fake)
        if not same:
            raise MetadataMismatchError(f"Stride mismatch! Strides are {real.stride()} and {fake.stride()} "
                                        f"(mismatched at {idx})!")
        if real.storage_offset() != fake.storage_offset():
            raise MetadataMismatchError(f"Storage offset mismatch! Storage offsets are {real.storage_offset()} "
                                        f"and {fake.storage_offset()}!")
    if real.is_conj() != fake.is_conj():
        raise MetadataMismatchError(f"Conjugation mismatch! is_conj is set to {real.is_conj()} and "
                                    f"{fake.is_conj()}")
    if real.is_neg() != fake.is_neg():
        raise MetadataMismatchError(f"Negation mismatch! is_neg is set to {real.is_neg()} and {fake.is_neg()}")


class CrossRefFakeMode(TorchDispatchMode):
    """Runs each operator (but those ``ignore_op_fn`` skips) on fake copies of its arguments first, then for
    real, and compares the two results."""

    def __init__(self, ignore_op_fn=None, *, check_strides: bool = True, check_aliasing: bool = True):
        super().__init__()
        self.ignore_op_fn = ignore_op_fn if ignore_op_fn is not None else (lambda fn: False)
        self.check_strides = check_strides
        self.check_aliasing = check_aliasing

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        fake_r = None
        checked = not self.ignore_op_fn(func) and not {"dynamic_output_shape", "inplace_view",
                                                       "data_dependent_output"} & set(getattr(func, "tags", ()))
        if checked:
            fake_mode = FakeTensorMode()
            fake_args, fake_kwargs = pytree.tree_map_only(Tensor, fake_mode.from_tensor, (args, kwargs))
            try:
                with fake_mode:
                    fake_r = func(*fake_args, **fake_kwargs)
            except UnsupportedOperatorException as e:
                raise MissingFakeImplError(func) from e
            except Exception as e:
                raise RuntimeError(f"{func}: its fake implementation raised {type(e).__name__}: {e}") from e
        r = func(*args, **kwargs)
        if not checked:
            return r
        context = f"When comparing the output of {func} on FakeTensor and concrete Tensors, found"
        r_flat, f_flat = pytree.tree_leaves(r), pytree.tree_leaves(fake_r)
        if len(f_flat) != len(r_flat):
            raise MetadataMismatchError(f"{context} mismatch in number of returns {len(f_flat)} != {len(r_flat)}")
        if self.check_aliasing:
            for what, check in (("outputs_alias_inputs", outputs_alias_inputs),
                                ("outputs_are_inputs", outputs_are_inputs)):
                real_says, fake_says = check(r, (args, kwargs)), check(fake_r, (fake_args, fake_kwargs))
                if real_says != fake_says:
                    raise MetadataMismatchError(f"{context} mismatch in {what} check {fake_says} != {real_says}")
            real_says, fake_says = output_alias_each_other(r), output_alias_each_other(fake_r)
            if real_says != fake_says:
                raise MetadataMismatchError(f"{context} mismatch in outputs_alias_each_other check "
                                            f"{fake_says} != {real_says}")
        for idx, (r_out, f_out) in enumerate(zip(r_flat, f_flat)):
            if isinstance(r_out, Tensor) != isinstance(f_out, Tensor):
                raise MetadataMismatchError(f"{context} mismatched number of tensor outputs")
            if not isinstance(r_out, Tensor):
                continue
            where = "" if len(r_flat) == 1 else f" for output[{idx}]"
            if r_out.requires_grad != f_out.requires_grad:
                raise MetadataMismatchError(
                    f"{context} mismatched requires_grad-ness of outputs{where}. This usually means that you "
                    f"have added autograd support for your operator at a dispatch key other than Autograd, "
                    f"which will lead to problems")
            try:
                compare_tensor_meta(r_out, f_out, check_strides=self.check_strides)
            except MetadataMismatchError as e:
                raise MetadataMismatchError(f"{context} mismatched tensor metadata{where}: {e}") from e
        return r


def fake_check(op, args, kwargs) -> None:
    with CrossRefFakeMode(ignore_op_fn=is_builtin):
        op(*args, **kwargs)
