"""Every codegen error names the YAML line that caused it (torchgen's ``context``)."""
from __future__ import annotations

import contextlib
from dataclasses import dataclass


class CodegenError(Exception):
    """A malformed YAML entry or generator input: the message starts with ``file:line:``."""


@dataclass(frozen=True)
class Loc:
    file: str
    line: int

    def __str__(self):
        return f"{self.file}:{self.line}"


@contextlib.contextmanager
def context(loc: Loc, what: str = ""):
    """Re-raise anything raised inside as a ``CodegenError`` that starts with ``loc``.

    An error that already names a place is passed on unchanged, so the innermost
    entry being generated is the one reported."""
    try:
        yield
    except CodegenError:
        raise
    except Exception as e:  # noqa: BLE001 - any failure, expected or not, gets the YAML line
        prefix = f"{loc}: " + (f"while generating {what}: " if what else "")
        raise CodegenError(f"{prefix}{type(e).__name__}: {e}") from e
