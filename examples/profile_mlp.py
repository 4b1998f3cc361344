"""A raw-operator MLP (784-128-10) trained for a few SGD steps on fixed data: the script
``python -m onion profile examples/profile_mlp.py`` profiles (the README shows its picture)."""
import numpy as np

import onion as torch

rng = np.random.default_rng(0)
x = torch.tensor(rng.standard_normal((64, 784)).astype(np.float32))
y = torch.tensor(rng.standard_normal((64, 10)).astype(np.float32))
w1 = torch.tensor((rng.standard_normal((784, 128)) * 0.05).astype(np.float32), requires_grad=True)
w2 = torch.tensor((rng.standard_normal((128, 10)) * 0.05).astype(np.float32), requires_grad=True)

for step in range(5):
    with torch.profiler.record_function("forward"):
        h = torch.mm(x, w1).clamp(min=0)
        loss = ((torch.mm(h, w2) - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        for w in (w1, w2):
            w -= 0.05 * w.grad
            w.grad = None
print(f"loss after 5 steps: {loss.item():.4f}")
