"""attrpriv: attribute privacy for tabular data."""

from attrpriv.data.schema import Categorical, Column, Integer, Numeric, Role, Schema
from attrpriv.errors import AttrprivError, BudgetExceededError, InputError, SchemaError

__version__ = "0.1.0"

__all__ = [
    "AttrprivError",
    "BudgetExceededError",
    "Categorical",
    "Column",
    "InputError",
    "Integer",
    "Numeric",
    "Role",
    "Schema",
    "SchemaError",
    "__version__",
]
