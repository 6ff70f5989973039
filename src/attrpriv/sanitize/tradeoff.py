"""Privacy-utility sweep of a fitted decoupler over local samplers (the seed's section 4).

For each sampler: sanitize the auxiliary data (what the attacker can do: the decoupler and the
sampler are public) and the private data; leakage = adversary trained on the sanitized auxiliary
data to recover the true y_S, tested on the sanitized private data, minus the prior; utility =
a task model trained on half of the sanitized private data, tested on the other half sanitized
and real (CAS). Uses :mod:`attrpriv.sanitize.evaluate` for the scores. :func:`sweep` takes
tables, :func:`sweep_images` images (flattened to pixel vectors); both take local samplers and
baselines (:mod:`attrpriv.sanitize.baselines`) alike and share one scoring path.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol, cast

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression

from attrpriv._progress import progress
from attrpriv.dp.ledger import BudgetLedger
from attrpriv.errors import InputError
from attrpriv.sanitize.decoupler import GlobalDecoupler
from attrpriv.sanitize.evaluate import Features, _labels, leakage, pareto_auc, utility
from attrpriv.sanitize.images import as_images
from attrpriv.sanitize.samplers import SampledLatents
from attrpriv.sanitize.sanitizer import LatentSampler, SanitizedData, Sanitizer


@dataclass(frozen=True)
class SweepPoint:
    """One sampler's leakage and utility, with their parts."""

    name: str
    family: str
    leakage: float
    utility: float
    cas: float
    parts: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "family": self.family, "leakage": self.leakage,
                "utility": self.utility, "cas": self.cas, **self.parts}  # fmt: skip


@dataclass(frozen=True)
class SweepResult:
    """All points, and the area under each family's Pareto front (leakage budget [0, 0.5])."""

    points: tuple[SweepPoint, ...]
    pareto_auc: dict[str, float]

    def to_dict(self) -> dict[str, Any]:
        return {"points": [p.to_dict() for p in self.points], "pareto_auc": dict(self.pareto_auc),
                "pareto_max_leakage": 0.5}  # fmt: skip


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


@dataclass(frozen=True)
class _Task:
    """One sweep's data: what is sanitized, the true labels, and how outputs become features.

    ``y_s_aux`` / ``y_s_private`` are handed to ``sanitize`` (a column name for tables, labels
    for images); ``features`` turns sanitized (or real) data into the task model's inputs, and
    ``leak_features`` (default: the same) into the adversary's: every released column but the
    sensitive one, the task's target included.
    """

    aux: Any
    private: Any
    y_s_aux: Any
    y_s_private: Any
    aux_sensitive: np.ndarray
    private_sensitive: np.ndarray
    private_target: np.ndarray
    features: Callable[[Any], Features]
    model: Any = None  # the adversary's and the task's classifier (None: evaluate's default)
    leak_features: Callable[[Any], Features] | None = None


def as_pipeline(
    decoupler: GlobalDecoupler, sampler: LatentSampler | SanitizerLike
) -> SanitizerLike:
    """A sampler wrapped in the Sanitizer; an object with its own ``sanitize`` used as it is."""
    if callable(getattr(sampler, "sanitize", None)):
        return cast(SanitizerLike, sampler)
    return Sanitizer(decoupler, cast(LatentSampler, sampler))


def sweep(
    decoupler: GlobalDecoupler,
    aux: pd.DataFrame,
    private: pd.DataFrame,
    samplers: Samplers,
    *,
    target: str,
    seed: int = 0,
    reference: bool = True,
    progress: bool = False,
) -> SweepResult:
    """Evaluate every ``name -> (family, sampler)``; ``target`` is the utility task's column.

    A sampler is a local latent sampler (wrapped in ``Sanitizer(decoupler, sampler)``) or any
    object with a ``sanitize`` method (a baseline), used as it is. The features of every row are
    the decoupler's modelled columns but the sensitive and target ones for the task, and all but
    the sensitive one for the adversary (it sees everything released). With ``reference``, two
    rows of family "reference" (left out of the Pareto AUC) are added: the decoupler's plain
    reconstruction (z_S kept) and the real data, to read the others against. ``progress``
    reports each sampler on stderr as it is scored.

    Parameters
    ----------
    decoupler : GlobalDecoupler
        A fitted tabular decoupler whose ``y_s`` was a named column (``sensitive_column_``).
    aux : pandas.DataFrame
        The auxiliary (public) data, with the sensitive and ``target`` columns: sanitized to
        train the adversary, whose labels are its true sensitive values.
    private : pandas.DataFrame
        The private data, with the sensitive and ``target`` columns: sanitized to test the
        adversary, and to train (first half of the rows) and test (second half) the task
        model; its real second half gives the CAS.
    samplers : Mapping of str to tuple of (str, LatentSampler or SanitizerLike)
        ``name -> (family, sampler)``, the sampler a local latent sampler or an object with a
        ``sanitize`` method; each family's points make one Pareto front (a family named
        "reference" is left out of the Pareto AUC).
    target : str
        The column of the utility task, not the sensitive one; its true values are the task's
        labels.
    seed : int, optional
        Seeds the adversary's and the task model's classifiers (an integer >= 0); the
        samplers draw with their own seeds.
    reference : bool, optional
        Add the two reference rows.
    progress : bool, optional
        Report each sampler on stderr as it is scored.

    Returns
    -------
    SweepResult
        One point per sampler (in the order of ``samplers``, then the reference rows) and the
        area under each family's Pareto front over leakage budgets [0, 0.5].

    Raises
    ------
    InputError
        The decoupler was not fitted on a named sensitive column, ``aux`` or ``private`` lacks
        the sensitive or the target column, ``target`` is the sensitive column, or a sampler,
        a sanitized output or a classifier refuses its input.
    """
    sensitive = decoupler.sensitive_column_
    if sensitive is None:
        raise InputError("the decoupler was not fitted on a named sensitive column")
    for frame, what in ((aux, "auxiliary"), (private, "private")):
        for column in (sensitive, target):
            if column not in frame.columns:
                raise InputError(f"{what} data lacks column {column!r}")
    if target == sensitive:
        raise InputError(
            f"target {target!r} is the sensitive column: pick another column as the utility task"
        )
    kept = [c for c in decoupler.codec_.columns if c not in (sensitive, target)]
    released = [c for c in decoupler.codec_.columns if c != sensitive]
    task = _Task(aux, private, sensitive, sensitive, aux[sensitive].astype(str).to_numpy(),
                 private[sensitive].astype(str).to_numpy(),
                 private[target].astype(str).to_numpy(), partial(_columns, kept=kept),
                 leak_features=partial(_columns, kept=released))  # fmt: skip
    return _run(decoupler, samplers, task, seed, reference, progress)


def sweep_images(
    decoupler: GlobalDecoupler,
    aux_images: Any,
    aux_sensitive: Any,
    private_images: Any,
    private_sensitive: Any,
    private_target: Any,
    samplers: Samplers,
    *,
    seed: int = 0,
    reference: bool = True,
    progress: bool = False,
) -> SweepResult:
    """:func:`sweep` for an image decoupler; images are flattened to pixel vectors for scoring.

    Leakage: adversary trained on the sanitized auxiliary images with their true ``y_S``, tested
    on the sanitized private images. Utility: the ``private_target`` task (e.g. the digit)
    trained on the first half of the sanitized private images, tested on the second half
    sanitized and real (CAS). The true labels are handed to every ``sanitize``.

    Parameters
    ----------
    decoupler : GlobalDecoupler
        A fitted image decoupler (``kind="image"``).
    aux_images : array-like
        The auxiliary (public) images, (n_aux, h, w) or (n_aux, 1, h, w) in [0, 1].
    aux_sensitive : array-like
        Their true sensitive labels, shape (n_aux,).
    private_images : array-like
        The private images, (n, h, w) or (n, 1, h, w) in [0, 1].
    private_sensitive : array-like
        Their true sensitive labels, shape (n,).
    private_target : array-like
        Their utility task's labels (e.g. the digit), shape (n,).
    samplers : Mapping of str to tuple of (str, LatentSampler or SanitizerLike)
        ``name -> (family, sampler)``, as for :func:`sweep`.
    seed : int, optional
        Seeds the adversary's and the task model's classifiers (an integer >= 0); the
        samplers draw with their own seeds.
    reference : bool, optional
        Add the two reference rows (reconstruction with z_S kept, and the real images).
    progress : bool, optional
        Report each sampler on stderr as it is scored.

    Returns
    -------
    SweepResult
        One point per sampler (then the reference rows) and each family's Pareto AUC over
        leakage budgets [0, 0.5].

    Raises
    ------
    InputError
        The decoupler is not an image decoupler, the images are not valid images in [0, 1],
        a label array does not have one label per image, or a sampler, a sanitized output or
        a classifier refuses its input.
    """
    if getattr(decoupler, "kind", None) != "image":
        raise InputError("sweep_images needs an image decoupler (kind='image'); use sweep()")
    aux, private = as_images(aux_images), as_images(private_images)
    y_aux = _labels(aux_sensitive, len(aux), "aux_sensitive")
    y_priv = _labels(private_sensitive, len(private), "private_sensitive")
    y_task = _labels(private_target, len(private), "private_target")
    task = _Task(aux, private, y_aux, y_priv, y_aux, y_priv, y_task, _pixels, PIXEL_MODEL)
    return _run(decoupler, samplers, task, seed, reference, progress)


# Pixels (already in [0, 1]): a logistic regression on the raw values. Standardising would blow
# up the near-constant border pixels of decoded images (slow, ill-conditioned fits); on real
# MNIST-5k this model scores thickness 0.974 and digit 0.867 (standardised, C = 1: 0.969, 0.855).
PIXEL_MODEL = LogisticRegression(C=0.1, max_iter=1000)


def _columns(frame: pd.DataFrame, kept: list[str]) -> pd.DataFrame:
    missing = [c for c in kept if c not in frame.columns]
    if missing:
        raise InputError(f"sanitized data lacks column(s) {missing}")
    return frame[kept]


def _pixels(images: Any) -> np.ndarray:
    array = np.asarray(images, dtype=np.float64)
    return array.reshape(len(array), -1)


def _run(
    decoupler: GlobalDecoupler,
    samplers: Samplers,
    task: _Task,
    seed: int,
    reference: bool,
    shown: bool = False,
) -> SweepResult:
    """Score every sampler (and the reference rows), then each family's Pareto AUC."""
    points = []
    with progress("scoring samplers", len(samplers), enabled=shown) as advance:
        for name, (family, sampler) in samplers.items():
            points.append(_point(as_pipeline(decoupler, sampler), name, family, task, seed))
            advance(detail=name)
    if reference:
        points.append(_point(Sanitizer(decoupler, KeepLatents()), "reconstruction (z_S kept)",
                             "reference", task, seed))  # fmt: skip
        points.append(_point(None, "real data", "reference", task, seed))
    aucs = {}
    for family in sorted({p.family for p in points} - {"reference"}):
        pts = np.array([[p.leakage, p.utility] for p in points if p.family == family])
        aucs[family] = pareto_auc(pts, max_leakage=0.5)
    return SweepResult(tuple(points), aucs)


def _point(
    pipeline: SanitizerLike | None, name: str, family: str, task: _Task, seed: int
) -> SweepPoint:
    """Leakage and utility of one sanitizer (None: the real data)."""
    clean_aux, clean_priv = task.aux, task.private
    if pipeline is not None:
        clean_aux = pipeline.sanitize(task.aux, task.y_s_aux).data
        clean_priv = pipeline.sanitize(task.private, task.y_s_private).data
    x_priv = task.features(clean_priv)
    real = task.features(task.private)
    seen = task.leak_features or task.features
    leak = leakage(
        seen(clean_aux), task.aux_sensitive, seen(clean_priv), task.private_sensitive,
        model=task.model, seed=seed,
    )  # fmt: skip
    half, y = len(task.private_target) // 2, task.private_target
    use = utility(
        _rows(x_priv, slice(0, half)), y[:half], _rows(x_priv, slice(half, None)), y[half:],
        x_real=_rows(real, slice(half, None)), y_real=y[half:], model=task.model, seed=seed,
    )  # fmt: skip
    cas = use.on_real.attack if use.on_real is not None else float("nan")
    parts = {"leakage_parts": leak.to_dict(), "utility_parts": use.to_dict()}
    return SweepPoint(name, family, leak.difference, use.on_sanitized.attack, cas, parts)


def _rows(block: Features, rows: slice) -> Features:
    return block.iloc[rows] if isinstance(block, pd.DataFrame) else block[rows]
