"""Privacy-utility sweep of a fitted decoupler over local samplers, against simple baselines.

Every method is scored the same way: leakage of the true sensitive value of released rows,
utility on real held-out rows. See docs/sanitize/evaluation.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

import numpy as np
import pandas as pd
from sklearn.base import ClassifierMixin
from sklearn.linear_model import LogisticRegression

from attrpriv._checks import check_positive_int, check_probability
from attrpriv._progress import progress
from attrpriv.dp.ledger import BudgetLedger
from attrpriv.errors import InputError
from attrpriv.sanitize.baselines import DropProxies, DropSensitive, MarginalDraw
from attrpriv.sanitize.decoupler import GlobalDecoupler
from attrpriv.sanitize.evaluate import (
    FittedModels,
    LeakageResult,
    UtilityResult,
    _form,
    _labels,
    _seeds,
    fit_models,
    pareto_auc,
    utility,
)
from attrpriv.sanitize.images import as_images
from attrpriv.sanitize.samplers import SampledLatents
from attrpriv.sanitize.sanitizer import LatentSampler, SanitizedData, Sanitizer

MAX_LEAKAGE = 0.5  # leakage = AUC - 0.5 lies in [-0.5, 0.5]: the Pareto budgets are [0, 0.5]
BASELINE = "baseline"


@dataclass(frozen=True)
class SweepPoint:
    """One method's leakage (AUC - 0.5), utility (task AUC) and CAS, with the full results."""

    name: str
    family: str
    leakage: float
    utility: float
    cas: float
    parts: dict[str, Any]
    leakage_result: LeakageResult | None = None
    utility_result: UtilityResult | None = None

    @property
    def leakage_auc(self) -> float:
        """The strongest adversary's AUC (``leakage + 0.5``)."""
        return self.leakage + 0.5

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the name, family, scores and parts."""
        return {"name": self.name, "family": self.family, "leakage": self.leakage,
                "leakage_auc": self.leakage_auc, "utility": self.utility, "cas": self.cas,
                **self.parts}  # fmt: skip


@dataclass(frozen=True)
class SweepResult:
    """All points, the simple baselines, and each family's Pareto area (leakage budgets [0, 0.5]).

    ``public_only``: the task model trained on the public rows alone, the bar a release must pass.
    """

    points: tuple[SweepPoint, ...]
    pareto_auc: dict[str, float]
    baselines: tuple[SweepPoint, ...] = ()
    baseline_pareto_auc: dict[str, float] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    public_only: UtilityResult | None = None

    def retained(self, point: SweepPoint) -> float:
        """A point's utility minus the public-only task AUC (NaN without it)."""
        return math.nan if self.public_only is None else point.utility - self.public_only.auc.attack

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the points, areas, baselines, ``public_only``, retained values, settings."""
        return {"points": [p.to_dict() for p in self.points], "pareto_auc": dict(self.pareto_auc),
                "pareto_max_leakage": MAX_LEAKAGE,
                "baselines": [p.to_dict() for p in self.baselines],
                "baseline_pareto_auc": dict(self.baseline_pareto_auc),
                "public_only": None if self.public_only is None else self.public_only.to_dict(),
                "retained_private_information": {
                    p.name: self.retained(p) for p in (*self.points, *self.baselines)
                } if self.public_only is not None else {},
                "settings": dict(self.settings)}  # fmt: skip


class KeepLatents:
    """Reference only, not a sanitizer: keeps z_S, so the output is the plain reconstruction."""

    def sample(
        self, z_s: Any, y_s: Any = None, *, ledger: Any = None, label: str = ""
    ) -> SampledLatents:
        """``z_s`` unchanged (a copy); no labels, no record."""
        return SampledLatents(np.array(z_s, dtype=np.float64), None, None)


class SanitizerLike(Protocol):
    """Anything with Sanitizer's ``sanitize`` (the pipeline, or a baseline of ``baselines``)."""

    def sanitize(
        self, X: Any, y_s: Any = None, *, ledger: BudgetLedger | None = None, label: str = ""
    ) -> SanitizedData: ...


Samplers = Mapping[str, tuple[str, LatentSampler | SanitizerLike]]


def as_pipeline(
    decoupler: GlobalDecoupler, sampler: LatentSampler | SanitizerLike
) -> SanitizerLike:
    """A sampler wrapped in the Sanitizer; an object with its own ``sanitize`` used as it is."""
    if callable(getattr(sampler, "sanitize", None)):
        return cast(SanitizerLike, sampler)
    return Sanitizer(decoupler, cast(LatentSampler, sampler))


@dataclass
class _Task:
    """One sweep's data and how each method's output is scored."""

    aux: Any
    release: Any
    test: Any
    y_s_aux: Any
    y_s_release: Any
    aux_sensitive: np.ndarray
    release_sensitive: np.ndarray
    release_target: np.ndarray
    test_target: np.ndarray
    seeds: list[int]
    model: ClassifierMixin | None
    task_model: ClassifierMixin | None
    sensitive: str | None = None
    target: str | None = None
    decoded_target: bool = False
    confidence: float = 0.95
    cache: dict[Any, FittedModels] = field(default_factory=dict)

    @property
    def table(self) -> bool:
        return self.sensitive is not None

    def released(self, data: Any, raw: Any) -> Any:
        """What a method releases, as scored: a table's evaluated columns, its target passed
        through from ``raw`` unless ``decoded_target``; images as pixel vectors."""
        if not self.table:
            return _pixels(data)
        if not isinstance(data, pd.DataFrame) or len(data) != len(raw):
            raise InputError("a sanitizer must return a DataFrame with one row per input row")
        out = data.reset_index(drop=True)
        out = out[[c for c in out.columns if c in self.aux.columns]].copy()
        if not self.decoded_target:
            out[self.target] = raw[self.target].reset_index(drop=True)
        elif self.target not in out.columns:
            raise InputError(f"the release lacks the target column {self.target!r}")
        return out

    def adversary(self, key: Any, x: Any, y: np.ndarray) -> FittedModels:
        if key not in self.cache:
            self.cache[key] = fit_models(x, y, self.seeds, self.model, "y_aux")
        return self.cache[key]

    def leakage(self, release: Any, aux_out: Any | None) -> LeakageResult:
        """Raw-aux and sanitized-aux adversaries; the second is skipped when it would repeat the
        first (the sanitized auxiliary data are the raw ones, and no sensitive column is out)."""
        y, level = self.release_sensitive, self.confidence
        if self.table:
            seen = [c for c in release.columns if c != self.sensitive]
            raw = self.adversary(tuple(seen), self.aux[seen], self.aux_sensitive)
            scores = [raw.score("raw-aux", release[seen], y, level)]
            same = aux_out is not None and aux_out.equals(self.aux[list(aux_out.columns)])
            if aux_out is not None and not (same and self.sensitive not in release.columns):
                if list(aux_out.columns) != list(release.columns):
                    raise InputError("the sanitizer released other columns for the auxiliary "
                                     "data than for the private data")  # fmt: skip
                fitted = fit_models(aux_out, self.aux_sensitive, self.seeds, self.model, "y_aux")
                scores.append(fitted.score("sanitized-aux", release, y, level))
        else:
            raw = self.adversary("pixels", self.aux, self.aux_sensitive)
            scores = [raw.score("raw-aux", release, y, level)]
            if aux_out is not None and not np.array_equal(aux_out, _pixels(self.aux)):
                fitted = fit_models(aux_out, self.aux_sensitive, self.seeds, self.model, "y_aux")
                scores.append(fitted.score("sanitized-aux", release, y, level))
        return LeakageResult(tuple(scores), _form(raw.classes, y), len(self.seeds))

    def utility(self, release: Any) -> UtilityResult:
        """Trained on the release, tested on the real test rows."""
        if self.table:
            features = [c for c in release.columns if c != self.target]
            x_train, y_train = release[features], release[self.target].astype(str).to_numpy()
            x_test = self.test[features]
        else:
            x_train, y_train, x_test = release, self.release_target, self.test
        return utility(x_train, y_train, x_test, self.test_target, model=self.task_model,
                       seeds=len(self.seeds), seed=self.seeds[0],
                       confidence=self.confidence)  # fmt: skip

    def point(self, method: SanitizerLike | None, name: str, family: str) -> SweepPoint:
        """Sanitize the auxiliary and the release rows with ``method`` (None: the real data)."""
        if method is None:
            release, aux_out = self.released(self.release, self.release), None
        else:
            out = method.sanitize(self.release, self.y_s_release)
            release = self.released(out.data, self.release)
            aux_out = self.released(method.sanitize(self.aux, self.y_s_aux).data, self.aux)
        leak, use = self.leakage(release, aux_out), self.utility(release)
        parts: dict[str, Any] = {"leakage_parts": leak.to_dict(), "utility_parts": use.to_dict()}
        if self.table:
            parts["released_columns"] = [str(c) for c in release.columns]
        return SweepPoint(name, family, leak.advantage, use.auc.attack, use.accuracy.attack,
                          parts, leak, use)  # fmt: skip


def evaluated_columns(decoupler: GlobalDecoupler, aux: pd.DataFrame, target: str) -> list[str]:
    """The columns of ``aux`` a table sweep evaluates: the decoupler's, sensitive, ``target``."""
    evaluated = {*decoupler.codec_.columns, decoupler.sensitive_column_, target}
    return [c for c in aux.columns if c in evaluated]


def sweep(
    decoupler: GlobalDecoupler,
    aux: pd.DataFrame,
    private: pd.DataFrame,
    samplers: Samplers,
    *,
    target: str,
    test: pd.DataFrame | None = None,
    test_share: float = 0.3,
    seed: int = 0,
    seeds: int = 3,
    proxies: int = 3,
    decoded_target: bool = False,
    model: ClassifierMixin | None = None,
    reference: bool = True,
    progress: bool = False,
) -> SweepResult:
    """Leakage and utility of every ``name -> (family, sampler)`` and of the simple baselines.

    A sampler is a latent sampler (wrapped in a Sanitizer) or anything with ``sanitize``.
    Adversaries see every released column; the task model all but the target.

    Parameters
    ----------
    decoupler : GlobalDecoupler
        A fitted tabular decoupler whose ``y_s`` was a named column.
    aux : pandas.DataFrame
        Auxiliary (public) data with the sensitive and ``target`` columns.
    private : pandas.DataFrame
        The private rows released; without ``test``, ``test_share`` of them is held out.
    samplers : Mapping of str to tuple of (str, LatentSampler or SanitizerLike)
        ``name -> (family, sampler)``; a "reference" family is left out of the Pareto areas.
    target : str
        The column of the utility task, not the sensitive one.
    test : pandas.DataFrame or None, optional
        Real held-out rows for the utility test, disjoint from ``aux`` and ``private``.
    test_share : float, optional
        The share of ``private`` held out when ``test`` is not given, in (0, 1).
    seed, seeds : int, optional
        First seed of the models and split; each model is pooled over ``seeds`` seeds.
    proxies : int, optional
        How many proxies the "drop proxies" baseline drops (ranked on ``aux``).
    decoded_target : bool, optional
        Release the sanitizer's decoded target instead of passing the real one through.
    model : sklearn classifier or None, optional
        The adversaries' and task's classifier; ``None``: gradient boosting.
    reference, progress : bool, optional
        Add the reconstruction and real data as reference rows; report progress on stderr.

    Returns
    -------
    SweepResult
        One point per sampler, the reference rows, the baselines and the Pareto areas.
    """
    sensitive = decoupler.sensitive_column_
    if sensitive is None:
        raise InputError("the decoupler was not fitted on a named sensitive column")
    frames = {"auxiliary": aux, "private": private} | ({} if test is None else {"test": test})
    for what, frame in frames.items():
        for column in (sensitive, target):
            if column not in frame.columns:
                raise InputError(f"{what} data lacks column {column!r}")
    if target == sensitive:
        raise InputError(
            f"target {target!r} is the sensitive column: pick another column as the utility task"
        )
    columns = evaluated_columns(decoupler, aux, target)
    aux = aux[columns].reset_index(drop=True)
    for what, frame in frames.items():
        missing = [c for c in columns if c not in frame.columns]
        if missing:
            raise InputError(f"{what} data lacks column(s) {missing} the decoupler models")
    release, held = _split(private, test, test_share, seed)
    release, held = release[columns].reset_index(drop=True), held.reset_index(drop=True)
    task = _Task(aux, release, held, sensitive, sensitive, _strings(aux[sensitive]),
                 _strings(release[sensitive]), _strings(release[target]),
                 _strings(held[target]), _seeds(seeds, seed), model, model, sensitive, target,
                 decoded_target)  # fmt: skip
    k = check_positive_int(proxies, "proxies", minimum=0)
    baselines: dict[str, SanitizerLike] = {
        "drop sensitive": DropSensitive(),
        f"drop sensitive + top {k} proxies": DropProxies(k, keep=[target], seed=seed).fit(
            aux, sensitive),
        "marginal draw": MarginalDraw(seed=seed).fit(aux, sensitive),
    }  # fmt: skip
    return _run(decoupler, samplers, task, baselines, reference, progress)


def sweep_images(
    decoupler: GlobalDecoupler,
    aux_images: Any,
    aux_sensitive: Any,
    private_images: Any,
    private_sensitive: Any,
    private_target: Any,
    samplers: Samplers,
    *,
    test_images: Any = None,
    test_target: Any = None,
    test_share: float = 0.3,
    seed: int = 0,
    seeds: int = 3,
    model: ClassifierMixin | None = None,
    task_model: ClassifierMixin | None = None,
    reference: bool = True,
    progress: bool = False,
) -> SweepResult:
    """:func:`sweep` for an image decoupler; images are flattened to pixel vectors for scoring.

    Images are (n, h, w) or (n, 1, h, w) in [0, 1]; no tabular baselines.

    Parameters
    ----------
    decoupler : GlobalDecoupler
        A fitted image decoupler (``kind="image"``).
    aux_images, aux_sensitive : array-like
        The auxiliary (public) images and their true sensitive labels.
    private_images, private_sensitive : array-like
        The private images and their true sensitive labels.
    private_target : array-like
        The private images' utility task labels (e.g. the digit).
    samplers : Mapping of str to tuple of (str, LatentSampler or SanitizerLike)
        ``name -> (family, sampler)``, as for :func:`sweep`.
    test_images, test_target : array-like or None, optional
        Real held-out images and labels; ``None``: ``test_share`` of the private ones.
    test_share : float, optional
        The share of the private images held out without ``test_images``, in (0, 1).
    seed, seeds : int, optional
        First seed of the models and split; each model is pooled over ``seeds`` seeds.
    model : sklearn classifier or None, optional
        The adversaries' classifier; ``None``: gradient boosting.
    task_model : sklearn classifier or None, optional
        The task's classifier; ``None``: a logistic regression on the pixels.
    reference, progress : bool, optional
        Add the reconstruction and real images as reference rows; report progress on stderr.

    Returns
    -------
    SweepResult
        One point per sampler, the reference rows and the Pareto areas; no baselines.
    """
    if getattr(decoupler, "kind", None) != "image":
        raise InputError("sweep_images needs an image decoupler (kind='image'); use sweep()")
    if (test_images is None) != (test_target is None):
        raise InputError("test_images and test_target must be given together (or neither)")
    aux, private = as_images(aux_images), as_images(private_images)
    y_aux = _labels(aux_sensitive, len(aux), "aux_sensitive")
    y_priv = _labels(private_sensitive, len(private), "private_sensitive")
    y_task = _labels(private_target, len(private), "private_target")
    order = np.arange(len(private))
    if test_images is None:
        kept, held = _split(order, None, test_share, seed)
        test, y_test = private[held], y_task[held]
    else:
        kept, test = order, as_images(test_images)
        y_test = _labels(test_target, len(test), "test_target")
    task = _Task(aux, private[kept], _pixels(test), y_aux, y_priv[kept], y_aux, y_priv[kept],
                 y_task[kept], y_test, _seeds(seeds, seed), model,
                 PIXEL_MODEL if task_model is None else task_model)  # fmt: skip
    return _run(decoupler, samplers, task, {}, reference, progress)


# Pixels (already in [0, 1]): a logistic regression on the raw values. Standardising would blow
# up the near-constant border pixels of decoded images (slow, ill-conditioned fits); on real
# MNIST-5k this model scores thickness 0.974 and digit 0.867 (standardised, C = 1: 0.969, 0.855).
PIXEL_MODEL = LogisticRegression(C=0.1, max_iter=1000)


def _split(private: Any, test: Any, share: float, seed: int) -> tuple[Any, Any]:
    """(released rows, real test rows): ``test`` as given, else a seeded ``share`` held out."""
    if test is not None:
        return private, test
    share = check_probability(share, "test_share")
    n = len(private)
    n_test = round(share * n)
    if n_test < 2 or n - n_test < 2:
        raise InputError(f"{n} private rows are too few to hold out a test share of {share:g}")
    order = np.random.default_rng(check_positive_int(seed, "seed", minimum=0)).permutation(n)
    held, kept = np.sort(order[:n_test]), np.sort(order[n_test:])
    if isinstance(private, pd.DataFrame):
        return private.iloc[kept], private.iloc[held]
    return kept, held


def _strings(series: pd.Series) -> np.ndarray:
    return np.asarray(series.astype(str).to_numpy(), dtype=object)


def _pixels(images: Any) -> np.ndarray:
    array = np.asarray(images, dtype=np.float64)
    return array.reshape(len(array), -1)


def _run(
    decoupler: GlobalDecoupler,
    samplers: Samplers,
    task: _Task,
    baselines: Mapping[str, SanitizerLike],
    reference: bool,
    shown: bool = False,
) -> SweepResult:
    """Score every sampler, baseline and reference row, then the Pareto areas."""
    points, simple = [], []
    total = len(samplers) + len(baselines) + (2 if reference else 0)
    with progress("scoring methods", total, enabled=shown) as advance:
        for name, (family, sampler) in samplers.items():
            points.append(task.point(as_pipeline(decoupler, sampler), name, family))
            advance(detail=name)
        for name, method in baselines.items():
            simple.append(task.point(method, name, BASELINE))
            advance(detail=name)
        if reference:
            keep = Sanitizer(decoupler, KeepLatents())
            points.append(task.point(keep, "reconstruction (z_S kept)", "reference"))
            advance(detail="reconstruction")
            points.append(task.point(None, "real data", "reference"))
            advance(detail="real data")
    aucs = {}
    for family in sorted({p.family for p in points} - {"reference"}):
        pts = np.array([[p.leakage, p.utility] for p in points if p.family == family])
        aucs[family] = pareto_auc(pts, max_leakage=MAX_LEAKAGE)
    simple_aucs = {p.name: pareto_auc([[p.leakage, p.utility]], max_leakage=MAX_LEAKAGE)
                   for p in simple}  # fmt: skip
    settings = {
        "seeds": len(task.seeds),
        "aux_rows": len(task.aux),
        "release_rows": len(task.release),
        "test_rows": len(task.test),
        "adversaries": ["raw-aux", "sanitized-aux"],
        "adversary_model": "HistGradientBoostingClassifier" if task.model is None
        else type(task.model).__name__,
        "task_model": "HistGradientBoostingClassifier" if task.task_model is None
        else type(task.task_model).__name__,
        "target": None if not task.table else (
            "decoded by the sanitizer" if task.decoded_target else "passed through unchanged"),
        "leakage": "strongest adversary's AUC - 0.5",
        "utility": "task AUC on real held-out rows",
    }  # fmt: skip
    public = task.utility(task.released(task.aux, task.aux)) if task.table else None
    return SweepResult(tuple(points), aucs, tuple(simple), simple_aucs, settings, public)
