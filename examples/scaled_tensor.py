"""A tensor stored as data times a scale, trained through autograd.

    python examples/scaled_tensor.py

``ScaledTensor`` holds ``data`` (a plain tensor) and ``scale`` (a Python float) and stands for
``data * scale``.  Its ``__torch_dispatch__`` runs below autograd:

- multiplying by a number changes only the scale (no data touched);
- views (``t``, ``view``, ``expand``...), ``detach``, ``alias`` and ``clone`` act on the data and keep the
  scale, since they commute with it;
- an in-place update ``w.sub_(g)`` / ``w.add_(g, alpha=...)`` writes ``g / scale`` into the data, so the
  weights stay stored in their scaled form while the optimiser works in real units;
- anything else sees the real values (``data * scale``) and returns plain tensors.

Autograd records the operators above all this, so a ``ScaledTensor`` weight with ``requires_grad=True``
trains like a plain one: ``main()`` fits a linear model by gradient descent and checks every loss against
the same computation on plain tensors.
"""
from __future__ import annotations

import onion as torch

aten = torch.ops.aten

# operators that commute with the scale: run on the data, keep the scale
_KEEP_SCALE = {"aten.t.default", "aten.view.default", "aten.expand.default", "aten.detach.default",
               "aten.alias.default", "aten.clone.default", "aten.transpose.int", "aten.permute.default",
               "aten.unsqueeze.default", "aten.squeeze.dim", "aten.neg.default", "aten._unsafe_view.default",
               "aten.reshape.default"}


def _map(fn, obj):
    if isinstance(obj, (list, tuple)):
        return type(obj)(_map(fn, x) for x in obj)
    if isinstance(obj, dict):
        return {k: _map(fn, v) for k, v in obj.items()}
    return fn(obj)


class ScaledTensor(torch.Tensor):
    # the default __torch_function__ would cast every plain result to this class: wrappers opt out
    __torch_function__ = torch._C._disabled_torch_function_impl

    @staticmethod
    def __new__(cls, data, scale: float, requires_grad: bool = False):
        r = torch.Tensor._make_wrapper_subclass(cls, data.size(), strides=data.stride(), dtype=data.dtype,
                                                device=data.device, requires_grad=requires_grad)
        r.data_ = data
        r.scale = float(scale)
        return r

    def value(self):
        """The real values (a plain tensor)."""
        return self.data_ * self.scale

    def __repr__(self):
        return f"ScaledTensor(data={self.data_!r}, scale={self.scale})"

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is aten.mul.Tensor and isinstance(args[0], ScaledTensor) and isinstance(args[1], (int, float)):
            return ScaledTensor(args[0].data_, args[0].scale * args[1])
        if str(func) in _KEEP_SCALE and isinstance(args[0], ScaledTensor):
            rest = _map(lambda e: e.value() if isinstance(e, ScaledTensor) else e, args[1:])
            return ScaledTensor(func(args[0].data_, *rest, **kwargs), args[0].scale)
        if func in (aten.sub_.Tensor, aten.add_.Tensor) and isinstance(args[0], ScaledTensor):
            w, g = args[0], args[1]
            g = g.value() if isinstance(g, ScaledTensor) else g
            func(w.data_, g / w.scale, **kwargs)
            return w
        out = func(*_map(lambda e: e.value() if isinstance(e, ScaledTensor) else e, args),
                   **_map(lambda e: e.value() if isinstance(e, ScaledTensor) else e, kwargs))
        return out


def _train(x, y, w, steps: int, lr: float) -> list:
    losses = []
    for _ in range(steps):
        pred = torch.mm(x, w * 2.0)                # the scaled weight doubled: only its scale changes
        loss = ((pred - y) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            w.sub_(w.grad * lr)
        w.grad = None
        losses.append(loss.item())
    return losses


def main(steps: int = 20) -> tuple:
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(16, 3, generator=gen, dtype=torch.float64)
    true_w = torch.tensor([[1.0], [-2.0], [0.5]], dtype=torch.float64)
    y = torch.mm(x, true_w)
    start = torch.zeros(3, 1, dtype=torch.float64)

    scaled = ScaledTensor(start.clone(), 0.25, requires_grad=True)      # stored as data * 0.25
    plain = start.clone().requires_grad_(True)
    scaled_losses = _train(x, y, scaled, steps, 0.05)
    plain_losses = _train(x, y, plain, steps, 0.05)
    for i, (a, b) in enumerate(zip(scaled_losses, plain_losses)):
        print(f"step {i:2d}  scaled {a:.6f}  plain {b:.6f}")
    print("weights", scaled.value().flatten().tolist(), "stored data", scaled.data_.flatten().tolist())
    return scaled_losses, plain_losses, scaled, plain


if __name__ == "__main__":
    main()
