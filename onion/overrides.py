"""``onion.overrides``: where PyTorch users find ``__torch_function__``'s helpers and ``TorchFunctionMode``."""
from .modes.torch_function import (BaseTorchFunctionMode, TorchFunctionMode, _get_current_function_mode,  # noqa: F401
                                   _get_current_function_mode_stack, _get_overloaded_args,
                                   _len_torch_function_stack, _pop_mode_temporarily, get_default_nowrap_functions,
                                   handle_torch_function, has_torch_function, has_torch_function_unary,
                                   has_torch_function_variadic)


def is_tensor_like(inp) -> bool:
    """A Tensor, or an object whose type defines ``__torch_function__``."""
    from .core.tensor import Tensor
    return type(inp) is Tensor or hasattr(inp, "__torch_function__")


__all__ = ["BaseTorchFunctionMode", "TorchFunctionMode", "get_default_nowrap_functions", "handle_torch_function",
           "has_torch_function", "has_torch_function_unary", "has_torch_function_variadic", "is_tensor_like"]
