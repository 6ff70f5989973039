"""The Sanitizer pipeline: encode, replace z_S with a local sampler's draws, decode.

The decoupler (trained on public auxiliary data) is fixed; only the sampler touches the private
data's sensitive latents and labels, and the privacy record is the sampler's. The non-sensitive
latents z_NS pass through unchanged: the record's guarantee covers z_S and y_S only.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, NoReturn, Protocol

import numpy as np
import pandas as pd

from attrpriv._checks import check_choice
from attrpriv._display import html_pairs
from attrpriv._io import to_jsonable
from attrpriv.data.schema import Role, Schema
from attrpriv.dp.ledger import BudgetLedger
from attrpriv.dp.record import PrivacyRecord
from attrpriv.errors import InputError
from attrpriv.sanitize.decoupler import GlobalDecoupler
from attrpriv.sanitize.samplers import SampledLatents, with_latent_bound

OUT_OF_DOMAIN = ("clip", "refuse")
TRAINING_ROWS = ("allow", "warn", "refuse")


class LatentSampler(Protocol):
    """What a local sampler offers (Suppression, DPObfuscation, DPSampling)."""

    def sample(
        self, z_s: Any, y_s: Any, *, ledger: BudgetLedger | None = None, label: str = ""
    ) -> SampledLatents: ...


@dataclass(frozen=True)
class SanitizedData:
    """The sanitized data, the synthetic sensitive labels (DP-sampling) and the DP record.

    Parameters
    ----------
    data : pandas.DataFrame or numpy.ndarray
        The sanitized data: a DataFrame for a tabular decoupler (or a table baseline), images
        for an image one.
    y_s : numpy.ndarray or None
        The synthetic sensitive labels a sampler drew (DP-sampling), one per row; ``None``
        when no labels were drawn.
    record : PrivacyRecord or None
        The sampler's DP record, covering z_S and y_S only; ``None`` for suppression and the
        baselines (no DP claim).
    parts : dict of str to object, optional
        Details of the run (the number of rows, the sampler's name, its parts; for a table,
        ``columns``: what became of each input column, ``clipped``: the values brought into
        their public domain per column, and ``training_rows``: how many rows were training
        rows, when checked); empty by default.
    """

    data: pd.DataFrame | np.ndarray
    y_s: np.ndarray | None
    record: PrivacyRecord | None
    parts: dict[str, Any] = field(default_factory=dict)

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
        pairs = [
            ("data", size),
            ("sensitive labels", "synthetic (drawn)" if self.y_s is not None else "none"),
            ("guarantee", claim),
            ("sampler", str(self.parts.get("sampler", "-"))),
        ]
        if self.record is not None:
            pairs.append(("protects", self.record.protects))
        return html_pairs("Sanitized data", pairs)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (the data itself goes to a Parquet/NumPy file, not to JSON).

        Returns
        -------
        dict of str to object
            ``shape`` (of the data, a list), ``columns`` (a DataFrame's column names, else
            ``None``), ``synthetic_labels`` (whether ``y_s`` is set), ``record`` (the record's
            ``to_dict()`` or ``None``) and ``parts`` (made JSON-ready).
        """
        shape = list(np.shape(self.data))
        columns = list(self.data.columns) if isinstance(self.data, pd.DataFrame) else None
        return {
            "shape": shape,
            "columns": columns,
            "synthetic_labels": self.y_s is not None,
            "record": None if self.record is None else self.record.to_dict(),
            "parts": to_jsonable(dict(self.parts)),
        }


def sensitive_labels(decoupler: Any, X: Any, y_s: Any) -> tuple[np.ndarray | None, str | None]:
    """The sensitive labels of ``X`` and the column they came from (None for given labels).

    ``y_s`` may be labels (one per row), a column name of ``X``, or None: then the decoupler's
    sensitive column when ``X`` is a DataFrame that has it, else no labels at all.
    """
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


class Sanitizer:
    """Decouple-and-sample: a fitted :class:`GlobalDecoupler` plus a local sampler.

    Parameters
    ----------
    decoupler : GlobalDecoupler
        A fitted (or loaded) decoupler, trained on public auxiliary data.
    sampler : LatentSampler
        The local sampler that replaces every record's z_S: ``Suppression``,
        ``DPObfuscation`` or ``DPSampling`` of :mod:`attrpriv.sanitize.samplers`, or any
        object with their ``sample(z_s, y_s, *, ledger, label)`` method. A DP-obfuscation
        or DP-sampling sampler whose ``bound`` is ``None`` takes the decoupler's
        ``latent_bound_`` (learned from its auxiliary data) when sanitizing; see
        :func:`~attrpriv.sanitize.samplers.with_latent_bound`.
    seed : int or None, optional
        Seeds the draw of each decoded categorical value from the decoder's law (default 0);
        None decodes each to its most likely value, which a weakly trained decoder makes one
        value in every row (post-processing either way: no privacy cost).
    """

    def __init__(
        self, decoupler: GlobalDecoupler, sampler: LatentSampler, *, seed: int | None = 0
    ) -> None:
        self.decoupler = decoupler
        self.sampler = sampler
        self.seed = seed

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

        Without ``y_s``, the decoupler's sensitive column of ``X`` is used. The ledger is charged
        by the sampler before any noise is drawn.

        Parameters
        ----------
        X : pandas.DataFrame or numpy.ndarray
            The private data, as :meth:`GlobalDecoupler.encode` takes it.
        y_s : array-like or str or None, optional
            The sensitive labels (one per row), or the name of their column of ``X``; ``None``:
            the decoupler's sensitive column when ``X`` is a DataFrame (it must then hold it),
            else no labels (a sampler that needs them refuses).
        ledger : BudgetLedger or None, optional
            Passed to the sampler, which charges it with its record before drawing.
        label : str, optional
            A free-text name for the release in the ledger.
        schema : Schema or None, optional
            The roles of a table's columns that the decoupler does not model (which ones are
            ``ignore``); default: the schema the decoupler was fitted with.
        out_of_domain : {"clip", "refuse"}, optional
            A table's values outside their public domain: ``"clip"`` (default) brings them in
            (numbers clipped to their bounds, integers rounded, an unknown category replaced
            by the training data's most frequent one) and counts them in
            ``parts["clipped"]``; ``"refuse"`` raises :class:`SchemaError` naming the column
            and row.
        keep_ignored : bool, optional
            Pass a table's columns of role ``ignore`` through unchanged (default), or drop
            them (listed in ``parts["columns"]["dropped"]``).
        training_rows : {"allow", "warn", "refuse"}, optional
            Rows that were among the decoupler's training rows
            (:meth:`GlobalDecoupler.training_rows`): ``"refuse"`` raises, ``"warn"`` warns
            (``UserWarning``), both before the sampler runs, and count them in
            ``parts["training_rows"]``; ``"allow"`` (default) does not check, as the
            evaluation sanitizes the auxiliary data on purpose (what an attacker can do).

        Returns
        -------
        SanitizedData
            The decoded data with the sampler's z_S and the unchanged z_NS; its ``y_s`` and
            ``record`` are the sampler's. A table keeps the input's column order with each
            column accounted for in ``parts["columns"]``: ``sanitized`` (the modelled
            columns, decoded), ``synthetic`` (the sensitive column, filled with the sampler's
            synthetic labels when it draws them), ``passed_through`` (role ``ignore``,
            unchanged) and ``dropped`` (column -> reason: the sensitive column when the
            sampler draws no labels, a column the decoupler does not model, a column outside
            the schema, ignored columns with ``keep_ignored=False``).

        Raises
        ------
        NotFittedError
            The decoupler is neither fitted nor loaded.
        InputError
            ``X`` does not fit the decoupler, the labels (or their column) are missing or do not
            have one label per row, an option is not one of its choices, rows were training
            rows under ``training_rows="refuse"`` (or cannot be checked), or the sampler
            refuses its input.
        SchemaError
            A value lies outside its public domain under ``out_of_domain="refuse"``.
        BudgetExceededError
            The sampler's release does not fit the ledger's budget.
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
        parts: dict[str, Any] = {"rows": len(z_s), "sampler": type(self.sampler).__name__}
        if training_rows != "allow":
            parts["training_rows"] = self._check_training_rows(X, training_rows)
        sampler = with_latent_bound(self.sampler, self.decoupler)  # bound=None: the learned one
        drawn = sampler.sample(z_s, labels, ledger=ledger, label=label)
        rng = None if self.seed is None else np.random.default_rng(int(self.seed))
        data = self.decoupler.decode(drawn.z_s, z_ns, rng=rng)
        if table:
            assert isinstance(data, pd.DataFrame)
            fitted = getattr(self.decoupler, "schema_", self.decoupler.codec_.schema)
            roles = schema if schema is not None else fitted
            data, parts["columns"] = self._assemble(
                X, data, column or self.decoupler.sensitive_column_, drawn.y_s, roles,
                keep_ignored,
            )  # fmt: skip
            parts["clipped"] = clipped
        if drawn.parts:
            parts["sampler_parts"] = {k: v for k, v in drawn.parts.items() if k != "means"}
        return SanitizedData(data, drawn.y_s, drawn.record, parts)

    def _check_training_rows(self, X: Any, mode: str) -> int:
        """How many rows of ``X`` equal a training row; raises (``refuse``) or warns when more
        of them do than chance would make (:meth:`GlobalDecoupler.training_overlap
        <attrpriv.sanitize.decoupler.GlobalDecoupler.training_overlap>`): natural duplicates
        of a coarse table are not training rows."""
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
    ) -> tuple[pd.DataFrame, dict[str, Any]]:
        """The output table in the input's column order, and what became of each column."""
        modelled = set(self.decoupler.codec_.columns)
        sampler = type(self.sampler).__name__
        out: dict[str, Any] = {}
        report: dict[str, Any] = {"sanitized": [], "synthetic": [], "passed_through": [],
                                  "dropped": {}}  # fmt: skip
        for label in X.columns:
            name = str(label)
            if name in modelled:
                out[name] = data[name]
                report["sanitized"].append(name)
            elif name == sensitive:
                if y is None:
                    report["dropped"][name] = (
                        f"the sensitive column: {sampler} draws no synthetic labels, so it is "
                        "not released"
                    )
                    continue
                out[name] = pd.Series(y, index=data.index).astype(X[label].dtype)
                report["synthetic"].append(name)
            elif name in roles and roles[name].role is Role.IGNORE:
                if not keep_ignored:
                    report["dropped"][name] = "role 'ignore': dropped on request"
                    continue
                out[name] = X[label].set_axis(data.index)
                report["passed_through"].append(name)
            elif name in roles:
                report["dropped"][name] = (
                    f"role {roles[name].role.value!r}, but the decoupler does not model it "
                    "(not a column of the schema it was trained on)"
                )
            else:
                report["dropped"][name] = (
                    "not in the schema; declare it with role 'ignore' to pass it through"
                )
        return pd.DataFrame(out, index=data.index), report
