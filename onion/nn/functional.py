"""``onion.nn.functional``: operators declared with ``python_module: nn``."""
from .._generated.python_functions import NN_FUNCTIONS as _NN

globals().update(_NN)


def relu(input, inplace: bool = False):
    """``F.relu``: the ``relu`` operator (``relu_`` when ``inplace``)."""
    from .. import _generated  # noqa: F401
    from .._generated.python_functions import FUNCTIONS
    return FUNCTIONS["relu_" if inplace else "relu"](input)
