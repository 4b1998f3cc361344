"""Hand-written kernels, meta functions and formulas, grouped by family.

Codegen finds a ``dispatch:`` name in these modules (as torchgen finds
``at::native::`` functions): ``MODULES`` lists where to look.
"""
MODULES = ("ufunc_formulas", "factories", "copy", "views", "reductions", "linalg", "pointwise", "indexing")
