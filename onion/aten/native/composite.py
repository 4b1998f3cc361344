"""CompositeImplicitAutograd bodies that belong to no other family."""
from __future__ import annotations
