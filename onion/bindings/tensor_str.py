"""Tensor printing: ``repr(tensor)`` text identical to PyTorch's, dtype names aside.

This module is standalone on purpose: it imports only NumPy and the standard
library (ml_dtypes arrays such as bfloat16 are accepted through NumPy), so the
public surface can call it with a tensor's values gathered into a NumPy array:

    format_tensor(np.array([1.0, 2.5], np.float32),
                  dtype_name="float32", is_floating=True,
                  is_complex=False, is_bool=False)
    -> 'tensor([1.0000, 2.5000])'

The rules follow PyTorch's printer (``torch/_tensor_str.py``):

* one formatter per tensor (two for complex: real part and imaginary part)
  looks at the elements that will be shown and picks a common width, whether
  every float is integer-valued (printed ``1.``), and whether to switch to
  scientific notation (largest/smallest nonzero finite magnitude ratio above
  1000, largest above 1e8, or smallest below 1e-4);
* rows are wrapped at ``linewidth``, nested dimensions get nested brackets and
  ``dim - 1`` newlines between blocks;
* above ``threshold`` elements each dimension is cut to ``edgeitems`` items at
  either end with ``...`` in between;
* suffixes (device, size, dtype, then the caller's extras such as
  ``requires_grad=True``) follow the data, moved to a new line when the last
  line would grow past ``linewidth``.

Print options are module state, read and changed with ``set_printoptions`` /
``get_printoptions`` / ``printoptions`` just like ``torch.set_printoptions``.
"""

from __future__ import annotations

import contextlib
import math
from typing import Any, Iterator

import numpy as np

__all__ = [
    "format_tensor",
    "set_printoptions",
    "get_printoptions",
    "printoptions",
    "DTYPE_PREFIX",
]

# What the dtype in a ``dtype=...`` suffix is prefixed with.
DTYPE_PREFIX = "onion."


# ---------------------------------------------------------------------------
# print options
# ---------------------------------------------------------------------------

class _PrintOptions:
    __slots__ = ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")

    def __init__(self) -> None:
        self.precision: int = 4
        self.threshold: float = 1000
        self.edgeitems: int = 3
        self.linewidth: int = 80
        self.sci_mode: bool | None = None

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


_OPTS = _PrintOptions()

_PROFILES = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80),
}


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Change how tensors print; same arguments and semantics as torch's.

    ``profile`` (``"default"``, ``"short"`` or ``"full"``) is applied first and
    explicit arguments override it. ``sci_mode`` is always assigned, so leaving
    it out returns it to automatic selection (as in PyTorch).
    """
    if profile is not None:
        preset = _PROFILES.get(profile)
        if preset is not None:
            for name, value in preset.items():
                setattr(_OPTS, name, value)
    if precision is not None:
        _OPTS.precision = precision
    if threshold is not None:
        _OPTS.threshold = threshold
    if edgeitems is not None:
        _OPTS.edgeitems = edgeitems
    if linewidth is not None:
        _OPTS.linewidth = linewidth
    _OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """The current options as a dict usable as ``set_printoptions(**opts)``."""
    return _OPTS.as_dict()


@contextlib.contextmanager
def printoptions(**kwargs: Any) -> Iterator[None]:
    """Temporarily change print options (restored on exit, errors included)."""
    saved = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**saved)


# ---------------------------------------------------------------------------
# element formatting
# ---------------------------------------------------------------------------

class _Formatter:
    """Chooses width / integer mode / scientific mode for a set of values.

    ``values`` is the (already summarized) NumPy array of elements that will
    be shown: float64 when ``floating``, else Python-convertible ints/bools.
    """

    __slots__ = ("floating", "int_mode", "sci_mode", "max_width", "precision")

    def __init__(self, values: np.ndarray, floating: bool) -> None:
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        self.precision = _OPTS.precision
        flat = values.reshape(-1)

        if not floating:
            if flat.size:
                for v in np.unique(flat).tolist():
                    self.max_width = max(self.max_width, len(f"{v}"))
            return

        shown = flat[np.isfinite(flat) & (flat != 0)]
        if shown.size == 0:
            return
        shown = np.unique(shown)  # the width only depends on the set of values
        magnitudes = np.abs(shown)
        lo = float(magnitudes.min())
        hi = float(magnitudes.max())

        self.int_mode = bool(np.all(shown == np.ceil(shown)))
        if _OPTS.sci_mode is None:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        else:
            self.sci_mode = bool(_OPTS.sci_mode)

        prec = self.precision
        width = self.max_width
        if self.sci_mode:
            for v in shown.tolist():
                width = max(width, len(f"{v:.{prec}e}"))
        elif self.int_mode:
            # integer-valued floats get a trailing "." -> one extra column
            for v in shown.tolist():
                width = max(width, len(f"{v:.0f}") + 1)
        else:
            for v in shown.tolist():
                width = max(width, len(f"{v:.{prec}f}"))
        self.max_width = width

    def width(self) -> int:
        return self.max_width

    def format(self, value: Any) -> str:
        if self.floating:
            if self.sci_mode:
                text = f"{value:{self.max_width}.{self.precision}e}"
            elif self.int_mode:
                text = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    text += "."
            else:
                text = f"{value:.{self.precision}f}"
        else:
            text = f"{value}"
        pad = self.max_width - len(text)
        return " " * pad + text if pad > 0 else text


def _join_complex(real_str: str, imag_str: str) -> str:
    imag_str = (imag_str + "j").lstrip()
    # a leading sign (negative numbers, -0.) is kept; otherwise add "+"
    if imag_str[0] in "+-":
        return real_str + imag_str
    return real_str + "+" + imag_str


class _Printer:
    """Turns an array of values into the bracketed body of a tensor repr."""

    def __init__(self, convert: Any, summarize: bool,
                 fmt1: _Formatter, fmt2: _Formatter | None) -> None:
        # ``convert`` maps a slice of the raw data to an array whose
        # ``tolist()`` gives Python floats / complexes / ints / bools
        self.convert = convert
        self.summarize = summarize
        self.fmt1 = fmt1
        self.fmt2 = fmt2
        self.edge = _OPTS.edgeitems
        self.linewidth = _OPTS.linewidth

    def element(self, v: Any) -> str:
        if self.fmt2 is not None:
            return _join_complex(self.fmt1.format(v.real), self.fmt2.format(v.imag))
        return self.fmt1.format(v)

    def scalar(self, arr: np.ndarray) -> str:
        return self.element(self.convert(arr).item())

    def vector(self, arr: np.ndarray, indent: int) -> str:
        item_len = self.fmt1.width() + 2  # ", " between elements
        if self.fmt2 is not None:
            item_len += self.fmt2.width() + 1  # imaginary part and its "j"
        per_line = max(1, math.floor((self.linewidth - indent) / item_len))

        edge = self.edge
        n = arr.shape[0]
        if self.summarize and not edge:
            items = ["..."]
        elif self.summarize and n > 2 * edge:
            conv = self.convert
            items = ([self.element(v) for v in conv(arr[:edge]).tolist()]
                     + [" ..."]
                     + [self.element(v) for v in conv(arr[n - edge:]).tolist()])
        else:
            items = [self.element(v) for v in self.convert(arr).tolist()]

        lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"

    def block(self, arr: np.ndarray, indent: int) -> str:
        dim = arr.ndim
        if dim == 0:
            return self.scalar(arr)
        if dim == 1:
            return self.vector(arr, indent)
        n = arr.shape[0]
        edge = self.edge
        if self.summarize and n > 2 * edge:
            parts = ([self.block(arr[i], indent + 1) for i in range(edge)]
                     + ["..."]
                     + [self.block(arr[i], indent + 1) for i in range(n - edge, n)])
        else:
            parts = [self.block(arr[i], indent + 1) for i in range(n)]
        sep = "," + "\n" * (dim - 1) + " " * (indent + 1)
        return "[" + sep.join(parts) + "]"


def _summarized(arr: np.ndarray) -> np.ndarray:
    """The elements a summarized print shows (what the formatter measures)."""
    edge = _OPTS.edgeitems
    if arr.ndim == 0:
        return arr
    if arr.ndim == 1:
        n = arr.shape[0]
        if n > 2 * edge:
            # PyTorch joins x[:edge] and x[-edge:]; with edge == 0 the latter
            # is the whole vector, so the formatter then sees everything.
            if edge == 0:
                return arr
            return np.concatenate((arr[:edge], arr[n - edge:]))
        return arr
    if not edge:
        return arr[(slice(0, 0),) * arr.ndim]
    out = arr
    for axis, n in enumerate(arr.shape):
        if n > 2 * edge:
            idx = np.concatenate((np.arange(edge), np.arange(n - edge, n)))
            out = np.take(out, idx, axis=axis)
    return out


def _to_float64(arr: np.ndarray) -> np.ndarray:
    return arr if arr.dtype == np.float64 else np.asarray(arr).astype(np.float64)


def _to_complex128(arr: np.ndarray) -> np.ndarray:
    return arr if arr.dtype == np.complex128 else np.asarray(arr).astype(np.complex128)


def _to_bool(arr: np.ndarray) -> np.ndarray:
    return arr if arr.dtype == np.bool_ else np.asarray(arr).astype(np.bool_)


def _to_int(arr: np.ndarray) -> np.ndarray:
    return arr if arr.dtype.kind in "iub" else np.asarray(arr).astype(np.int64)


def _tensor_body(data: np.ndarray, indent: int, is_floating: bool,
                 is_complex: bool, is_bool: bool) -> str:
    """The bracketed values of a non-empty tensor (PyTorch's ``_tensor_str``).

    Only the elements that are shown get converted to Python numbers, so a
    summarized print of a huge array stays cheap.
    """
    summarize = data.size > _OPTS.threshold
    shown = _summarized(data) if summarize else data

    if is_complex:
        shown = _to_complex128(shown)
        fmt1 = _Formatter(np.ascontiguousarray(shown.real), True)
        fmt2 = _Formatter(np.ascontiguousarray(shown.imag), True)
        return _Printer(_to_complex128, summarize, fmt1, fmt2).block(data, indent)

    if is_floating:
        convert = _to_float64
    elif is_bool:
        convert = _to_bool
    else:
        convert = _to_int
    fmt = _Formatter(convert(shown), is_floating)
    return _Printer(convert, summarize, fmt, None).block(data, indent)


# ---------------------------------------------------------------------------
# suffixes and the whole repr
# ---------------------------------------------------------------------------

_DTYPE_ALIASES = {
    "float": "float32", "double": "float64", "half": "float16",
    "cfloat": "complex64", "cdouble": "complex128", "chalf": "complex32",
    "long": "int64", "int": "int32", "short": "int16",
}


def _canonical_dtype(name: str) -> str:
    name = str(name)
    for prefix in ("torch.", "onion."):
        if name.startswith(prefix):
            name = name[len(prefix):]
    return _DTYPE_ALIASES.get(name, name)


def _add_suffixes(text: str, suffixes: list[str], indent: int,
                  force_newline: bool = False) -> str:
    pieces = [text]
    # PyTorch's measure of the last line (it counts two more than its length)
    last_len = len(text) - text.rfind("\n") + 1
    linewidth = _OPTS.linewidth
    for suffix in suffixes:
        if force_newline or last_len + len(suffix) + 2 > linewidth:
            pieces.append(",\n" + " " * indent + suffix)
            last_len = indent + len(suffix)
            force_newline = False
        else:
            pieces.append(", " + suffix)
            last_len += len(suffix) + 2
    pieces.append(")")
    return "".join(pieces)


def _shape_str(shape: Any) -> str:
    return str(tuple(int(s) for s in shape))


def format_tensor(
    data: np.ndarray | None,
    *,
    dtype_name: str,
    default_dtype_name: str = "float32",
    is_floating: bool,
    is_complex: bool,
    is_bool: bool,
    device: str | None = None,
    shape: tuple | None = None,
    extras: tuple[str, ...] = (),
    type_name: str = "tensor",
    contents: str | None = None,
) -> str:
    """``repr`` of a tensor, as PyTorch prints it (dtype prefix ``onion.``).

    data: the values as a NumPy array (bfloat16 may come as float32 or as
        ml_dtypes.bfloat16; the float8 types as ml_dtypes arrays), or None for
        a meta tensor, whose ``shape`` must then be given.
    dtype_name: the tensor's dtype ("float32", "int64", ...; a "torch." or
        "onion." prefix and the short aliases "float", "long"... are accepted).
    default_dtype_name: the current default floating dtype.
    device: None when the tensor lives on the default device (cpu), else the
        device text to print, e.g. "cuda:0" or "meta".
    shape: the tensor's sizes (defaults to ``data.shape``).
    extras: suffixes appended last, in order, e.g. "grad_fn=<AddBackward0>".
    type_name: what precedes the parenthesis ("tensor", or a subclass name).
    contents: text printed in place of the values (``Tensor.__repr__(tensor_contents=...)``).
    """
    dtype = _canonical_dtype(dtype_name)
    default = _canonical_dtype(default_dtype_name)
    default_complex = "complex128" if default == "float64" else "complex64"
    has_default_dtype = dtype in (default, default_complex, "int64", "bool")
    dtype_suffix = "dtype=" + DTYPE_PREFIX + dtype

    prefix = type_name + "("
    indent = len(prefix)
    suffixes: list[str] = []

    is_meta = data is None and contents is None
    if device is not None:
        suffixes.append("device='" + str(device) + "'")
    elif is_meta:
        suffixes.append("device='meta'")

    if contents is not None:
        if not has_default_dtype:
            suffixes.append(dtype_suffix)
        body = contents
    elif is_meta:
        if shape is None:
            raise ValueError("format_tensor: a meta tensor (data=None) needs shape")
        suffixes.append("size=" + _shape_str(shape))
        if dtype != default:
            suffixes.append(dtype_suffix)
        body = "..."
    else:
        data = np.asarray(data)
        if shape is None:
            shape = data.shape
        elif data.shape != tuple(shape):
            data = data.reshape(tuple(shape))
        numel = data.size
        if numel == 0:
            # like NumPy, the shape is printed unless it is (0,); and with no
            # elements to look at, the dtype is printed unless it is the default
            if data.ndim != 1:
                suffixes.append("size=" + _shape_str(shape))
            if dtype != default:
                suffixes.append(dtype_suffix)
            body = "[]"
        else:
            if not _OPTS.edgeitems:
                suffixes.append("size=" + _shape_str(shape))
            if not has_default_dtype:
                suffixes.append(dtype_suffix)
            body = _tensor_body(data, indent, is_floating, is_complex, is_bool)

    suffixes.extend(extras)
    return _add_suffixes(prefix + body, suffixes, indent)
