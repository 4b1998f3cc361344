"""What every Dask test module shares: ``import onion.dask`` adds a PrivateUse2 backend fallback, which every
operator's dispatch listing then shows.  A module importing this drops it at import (collection imports them
all) and has it back for its own tests through the autouse fixture ``dask_fallback``."""
import pytest

import onion.dask


@pytest.fixture(autouse=True, scope="module")
def dask_fallback():
    fb = onion.dask._kernels.unsupported_fallback()
    yield
    fb._destroy()


def _drop_fallback_for_other_modules():
    lib = onion.dask._LIBS[-1]
    if lib._finalizer.alive:
        lib._destroy()


_drop_fallback_for_other_modules()
