"""onion's dtypes: one immutable singleton per scalar type, compared by identity.

Mirrors ``torch.dtype`` (c10::ScalarType) for the twelve scalar types onion
supports, plus the process-wide default dtype (``torch.get_default_dtype``).
This module imports nothing from onion so every other layer can import it.

bfloat16's NumPy dtype comes from ml_dtypes, whose import costs more than the
rest of ``import onion`` together; it is imported the first time
``bfloat16.np`` is read (see _LazyNumpyDtype), not when onion is imported.
"""

import importlib as _importlib

import numpy as _np

# Categories, ordered as PyTorch's type promotion orders them.
CATEGORY_BOOL = 0
CATEGORY_INTEGRAL = 1
CATEGORY_FLOATING = 2
CATEGORY_COMPLEX = 3


class dtype:
    """A scalar type; there is exactly one instance per type (see ALL_DTYPES)."""

    __slots__ = (
        "name",
        "itemsize",
        "is_floating_point",
        "is_complex",
        "is_signed",
        "np",
        "category",
        "index",
        "scalar_type_name",
        "typemeta_name",
        "cpp_type_name",
        "_real",
        "_complex",
    )

    _sealed = False

    def __new__(cls, *args, **kwargs):
        if cls._sealed:
            raise TypeError("cannot create 'onion.dtype' instances")
        return object.__new__(cls)

    def __init__(self, name, index, category, itemsize, is_signed, np_dtype, scalar_type_name):
        self.name = name
        self.index = index
        self.category = category
        self.itemsize = itemsize
        self.is_floating_point = category == CATEGORY_FLOATING
        self.is_complex = category == CATEGORY_COMPLEX
        self.is_signed = is_signed
        self.np = np_dtype
        # c10's name ("Float", "Long"), which PyTorch's error messages use.
        self.scalar_type_name = scalar_type_name
        self._real = self
        self._complex = None

    def to_real(self):
        """The real counterpart of a complex dtype; any other dtype maps to itself."""
        return self._real

    def to_complex(self):
        """The complex counterpart of a floating or complex dtype.

        PyTorch maps float16 to complex32, which onion does not have; onion maps it
        to complex64, the same choice PyTorch itself makes for bfloat16.
        """
        c = self._complex
        if c is None:
            raise RuntimeError(f"Unknown Complex ScalarType for {self.scalar_type_name}")
        return c

    def __repr__(self):
        return "onion." + self.name

    __str__ = __repr__

    def __reduce__(self):
        # A string makes pickle store a reference to the module attribute
        # (onion.core.dtype.<name>), so unpickling and copying keep identity.
        return self.name

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


def _make(name, index, category, itemsize, is_signed, np_dtype, scalar_type_name):
    return dtype(name, index, category, itemsize, is_signed, _np.dtype(np_dtype), scalar_type_name)


_np_slot = dtype.np     # the slot's descriptor; reads of `.np` on a plain dtype go straight to it


class _LazyNumpyDtype(dtype):
    """A dtype whose NumPy dtype lives in a module that is slow to import.

    Only the instance's class differs from a plain dtype until ``.np`` is first
    read: then the module is imported, the slot is filled, the dtype is entered
    in the NumPy lookup tables and the instance's class becomes ``dtype``, so
    from then on it is an ordinary dtype (``type(d) is dtype``) whose ``.np`` is
    a plain slot read. Other dtypes never pay for the laziness.
    """

    __slots__ = ()

    @property
    def np(self):
        return _load_numpy_dtype(self)

    @np.setter
    def np(self, value):
        _np_slot.__set__(self, value)


# Shown as onion's dtype class in messages that name the type of a value.
_LazyNumpyDtype.__name__ = _LazyNumpyDtype.__qualname__ = "dtype"

# name -> (module, attribute) of the NumPy scalar type, for _LazyNumpyDtype instances
_LAZY_NUMPY = {"bfloat16": ("ml_dtypes", "bfloat16")}


def _make_lazy(name, index, category, itemsize, is_signed, scalar_type_name):
    return _LazyNumpyDtype(name, index, category, itemsize, is_signed, None, scalar_type_name)


def _load_numpy_dtype(d):
    module, attr = _LAZY_NUMPY[d.name]
    nd = _np.dtype(getattr(_importlib.import_module(module), attr))
    _np_slot.__set__(d, nd)
    if type(d) is _LazyNumpyDtype:
        d.__class__ = dtype
    _FROM_NUMPY[nd] = d
    _FROM_NUMPY[nd.type] = d
    for fn in _numpy_dtype_listeners:
        fn(d)
    return nd


_numpy_dtype_listeners = []


def numpy_dtypes_loaded_and_listen(fn):
    """The dtypes whose ``.np`` is loaded now; fn(d) is called for each one loaded later.

    For tables keyed by NumPy dtype that would otherwise read every ``.np``
    (and so import ml_dtypes) at import time.
    """
    _numpy_dtype_listeners.append(fn)
    return [d for d in ALL_DTYPES if type(d) is dtype]


def _load_lazy_numpy_dtypes():
    """Import every NumPy dtype not imported yet."""
    for d in ALL_DTYPES:
        if type(d) is _LazyNumpyDtype:
            _load_numpy_dtype(d)


# The order (and so `index`) is stable: bool, integral by width, floating, complex.
bool = _make("bool", 0, CATEGORY_BOOL, 1, False, _np.bool_, "Bool")
uint8 = _make("uint8", 1, CATEGORY_INTEGRAL, 1, False, _np.uint8, "Byte")
int8 = _make("int8", 2, CATEGORY_INTEGRAL, 1, True, _np.int8, "Char")
int16 = _make("int16", 3, CATEGORY_INTEGRAL, 2, True, _np.int16, "Short")
int32 = _make("int32", 4, CATEGORY_INTEGRAL, 4, True, _np.int32, "Int")
int64 = _make("int64", 5, CATEGORY_INTEGRAL, 8, True, _np.int64, "Long")
float16 = _make("float16", 6, CATEGORY_FLOATING, 2, True, _np.float16, "Half")
bfloat16 = _make_lazy("bfloat16", 7, CATEGORY_FLOATING, 2, True, "BFloat16")
float32 = _make("float32", 8, CATEGORY_FLOATING, 4, True, _np.float32, "Float")
float64 = _make("float64", 9, CATEGORY_FLOATING, 8, True, _np.float64, "Double")
complex64 = _make("complex64", 10, CATEGORY_COMPLEX, 8, True, _np.complex64, "ComplexFloat")
complex128 = _make("complex128", 11, CATEGORY_COMPLEX, 16, True, _np.complex128, "ComplexDouble")
# PyTorch's "barebones" unsigned types: creation, copy/conversion, printing and a few kernels only;
# promotion with any other dtype raises (see promotion.py).
uint16 = _make("uint16", 12, CATEGORY_INTEGRAL, 2, False, _np.uint16, "UInt16")
uint32 = _make("uint32", 13, CATEGORY_INTEGRAL, 4, False, _np.uint32, "UInt32")
uint64 = _make("uint64", 14, CATEGORY_INTEGRAL, 8, False, _np.uint64, "UInt64")

dtype._sealed = True

for _f, _c in ((float16, complex64), (bfloat16, complex64), (float32, complex64), (float64, complex128)):
    _f._complex = _c
for _c, _r in ((complex64, float32), (complex128, float64)):
    _c._real = _r
    _c._complex = _c
del _f, _c, _r

# How C++ spells each type in PyTorch's messages (beside ``scalar_type_name``, c10's enum name "Float"):
# caffe2::TypeMeta's name, which structured kernels' and TensorIterator's dtype errors print ("long int"),
# and the C type AT_FORALL_SCALAR_TYPES names, which Scalar's checked conversion prints ("int64_t").
_CPP_NAMES = {
    "bool": ("bool", "bool"),
    "uint8": ("unsigned char", "uint8_t"),
    "int8": ("signed char", "int8_t"),
    "int16": ("short int", "int16_t"),
    "int32": ("int", "int"),
    "int64": ("long int", "int64_t"),
    "float16": ("c10::Half", "c10::Half"),
    "bfloat16": ("c10::BFloat16", "c10::BFloat16"),
    "float32": ("float", "float"),
    "float64": ("double", "double"),
    "complex64": ("c10::complex<float>", "c10::complex<float>"),
    "complex128": ("c10::complex<double>", "c10::complex<double>"),
    "uint16": ("unsigned short", "uint16_t"),
    "uint32": ("unsigned int", "uint32_t"),
    "uint64": ("unsigned long", "uint64_t"),
}
for _d in (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64, complex128,
           uint16, uint32, uint64):
    _d.typemeta_name, _d.cpp_type_name = _CPP_NAMES[_d.name]
del _d

# PyTorch's aliases (torch.half, torch.float, ...).
half = float16
float = float32
double = float64
short = int16
int = int32
long = int64
cfloat = complex64
cdouble = complex128

ALL_DTYPES = (
    bool, uint8, int8, int16, int32, int64,
    float16, bfloat16, float32, float64, complex64, complex128,
)
# The limited-support unsigned types, kept out of ALL_DTYPES (the twelve types every
# kernel and promotion rule covers, which sweeps iterate over) as PyTorch keeps them out of
# its AT_FORALL_* lists.
BAREBONES_UNSIGNED_DTYPES = (uint16, uint32, uint64)
EVERY_DTYPE = ALL_DTYPES + BAREBONES_UNSIGNED_DTYPES
DTYPE_BY_NAME = {d.name: d for d in EVERY_DTYPE}
DTYPE_BY_NAME.update(
    half=half, float=float, double=double, short=short, int=int, long=long,
    cfloat=cfloat, cdouble=cdouble,
)


# ---------------------------------------------------------------------------
# NumPy interop

# Keyed by both numpy dtype instances and scalar types, so the common calls
# (arr.dtype, np.float32) are one dict lookup.
_FROM_NUMPY = {}
for _d in EVERY_DTYPE:
    if type(_d) is dtype:   # a lazy one enters itself when loaded
        _FROM_NUMPY[_d.np] = _d
        _FROM_NUMPY[_d.np.type] = _d
del _d

_NP_NAMES = frozenset(d.name for d in EVERY_DTYPE)   # each dtype's name is its NumPy name
_SUPPORTED_NUMPY = (
    "float64, float32, float16, bfloat16, complex64, complex128, "
    "int64, int32, int16, int8, uint64, uint32, uint16, uint8, and bool"
)


def from_numpy_dtype(np_dtype):
    """The onion dtype for a numpy dtype (or scalar type); TypeError if unsupported."""
    try:
        return _FROM_NUMPY[np_dtype]
    except (KeyError, TypeError):
        pass
    return _from_numpy_dtype_slow(np_dtype)


def _from_numpy_dtype_slow(np_dtype):
    try:
        nd = _np.dtype(np_dtype)
    except Exception:
        nd = None
    if (nd is None and isinstance(np_dtype, str)) or (nd is not None and nd.name in _LAZY_NUMPY):
        # A lazy dtype (bfloat16 before ml_dtypes is imported) may be the
        # answer, or its module may be what makes the name ("bfloat16") parse.
        _load_lazy_numpy_dtypes()
    return _from_numpy_dtype_loaded(np_dtype)


def _from_numpy_dtype_loaded(np_dtype):
    try:
        nd = _np.dtype(np_dtype)
    except Exception:
        raise TypeError(f"can't convert {np_dtype!r} to an onion dtype: not a numpy dtype") from None
    if nd.byteorder not in ("=", "|"):
        if nd.newbyteorder("=") in _FROM_NUMPY:
            raise TypeError(
                f"can't convert numpy dtype {nd.str}: byte order different from the native "
                "byte order. Conversion between byte orders is currently not supported."
            )
    found = _FROM_NUMPY.get(nd)
    if found is None and nd.byteorder in ("=", "|"):
        # Platform spellings of one type (np.longlong, np.int64) compare equal
        # but need not hash alike; the name settles it.
        found = DTYPE_BY_NAME.get(nd.name) if nd.name in _NP_NAMES else None
    if found is None:
        raise TypeError(
            f"can't convert numpy dtype {nd.name} to an onion dtype. "
            f"The only supported types are: {_SUPPORTED_NUMPY}."
        )
    try:
        _FROM_NUMPY[np_dtype] = found
    except TypeError:
        pass
    return found


# ---------------------------------------------------------------------------
# Default dtype (process-wide, as in PyTorch)

_default_dtype = float32
_default_complex_dtype = complex64
_default_dtype_listeners = []


def get_default_dtype():
    """The dtype of floating tensors made from Python floats (float32 at start)."""
    return _default_dtype


def get_default_complex_dtype():
    """complex128 when the default dtype is float64, else complex64.

    PyTorch gives complex32 for a float16 default; onion has no complex32 and
    gives complex64.
    """
    return _default_complex_dtype


def set_default_dtype(d):
    """Set the process-wide default floating dtype, validated as torch 2.13 does."""
    global _default_dtype, _default_complex_dtype
    if not isinstance(d, dtype):
        raise TypeError("invalid dtype object: only floating-point types are supported as the default type")
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _default_dtype = d
    _default_complex_dtype = complex128 if d is float64 else complex64
    for fn in _default_dtype_listeners:
        fn()


def add_default_dtype_listener(fn):
    """Call fn() after every set_default_dtype (promotion uses it to drop its memos)."""
    _default_dtype_listeners.append(fn)

