"""The Python-facing glue the generated code and the public surface share (PyTorch's torch/csrc/utils
and torch/csrc/autograd/python_*): argument parsing, hand-written Tensor methods and ``onion.*``
functions, tensor printing, and the ``_C`` introspection functions."""
