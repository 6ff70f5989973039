"""What proxy resampling learns from the public auxiliary data: the proxies and their conditionals.

Every model is fitted on auxiliary rows; at release they read only the context columns and
the already resampled ones. See docs/sanitize/resample.md.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.inspection import permutation_importance
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split

from attrpriv.errors import InputError
from attrpriv.stats import delong_auc

MAX_CATEGORIES = 250
"""More categories than this (gradient boosting's limit is 255) are used as ordinal codes."""
MIN_LEVEL = 10
"""A proxy value seen fewer times than this in the auxiliary data is pooled with the rare ones."""
NUMERIC_LEVELS = 20
"""A numeric proxy with more distinct values than this has at most this many levels: its
frequent values (each in at least 1 / ``NUMERIC_LEVELS`` of the rows) and quantile bins of the
rest."""
VALIDATION = 0.3
"""Share of the auxiliary rows the proxy ranking is validated on."""
EARLY_STOPPING = 200
"""Boosters fitted on at least this many rows stop early (on 15% of them held out)."""
STOP_CONFIDENCE = 0.95
"""The ranking stops when the upper end of this CI of the AUC left is at or under its target:
on a few hundred auxiliary rows a point estimate under the target is often noise."""
STOP_BOOTSTRAP = 200
"""Resamples of the validation rows behind that CI for more than two classes (two: DeLong)."""


class _Missing:
    """The level of a missing proxy value (one object, so that it can be a dict key)."""

    def __repr__(self) -> str:
        return "<missing>"


MISSING = _Missing()


def is_categorical(values: pd.Series) -> bool:
    """Whether a column is modelled as categorical: not numeric, or boolean."""
    return not pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values)


@dataclass(frozen=True)
class Feature:
    """One input column of a booster: categorical over ``categories``, or numeric (None)."""

    name: str
    categories: tuple[Hashable, ...] | None

    @property
    def native(self) -> bool:
        """Whether gradient boosting treats it as categorical (few enough categories)."""
        return self.categories is not None and len(self.categories) <= MAX_CATEGORIES


class Design:
    """Columns as a float matrix for gradient boosting, with public categories only.

    Parameters
    ----------
    features : sequence of Feature
        The columns, in order.
    """

    def __init__(self, features: Sequence[Feature]) -> None:
        self.features = tuple(features)

    @classmethod
    def learn(
        cls, aux: pd.DataFrame, columns: Sequence[str], domains: Mapping[str, Sequence[Hashable]]
    ) -> Design:
        """Categories from ``domains`` (public: the schema's), else the auxiliary values."""
        features = []
        for name in columns:
            if name in domains:
                features.append(Feature(name, tuple(domains[name])))
            elif is_categorical(aux[name]):
                features.append(Feature(name, _observed(aux[name])))
            else:
                features.append(Feature(name, None))
        return cls(features)

    @property
    def names(self) -> list[str]:
        return [f.name for f in self.features]

    @property
    def mask(self) -> list[bool]:
        """Which columns gradient boosting treats as categorical."""
        return [f.native for f in self.features]

    def matrix(self, frame: pd.DataFrame) -> np.ndarray:
        """``frame``'s columns as floats: category codes (NaN when unknown or missing), numbers."""
        out = np.empty((len(frame), len(self.features)), dtype=np.float64)
        for j, feature in enumerate(self.features):
            values = frame[feature.name]
            if feature.categories is not None:
                codes = pd.Index(list(feature.categories)).get_indexer(
                    pd.Index(values.astype(object))
                )
                out[:, j] = np.where(codes < 0, np.nan, codes)
                continue
            try:
                out[:, j] = values.to_numpy(dtype=np.float64, na_value=np.nan)
            except (TypeError, ValueError):
                raise InputError(
                    f"column {feature.name!r} must be numeric, as it is in the auxiliary data"
                ) from None
        return out


def _observed(values: pd.Series) -> tuple[Hashable, ...]:
    """The distinct non-missing values, in the column's category order or sorted."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        return tuple(values.cat.categories)
    distinct = pd.unique(values.dropna())
    try:
        return tuple(sorted(distinct))
    except TypeError:  # mixed types: first-seen order
        return tuple(distinct)


def booster(seed: int, mask: list[bool], *, early_stopping: bool) -> HistGradientBoostingClassifier:
    """The gradient-boosting classifier every model here uses."""
    return HistGradientBoostingClassifier(
        categorical_features=mask if any(mask) else None,
        early_stopping=early_stopping,
        validation_fraction=0.15,
        n_iter_no_change=10,
        max_iter=200,
        random_state=seed,
    )


def auc(labels: np.ndarray, proba: np.ndarray, n_classes: int) -> float:
    """ROC AUC of class probabilities: binary, else the mean one-vs-rest AUC of the classes that
    occur (0.5 when none can be scored)."""
    scores = []
    positives = [1] if n_classes == 2 else range(n_classes)
    for c in positives:
        hit = labels == c
        if hit.any() and not hit.all():
            scores.append(roc_auc_score(hit, proba[:, c]))
    return float(np.mean(scores)) if scores else 0.5


def auc_upper(labels: np.ndarray, proba: np.ndarray, n_classes: int, seed: int) -> float:
    """The upper end of a 95% CI of :func:`auc`: DeLong's for two classes, else a percentile
    bootstrap of the validation rows (resampled within each class, :data:`STOP_BOOTSTRAP`)."""
    if n_classes == 2:
        if labels.min() == labels.max():
            return 0.5
        score = delong_auc(labels == 1, proba[:, 1], STOP_CONFIDENCE)
        return float(score.ci[1] + score.baseline)
    rng = np.random.default_rng(seed)
    groups = [np.flatnonzero(labels == c) for c in np.unique(labels)]
    draws = []
    for _ in range(STOP_BOOTSTRAP):
        rows = np.concatenate([rng.choice(g, size=g.size) for g in groups])
        draws.append(auc(labels[rows], proba[rows], n_classes))
    return float(np.quantile(draws, (1 + STOP_CONFIDENCE) / 2))


def _proba(model: HistGradientBoostingClassifier, x: np.ndarray, n_classes: int) -> np.ndarray:
    """Class probabilities over all ``n_classes`` (zero for a class the model never saw)."""
    out = np.zeros((x.shape[0], n_classes))
    out[:, model.classes_.astype(int)] = model.predict_proba(x)
    return out


@dataclass(frozen=True)
class Ranking:
    """The greedy proxy ranking: each pick, its importance, the AUC left and its 95% upper end."""

    proxies: tuple[str, ...]
    importance: tuple[float, ...]
    auc_all: float
    auc_left: tuple[float, ...]
    task_importance: tuple[float, ...] = ()
    auc_left_upper: tuple[float, ...] = ()


@dataclass(frozen=True)
class Task:
    """The task's target levels on the auxiliary rows, and the weight of its importance."""

    codes: np.ndarray
    n_classes: int
    weight: float

    @classmethod
    def of(cls, values: pd.Series, weight: float) -> Task:
        """The target column of the auxiliary rows (values in levels, as a proxy's model has)."""
        levels = Levels.of(values)
        return cls(levels.codes, levels.size, weight)

    def needs(
        self, x: np.ndarray, train: np.ndarray, valid: np.ndarray, mask: list[bool], seed: int
    ) -> np.ndarray:
        """Each column's permutation importance (validation AUC drop) for the target, from a
        booster fitted on the ``train`` rows of ``x``; zeros when the rows cannot tell."""
        if np.unique(self.codes[train]).size < 2:
            return np.zeros(x.shape[1])

        def scorer(model: Any, xv: np.ndarray, yv: np.ndarray) -> float:
            return auc(yv, _proba(model, xv, self.n_classes), self.n_classes)

        model = booster(seed, mask, early_stopping=train.size >= EARLY_STOPPING)
        model.fit(x[train], self.codes[train])
        drop: np.ndarray = permutation_importance(
            model, x[valid], self.codes[valid], scoring=scorer, n_repeats=3, random_state=seed
        ).importances_mean
        return drop


def strata(codes: np.ndarray) -> np.ndarray | None:
    """``codes`` to stratify a split on, or None when a value occurs only once."""
    counts = np.bincount(codes)
    return codes if counts[counts > 0].min() >= 2 else None


def rank_greedy(
    aux: pd.DataFrame,
    codes: np.ndarray,
    n_classes: int,
    design: Design,
    n_proxies: int,
    seed: int,
    stop_at: float | None = None,
    task: Task | None = None,
) -> Ranking:
    """Pick up to ``n_proxies`` columns greedily by permutation importance (AUC drop).

    Stops once the upper 95% bound of the AUC left is at most ``stop_at``; with a ``task``, a
    candidate's AUC drop for the task, times its weight, counts against it.
    """
    train, valid = train_test_split(
        np.arange(len(aux)), test_size=VALIDATION, random_state=seed, stratify=strata(codes)
    )
    x = design.matrix(aux)
    left = list(range(len(design.features)))
    picked: list[str] = []
    importance: list[float] = []
    for_task: list[float] = []
    aucs: list[float] = []
    uppers: list[float] = []

    def scorer(model: Any, xv: np.ndarray, yv: np.ndarray) -> float:
        return auc(yv, _proba(model, xv, n_classes), n_classes)

    for step in range(n_proxies + 1):
        if not left:
            aucs.append(0.5)
            uppers.append(0.5)
            break
        mask = [design.mask[j] for j in left]
        model = booster(seed, mask, early_stopping=train.size >= EARLY_STOPPING)
        model.fit(x[train][:, left], codes[train])
        xv = x[valid][:, left]
        proba = _proba(model, xv, n_classes)
        aucs.append(auc(codes[valid], proba, n_classes))
        uppers.append(auc_upper(codes[valid], proba, n_classes, seed + step))
        if step == n_proxies or (stop_at is not None and uppers[-1] <= stop_at):
            break
        drop = permutation_importance(
            model, xv, codes[valid], scoring=scorer, n_repeats=3, random_state=seed
        ).importances_mean
        score = drop
        if task is not None:
            needed = task.needs(x[:, left], train, valid, mask, seed)
            score = drop - task.weight * np.maximum(needed, 0.0)
            for_task.append(float(needed[int(np.argmax(score))]))
        best = int(np.argmax(score))
        picked.append(design.features[left[best]].name)
        importance.append(float(drop[best]))
        del left[best]
    return Ranking(tuple(picked), tuple(importance), aucs[0], tuple(aucs[1:]), tuple(for_task),
                   tuple(uppers[1:]))  # fmt: skip


@dataclass(frozen=True)
class Levels:
    """What a proxy's model predicts: per level, the auxiliary values a draw picks from."""

    values: tuple[np.ndarray, ...]
    codes: np.ndarray

    @classmethod
    def of(cls, values: pd.Series) -> Levels:
        """Levels of an auxiliary proxy column: its values (rare ones pooled), or those of
        :func:`numeric_levels`."""
        missing = np.asarray(values.isna())
        filled = values.astype(object).to_numpy(copy=True)
        filled[missing] = MISSING
        key = filled
        if not is_categorical(values) and pd.unique(values.dropna()).size > NUMERIC_LEVELS:
            key = numeric_levels(values)
        found, _ = pd.factorize(pd.Series(key, dtype=object), use_na_sentinel=False)
        members = [np.flatnonzero(found == code) for code in range(found.max() + 1)]
        members.sort(key=len, reverse=True)
        common = [m for m in members if len(m) >= MIN_LEVEL]
        rare = [m for m in members if len(m) < MIN_LEVEL]
        if not common:  # every value is rare: one level, the auxiliary distribution
            common, rare = [np.concatenate(members)], []
        pooled = np.concatenate(rare) if rare else np.empty(0, dtype=np.int64)
        if pooled.size >= MIN_LEVEL:
            common.append(pooled)
        elif pooled.size:
            common[0] = np.concatenate([common[0], pooled])  # too few to model on their own
        codes = np.empty(len(key), dtype=np.int64)
        for level, rows in enumerate(common):
            codes[rows] = level
        return cls(tuple(filled[rows] for rows in common), codes)

    @property
    def size(self) -> int:
        return len(self.values)


def numeric_levels(values: pd.Series) -> np.ndarray:
    """A level per row of a numeric column: frequent values alone, the rest in quantile bins."""
    missing = np.asarray(values.isna())
    counts = values.value_counts()
    spikes = counts.index[counts >= len(values) / NUMERIC_LEVELS]
    key = np.empty(len(values), dtype=object)
    key[missing] = MISSING
    spike = np.asarray(values.isin(spikes)) & ~missing
    key[spike] = -1 - pd.Index(spikes).get_indexer(values[spike])
    rest = ~spike & ~missing
    if rest.any():
        bins = min(NUMERIC_LEVELS - spikes.size, int(rest.sum()) // MIN_LEVEL)
        key[rest] = pd.qcut(values[rest], max(bins, 1), labels=False, duplicates="drop")
    return key


@dataclass(frozen=True)
class Conditional:
    """One proxy given ``design``'s columns: a booster over its levels (``None`` for one level)."""

    proxy: str
    design: Design
    levels: Levels
    model: HistGradientBoostingClassifier | None

    @classmethod
    def fit(cls, aux: pd.DataFrame, proxy: str, design: Design, seed: int) -> Conditional:
        """Fit the model of ``proxy`` given ``design``'s columns on the auxiliary rows."""
        levels = Levels.of(aux[proxy])
        if levels.size == 1:
            return cls(proxy, design, levels, None)
        model = booster(seed, design.mask, early_stopping=len(aux) >= EARLY_STOPPING)
        model.fit(design.matrix(aux), levels.codes)
        return cls(proxy, design, levels, model)

    def draw(self, given: pd.DataFrame, rng: np.random.Generator) -> np.ndarray:
        """One value per row of ``given`` (an object array, NaN for missing), from the model."""
        n = len(given)
        if self.model is None:
            level = np.zeros(n, dtype=np.int64)
        else:
            proba = _proba(self.model, self.design.matrix(given), self.levels.size)
            level = sample_rows(proba, rng)
        out = np.empty(n, dtype=object)
        for code, values in enumerate(self.levels.values):
            rows = np.flatnonzero(level == code)
            if rows.size:
                out[rows] = values[rng.integers(values.size, size=rows.size)]
        out[np.array([v is MISSING for v in out], dtype=bool)] = np.nan
        return out


@dataclass(frozen=True)
class Chain:
    """The ``"hgb"`` redraw: each proxy from its :class:`Conditional`, in order."""

    conditionals: tuple[Conditional, ...]
    template: pd.DataFrame

    @classmethod
    def fit(
        cls,
        aux: pd.DataFrame,
        sensitive: str,
        context: Sequence[str],
        proxies: Sequence[str],
        domains: Mapping[str, Sequence[Hashable]],
        seed: int,
    ) -> Chain:
        """Fit the model of each proxy on the auxiliary rows, in the order of ``proxies``."""
        chain = []
        for j, proxy in enumerate(proxies):
            design = Design.learn(aux, [sensitive, *context, *proxies[:j]], domains)
            chain.append(Conditional.fit(aux, proxy, design, seed))
        return cls(tuple(chain), aux[list(proxies)].iloc[:0].copy())

    def draw(
        self, given: pd.DataFrame, drawn: np.ndarray, rng: np.random.Generator
    ) -> pd.DataFrame:
        """The proxies of each row of ``given`` (the context columns and the drawn sensitive
        value; ``drawn``, its domain positions, is not needed here); ``given``'s index."""
        del drawn
        given = given.copy()
        for model in self.conditionals:
            redrawn = model.draw(given, rng)
            given[model.proxy] = column(redrawn, self.template[model.proxy], given.index)
        return given[list(self.template.columns)]


@dataclass(frozen=True)
class SensitiveModel:
    """The sensitive column's law given the context, re-weighed by ``marginal / prior`` at draw."""

    design: Design
    model: HistGradientBoostingClassifier | None
    prior: np.ndarray

    @classmethod
    def fit(
        cls, aux: pd.DataFrame, codes: np.ndarray, n_classes: int, design: Design, seed: int
    ) -> SensitiveModel:
        """Fit on the auxiliary rows; ``codes`` are their sensitive values' domain positions."""
        counts = np.bincount(codes, minlength=n_classes) + 1.0
        if np.unique(codes).size < 2 or design.matrix(aux).shape[1] == 0:
            return cls(design, None, counts / counts.sum())
        model = booster(seed, design.mask, early_stopping=len(aux) >= EARLY_STOPPING)
        model.fit(design.matrix(aux), codes)
        return cls(design, model, counts / counts.sum())

    def draw(
        self, given: pd.DataFrame, marginal: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        """One domain position per row of ``given``, from the model re-weighed to ``marginal``
        (the marginal alone without a model, or where the re-weighed row has no mass)."""
        n, k = len(given), self.prior.size
        if self.model is None:
            proba = np.tile(marginal, (n, 1))
        else:
            proba = _proba(self.model, self.design.matrix(given), k) * (marginal / self.prior)
            empty = proba.sum(axis=1) <= 0
            proba[empty] = marginal
        return sample_rows(proba, rng)


def sample_rows(weights: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One column index per row, drawn with probability proportional to the row's weights."""
    cumulative = np.cumsum(weights, axis=1)
    u = rng.random(len(weights)) * cumulative[:, -1]
    drawn: np.ndarray = np.minimum((cumulative < u[:, None]).sum(axis=1), weights.shape[1] - 1)
    return drawn


def column(values: np.ndarray, like: pd.Series, index: pd.Index) -> pd.Series:
    """``values`` as a column of ``like``'s (public) dtype, where it fits."""
    series = pd.Series(values, index=index, dtype=object, name=like.name)
    dtype = like.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        known = set(dtype.categories)
        extra = [v for v in pd.unique(series.dropna()) if v not in known]
        if extra:
            dtype = pd.CategoricalDtype([*dtype.categories, *extra], ordered=dtype.ordered)
        return series.astype(dtype)
    try:
        return series.astype(dtype)
    except (TypeError, ValueError):
        return series.infer_objects()
