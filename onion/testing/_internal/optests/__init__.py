"""The operator checks behind ``onion.library.opcheck`` (PyTorch's ``torch.testing._internal.optests``)."""
from .aot_autograd import aot_autograd_check  # noqa: F401
from .autograd_registration import autograd_registration_check  # noqa: F401
from .fake_tensor import fake_check  # noqa: F401
from .generate_tests import ALL_TEST_UTILS, DEFAULT_TEST_UTILS, OpCheckError, opcheck  # noqa: F401
from .make_fx import make_fx_check  # noqa: F401
from .schema_check import SchemaCheckMode  # noqa: F401
