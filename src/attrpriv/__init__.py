"""attrpriv: attribute privacy for tabular data.

The schema classes and ``Project`` are imported on first use, so that ``import attrpriv``
starts fast.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from attrpriv.errors import AttrprivError, BudgetExceededError, InputError, SchemaError

if TYPE_CHECKING:
    from attrpriv.data.schema import Categorical, Column, Integer, Numeric, Role, Schema
    from attrpriv.project import Project

__version__ = "0.1.0"

_LAZY = {
    **dict.fromkeys(("Categorical", "Column", "Integer", "Numeric", "Role", "Schema"),
                    "attrpriv.data.schema"),
    "Project": "attrpriv.project",
}  # fmt: skip

__all__ = [
    "AttrprivError",
    "BudgetExceededError",
    "Categorical",
    "Column",
    "InputError",
    "Integer",
    "Numeric",
    "Project",
    "Role",
    "Schema",
    "SchemaError",
    "__version__",
]


def __getattr__(name: str) -> Any:
    """Import the schema classes and ``Project`` on first use."""
    if name not in _LAZY:
        raise AttributeError(f"module 'attrpriv' has no attribute {name!r}")
    return getattr(import_module(_LAZY[name]), name)
