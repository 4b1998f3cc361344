"""dtypes and type promotion, compared exhaustively with PyTorch (``oracle``), plus worked values
of the rules that need no torch."""

import copy
import itertools
import pickle
import warnings

import numpy as np
import pytest

from conftest import default_dtype as set_default_dtypes, torch  # (torch: a stand-in without PyTorch)

from onion.core import dtype as odt  # noqa: E402
from onion.core.dtype import (  # noqa: E402
    ALL_DTYPES,
    EVERY_DTYPE,
    DTYPE_BY_NAME,
    from_numpy_dtype,
    get_default_complex_dtype,
    get_default_dtype,
    set_default_dtype,
)
from onion.core.promotion import (  # noqa: E402
    DIMENSIONED,
    WRAPPED,
    ZERO_DIM,
    can_cast,
    default_dtype_for_scalar,
    promote_pair,
    promote_types,
    result_type_of,
    scalar_dtype,
    type_category,
)

PAIRS = list(itertools.product(ALL_DTYPES, repeat=2))
SCALARS = [True, 3, 2.5, 1 + 2j]


def to_torch(d):
    return getattr(torch, d.name)


def to_onion(td):
    return DTYPE_BY_NAME[str(td).split(".")[1]]


def torch_operand(d, prio):
    if prio == DIMENSIONED:
        return torch.zeros(2, dtype=to_torch(d))
    assert prio == ZERO_DIM
    return torch.zeros((), dtype=to_torch(d))


def torch_result(td):
    # PyTorch answers complex32 where onion, lacking it, answers complex64.
    return odt.complex64 if td == torch.complex32 else to_onion(td)


@pytest.fixture(params=["float32", "float64", "float16", "bfloat16"])
def default_dtype(request):
    """Both libraries' default dtype set to the parameter; the previous ones restored afterwards."""
    with set_default_dtypes(request.param):
        yield DTYPE_BY_NAME[request.param]


# ---------------------------------------------------------------------------
# dtype objects

@pytest.mark.oracle
def test_dtype_attributes_match_torch():
    assert len(ALL_DTYPES) == 12
    for d in ALL_DTYPES:
        td = to_torch(d)
        assert d.itemsize == td.itemsize, d
        assert d.is_floating_point == td.is_floating_point, d
        assert d.is_complex == td.is_complex, d
        assert d.is_signed == td.is_signed, d
        assert d.np.itemsize == d.itemsize
        assert repr(d) == "onion." + d.name == str(d)
        assert type_category(d) == d.category


def test_categories_and_indices():
    cats = [d.category for d in ALL_DTYPES]
    assert cats == [0] + [1] * 5 + [2] * 4 + [3] * 2
    assert [d.index for d in ALL_DTYPES] == list(range(12))


@pytest.mark.oracle
def test_to_real_to_complex_match_torch():
    for d in ALL_DTYPES:
        td = to_torch(d)
        assert d.to_real() is to_onion(td.to_real())
        try:
            expected = td.to_complex()
        except RuntimeError as e:
            with pytest.raises(RuntimeError, match=str(e)):
                d.to_complex()
        else:
            assert d.to_complex() is torch_result(expected)


@pytest.mark.oracle
def test_aliases_match_torch():
    for alias in ["half", "float", "double", "short", "int", "long", "cfloat", "cdouble"]:
        assert getattr(odt, alias) is to_onion(getattr(torch, alias))
        assert DTYPE_BY_NAME[alias] is getattr(odt, alias)
    assert odt.bool is DTYPE_BY_NAME["bool"]


@pytest.mark.oracle
def test_numpy_arrays_from_torch_map_to_the_same_dtype():
    for d in ALL_DTYPES:
        if d is not odt.bfloat16:
            assert to_onion(torch.from_numpy(np.zeros(1, d.np)).dtype) is d
    with pytest.raises(TypeError):
        from_numpy_dtype(torch.float32)


def test_singletons_survive_pickle_and_copy():
    for d in ALL_DTYPES:
        assert pickle.loads(pickle.dumps(d)) is d
        assert copy.copy(d) is d and copy.deepcopy([d])[0] is d
    with pytest.raises(TypeError, match="cannot create"):
        odt.dtype("float8", 12, 2, 1, True, np.float32, "Float8")


def test_numpy_dtypes():
    assert odt.bfloat16.np.name == "bfloat16"
    for d in EVERY_DTYPE:
        assert from_numpy_dtype(d.np) is d
        assert from_numpy_dtype(d.np.type) is d
        assert from_numpy_dtype(np.zeros(1, d.np).dtype) is d
    assert from_numpy_dtype(np.dtype("q")) is odt.int64
    assert from_numpy_dtype(np.longlong) is odt.int64
    assert from_numpy_dtype(np.intc) is odt.int32
    assert from_numpy_dtype("float32") is odt.float32
    assert from_numpy_dtype(np.uint64) is odt.uint64 and from_numpy_dtype("uint16") is odt.uint16
    for bad in [object, np.str_, "U3", np.float128]:
        with pytest.raises(TypeError, match="only supported types"):
            from_numpy_dtype(bad)
    with pytest.raises(TypeError, match="byte order"):
        from_numpy_dtype(np.dtype(">f4"))


# ---------------------------------------------------------------------------
# default dtype

def test_default_dtype_is_float32():
    assert get_default_dtype() is odt.float32
    assert get_default_complex_dtype() is odt.complex64


@pytest.mark.oracle
def test_set_default_dtype_validation_matches_torch():
    with set_default_dtypes("float32"):     # whatever happens below, the previous defaults come back
        _set_default_dtype_validation()


def _set_default_dtype_validation():
    for value in list(ALL_DTYPES) + ["float32", 1, None, np.float32]:
        torch_value = to_torch(value) if isinstance(value, odt.dtype) else value
        try:
            torch.set_default_dtype(torch_value)
        except TypeError as e:
            with pytest.raises(TypeError) as info:
                set_default_dtype(value)
            assert str(info.value) == str(e)
            assert get_default_dtype() is odt.float32
        else:
            torch.set_default_dtype(torch.float32)
            set_default_dtype(value)
            assert get_default_dtype() is value
            set_default_dtype(odt.float32)
    with pytest.raises(TypeError, match="invalid dtype object"):
        set_default_dtype(torch.float32)  # a torch dtype is not an onion dtype
    assert get_default_dtype() is odt.float32


def test_default_complex_dtype(default_dtype):
    expected = {"float64": odt.complex128}.get(default_dtype.name, odt.complex64)
    assert get_default_complex_dtype() is expected
    assert default_dtype_for_scalar(1.5) is default_dtype
    assert default_dtype_for_scalar(1j) is expected
    assert default_dtype_for_scalar(2) is odt.int64
    assert default_dtype_for_scalar(False) is odt.bool


@pytest.mark.oracle
def test_default_dtypes_match_torch(default_dtype):
    expected = {"float64": odt.complex128}.get(default_dtype.name, odt.complex64)
    if default_dtype is not odt.bfloat16:  # torch refuses torch.tensor(1j) then
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch warns that complex32 is experimental
            assert torch_result(torch.tensor(1j).dtype) is expected
        assert to_onion(torch.tensor(1.5).dtype) is default_dtype


# ---------------------------------------------------------------------------
# promote_types / can_cast

@pytest.mark.oracle
def test_promote_types_all_pairs():
    for a, b in PAIRS:
        assert promote_types(a, b) is to_onion(torch.promote_types(to_torch(a), to_torch(b))), (a, b)


@pytest.mark.oracle
def test_can_cast_all_pairs():
    for a, b in PAIRS:
        assert can_cast(a, b) == torch.can_cast(to_torch(a), to_torch(b)), (a, b)


# Worked values of PyTorch's promotion rules (the tests above check every pair against torch;
# these need no torch).  Categories: bool < integer < floating < complex.
PROMOTE_WORKED = [
    ("bool", "bool", "bool"),
    ("bool", "uint8", "uint8"),
    ("uint8", "int8", "int16"),         # no 8-bit type holds both: the next signed one
    ("int16", "uint8", "int16"),
    ("int8", "int64", "int64"),
    ("int64", "float32", "float32"),    # a higher category wins, whatever the sizes
    ("bfloat16", "int64", "bfloat16"),
    ("bfloat16", "float16", "float32"),  # neither holds the other
    ("float16", "float64", "float64"),
    ("float16", "complex64", "complex64"),
    ("float64", "complex64", "complex128"),  # complex wide enough for the float
    ("complex64", "complex128", "complex128"),
]


@pytest.mark.parametrize("a, b, result", PROMOTE_WORKED)
def test_promote_types_worked_values(a, b, result):
    a, b, result = DTYPE_BY_NAME[a], DTYPE_BY_NAME[b], DTYPE_BY_NAME[result]
    assert promote_types(a, b) is result
    assert promote_types(b, a) is result


CAN_CAST_WORKED = [
    ("int32", "float32", True), ("float32", "int32", False), ("complex64", "float64", False),
    ("bool", "int8", True), ("int8", "bool", False), ("uint8", "bool", False),
    ("float32", "float16", True), ("int64", "uint8", True), ("float64", "complex64", True),
]


def test_can_cast_worked_values():
    """Casting may not lower the category (complex -> float, float -> int, int -> bool); size does not matter."""
    for a, b, ok in CAN_CAST_WORKED:
        assert can_cast(DTYPE_BY_NAME[a], DTYPE_BY_NAME[b]) is ok, (a, b)


# (operands as (dtype, priority), result with the default dtype float32).  A Python number is a
# WRAPPED operand of dtype int64 / float64 / complex128 / bool.
RESULT_TYPE_WORKED = [
    ((("int32", DIMENSIONED), ("float64", WRAPPED)), "float32"),     # int tensor + 2.5: the default dtype
    ((("bool", DIMENSIONED), ("float64", WRAPPED)), "float32"),
    ((("int32", DIMENSIONED), ("complex128", WRAPPED)), "complex64"),  # + 1j: the default complex dtype
    ((("int32", DIMENSIONED), ("int64", WRAPPED)), "int32"),         # + 2: same category, the tensor decides
    ((("uint8", DIMENSIONED), ("int64", WRAPPED)), "uint8"),         # + -1 too
    ((("float16", DIMENSIONED), ("float64", WRAPPED)), "float16"),   # + 1e5
    ((("bool", DIMENSIONED), ("bool", WRAPPED)), "bool"),
    ((("bool", DIMENSIONED), ("int64", WRAPPED)), "int64"),
    ((("int8", DIMENSIONED), ("int64", ZERO_DIM)), "int8"),          # a 0-dim tensor of the same category defers
    ((("uint8", DIMENSIONED), ("int8", ZERO_DIM)), "uint8"),
    ((("float16", DIMENSIONED), ("float64", ZERO_DIM)), "float16"),
    ((("int32", DIMENSIONED), ("float64", ZERO_DIM)), "float64"),    # ... of a higher one decides, with its dtype
    ((("int32", DIMENSIONED), ("float16", ZERO_DIM)), "float16"),
    ((("int64", ZERO_DIM), ("float16", ZERO_DIM)), "float16"),
    ((("float64", ZERO_DIM), ("float64", WRAPPED)), "float64"),
]


@pytest.mark.parametrize("operands, result", RESULT_TYPE_WORKED)
def test_result_type_worked_values(operands, result):
    ops = [(DTYPE_BY_NAME[d], prio) for d, prio in operands]
    assert result_type_of(ops) is DTYPE_BY_NAME[result]
    assert result_type_of(ops[::-1]) is DTYPE_BY_NAME[result]
    if len(ops) == 2:
        assert promote_pair(*ops[0], *ops[1]) is DTYPE_BY_NAME[result]


@pytest.mark.oracle
def test_promotion_rejects_non_dtypes():
    with pytest.raises(TypeError):
        promote_types(odt.float32, torch.float32)
    with pytest.raises(TypeError):
        can_cast("float32", odt.float32)


# ---------------------------------------------------------------------------
# result type

def test_scalar_dtype():
    assert scalar_dtype(True) is odt.bool
    assert scalar_dtype(3) is odt.int64
    assert scalar_dtype(2.5) is odt.float64
    assert scalar_dtype(1j) is odt.complex128
    with pytest.raises(TypeError):
        scalar_dtype("3")
    with pytest.raises(TypeError):
        scalar_dtype(None)


@pytest.mark.oracle
def test_result_type_tensor_pairs(default_dtype):
    for a, b in PAIRS:
        for pa, pb in itertools.product((DIMENSIONED, ZERO_DIM), repeat=2):
            expected = torch_result(torch.result_type(torch_operand(a, pa), torch_operand(b, pb)))
            assert result_type_of([(a, pa), (b, pb)]) is expected, (a, pa, b, pb)
            assert promote_pair(a, pa, b, pb) is expected, (a, pa, b, pb)


@pytest.mark.oracle
def test_result_type_tensor_and_scalar(default_dtype):
    for d, value, prio in itertools.product(ALL_DTYPES, SCALARS, (DIMENSIONED, ZERO_DIM)):
        t = torch_operand(d, prio)
        s = scalar_dtype(value)
        expected = torch_result(torch.result_type(t, value))
        assert torch_result(torch.result_type(value, t)) is expected
        assert result_type_of([(d, prio), (s, WRAPPED)]) is expected, (d, prio, value)
        assert result_type_of([(s, WRAPPED), (d, prio)]) is expected, (d, prio, value)
        assert promote_pair(d, prio, s, WRAPPED) is expected, (d, prio, value)
        assert promote_pair(s, WRAPPED, d, prio) is expected, (d, prio, value)


@pytest.mark.oracle
def test_result_type_scalar_pairs(default_dtype):
    for x, y in itertools.product(SCALARS, repeat=2):
        if default_dtype is odt.bfloat16 and complex in (type(x), type(y)):
            continue  # torch 2.13 raises "invalid default scalar type for complex"
        expected = torch_result(torch.result_type(x, y))
        assert promote_pair(scalar_dtype(x), WRAPPED, scalar_dtype(y), WRAPPED) is expected, (x, y)


@pytest.mark.oracle
def test_result_type_through_an_operator(default_dtype):
    # torch.add runs TensorIterator's own promotion; bool - bool is rejected, so use add.
    for d, value in itertools.product(ALL_DTYPES, SCALARS):
        t = torch.zeros(2, dtype=to_torch(d))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = torch_result(torch.add(t, value).dtype)
        assert promote_pair(d, DIMENSIONED, scalar_dtype(value), WRAPPED) is got, (d, value)


@pytest.mark.oracle
def test_result_type_three_operands():
    # addcmul promotes self, tensor1 and tensor2 together in one TensorIterator;
    # meta tensors run only its meta function, so every dtype is accepted.
    checked = 0
    for a, b, c in itertools.product(ALL_DTYPES, repeat=3):
        if odt.bool in (a, b, c):
            continue  # addcmul rejects bool inputs
        for pa, pb, pc in itertools.product((DIMENSIONED, ZERO_DIM), repeat=3):
            ta, tb, tc = (torch_operand(d, p).to("meta") for d, p in ((a, pa), (b, pb), (c, pc)))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                expected = torch_result(torch.addcmul(ta, tb, tc).dtype)
            assert result_type_of([(a, pa), (b, pb), (c, pc)]) is expected, (a, pa, b, pb, c, pc)
            checked += 1
    assert checked == 11 ** 3 * 8


@pytest.mark.oracle
def test_result_type_numpy_scalars():
    # numpy scalars: ints are ints, floats are floats, and torch treats np.bool_ as a float.
    for d in ALL_DTYPES:
        t = torch.zeros(2, dtype=to_torch(d))
        for value in [np.int32(1), np.uint8(1), np.float16(1), np.float64(1), np.bool_(True), np.complex128(1j)]:
            expected = torch_result(torch.result_type(t, value))
            assert promote_pair(d, DIMENSIONED, scalar_dtype(value), WRAPPED) is expected, (d, value)
    assert scalar_dtype(np.complex64(1j)) is odt.complex128  # torch 2.13 says float (drops imag)


def test_memo_follows_default_dtype():
    assert promote_pair(odt.int32, DIMENSIONED, odt.float64, WRAPPED) is odt.float32
    assert result_type_of(((odt.int32, DIMENSIONED), (odt.complex128, WRAPPED))) is odt.complex64
    with set_default_dtypes("float64"):
        assert promote_pair(odt.int32, DIMENSIONED, odt.float64, WRAPPED) is odt.float64
        assert result_type_of(((odt.int32, DIMENSIONED), (odt.complex128, WRAPPED))) is odt.complex128
    assert promote_pair(odt.int32, DIMENSIONED, odt.float64, WRAPPED) is odt.float32


def test_result_type_errors():
    with pytest.raises(ValueError):
        result_type_of([])
    with pytest.raises(ValueError):
        result_type_of([(odt.float32, 7)])


@pytest.mark.oracle
def test_complex32_divergence():
    # torch gives complex32 here; onion has no complex32 and gives complex64.
    t = torch.zeros(2, dtype=torch.float16)
    assert torch.result_type(t, 1j) == torch.complex32
    assert promote_pair(odt.float16, DIMENSIONED, odt.complex128, WRAPPED) is odt.complex64
    assert promote_pair(odt.float16, DIMENSIONED, odt.complex128, ZERO_DIM) is odt.complex64
