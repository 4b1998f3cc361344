"""Testing tools onion's own tests and users' operator checks share, at ``torch.testing._internal``'s path."""
