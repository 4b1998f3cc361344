"""onion.cpu: the CPU device module (as torch.cpu); ``onion.cpu.amp`` holds the legacy autocast spelling."""
from . import amp  # noqa: F401
