"""``onion.library``: register operators and kernels from Python, as ``torch.library``."""
from .dispatch.library import Library, fallthrough_kernel  # noqa: F401
