"""``onion._subclasses``: tensor subclasses onion provides (``FakeTensor``), at PyTorch's module path."""
from .fake_tensor import (DataDependentOutputException, DynamicOutputShapeException, FakeTensor,  # noqa: F401
                          FakeTensorMode, UnsupportedOperatorException)
