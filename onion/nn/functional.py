"""``onion.nn.functional``: operators declared with ``python_module: nn``."""
from .._generated.python_functions import NN_FUNCTIONS as _NN

globals().update(_NN)


def relu(input, inplace: bool = False):
    """``F.relu``: the ``relu`` operator (``relu_`` when ``inplace``)."""
    from .. import _generated  # noqa: F401
    from .._generated.python_functions import FUNCTIONS
    return FUNCTIONS["relu_" if inplace else "relu"](input)


def dropout(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """``F.dropout``: the ``dropout`` operator (``dropout_`` when ``inplace``)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    from .._generated.python_functions import FUNCTIONS
    return FUNCTIONS["dropout_" if inplace else "dropout"](input, p, training)
