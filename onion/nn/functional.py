"""``onion.nn.functional``: operators declared with ``python_module: nn``."""
from .._generated.functions import NN_FUNCTIONS as _NN

globals().update(_NN)
