"""A tensor subclass that logs every aten operator run on it, then runs it on the tensor it wraps.

    python examples/logging_tensor.py

``LoggingTensor`` is a *wrapper* subclass: ``Tensor._make_wrapper_subclass`` gives it sizes, strides,
dtype and device but no data, and puts the Python dispatch key on it, so every operator called on it
(after autograd has recorded it) arrives at ``LoggingTensor.__torch_dispatch__`` as an ``OpOverload``
(``aten.mul.Tensor``).  The handler unwraps the arguments, runs the operator on the wrapped tensors, and
wraps the results again.  Autograd runs above the Python key, so the backward pass's operators are
logged too.
"""
from __future__ import annotations

import onion as torch


def _map(fn, obj):
    """``fn`` on every leaf of nested lists, tuples and dicts (a small ``tree_map``)."""
    if isinstance(obj, (list, tuple)):
        return type(obj)(_map(fn, x) for x in obj)
    if isinstance(obj, dict):
        return {k: _map(fn, v) for k, v in obj.items()}
    return fn(obj)


class LoggingTensor(torch.Tensor):
    # the default __torch_function__ would cast every plain result to this class: wrappers opt out
    __torch_function__ = torch._C._disabled_torch_function_impl

    log: list = []          # "aten.mul.Tensor" per call, shared by all LoggingTensors

    @staticmethod
    def __new__(cls, elem):
        r = torch.Tensor._make_wrapper_subclass(cls, elem.size(), strides=elem.stride(), dtype=elem.dtype,
                                                device=elem.device, requires_grad=elem.requires_grad)
        # the wrapper is what autograd sees; the wrapped tensor stays out of the graph
        r.elem = elem.detach() if elem.requires_grad else elem
        return r

    def __repr__(self):
        return f"LoggingTensor({self.elem!r})"

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        def unwrap(e):
            return e.elem if isinstance(e, LoggingTensor) else e

        def wrap(e):
            return LoggingTensor(e) if isinstance(e, torch.Tensor) and not isinstance(e, LoggingTensor) else e

        cls.log.append(str(func))
        out = func(*_map(unwrap, args), **_map(unwrap, kwargs or {}))
        return _map(wrap, out)


def main() -> list:
    LoggingTensor.log = []
    x = LoggingTensor(torch.tensor([1.0, 2.0, 3.0], requires_grad=True))
    w = LoggingTensor(torch.tensor([0.5, -1.0, 2.0]))
    loss = (x * w + 1).sum()
    loss.backward()
    for line in LoggingTensor.log:
        print(line)
    print("loss", loss.elem.item(), "x.grad", x.grad.elem.tolist())
    return LoggingTensor.log


if __name__ == "__main__":
    main()
