"""The Sanitizer pipeline: encode, replace z_S with a local sampler's draws, decode.

The record is the sampler's and covers z_S and y_S only; z_NS passes through unchanged.
See docs/sanitize/decoupler.md.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, NoReturn, Protocol

import numpy as np
import pandas as pd

from attrpriv._checks import SEED, Rule, check_choice, instance_of, optional
from attrpriv._display import html_pairs
from attrpriv._io import to_jsonable
from attrpriv.data.schema import Role, Schema
from attrpriv.dp.ledger import BudgetLedger
from attrpriv.dp.mechanism import Parameters, validated
from attrpriv.dp.record import Diagnostics, PrivacyRecord
from attrpriv.errors import InputError
from attrpriv.sanitize.decoupler import GlobalDecoupler
from attrpriv.sanitize.samplers import SampledLatents, with_latent_bound

OUT_OF_DOMAIN = ("clip", "refuse")
TRAINING_ROWS = ("allow", "warn", "refuse")
NO_GUARANTEE = "none: an empirical baseline, not a DP mechanism (seeded numpy randomness)"


class LatentSampler(Protocol):
    """What a local sampler offers (Suppression, DPObfuscation, DPSampling)."""

    def sample(
        self, z_s: Any, y_s: Any, *, ledger: BudgetLedger | None = None, label: str = ""
    ) -> SampledLatents: ...


@dataclass(frozen=True)
class ColumnAccount:
    """What became of every input column of a sanitized table: ``sanitized`` (modelled, decoded),
    ``synthetic`` (the sensitive column, the sampler's labels), ``passed_through`` (role
    ``ignore``, unchanged) and ``dropped`` (each with the reason)."""

    sanitized: tuple[str, ...] = ()
    synthetic: tuple[str, ...] = ()
    passed_through: tuple[str, ...] = ()
    dropped: Mapping[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The account as a JSON-ready dict, one entry per field."""
        return {f.name: to_jsonable(getattr(self, f.name)) for f in fields(self)}

    def summary(self) -> str:
        """The account in one line: ``"columns: 12 sanitized (decoded), ..."``."""
        said = [f"{len(self.sanitized)} sanitized (decoded)"]
        if self.synthetic:
            said.append(f"{', '.join(self.synthetic)} synthetic (the sampler's labels)")
        if self.passed_through:
            said.append(
                f"{len(self.passed_through)} passed through unchanged (role 'ignore': "
                f"{', '.join(self.passed_through)})"
            )
        dropped = "; ".join(f"{name} ({why})" for name, why in self.dropped.items())
        said.append(f"{len(self.dropped)} dropped" + (f": {dropped}" if dropped else ""))
        return "columns: " + ", ".join(said)


@dataclass(frozen=True, kw_only=True)
class SanitizerDiagnostics(Diagnostics):
    """How :meth:`Sanitizer.sanitize` made its output: ``rows``, the ``sampler`` and its own
    diagnostics, and for tables the :class:`ColumnAccount` and the values ``clipped`` per column.
    ``clipped`` and ``training_rows`` (rows equal to a decoupler training row; None: not checked)
    count private values: they are input checks, not covered by the record."""

    rows: int
    sampler: str
    sampler_diagnostics: Diagnostics = field(default_factory=Diagnostics)
    columns: ColumnAccount | None = None
    clipped: Mapping[str, int] | None = None
    training_rows: int | None = None
    training_rows_allowed: bool = False

    def summary_lines(self) -> list[str]:
        """The column account and the values clipped: two lines for a table (what ``attrpriv
        sanitize apply`` prints), none for images."""
        if self.columns is None:
            return []
        clipped = self.clipped or {}
        if not clipped:
            return [self.columns.summary(), "no value outside its public domain"]
        values = ", ".join(f"{name} {count}" for name, count in clipped.items())
        return [
            self.columns.summary(),
            f"clipped {sum(clipped.values())} values outside their public domain into it: "
            f"{values} (--strict-domain refuses them)",
        ]

    def to_dict(self) -> dict[str, Any]:
        """Every field as JSON-ready values (the nested ones as their dicts)."""
        return super().to_dict() | {
            "sampler_diagnostics": self.sampler_diagnostics.to_dict(),
            "columns": None if self.columns is None else self.columns.to_dict(),
        }


@dataclass(frozen=True, kw_only=True)
class BaselineDiagnostics(Diagnostics):
    """How a baseline (:mod:`attrpriv.sanitize.baselines`) made its output; ``guarantee``: none.
    Unused fields stay empty: ``proxy_auc`` (each dropped proxy's auxiliary AUC), the ``classes``
    moved to or drawn from with their auxiliary ``shares``, noise ``scale``, ``strength``, ..."""

    baseline: str
    rows: int
    guarantee: str = NO_GUARANTEE
    dropped: tuple[str, ...] = ()
    perturbed_columns: tuple[str, ...] = ()
    proxy_auc: Mapping[str, float] = field(default_factory=dict)
    classes: tuple[Any, ...] = ()
    shares: tuple[float, ...] = ()
    scale: float | None = None
    strength: float | None = None
    moved_share: float | None = None

    def summary_lines(self) -> list[str]:
        """The baseline and its (absent) guarantee; a second line names the columns dropped."""
        lines = [f"{self.baseline} baseline on {self.rows} rows; guarantee: {self.guarantee}"]
        if self.dropped:
            lines.append(f"dropped: {', '.join(self.dropped)}")
        return lines


@dataclass(frozen=True, eq=False)  # holds arrays
class SanitizedData:
    """The sanitized data, the synthetic sensitive labels (DP-sampling) and the DP record.

    Not a :class:`~attrpriv.dp.record.Release`: suppression and the baselines make no DP claim,
    so ``record`` may be None, and ``data`` may be images.

    Parameters
    ----------
    data : pandas.DataFrame or numpy.ndarray
        The sanitized data: a DataFrame for a table, images for an image decoupler.
    y_s : numpy.ndarray or None
        The synthetic sensitive labels a sampler drew, one per row; ``None`` if none.
    record : PrivacyRecord or None
        The sampler's DP record (z_S and y_S only); ``None``: no DP claim.
    diagnostics : Diagnostics, default Diagnostics()
        How the data was made (:class:`SanitizerDiagnostics` from the Sanitizer).
    """

    data: pd.DataFrame | np.ndarray
    y_s: np.ndarray | None
    record: PrivacyRecord | None
    diagnostics: Diagnostics = field(default_factory=Diagnostics)

    def _describe(self) -> tuple[str, str]:
        """(the data's shape in words, its guarantee in words)."""
        shape = np.shape(self.data)
        if isinstance(self.data, pd.DataFrame):
            size = f"{shape[0]} rows x {shape[1]} columns"
        else:
            size = f"{shape[0]} images of {' x '.join(str(d) for d in shape[1:])}"
        claim = "no DP claim (z_S suppressed)" if self.record is None else (
            f"{self.record.guarantee} on z_S and y_S")  # fmt: skip
        return size, claim

    def __repr__(self) -> str:
        size, claim = self._describe()
        labels = ", synthetic sensitive labels" if self.y_s is not None else ""
        return f"SanitizedData({size}{labels}; {claim})"

    def _repr_html_(self) -> str:
        size, claim = self._describe()
        made = self.diagnostics
        by = made.sampler if isinstance(made, SanitizerDiagnostics) else (
            made.baseline if isinstance(made, BaselineDiagnostics) else "-")  # fmt: skip
        pairs = [
            ("data", size),
            ("sensitive labels", "synthetic (drawn)" if self.y_s is not None else "none"),
            ("guarantee", claim),
            ("sampler", by),
        ]
        if self.record is not None:
            pairs.append(("protects", self.record.protects))
        return html_pairs("Sanitized data", pairs)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (the data itself goes to a Parquet/NumPy file, not to JSON).

        Returns
        -------
        dict of str to object
            ``shape``, ``columns``, ``synthetic_labels``, ``record``, ``diagnostics``.
        """
        shape = list(np.shape(self.data))
        columns = list(self.data.columns) if isinstance(self.data, pd.DataFrame) else None
        return {
            "shape": shape,
            "columns": columns,
            "synthetic_labels": self.y_s is not None,
            "record": None if self.record is None else self.record.to_dict(),
            "diagnostics": self.diagnostics.to_dict(),
        }


def sensitive_labels(decoupler: Any, X: Any, y_s: Any) -> tuple[np.ndarray | None, str | None]:
    """The sensitive labels of ``X`` (given, a column name, or the decoupler's) and their column."""
    column = getattr(decoupler, "sensitive_column_", None)
    if isinstance(y_s, str):
        column = y_s
    if y_s is None or isinstance(y_s, str):
        if column is None or not isinstance(X, pd.DataFrame):
            return (None, None) if y_s is None else _missing(y_s)
        if column not in X.columns:
            return _missing(column)
        return np.asarray(X[column].astype(object)), column
    labels = np.asarray(y_s, dtype=object)
    if labels.ndim != 1 or len(labels) != len(X):
        raise InputError(f"y_s must have one label per row ({len(X)}), got shape {labels.shape}")
    return labels, None


def _missing(column: str) -> NoReturn:
    raise InputError(f"sensitive column {column!r} is not a column of the data")


def _sampler(value: object, name: str) -> object:
    """``value`` if it can replace latents: it has a ``sample`` method."""
    if not callable(getattr(value, "sample", None)):
        raise InputError(
            f"{name} must be a latent sampler (with a sample method), got {type(value).__name__}"
        )
    return value


class Sanitizer(Parameters):
    """Decouple-and-sample: a fitted :class:`GlobalDecoupler` plus a local sampler.

    Guarantee: the sampler's, for z_S and y_S only. See docs/sanitize/decoupler.md.

    Parameters
    ----------
    decoupler : GlobalDecoupler
        A fitted (or loaded) decoupler, trained on public auxiliary data.
    sampler : LatentSampler
        Replaces every record's z_S; a ``None`` bound takes the decoupler's ``latent_bound_``.
    seed : int or None, optional
        Seeds the draw of decoded categories (default 0); None: the most likely value.
    """

    _constraints: ClassVar[Mapping[str, Rule]] = {
        "decoupler": instance_of(GlobalDecoupler, "a GlobalDecoupler"),
        "sampler": Rule("a latent sampler (an object with a sample method)", _sampler),
        "seed": optional(SEED),
    }

    def __init__(
        self, decoupler: GlobalDecoupler, sampler: LatentSampler, *, seed: int | None = 0
    ) -> None:
        self.decoupler = decoupler
        self.sampler = sampler
        self.seed = seed

    @validated
    def sanitize(
        self,
        X: Any,
        y_s: Any = None,
        *,
        ledger: BudgetLedger | None = None,
        label: str = "",
        schema: Schema | None = None,
        out_of_domain: str = "clip",
        keep_ignored: bool = True,
        training_rows: str = "allow",
    ) -> SanitizedData:
        """Sanitize private data ``X`` whose sensitive labels are ``y_s`` (or its column).

        Parameters
        ----------
        X : pandas.DataFrame or numpy.ndarray
            The private data, as :meth:`GlobalDecoupler.encode` takes it.
        y_s : array-like or str or None, optional
            Labels, or their column of ``X``; ``None``: the decoupler's sensitive column, if any.
        ledger, label
            Passed to the sampler, which charges ``ledger`` (entry ``label``) before drawing.
        schema : Schema or None, optional
            Roles of unmodelled columns; default the decoupler's schema.
        out_of_domain : {"clip", "refuse"}, optional
            Values outside their public domain: clip them in (counted), or raise ``SchemaError``.
        keep_ignored : bool, optional
            Pass columns of role ``ignore`` through unchanged (default), or drop them.
        training_rows : {"allow", "warn", "refuse"}, optional
            Check for the decoupler's training rows before sampling; ``"allow"`` does not check.

        Returns
        -------
        SanitizedData
            The decoded data; its :class:`SanitizerDiagnostics` account for every input column.
        """
        check_choice(out_of_domain, "out_of_domain", OUT_OF_DOMAIN)
        check_choice(training_rows, "training_rows", TRAINING_ROWS)
        table = isinstance(X, pd.DataFrame) and self.decoupler.kind == "tabular"
        clipped: dict[str, int] = {}
        encoded = X
        if table and out_of_domain == "clip" and hasattr(self.decoupler, "codec_"):
            encoded, clipped = self.decoupler.codec_.conform(X)
        z_s, z_ns = self.decoupler.encode(encoded)  # first: data of another schema says so
        labels, column = sensitive_labels(self.decoupler, X, y_s)
        trained = None
        if training_rows != "allow":
            trained = self._check_training_rows(X, training_rows)
        sampler = with_latent_bound(self.sampler, self.decoupler)  # bound=None: the learned one
        drawn = sampler.sample(z_s, labels, ledger=ledger, label=label)
        rng = None if self.seed is None else np.random.default_rng(int(self.seed))
        data = self.decoupler.decode(drawn.z_s, z_ns, rng=rng)
        account = None
        if table:
            assert isinstance(data, pd.DataFrame)
            fitted = getattr(self.decoupler, "schema_", self.decoupler.codec_.schema)
            roles = schema if schema is not None else fitted
            data, account = self._assemble(
                X, data, column or self.decoupler.sensitive_column_, drawn.y_s, roles,
                keep_ignored,
            )  # fmt: skip
        diagnostics = SanitizerDiagnostics(
            rows=len(z_s),
            sampler=type(self.sampler).__name__,
            sampler_diagnostics=drawn.diagnostics,
            columns=account,
            clipped=clipped if table else None,
            training_rows=trained,
        )
        return SanitizedData(data, drawn.y_s, drawn.record, diagnostics)

    def _check_training_rows(self, X: Any, mode: str) -> int:
        """How many rows of ``X`` equal a training row; refuses or warns beyond chance."""
        matched = int(np.count_nonzero(self.decoupler.training_rows(X)))
        verdict = self.decoupler.training_overlap(X) if matched else "disjoint"
        if verdict == "training rows" and mode == "refuse":
            raise InputError(
                "most rows equal one of the decoupler's training rows (on every column but the "
                "sensitive one), far more than chance: it must be trained on public data only, "
                "so sanitize rows it was not trained on (training_rows='allow' overrides)"
            )
        if verdict != "disjoint":
            warnings.warn(
                "more rows equal one of the decoupler's training rows than natural duplicates "
                "would make (or too few distinct values to tell): some may be training rows; "
                "the method's premise is a decoupler trained on public data only",
                UserWarning,
                stacklevel=3,
            )
        return matched

    def _assemble(
        self,
        X: pd.DataFrame,
        data: pd.DataFrame,
        sensitive: str | None,
        y: np.ndarray | None,
        roles: Schema,
        keep_ignored: bool,
    ) -> tuple[pd.DataFrame, ColumnAccount]:
        """The output table in the input's column order, and what became of each column."""
        modelled = set(self.decoupler.codec_.columns)
        sampler = type(self.sampler).__name__
        out: dict[str, Any] = {}
        sanitized: list[str] = []
        synthetic: list[str] = []
        passed: list[str] = []
        dropped: dict[str, str] = {}
        for label in X.columns:
            name = str(label)
            if name in modelled:
                out[name] = data[name]
                sanitized.append(name)
            elif name == sensitive:
                if y is None:
                    dropped[name] = (
                        f"the sensitive column: {sampler} draws no synthetic labels, so it is "
                        "not released"
                    )
                    continue
                out[name] = pd.Series(y, index=data.index).astype(X[label].dtype)
                synthetic.append(name)
            elif name in roles and roles[name].role is Role.IGNORE:
                if not keep_ignored:
                    dropped[name] = "role 'ignore': dropped on request"
                    continue
                out[name] = X[label].set_axis(data.index)
                passed.append(name)
            elif name in roles:
                dropped[name] = (
                    f"role {roles[name].role.value!r}, but the decoupler does not model it "
                    "(not a column of the schema it was trained on)"
                )
            else:
                dropped[name] = (
                    "not in the schema; declare it with role 'ignore' to pass it through"
                )
        account = ColumnAccount(tuple(sanitized), tuple(synthetic), tuple(passed), dropped)
        return pd.DataFrame(out, index=data.index), account
