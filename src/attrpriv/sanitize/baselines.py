"""Baseline sanitizers to read the decouple-and-sample trade-off against.

Drop the sensitive column (and proxies), draw it from its marginal, add input noise, or
interpolate latents. Same ``sanitize`` signature as the Sanitizer; none gives a formal
guarantee (no record, nothing charged). See docs/sanitize/evaluation.md.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from attrpriv._checks import (
    FLAG,
    NON_NEGATIVE,
    SEED,
    Rule,
    check_non_negative,
    check_positive_int,
    instance_of,
    integer,
    names,
    optional,
)
from attrpriv.data.schema import Categorical, Integer, Role, Schema
from attrpriv.dp.ledger import BudgetLedger
from attrpriv.dp.mechanism import Parameters, validated
from attrpriv.errors import InputError, offending
from attrpriv.sanitize.decoupler import GlobalDecoupler
from attrpriv.sanitize.evaluate import auc_score
from attrpriv.sanitize.images import as_images
from attrpriv.sanitize.sanitizer import (
    NO_GUARANTEE,
    BaselineDiagnostics,
    SanitizedData,
    sensitive_labels,
)


class Baseline(Parameters, ABC):
    """A baseline sanitizer: the Sanitizer's :meth:`sanitize`, with no record and no charge."""

    @validated
    def sanitize(
        self, X: Any, y_s: Any = None, *, ledger: BudgetLedger | None = None, label: str = ""
    ) -> SanitizedData:
        """The baseline's copy of ``X``; ``ledger`` is never charged (no DP output).

        Parameters
        ----------
        X : pandas.DataFrame or numpy.ndarray
            The data: a table, or images where the baseline takes them.
        y_s : array-like or str or None, optional
            The sensitive labels or their column of ``X``; None: the baseline's default.
        ledger, label : optional
            Ignored (no DP output).

        Returns
        -------
        SanitizedData
            The copy, with no record, and the baseline's diagnostics.
        """
        return self._sanitize(X, y_s)

    @abstractmethod
    def _sanitize(self, X: Any, y_s: Any) -> SanitizedData:
        """What :meth:`sanitize` returns."""


class InputNoise(Baseline):
    """Gaussian noise in input space; ``scale`` is the trade-off knob (0 = the data as given).

    Images: per-pixel noise, clipped to [0, 1]. Tables: numbers get noise scaled to their public
    range; categories are redrawn uniformly with probability ``min(1, scale)``; the sensitive
    and target/ignored columns are left alone. No formal guarantee (seeded numpy noise).

    Parameters
    ----------
    scale : float
        Noise level >= 0: pixel std, or the share of a column's public range used as std.
    schema : Schema or None, optional
        Roles and public domains; required for a DataFrame.
    seed : int, optional
        Seeds the numpy generator (an integer >= 0).
    drop_sensitive : bool, optional
        Tables: leave the sensitive column(s) out of the output.
    """

    _constraints: ClassVar[Mapping[str, Rule]] = {
        "scale": NON_NEGATIVE,
        "schema": optional(instance_of(Schema, "an attrpriv Schema")),
        "seed": SEED,
        "drop_sensitive": FLAG,
    }

    def __init__(
        self,
        scale: float,
        *,
        schema: Schema | None = None,
        seed: int = 0,
        drop_sensitive: bool = False,
    ) -> None:
        self.scale = scale
        self.schema = schema
        self.seed = seed
        self.drop_sensitive = drop_sensitive

    def _sanitize(self, X: Any, y_s: Any) -> SanitizedData:
        """Noisy copy of ``X``; ``y_s`` (a sensitive column, else the schema's) is left alone."""
        scale = check_non_negative(self.scale, "scale")
        rng = np.random.default_rng(check_positive_int(self.seed, "seed", minimum=0))
        _, column = sensitive_labels(None, X, y_s)
        data: pd.DataFrame | np.ndarray
        changed: list[str] = []
        dropped: list[str] = []
        if isinstance(X, pd.DataFrame):
            data, changed = self._table(X, scale, column, rng)
            if self.drop_sensitive:
                assert self.schema is not None  # _table refuses a table without one
                kept = {column} if column is not None else set(self.schema.sensitive)
                dropped = [c for c in data.columns if c in kept]
                data = data.drop(columns=dropped)
        else:
            images = as_images(X)
            noisy = np.clip(images + rng.normal(0.0, scale, images.shape), 0.0, 1.0)
            data = noisy.astype(np.float32).reshape(np.shape(X))
        diagnostics = BaselineDiagnostics(baseline="input-noise", rows=len(data), scale=scale,
                                          perturbed_columns=tuple(changed),
                                          dropped=tuple(dropped))  # fmt: skip
        return SanitizedData(data, None, None, diagnostics)

    def _table(
        self, X: pd.DataFrame, scale: float, column: str | None, rng: np.random.Generator
    ) -> tuple[pd.DataFrame, list[str]]:
        if self.schema is None:
            raise InputError("InputNoise needs schema= (public domains) to perturb a DataFrame")
        keep = {column} if column is not None else set(self.schema.sensitive)
        out, changed = X.copy(), []
        for col in self.schema.columns:
            if (
                col.name not in X.columns
                or col.domain is None
                or col.role in (Role.TARGET, Role.IGNORE)
                or col.name in keep
            ):
                continue
            series = X[col.name]
            if isinstance(col.domain, Categorical):
                out[col.name] = _replace_categories(series, col.domain, min(1.0, scale), rng)
            else:
                lo, hi = float(col.domain.lower), float(col.domain.upper)
                values = pd.to_numeric(series).to_numpy(dtype=float, na_value=np.nan)
                noisy = np.clip(values + rng.normal(0.0, scale * (hi - lo), len(values)), lo, hi)
                if isinstance(col.domain, Integer):
                    noisy = np.round(noisy)
                out[col.name] = pd.Series(noisy, index=X.index).astype(series.dtype)
            changed.append(col.name)
        return out, changed


def _replace_categories(
    series: pd.Series, domain: Categorical, share: float, rng: np.random.Generator
) -> pd.Series:
    """Each value replaced with probability ``share`` by a uniform public category."""
    cats = np.empty(domain.size, dtype=object)
    cats[:] = list(domain.categories)
    values = series.to_numpy(dtype=object, copy=True)
    hit = rng.random(len(values)) < share
    values[hit] = cats[rng.integers(0, domain.size, len(values))[hit]]
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        extra = [c for c in domain.categories if c not in dtype.categories]
        categorical = pd.Categorical(
            values, categories=[*dtype.categories, *extra], ordered=dtype.ordered
        )
        return pd.Series(categorical, index=series.index, name=series.name)
    return pd.Series(values, index=series.index, name=series.name).astype(dtype)


class LatentInterpolation(Baseline):
    """Latent interpolation of a fitted decoupler: ``z~ = z + strength * (mean_j - mean_i)``.

    Moves each record's full latent from its class mean towards that of a class j drawn
    uniformly, then decodes. No formal guarantee: the record's own latent is released shifted.

    Parameters
    ----------
    decoupler : GlobalDecoupler
        A fitted (or loaded) decoupler.
    strength : float, optional
        How far to move, >= 0: 1 the paper's baseline, 0 the plain reconstruction.
    seed : int, optional
        Seeds the numpy generator drawing each record's class j (an integer >= 0).
    """

    _constraints: ClassVar[Mapping[str, Rule]] = {
        "decoupler": instance_of(GlobalDecoupler, "a GlobalDecoupler"),
        "strength": NON_NEGATIVE,
        "seed": SEED,
    }

    def __init__(self, decoupler: GlobalDecoupler, strength: float = 1.0, *, seed: int = 0) -> None:
        self.decoupler = decoupler
        self.strength = strength
        self.seed = seed

    @validated
    def fit(self, X_aux: Any, y_aux: Any = None) -> LatentInterpolation:
        """Per-class means of the full latent over auxiliary data (``class_means_``).

        Parameters
        ----------
        X_aux : pandas.DataFrame or numpy.ndarray
            The auxiliary (public) data, as ``decoupler.encode`` takes it.
        y_aux : array-like or str or None, optional
            Labels, or their column of ``X_aux``; ``None``: the decoupler's sensitive column.

        Returns
        -------
        LatentInterpolation
            The interpolation itself, fitted (at least 2 classes are needed).
        """
        labels = self._labels(X_aux, y_aux, "y_aux")
        if pd.isna(labels).any():
            raise InputError("y_aux has missing labels; every auxiliary row needs its label")
        classes = sorted(pd.unique(labels), key=str)
        if len(classes) < 2:
            raise InputError(f"y_aux needs at least 2 classes, got {classes}")
        self.classes_ = np.empty(len(classes), dtype=object)
        self.classes_[:] = classes
        z, _ = self._latent(X_aux)
        codes = self._codes(labels)
        self.class_means_ = np.stack([z[codes == c].mean(axis=0) for c in range(len(classes))])
        return self

    def interpolate(self, z: Any, y_s: Any) -> tuple[np.ndarray, np.ndarray]:
        """(moved latents, the class each row was moved to) for latents ``z`` of class ``y_s``.

        Parameters
        ----------
        z : array-like
            Full latents (z_S then z_NS), of shape (n, m).
        y_s : array-like
            The fitted class of each row, shape (n,).

        Returns
        -------
        moved : numpy.ndarray
            The moved latents, float64 of shape (n, m).
        classes : numpy.ndarray
            The class j each row was moved to, shape (n,).
        """
        strength = check_non_negative(self.strength, "strength")
        rng = np.random.default_rng(check_positive_int(self.seed, "seed", minimum=0))
        means = self._means()
        latents = np.array(z, dtype=np.float64)
        if latents.ndim != 2 or latents.shape[1] != means.shape[1]:
            raise InputError(f"z must have shape (n, {means.shape[1]}), got {latents.shape}")
        labels = np.asarray(y_s, dtype=object)
        if labels.shape != (len(latents),):
            raise InputError(f"y_s must have one label per row of z ({len(latents)})")
        source = self._codes(labels)
        target = rng.integers(0, len(means), len(latents))
        moved = latents + strength * (means[target] - means[source])
        return moved, self.classes_[target]

    def _sanitize(self, X: Any, y_s: Any) -> SanitizedData:
        """Encode, move every latent to a random class, decode (``y_s``: labels or column)."""
        labels = self._labels(X, y_s, "y_s")
        self._means()
        z, k = self._latent(X)
        moved, target = self.interpolate(z, labels)
        rng = np.random.default_rng(int(self.seed))  # decoded as the sanitizer decodes
        data = self.decoupler.decode(moved[:, :k], moved[:, k:], rng=rng)
        diagnostics = BaselineDiagnostics(baseline="latent-interpolation", rows=len(z),
                                          strength=float(self.strength),
                                          classes=tuple(self.classes_),
                                          moved_share=float(np.mean(target != labels)))  # fmt: skip
        return SanitizedData(data, None, None, diagnostics)

    def _labels(self, X: Any, y_s: Any, name: str) -> np.ndarray:
        labels, _ = sensitive_labels(self.decoupler, X, y_s)
        if labels is None:
            raise InputError(f"{name} is required: the sensitive labels, or their column of X")
        return labels

    def _latent(self, X: Any) -> tuple[np.ndarray, int]:
        """The full latent (z_S then z_NS) and the width of z_S."""
        z_s, z_ns = self.decoupler.encode(X)
        return np.concatenate([z_s, z_ns], axis=1), z_s.shape[1]

    def _means(self) -> np.ndarray:
        if not hasattr(self, "class_means_"):
            raise InputError("this LatentInterpolation is not fitted: call fit(X_aux, y_aux)")
        means: np.ndarray = self.class_means_
        return means

    def _codes(self, labels: np.ndarray) -> np.ndarray:
        codes = pd.Index(self.classes_).get_indexer(pd.Index(labels))
        if (codes < 0).any():
            raise InputError(
                f"y_s has a label{offending(labels[codes < 0][0])} not among the classes fitted "
                f"on the auxiliary data {list(self.classes_)}"
            )
        return np.asarray(codes)


# ---------------------------------------------------------------------------- simple baselines
def rank_proxies(
    X_aux: pd.DataFrame,
    sensitive: str,
    *,
    exclude: Iterable[str] = (),
    folds: int = 5,
    bins: int = 10,
    seed: int = 0,
) -> pd.Series:
    """Cross-fitted AUC of each column alone for ``sensitive``, on auxiliary data, strongest first.

    ``exclude`` columns are not ranked; ``folds`` and ``bins`` (quantile bins of a numeric
    column) are >= 2; ``seed`` seeds the folds. Returns a Series column -> AUC.
    """
    if sensitive not in X_aux.columns:
        raise InputError(f"sensitive column {sensitive!r} is not a column of the data")
    k = check_positive_int(folds, "folds", minimum=2)
    cuts = check_positive_int(bins, "bins", minimum=2)
    labels = X_aux[sensitive].astype(object).to_numpy()
    if pd.isna(labels).any():
        raise InputError(f"sensitive column {sensitive!r} has missing values")
    classes = np.array(sorted(pd.unique(labels), key=str), dtype=object)
    if classes.size < 2 or len(X_aux) < k:
        raise InputError(f"ranking proxies needs two classes and at least {k} rows")
    onehot = (labels[:, None] == classes[None, :]).astype(float)
    fold = np.random.default_rng(check_positive_int(seed, "seed", minimum=0)).permutation(
        len(X_aux)) % k  # fmt: skip
    skip = {sensitive, *exclude}
    power = {}
    for name in (c for c in X_aux.columns if c not in skip):
        cells = _cells(X_aux[name], cuts)
        n_cells = int(cells.max()) + 1
        proba = np.zeros_like(onehot)
        for f in range(k):
            train, test = fold != f, fold == f
            counts = np.zeros((n_cells, classes.size))
            np.add.at(counts, cells[train], onehot[train])
            shares = (counts + 1.0) / (counts.sum(axis=1, keepdims=True) + classes.size)
            proba[test] = shares[cells[test]]
        power[name] = auc_score(labels, proba, classes).attack
    return pd.Series(power, dtype=float).sort_values(ascending=False, kind="stable")


def _cells(series: pd.Series, bins: int) -> np.ndarray:
    """Integer cell per row: a category or a quantile bin; a missing value is a cell of its own."""
    if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
        values = pd.to_numeric(series).to_numpy(dtype=float, na_value=np.nan)
        finite = values[np.isfinite(values)]
        edges = np.unique(np.quantile(finite, np.linspace(0, 1, bins + 1)[1:-1])) if finite.size \
            else np.array([])  # fmt: skip
        codes = np.searchsorted(edges, values, side="right")
        return np.where(np.isfinite(values), codes, edges.size + 1).astype(np.int64)
    codes = pd.Categorical(series.astype(object)).codes.astype(np.int64)
    return np.where(codes < 0, codes.max(initial=0) + 1, codes)


def _fitted_column(model: Any, attribute: str, X: Any, y_s: Any) -> str:
    """The sensitive column of ``X`` (``y_s``, default the fitted one) for a fitted ``model``."""
    what = type(model).__name__
    if not hasattr(model, attribute):
        raise InputError(f"this {what} is not fitted: call fit(X_aux, y_s)")
    return _sensitive_column(X, model.sensitive_column_ if y_s is None else y_s, what)


def _sensitive_column(X: Any, y_s: Any, what: str) -> str:
    if not isinstance(X, pd.DataFrame):
        raise InputError(f"{what} works on a table (a DataFrame)")
    if not isinstance(y_s, str):
        raise InputError(f"{what} needs y_s: the name of the sensitive column")
    if y_s not in X.columns:
        raise InputError(f"sensitive column {y_s!r} is not a column of the data")
    return y_s


class DropSensitive(Baseline):
    """Baseline: the data less the sensitive column ``y_s`` and the further ``columns``."""

    _constraints: ClassVar[Mapping[str, Rule]] = {
        "columns": names(),
    }

    def __init__(self, columns: Iterable[str] = ()) -> None:
        self.columns = columns

    def _sanitize(self, X: Any, y_s: Any) -> SanitizedData:
        """``X`` without its sensitive column ``y_s`` (and ``columns``)."""
        column = _sensitive_column(X, y_s, "DropSensitive")
        dropped = [column, *(c for c in self.columns if c in X.columns and c != column)]
        diagnostics = BaselineDiagnostics(
            baseline="drop-sensitive", rows=len(X), dropped=tuple(dropped)
        )
        return SanitizedData(X.drop(columns=dropped), None, None, diagnostics)


class DropProxies(Baseline):
    """Baseline: drop the sensitive column and its ``k`` strongest auxiliary-data proxies.

    ``keep`` columns (the task's target) are never dropped; ``seed`` seeds the ranking's folds.
    """

    _constraints: ClassVar[Mapping[str, Rule]] = {
        "k": integer(0),
        "keep": names(),
        "seed": SEED,
    }

    def __init__(self, k: int = 3, *, keep: Iterable[str] = (), seed: int = 0) -> None:
        self.k = k
        self.keep = keep
        self.seed = seed

    @validated
    def fit(self, X_aux: pd.DataFrame, y_s: str) -> DropProxies:
        """Rank the proxies of column ``y_s`` on ``X_aux``; keep the top ``k`` (``proxies_``)."""
        k = check_positive_int(self.k, "k", minimum=0)
        column = _sensitive_column(X_aux, y_s, "DropProxies")
        ranking = rank_proxies(X_aux, column, exclude=tuple(self.keep), seed=self.seed)
        self.sensitive_column_ = column
        self.ranking_ = ranking
        self.proxies_ = tuple(str(c) for c in ranking.index[:k])
        return self

    def _sanitize(self, X: Any, y_s: Any) -> SanitizedData:
        """``X`` without the sensitive column (default: the fitted one) and proxies."""
        column = _fitted_column(self, "proxies_", X, y_s)
        dropped = [column, *(c for c in self.proxies_ if c in X.columns)]
        diagnostics = BaselineDiagnostics(
            baseline="drop-proxies", rows=len(X), dropped=tuple(dropped),
            proxy_auc={c: float(self.ranking_[c]) for c in self.proxies_},
        )  # fmt: skip
        return SanitizedData(X.drop(columns=dropped), None, None, diagnostics)


class MarginalDraw(Baseline):
    """Baseline: the sensitive column redrawn from its auxiliary marginal."""

    _constraints: ClassVar[Mapping[str, Rule]] = {
        "seed": SEED,
    }

    def __init__(self, *, seed: int = 0) -> None:
        self.seed = seed

    @validated
    def fit(self, X_aux: pd.DataFrame, y_s: str) -> MarginalDraw:
        """The class shares of column ``y_s`` on the auxiliary data ``X_aux``."""
        column = _sensitive_column(X_aux, y_s, "MarginalDraw")
        shares = X_aux[column].astype(object).value_counts(normalize=True, dropna=True)
        if shares.empty:
            raise InputError(f"sensitive column {column!r} has no value to draw from")
        shares = shares.sort_index(key=lambda idx: idx.map(str))
        self.sensitive_column_ = column
        self.classes_ = np.array(shares.index, dtype=object)
        self.shares_ = shares.to_numpy(dtype=float)
        return self

    def _sanitize(self, X: Any, y_s: Any) -> SanitizedData:
        """``X`` with its sensitive column drawn from the fitted marginal (labels as ``y_s``)."""
        column = _fitted_column(self, "shares_", X, y_s)
        rng = np.random.default_rng(check_positive_int(self.seed, "seed", minimum=0))
        drawn = self.classes_[rng.choice(len(self.classes_), size=len(X), p=self.shares_)]
        out = X.copy()
        out[column] = pd.Series(drawn, index=X.index).astype(X[column].dtype)
        diagnostics = BaselineDiagnostics(
            baseline="marginal-draw",
            rows=len(X),
            classes=tuple(str(c) for c in self.classes_),
            shares=tuple(self.shares_.tolist()),
        )
        return SanitizedData(out, np.asarray(drawn, dtype=object), None, diagnostics)


__all__ = [
    "NO_GUARANTEE",
    "Baseline",
    "BaselineDiagnostics",
    "DropProxies",
    "DropSensitive",
    "InputNoise",
    "LatentInterpolation",
    "MarginalDraw",
    "rank_proxies",
]
