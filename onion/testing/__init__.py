"""``onion.testing``: where PyTorch users find ``torch.testing`` (the operator checks live in ``_internal.optests``)."""
