"""bfloat16's NumPy dtype (from ml_dtypes) is imported when ``bfloat16.np`` is first read.

Each check runs in a fresh interpreter, since whether ml_dtypes is imported is
process state. onion.core.dtype imports nothing from onion, so it is loaded
on its own (without the package, whose import reads bfloat16.np today).
"""
import subprocess
import sys
import textwrap

import pytest

import onion.core.dtype as _dtype_module

LOAD_DTYPE_ALONE = f"""
import importlib.util, sys
import numpy as np
spec = importlib.util.spec_from_file_location("onion_dtype_alone", {_dtype_module.__file__!r})
D = importlib.util.module_from_spec(spec)
spec.loader.exec_module(D)
"""


def run(code):
    r = subprocess.run([sys.executable, "-c", LOAD_DTYPE_ALONE + textwrap.dedent(code)],
                       check=False, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_not_imported_until_np_is_read():
    run("""
        assert "ml_dtypes" not in sys.modules
        bf = D.bfloat16
        assert isinstance(bf, D.dtype) and bf in D.ALL_DTYPES and D.DTYPE_BY_NAME["bfloat16"] is bf
        assert (bf.name, bf.itemsize, bf.is_floating_point, bf.scalar_type_name) == ("bfloat16", 2, True, "BFloat16")
        assert repr(bf) == "onion.bfloat16" and type(bf).__name__ == "dtype"
        assert bf.to_complex() is D.complex64 and bf.to_real() is bf
        D.set_default_dtype(bf)
        assert D.get_default_dtype() is bf
        D.set_default_dtype(D.float32)
        # unsupported NumPy dtypes are refused without importing ml_dtypes
        for bad in (np.longdouble, np.dtype("U3"), object(), [1, 2]):
            try:
                D.from_numpy_dtype(bad)
            except TypeError:
                pass
        assert D.from_numpy_dtype("float32") is D.float32
        assert "ml_dtypes" not in sys.modules
    """)


def test_first_read_loads_and_becomes_a_plain_dtype():
    run("""
        seen = []
        loaded = D.numpy_dtypes_loaded_and_listen(seen.append)
        assert D.bfloat16 not in loaded and D.float32 in loaded and len(loaded) == len(D.ALL_DTYPES) - 1
        nd = D.bfloat16.np
        import ml_dtypes
        assert nd == np.dtype(ml_dtypes.bfloat16) and D.bfloat16.np is nd
        assert type(D.bfloat16) is D.dtype and seen == [D.bfloat16]
        assert D.from_numpy_dtype(nd) is D.bfloat16
        assert D.from_numpy_dtype(ml_dtypes.bfloat16) is D.bfloat16
        assert D.from_numpy_dtype(np.zeros(2, ml_dtypes.bfloat16).dtype) is D.bfloat16
        assert D._NP_NAMES == frozenset(d.np.name for d in D.EVERY_DTYPE)
    """)


@pytest.mark.parametrize("given", ["ml_dtypes.bfloat16", "np.zeros(1, ml_dtypes.bfloat16).dtype", "'bfloat16'"])
def test_from_numpy_dtype_loads_on_demand(given):
    # ml_dtypes imported by the caller (its arrays exist) before onion read bfloat16.np
    run(f"""
        import ml_dtypes
        assert D.from_numpy_dtype({given}) is D.bfloat16
        assert type(D.bfloat16) is D.dtype
    """)


def test_unsupported_from_ml_dtypes_is_refused():
    run("""
        import ml_dtypes
        try:
            D.from_numpy_dtype(ml_dtypes.float8_e4m3fn)
        except TypeError as e:
            assert "float8_e4m3fn" in str(e)
        else:
            raise AssertionError("float8 accepted")
    """)


def test_import_onion_does_not_import_ml_dtypes():
    """ml_dtypes (bfloat16's NumPy dtype) costs most of a cold import: it loads when a bfloat16 array is made."""
    r = subprocess.run([sys.executable, "-c", "import sys, onion; assert 'ml_dtypes' not in sys.modules"],
                       check=False, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_import_onion_does_not_import_numba():
    """numba (the compiled loops of onion.core.loops) loads on the first kernel that runs one, never on
    import: it would double a cold ``import onion``."""
    r = subprocess.run([sys.executable, "-c", "import sys, onion; onion.add(onion.ones(3), 1).sum(); "
                        "assert 'numba' not in sys.modules"], check=False, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
