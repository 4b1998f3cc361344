"""``onion.nn`` (functional only for now)."""
from . import functional  # noqa: F401
