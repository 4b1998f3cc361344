"""``onion.fx.experimental``: where PyTorch keeps ``make_fx`` (``proxy_tensor``)."""
