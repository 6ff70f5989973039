"""Schema: the role and the *public* domain of every column (file format: ``docs/schema.md``).
Mechanisms read domains from the schema only, never from the private data: a domain read off
the data is itself a release (:meth:`Schema.infer` warns)."""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from numbers import Real
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from attrpriv._io import atomic_write_text
from attrpriv._yaml import load_yaml
from attrpriv.errors import SchemaError, offending, plain

if TYPE_CHECKING:  # numpy and pandas are imported where data is checked: reading a schema is fast
    import numpy as np
    import pandas as pd


class PrivateDomainWarning(UserWarning):
    """A domain was read from (possibly private) data, which leaks information."""


class Role(StrEnum):
    """What a column is for; a ``str`` equal to its value (``Role("sensitive")``).

    Other Parameters
    ----------------
    value : str or Role
        ``"sensitive"``, ``"quasi_identifier"``, ``"feature"``, ``"target"`` or ``"ignore"``
        (else ``ValueError``).
    names, module, qualname, type, start, boundary : optional
        :class:`enum.Enum`'s functional API; ``Role`` cannot be extended (``TypeError``).
    """

    SENSITIVE = "sensitive"
    QUASI_IDENTIFIER = "quasi_identifier"
    FEATURE = "feature"
    TARGET = "target"
    IGNORE = "ignore"


def _row(series: pd.Series, position: int) -> int:
    """The row a message names: an integer index label, else the position (never a name)."""
    import numbers

    label = plain(series.index[position])
    integral = isinstance(label, numbers.Integral) and not isinstance(label, bool)
    return int(label) if integral else position  # type: ignore[call-overload]


def _first_bad(series: pd.Series, bad: np.ndarray) -> str:
    """Where the offending values are, for error messages (the value only when shown)."""
    import numpy as np

    position = int(np.flatnonzero(bad)[0])
    count = int(bad.sum())
    if count == 1:
        return f"a value{offending(series.iloc[position], _row(series, position))}"
    return f"{count} values, the first{offending(series.iloc[position], _row(series, position))},"


@dataclass(frozen=True)
class Categorical:
    """A finite, ordered list of allowed values.

    Parameters
    ----------
    categories : tuple of hashable
        The allowed values, distinct and non-empty, in domain order (counts follow it).
    """

    categories: tuple[Hashable, ...]

    def __post_init__(self) -> None:
        cats = tuple(self.categories)
        if not cats:
            raise SchemaError("categorical domain needs at least one category, got none")
        if len(set(cats)) != len(cats):
            dupes = sorted({str(c) for c in cats if cats.count(c) > 1})
            raise SchemaError(f"categorical domain has duplicate categories: {dupes}")
        object.__setattr__(self, "categories", cats)

    @property
    def size(self) -> int:
        return len(self.categories)

    def describe(self) -> str:
        """The domain in words, for error messages.

        Returns
        -------
        str
            ``"one of [...]"`` with the first 12 categories.
        """
        shown = list(self.categories[:12])
        more = f" ... ({self.size} in all)" if self.size > 12 else ""
        return f"one of {shown}{more}"

    def outside(self, values: pd.Series) -> np.ndarray:
        """Boolean mask of non-missing values not in the domain.

        Parameters
        ----------
        values : pandas.Series
            The values of a column.

        Returns
        -------
        numpy.ndarray
            True where a value is present and not a category.
        """
        import numpy as np

        return np.asarray(~values.isin(list(self.categories)) & values.notna())

    def to_dict(self) -> dict[str, Any]:
        """The domain as a schema-file mapping.

        Returns
        -------
        dict
            ``{"type": "categorical", "categories": [...]}``.
        """
        return {"type": "categorical", "categories": [_plain(c) for c in self.categories]}


@dataclass(frozen=True)
class Numeric:
    """Real numbers in the closed interval [lower, upper].

    Parameters
    ----------
    lower, upper : float
        The finite bounds, ``lower <= upper`` (not bools).
    """

    lower: float
    upper: float

    def __post_init__(self) -> None:
        _check_bounds(self.lower, self.upper)

    def describe(self) -> str:
        """The domain in words, for error messages.

        Returns
        -------
        str
            ``"a number in [lower, upper]"``.
        """
        return f"a number in [{self.lower:g}, {self.upper:g}]"

    def outside(self, values: pd.Series) -> np.ndarray:
        """Boolean mask of non-missing values outside ``[lower, upper]``.

        Parameters
        ----------
        values : pandas.Series
            The values of a numeric column.

        Returns
        -------
        numpy.ndarray
            True where a value is present and out of bounds.
        """
        import numpy as np

        numbers = values.to_numpy(dtype=float, na_value=np.nan)
        with np.errstate(invalid="ignore"):
            return (numbers < self.lower) | (numbers > self.upper)

    def to_dict(self) -> dict[str, Any]:
        """The domain as a schema-file mapping.

        Returns
        -------
        dict
            ``{"type": "numeric", "lower": lower, "upper": upper}``.
        """
        return {"type": "numeric", "lower": self.lower, "upper": self.upper}


@dataclass(frozen=True)
class Integer:
    """Integers in the closed range [lower, upper]; its values double as categories.

    Parameters
    ----------
    lower, upper : int
        The finite integral bounds (``0.0`` accepted), ``lower <= upper``.
    """

    lower: int
    upper: int

    def __post_init__(self) -> None:
        _check_bounds(self.lower, self.upper)
        for bound in (self.lower, self.upper):
            if not float(bound).is_integer():
                raise SchemaError(f"integer domain bounds must be integers, got {bound!r}")
        object.__setattr__(self, "lower", int(self.lower))
        object.__setattr__(self, "upper", int(self.upper))

    @property
    def size(self) -> int:
        return self.upper - self.lower + 1

    @property
    def categories(self) -> tuple[int, ...]:
        return tuple(range(self.lower, self.upper + 1))

    def describe(self) -> str:
        """The domain in words, for error messages.

        Returns
        -------
        str
            ``"an integer in [lower, upper]"``.
        """
        return f"an integer in [{self.lower}, {self.upper}]"

    def outside(self, values: pd.Series) -> np.ndarray:
        """Boolean mask of non-missing values that are not integers in ``[lower, upper]``.

        Parameters
        ----------
        values : pandas.Series
            The values of a numeric column (``3.0`` counts as ``3``).

        Returns
        -------
        numpy.ndarray
            True where a value is present and out of bounds or not integral.
        """
        import numpy as np

        numbers = values.to_numpy(dtype=float, na_value=np.nan)
        with np.errstate(invalid="ignore"):
            bad = (numbers < self.lower) | (numbers > self.upper) | (numbers != np.round(numbers))
        return np.asarray(bad & ~np.isnan(numbers))

    def to_dict(self) -> dict[str, Any]:
        """The domain as a schema-file mapping.

        Returns
        -------
        dict
            ``{"type": "integer", "lower": lower, "upper": upper}``.
        """
        return {"type": "integer", "lower": self.lower, "upper": self.upper}


Domain = Categorical | Numeric | Integer


def _check_bounds(lower: float, upper: float) -> None:
    for bound in (lower, upper):
        if isinstance(bound, bool) or not isinstance(bound, Real):
            raise SchemaError(f"domain bounds must be numbers, got {bound!r}")
        try:
            finite = math.isfinite(float(bound))
        except OverflowError:
            finite = False
        if not finite:
            raise SchemaError(f"domain bounds must be finite, got {bound!r}")
    if lower > upper:
        raise SchemaError(f"domain lower bound {lower!r} is above its upper bound {upper!r}")


def _plain(value: Any) -> Any:
    """numpy scalars to Python scalars, so that schemas serialise cleanly."""
    import numpy as np

    return value.item() if isinstance(value, np.generic) else value


def domain_from_dict(spec: Mapping[str, Any], column: str) -> Domain:
    """Parse ``{"type": "categorical"|"numeric"|"integer", ...}``."""
    if not isinstance(spec, Mapping):
        raise SchemaError(f"column {column!r}: domain must be a mapping, got {spec!r}")
    kind = spec.get("type")
    expected = {"categorical": {"categories"}, "numeric": {"lower", "upper"}}
    expected["integer"] = expected["numeric"]
    if not isinstance(kind, str) or kind not in expected:
        raise SchemaError(
            f"column {column!r}: domain type must be one of {sorted(expected)}, got {kind!r}"
        )
    keys = set(spec) - {"type"}
    if keys != expected[kind]:
        raise SchemaError(
            f"column {column!r}: {kind} domain needs keys {sorted(expected[kind])}, "
            f"got {sorted(keys, key=str)}"
        )
    try:
        if kind == "categorical":
            cats = spec["categories"]
            if isinstance(cats, (str, bytes)) or not isinstance(cats, Sequence):
                raise SchemaError(f"categories must be a list, got {cats!r}")
            return Categorical(tuple(cats))
        if kind == "integer":
            return Integer(spec["lower"], spec["upper"])
        return Numeric(spec["lower"], spec["upper"])
    except (SchemaError, TypeError) as exc:
        raise SchemaError(f"column {column!r}: {exc}") from None


@dataclass(frozen=True)
class Column:
    """One column: its name, role and public domain (``None`` only for ignored columns).

    Parameters
    ----------
    name : str
        The column's name in the data (non-empty).
    role : Role or str
        What the column is for.
    domain : Categorical, Numeric, Integer or None, optional
        The column's public domain; ``None`` (the default) only for role ``ignore``.
    nullable : bool, optional
        Whether the column may hold missing values (default False).
    description : str, optional
        Free text about the column.
    """

    name: str
    role: Role
    domain: Domain | None = None
    nullable: bool = False
    description: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise SchemaError(f"column names must be non-empty strings, got {self.name!r}")
        try:
            object.__setattr__(self, "role", Role(self.role))
        except ValueError:
            roles = [r.value for r in Role]
            raise SchemaError(
                f"column {self.name!r}: role must be one of {roles}, got {self.role!r}"
            ) from None
        if self.domain is None and self.role is not Role.IGNORE:
            raise SchemaError(f"column {self.name!r}: a {self.role.value} column needs a domain")
        if not isinstance(self.nullable, bool):
            raise SchemaError(f"column {self.name!r}: nullable must be true or false")

    def to_dict(self) -> dict[str, Any]:
        """The column's spec as in a schema file (without its name, the key it is stored under).

        Returns
        -------
        dict
            ``{"role": ...}`` with ``"domain"``, ``"nullable"`` and ``"description"`` where set.
        """
        out: dict[str, Any] = {"role": self.role.value}
        if self.domain is not None:
            out["domain"] = self.domain.to_dict()
        if self.nullable:
            out["nullable"] = True
        if self.description:
            out["description"] = self.description
        return out

    def validate(self, values: pd.Series) -> None:
        """Raise :class:`SchemaError` naming this column and the first bad value.

        Parameters
        ----------
        values : pandas.Series
            The column's values.

        Raises
        ------
        SchemaError
            A disallowed missing value, a non-numeric dtype, or a value outside the domain.
        """
        import numpy as np
        import pandas as pd

        if self.domain is None:  # an ignored column without a domain: anything goes
            return
        missing = np.asarray(values.isna())
        if missing.any() and not self.nullable:
            row = _row(values, int(np.flatnonzero(missing)[0]))
            # no count: how many values are missing is a private statistic, not an error's
            what = "only missing values" if missing.all() else "missing values"
            raise SchemaError(
                f"column {self.name!r} has {what} (first at row {row}); the schema does not "
                "allow missing values (set nullable: true)"
            )
        if isinstance(self.domain, (Numeric, Integer)) and not (
            pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)
        ):
            raise SchemaError(
                f"column {self.name!r} must be numeric for its domain "
                f"({self.domain.describe()}), got dtype {values.dtype}"
            )
        bad = self.domain.outside(values)
        if bad.any():
            raise SchemaError(
                f"column {self.name!r} has {_first_bad(values, bad)} outside its domain: "
                f"expected {self.domain.describe()}"
            )


_META_KEYS = ("name", "description", "source", "licence")


@dataclass(frozen=True)
class Schema:
    """The columns of a dataset, in order, with their roles and public domains.

    Parameters
    ----------
    columns : tuple of Column
        The columns, in order: at least one, with distinct names.
    name, description, source, licence : str, optional
        The dataset's metadata.
    inferred : tuple of str, optional
        The columns whose domains were read off the data; releases on them say so.
    """

    columns: tuple[Column, ...]
    name: str = ""
    description: str = ""
    source: str = ""
    licence: str = ""
    inferred: tuple[str, ...] = ()
    _index: dict[str, Column] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        cols = tuple(self.columns)
        if not cols:
            raise SchemaError("a schema needs at least one column")
        index: dict[str, Column] = {}
        for col in cols:
            if not isinstance(col, Column):
                raise SchemaError(f"schema columns must be Column objects, got {col!r}")
            if col.name in index:
                raise SchemaError(f"column {col.name!r} appears twice in the schema")
            index[col.name] = col
        object.__setattr__(self, "columns", cols)
        object.__setattr__(self, "_index", index)
        inferred = tuple(self.inferred)
        if any(name not in index for name in inferred):
            raise SchemaError(f"inferred names columns not in the schema: {list(inferred)}")
        object.__setattr__(self, "inferred", inferred)

    def __repr__(self) -> str:
        roles = [f"{role.value} {', '.join(names)}" for role in Role
                 if role is not Role.FEATURE and (names := self.with_role(role))]  # fmt: skip
        named = f"{self.name}: " if self.name else ""
        inferred = f"; {len(self.inferred)} domains read off data" if self.inferred else ""
        described = "; ".join(roles) or "all features"
        return f"Schema({named}{len(self.columns)} columns; {described}{inferred})"

    def _repr_html_(self) -> str:
        """A table of the columns (name, role, public domain, missing values allowed)."""
        from attrpriv._display import html_grid

        marked = set(self.inferred)
        rows = [
            (
                c.name,
                c.role.value,
                "-" if c.domain is None else c.domain.describe(),
                "yes" if c.nullable else "no",
                "read off the data" if c.name in marked else "declared",
            )
            for c in self.columns
        ]
        note = (
            f"{len(marked)} domains were read off the data (not public facts): review them"
            if marked
            else ""
        )
        title = f"Schema {self.name}" if self.name else "Schema"
        return html_grid(("column", "role", "domain", "missing values", "domain from"), rows,
                         title=title, note=note)  # fmt: skip

    # -- access ---------------------------------------------------------------------------
    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._index)

    def __contains__(self, name: object) -> bool:
        return name in self._index

    def __getitem__(self, name: str) -> Column:
        try:
            return self._index[name]
        except KeyError:
            raise SchemaError(
                f"column {name!r} is not in the schema; columns are {list(self.names)}"
            ) from None

    def domain(self, name: str) -> Domain:
        """The public domain of column ``name``.

        Parameters
        ----------
        name : str
            A column of the schema.

        Returns
        -------
        Categorical, Numeric or Integer
            The column's domain.

        Raises
        ------
        SchemaError
            ``name`` is not in the schema, or the column has no domain.
        """
        dom = self[name].domain
        if dom is None:
            raise SchemaError(f"column {name!r} has no domain (its role is 'ignore')")
        return dom

    def with_role(self, role: Role | str) -> tuple[str, ...]:
        """Names of the columns with ``role``, in schema order.

        Parameters
        ----------
        role : Role or str
            A role, or its value.

        Returns
        -------
        tuple of str
            The names of the columns with that role.
        """
        wanted = Role(role)
        return tuple(c.name for c in self.columns if c.role is wanted)

    @property
    def sensitive(self) -> tuple[str, ...]:
        return self.with_role(Role.SENSITIVE)

    @property
    def features(self) -> tuple[str, ...]:
        return self.with_role(Role.FEATURE)

    @property
    def target(self) -> str | None:
        targets = self.with_role(Role.TARGET)
        return targets[0] if targets else None

    def select(self, names: Iterable[str]) -> Schema:
        """A schema with only ``names`` (in the given order), keeping its metadata.

        Parameters
        ----------
        names : iterable of str
            Columns of the schema, each at most once.

        Returns
        -------
        Schema
            The chosen columns.
        """
        chosen = tuple(self[n] for n in names)
        kept = tuple(c.name for c in chosen if c.name in self.inferred)
        return Schema(chosen, self.name, self.description, self.source, self.licence, kept)

    def inferred_among(self, names: Iterable[str]) -> tuple[str, ...]:
        """Those of ``names`` whose domains were read off the data, in schema order.

        Parameters
        ----------
        names : iterable of str
            Column names (names not in the schema are ignored).

        Returns
        -------
        tuple of str
            The names of ``names`` that are in :attr:`inferred`.
        """
        wanted = set(names)
        return tuple(n for n in self.inferred if n in wanted)

    # -- validation -----------------------------------------------------------------------
    def validate(self, data: pd.DataFrame, *, allow_extra: bool = False) -> None:
        """Raise :class:`SchemaError` with a one-line message if ``data`` does not fit.

        Parameters
        ----------
        data : pandas.DataFrame
            The data, with every schema column; labels are compared as strings.
        allow_extra : bool, optional
            Accept columns of ``data`` that are not in the schema (default False).

        Raises
        ------
        SchemaError
            No rows, a missing or extra column, or a column's values do not fit it.
        """
        import pandas as pd

        if not isinstance(data, pd.DataFrame):
            raise SchemaError(f"data must be a pandas DataFrame, got {type(data).__name__}")
        if len(data) == 0:
            raise SchemaError("data has no rows")
        present: dict[str, Hashable] = {}
        for label in data.columns:
            if str(label) in present:
                raise SchemaError(f"column {str(label)!r} appears twice in the data")
            present[str(label)] = label
        for name in self.names:
            if name not in present:
                raise SchemaError(f"column {name!r} is in the schema but not in the data")
        if not allow_extra:
            for label in data.columns:
                if str(label) not in self._index:
                    raise SchemaError(
                        f"column {label!r} is in the data but not in the schema "
                        "(declare it, with role 'ignore' to skip it)"
                    )
        for col in self.columns:
            col.validate(data[present[col.name]])

    @classmethod
    def infer(
        cls,
        data: pd.DataFrame,
        roles: Mapping[str, Role | str] | None = None,
    ) -> Schema:
        """Read roles and domains off ``data``. This leaks the domain: declare public ones instead.

        Parameters
        ----------
        data : pandas.DataFrame
            The data to read the domains from.
        roles : mapping of str to Role or str, optional
            The role of some columns, by name; the others are ``feature``.

        Returns
        -------
        Schema
            The observed domains, every column named in :attr:`inferred`.

        Warns
        -----
        PrivateDomainWarning
            Always: the domains are read off the data.
        """
        warnings.warn(
            "Schema.infer reads category lists and bounds from the data; for private data they "
            "are themselves a release. Declare public domains for anything you will protect.",
            PrivateDomainWarning,
            stacklevel=2,
        )
        roles = dict(roles or {})
        unknown = set(roles) - {str(c) for c in data.columns}
        if unknown:
            raise SchemaError(f"roles name columns not in the data: {sorted(unknown)}")
        if len(data) == 0:
            raise SchemaError("data has no rows")
        return cls(
            tuple(
                _infer_column(str(name), data[name], Role(roles.get(str(name), Role.FEATURE)))
                for name in data.columns
            ),
            inferred=tuple(str(name) for name in data.columns),
        )

    # -- serialisation --------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The schema as a schema-file mapping (the inverse of :meth:`from_dict`).

        Returns
        -------
        dict
            The metadata that is set, ``"inferred"`` and ``"columns"`` by name.
        """
        out: dict[str, Any] = {k: getattr(self, k) for k in _META_KEYS if getattr(self, k)}
        if self.inferred:
            out["inferred"] = list(self.inferred)
        out["columns"] = {c.name: c.to_dict() for c in self.columns}
        return out

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any]) -> Schema:
        """Build from ``{"name": ..., "columns": {name: {"role": ..., "domain": ...}}}``.

        Parameters
        ----------
        spec : mapping
            The schema-file mapping (``docs/schema.md``).

        Returns
        -------
        Schema
            The schema ``spec`` describes.

        Raises
        ------
        SchemaError
            ``spec`` is malformed, has unknown keys, or a column spec or domain is invalid.
        """
        if not isinstance(spec, Mapping):
            raise SchemaError(f"a schema must be a mapping, got {type(spec).__name__}")
        unknown = set(spec) - {*_META_KEYS, "columns", "inferred"}
        if unknown:
            raise SchemaError(
                f"unknown schema keys {sorted(unknown, key=str)}; expected 'columns' and "
                f"optionally {[*_META_KEYS, 'inferred']}"
            )
        columns = spec.get("columns")
        if not isinstance(columns, Mapping) or not columns:
            raise SchemaError("a schema needs 'columns': a mapping from column name to its spec")
        meta = {k: spec.get(k, "") for k in _META_KEYS}
        for key, value in meta.items():
            if not isinstance(value, str):
                raise SchemaError(f"schema {key!r} must be a string, got {value!r}")
        inferred = spec.get("inferred", [])
        if isinstance(inferred, str) or not isinstance(inferred, list):
            raise SchemaError(f"schema 'inferred' must be a list of column names, got {inferred!r}")
        cols = tuple(_column_from_dict(str(n), s) for n, s in columns.items())
        return cls(cols, **meta, inferred=tuple(str(n) for n in inferred))

    def to_json(self) -> str:
        """The schema as JSON text.

        Returns
        -------
        str
            :meth:`to_dict` as JSON, indented by 2 spaces.
        """
        return json.dumps(self.to_dict(), indent=2)

    def to_yaml(self) -> str:
        """The schema as YAML text.

        Returns
        -------
        str
            :meth:`to_dict` as YAML.
        """
        return str(yaml.safe_dump(self.to_dict(), sort_keys=False, allow_unicode=True))

    def save(self, path: str | Path) -> Path:
        """Write as YAML (``.yaml``/``.yml``) or JSON (``.json``), atomically.

        Parameters
        ----------
        path : str or pathlib.Path
            The file to write; its suffix picks the format.

        Returns
        -------
        pathlib.Path
            ``path``.
        """
        text = self.to_json() if _format_of(path) == "json" else self.to_yaml()
        return atomic_write_text(path, text)

    @classmethod
    def load(cls, path: str | Path) -> Schema:
        """Read a YAML (1.2 scalars) or JSON schema file.

        Parameters
        ----------
        path : str or pathlib.Path
            A UTF-8 file ending in ``.yaml``, ``.yml`` or ``.json``.

        Returns
        -------
        Schema
            The schema the file describes.

        Raises
        ------
        SchemaError
            The file cannot be read or does not describe a valid schema; the message names it.
        """
        target = Path(path)
        fmt = _format_of(target)
        try:
            text = target.read_text(encoding="utf-8")
        except OSError as exc:
            raise SchemaError(f"cannot read schema file {str(target)!r}: {exc.strerror}") from None
        except UnicodeDecodeError:
            raise SchemaError(f"schema file {str(target)!r} is not UTF-8 text") from None
        try:
            spec = json.loads(text, object_pairs_hook=_unique) if fmt == "json" else load_yaml(text)
        except (ValueError, yaml.YAMLError) as exc:  # JSONDecodeError is a ValueError
            first = str(exc).splitlines()[0]
            raise SchemaError(f"schema file {str(target)!r} is not valid {fmt}: {first}") from None
        try:
            return cls.from_dict(spec)
        except SchemaError as exc:
            raise SchemaError(f"schema file {str(target)!r}: {exc}") from None


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are unique (``json`` keeps the last of repeated ones)."""
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise ValueError(f"repeated key {key!r}: each key may appear once")
        found[key] = value
    return found


def _format_of(path: str | Path) -> str:
    suffix = Path(path).suffix.lower()
    if suffix in (".yaml", ".yml"):
        return "yaml"
    if suffix == ".json":
        return "json"
    raise SchemaError(f"schema file {str(path)!r} must end in .yaml, .yml or .json")


def _column_from_dict(name: str, spec: Any) -> Column:
    if not isinstance(spec, Mapping):
        raise SchemaError(f"column {name!r}: spec must be a mapping with 'role' and 'domain'")
    unknown = set(spec) - {"role", "domain", "nullable", "description"}
    if unknown:
        raise SchemaError(f"column {name!r}: unknown keys {sorted(unknown, key=str)}")
    if "role" not in spec:
        raise SchemaError(f"column {name!r}: missing 'role'")
    domain = domain_from_dict(spec["domain"], name) if spec.get("domain") is not None else None
    description = spec.get("description", "")
    if not isinstance(description, str):
        raise SchemaError(f"column {name!r}: description must be a string")
    return Column(name, spec["role"], domain, spec.get("nullable", False), description)


def _whole(values: pd.Series) -> bool:
    """Every value a finite whole number (``3.0``), as a float column holds integers."""
    import numpy as np

    numbers = values.to_numpy(dtype=float)
    return bool(np.all(np.isfinite(numbers)) and np.all(numbers == np.round(numbers)))


def _infer_column(name: str, values: pd.Series, role: Role) -> Column:
    import pandas as pd

    nullable = bool(values.isna().any())
    present = values.dropna()
    if present.empty:
        raise SchemaError(f"column {name!r} has only missing values; cannot infer its domain")
    domain: Domain
    if pd.api.types.is_bool_dtype(values) or not pd.api.types.is_numeric_dtype(values):
        domain = Categorical(tuple(sorted(pd.unique(present).tolist(), key=str)))
    elif pd.api.types.is_integer_dtype(values) or _whole(present):
        # a whole-number column with a missing value is read as float: still integers
        domain = Integer(int(present.min()), int(present.max()))
    else:
        domain = Numeric(float(present.min()), float(present.max()))
    return Column(name, role, domain, nullable)
