"""Python-level functions of ``torch.functional`` that onion provides the same way (not operators)."""
from __future__ import annotations

BINDINGS: dict = {}     # the generated bindings these call (filled in by onion._load)



def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):  # noqa: A002 - torch's parameter name
    """torch.norm: the vector norm for numbers and 'fro' over at most two dims, else a matrix norm."""
    _dim = None if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    if isinstance(p, str):
        if p == "fro" and (dim is None or isinstance(dim, int) or len(dim) <= 2):
            return _vector_norm(input, 2, _dim, keepdim, dtype, out)
        if _dim is None:
            _dim = list(range(input.dim()))
        return _matrix_norm(input, p, _dim, keepdim, dtype, out)
    return _vector_norm(input, 2.0 if p is None else p, _dim, keepdim, dtype, out)


def _vector_norm(input, ord, dim, keepdim, dtype, out):  # noqa: A002
    # through the binding, so its arguments are checked as torch.linalg.vector_norm's are
    vector_norm = BINDINGS["linalg_vector_norm"]
    if out is None:
        return vector_norm(input, ord, dim, keepdim, dtype=dtype)
    return vector_norm(input, ord, dim, keepdim, dtype=dtype, out=out)


def _matrix_norm(input, ord, dim, keepdim, dtype, out):  # noqa: A002
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(str(d) for d in dim)}")
    if ord not in ("fro", "nuc"):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if ord == "fro":
        return _vector_norm(input, 2, dim, keepdim, dtype, out)
    raise NotImplementedError("norm(p='nuc'): the nuclear norm needs singular values (linalg.svdvals), which onion "
                              "does not have yet")


def _tensor_norm(self, p="fro", dim=None, keepdim=False, dtype=None):
    return norm(self, p, dim, keepdim, dtype=dtype)


_tensor_norm.__name__ = _tensor_norm.__qualname__ = "norm"
