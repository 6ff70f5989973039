"""Membership inference with reference models: offline RMIA (the default), online RMIA, LiRA.

The attacker knows the training algorithm and holds records from the population the target's
training rows were drawn from. It trains a few *reference models* on population records and
compares the target's output on each candidate record with theirs. Three ways, all scoring a
candidate ``x`` with label ``y`` by ``signal(target) - term(references)``:

- ``"rmia"`` -- offline RMIA, Zarifzadeh, Liu, Mitra & Shokri, "Low-Cost High-Power Membership
  Inference Attacks" (ICML 2024). The references never saw a candidate (trained on population
  records that are not candidates). RMIA's ``Pr(x)``, the probability of the record's label
  under a model trained on the population whether or not it saw the record, is approximated
  from the OUT references only, as the paper's offline attack does::

      Pr(x) = ((1 + a) * mean_k Pr(y | x, reference_k) + (1 - a)) / 2
      score(x) = log Pr(y | x, target) - log Pr(x)

  ``a`` says how much a model's probability of a record rises when it trains on it. The paper
  sets it with reference models; so do we (:func:`calibrate_a`): each reference in turn plays
  the target, the others (on the population records they did not train on) the references, and
  ``a`` is the value on a grid of 0, 0.05, ..., 1 whose attack has the highest AUC on the
  population records. With a single reference there is nothing to calibrate on and ``a`` is
  :data:`UNCALIBRATED_A`.
- ``"rmia-online"`` -- the same paper's online attack with shared references: each reference
  trains on a random half of all the records, candidates included, and ``Pr(x)`` is the mean
  probability over all of them (IN and OUT).
- ``"lira"`` -- Carlini et al., "Membership Inference Attacks From First Principles" (S&P
  2022), offline with a global variance (the paper's choice for few models): the logit of the
  target's probability against the mean logit of the OUT references; dividing by one global
  standard deviation leaves the ranking, hence the ROC, unchanged, so it is left out.

RMIA's pairwise test against population records ``z`` with threshold ``gamma`` ranks the
candidates as ``score(x)`` does (it counts the ``z`` whose ratio is below ``score(x) / gamma``),
so the ROC, the AUC and every TPR at a fixed FPR are those of the paper's test. For a regressor
every variant scores ``mean_k loss_k(x) - loss_target(x)`` (squared errors; the offline ones on
OUT references only).

The reference models are the only extra cost: trained once per repeat of an assessment and
shared by every retrained target model (:class:`~attrpriv.assess.assessor.FeatureRiskAssessor`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy.special import logsumexp
from sklearn.metrics import roc_auc_score

from attrpriv._checks import check_choice, check_positive_int
from attrpriv.assess.choices import REFERENCE_ATTACKS
from attrpriv.assess.membership import (
    Labelled,
    MembershipResult,
    candidates,
    labelled,
    membership_result,
)
from attrpriv.assess.models import Task, fit_without, per_record_loss, task_of
from attrpriv.dp.mechanism import check_fitted
from attrpriv.errors import InputError

__all__ = [
    "ReferenceAttack",
    "ReferenceTerm",
    "calibrate_a",
    "fit_reference",
    "reference_attack",
    "reference_rows",
    "reference_term",
]

MIN_REFERENCE_ROWS = 20
A_GRID = np.round(np.linspace(0.0, 1.0, 21), 2)
UNCALIBRATED_A = 0.3  # one reference model: no other to calibrate a on
MAX_CALIBRATION_ROWS = 5000  # population records a is calibrated on
Signal = Literal["log", "logit", "loss"]


def reference_rows(
    y: np.ndarray | None, size: int, *, index: int, seed: int, rows: np.ndarray | None = None
) -> np.ndarray:
    """The rows reference ``index`` trains on: ``size`` of ``rows`` (default: all of ``y``),
    drawn within each class when ``y`` is a classifier's labels (every class is seen).

    The draw is seeded by ``(seed, index)``, so reference ``index`` of a seed is the same
    whichever process trains it. Returns sorted positions into ``y``.
    """
    pool = np.arange(len(y)) if rows is None and y is not None else np.asarray(rows)
    rng = np.random.default_rng([seed, index])
    if y is None:
        return np.sort(rng.choice(pool, size=min(size, pool.size), replace=False))
    share = min(size / max(pool.size, 1), 1.0)
    chosen = []
    for cls in np.unique(y[pool]):
        members = rng.permutation(pool[y[pool] == cls])
        take = int(np.clip(round(share * members.size), 1, members.size))
        chosen.append(members[:take])
    return np.sort(np.concatenate(chosen))


def fit_reference(
    estimator: Any,
    X: pd.DataFrame,
    y: np.ndarray,
    rows: np.ndarray,
    *,
    drop: Sequence[str] = (),
) -> Any:
    """A reference model: a clone of ``estimator`` trained on ``rows`` of ``(X, y)``.

    Parameters
    ----------
    estimator : object
        The target's training algorithm (cloned, left as it is).
    X : pandas.DataFrame
        The population the attacker holds.
    y : numpy.ndarray
        Their labels, one per row of ``X``.
    rows : numpy.ndarray
        Positions of the rows it trains on (:func:`reference_rows`).
    drop : sequence of str, default ()
        Columns to train without (a reference for a model retrained without them).

    Returns
    -------
    object
        The fitted clone.
    """
    return fit_without(estimator, X.iloc[rows], y[rows], drop)


def signal(losses: np.ndarray, kind: Signal) -> np.ndarray:
    """What an attack reads of a record from its per-record loss (:func:`per_record_loss`).

    ``"log"``: the log-probability of the true class; ``"logit"``: its logit (LiRA's scaling);
    ``"loss"``: minus the loss (a regressor's squared error).
    """
    if kind == "logit":
        log_p = -losses
        return np.asarray(log_p - np.log(np.clip(-np.expm1(log_p), 1e-12, 1.0)))
    return np.asarray(-losses)


def calibrate_a(losses: np.ndarray, trained: np.ndarray) -> float:
    """Offline RMIA's ``a``, chosen on the reference models alone.

    Each reference in turn plays the target: its members are the population records it trained
    on, its non-members the others; for each record the remaining references that did not train
    on it give ``mean Pr_OUT``. The ``a`` of :data:`A_GRID` with the highest mean AUC over these
    games is returned (the smallest on ties); :data:`UNCALIBRATED_A` if there are fewer than two
    references or no game has both members and non-members.

    Parameters
    ----------
    losses : numpy.ndarray
        Shape ``(n_references, n_records)``: each reference's loss on population records.
    trained : numpy.ndarray
        Same shape, boolean: whether that reference trained on that record.

    Returns
    -------
    float
        The chosen ``a``, in [0, 1].
    """
    k = losses.shape[0]
    if k < 2:
        return UNCALIBRATED_A
    proba = np.exp(-losses)
    aucs = []
    for j in range(k):
        others = np.arange(k) != j
        weight = ~trained[others]
        seen = weight.sum(axis=0)
        keep = seen > 0
        labels = trained[j, keep]
        if labels.all() or not labels.any():
            continue
        p_out = (proba[others] * weight).sum(axis=0)[keep] / seen[keep]
        own = np.log(np.clip(proba[j, keep], 1e-300, None))
        aucs.append(
            [roc_auc_score(labels, own - np.log(((1 + a) * p_out + (1 - a)) / 2)) for a in A_GRID]
        )
    if not aucs:
        return UNCALIBRATED_A
    return float(A_GRID[int(np.argmax(np.mean(aucs, axis=0)))])


@dataclass(frozen=True, eq=False)  # holds an array
class ReferenceTerm:
    """What the reference models say of each candidate: ``score = signal(target) - values``.

    Parameters
    ----------
    attack : {"rmia", "rmia-online", "lira"}
        The attack it belongs to.
    values : numpy.ndarray
        One value per candidate (members first, then non-members).
    signal : {"log", "logit", "loss"}
        What is read of the target's output (:func:`signal`).
    a : float or None, default None
        Offline RMIA's ``a`` (``None`` for the other attacks and for regressors).
    """

    attack: str
    values: np.ndarray = field(repr=False)
    signal: Signal
    a: float | None = None

    def scores(self, losses: np.ndarray) -> np.ndarray:
        """Each candidate's membership score, from the target's per-record losses on them."""
        return np.asarray(signal(losses, self.signal) - self.values)


def reference_term(
    losses: np.ndarray, task: Task, attack: str = "rmia", *, a: float | None = None
) -> ReferenceTerm:
    """Each candidate's reference term, from the reference models' losses on it.

    Parameters
    ----------
    losses : numpy.ndarray
        Shape ``(n_references, n_candidates)``: each reference model's per-record loss (cross
        entropy of the true class, or squared error), as
        :func:`~attrpriv.assess.models.per_record_loss` gives it. For the offline attacks the
        references must not have trained on the candidates.
    task : {"classification", "regression"}
        The models' task.
    attack : {"rmia", "rmia-online", "lira"}, default "rmia"
        Which attack (see the module docstring).
    a : float or None, default None
        Offline RMIA's ``a`` in [0, 1] (:func:`calibrate_a`); ``None`` is
        :data:`UNCALIBRATED_A`. Ignored by the other attacks.

    Returns
    -------
    ReferenceTerm
        ``"rmia"``: ``log(((1 + a) mean_k p_k + (1 - a)) / 2)``; ``"rmia-online"``:
        ``log mean_k p_k`` (the mean of probabilities, not of logs); ``"lira"``: the mean logit;
        for a regressor ``-mean_k loss_k``.
    """
    check_choice(attack, "attack", REFERENCE_ATTACKS)
    if task == "regression":
        return ReferenceTerm(attack, np.asarray(-losses.mean(axis=0)), "loss")
    if attack == "lira":
        return ReferenceTerm(attack, signal(losses, "logit").mean(axis=0), "logit")
    if attack == "rmia-online":
        values = logsumexp(-losses, axis=0) - np.log(losses.shape[0])
        return ReferenceTerm(attack, np.asarray(values), "log")
    a = UNCALIBRATED_A if a is None else float(a)
    if not 0.0 <= a <= 1.0:
        raise InputError(f"a must be in [0, 1], got {a}")
    p_out = np.exp(-losses).mean(axis=0)
    return ReferenceTerm(attack, np.log(((1 + a) * p_out + (1 - a)) / 2), "log", a)


def reference_attack(
    model: Any,
    members: Labelled,
    non_members: Labelled,
    reference: ReferenceTerm,
    *,
    confidence: float = 0.95,
) -> MembershipResult:
    """Score members and non-members against the reference models' term.

    Parameters
    ----------
    model : object
        The fitted target model (black box: only its outputs are read).
    members : tuple of (pandas.DataFrame, array_like)
        ``(X, y)`` of records known to be in the model's training set (at least 2).
    non_members : tuple of (pandas.DataFrame, array_like)
        ``(X, y)`` of records known not to be in it (at least 2).
    reference : ReferenceTerm
        Each candidate's reference term (:func:`reference_term`), members first, then
        non-members, in their order.
    confidence : float, default 0.95
        Confidence level of the AUC's CI (DeLong), in (0, 1).

    Returns
    -------
    MembershipResult
        The attack's ROC, AUC, advantage and TPRs at low FPR; ``attack`` is the term's.

    Raises
    ------
    InputError
        If ``members`` or ``non_members`` is not an ``(X, y)`` pair of a DataFrame and as many
        labels (at least 2 records), ``reference`` does not hold one value per candidate, or a
        label is not among a classifier's classes.
    """
    both = candidates(members, non_members)
    if reference.values.shape != both.labels.shape:
        raise InputError(
            f"reference has shape {reference.values.shape}, expected ({both.labels.size},): one "
            "value per member, then per non-member"
        )
    scores = reference.scores(per_record_loss(model, both.X, both.y))
    return membership_result(both.labels, scores, attack=reference.attack, confidence=confidence)


class ReferenceAttack:
    """A membership attack with reference models, against a black-box classifier or regressor.

    Threat model: the attacker knows the training algorithm and holds population records. For
    the offline variants (``"rmia"``, ``"lira"``) they must not include the candidates of
    :meth:`attack`; for ``"rmia-online"`` they must include them. See
    :mod:`attrpriv.assess.reference`.

    Parameters
    ----------
    n_references : int, default 2
        Reference models, >= 1 (checked in :meth:`fit`).
    variant : {"rmia", "rmia-online", "lira"}, default "rmia"
        Which attack (checked in :meth:`fit`).
    train_size : int or None, default None
        Population records each reference trains on; ``None``: half of them. Give the
        target's training-set size when the population is large enough (the references then
        resemble the target most).
    seed : int, default 0
        Seed of the references' training rows.
    """

    def __init__(
        self,
        n_references: int = 2,
        variant: str = "rmia",
        train_size: int | None = None,
        seed: int = 0,
    ) -> None:
        self.n_references = n_references
        self.variant = variant
        self.train_size = train_size
        self.seed = seed

    def fit(self, estimator: Any, X: pd.DataFrame, y: Any) -> ReferenceAttack:
        """Train the reference models on random samples of the population.

        Parameters
        ----------
        estimator : object
            The target's training algorithm: a scikit-learn classifier or regressor, cloned for
            every reference model.
        X : pandas.DataFrame
            The population (at least 20 records).
        y : array_like
            Their labels, one per row of ``X``; for a classifier at least 2 records of each
            class.

        Returns
        -------
        ReferenceAttack
            This attack, with ``task_``, ``models_`` and ``a_`` (offline RMIA's calibrated
            ``a``; ``None`` otherwise) learned.

        Raises
        ------
        InputError
            If ``n_references``, ``variant`` or ``train_size`` is invalid, ``X`` is not a
            DataFrame, ``y`` does not hold one label per row, there are fewer than 20 records,
            or a class has fewer than 2.
        """
        n = check_positive_int(self.n_references, "n_references")
        check_choice(self.variant, "variant", REFERENCE_ATTACKS)
        frame, labels = labelled((X, y), "population")
        if len(frame) < MIN_REFERENCE_ROWS:
            raise InputError(
                f"the population must hold at least {MIN_REFERENCE_ROWS} records, got {len(frame)}"
            )
        size = len(frame) // 2 if self.train_size is None else self.train_size
        size = check_positive_int(size, "train_size")
        if size >= len(frame):
            raise InputError(
                f"train_size must be below the population's {len(frame)} records, got {size}"
            )
        task = task_of(estimator)
        if task == "classification" and np.unique(labels, return_counts=True)[1].min() < 2:
            raise InputError("each class of y needs at least 2 records, one for each half")
        self.task_: Task = task
        stratify = labels if task == "classification" else None
        rows = [reference_rows(stratify, size, index=k, seed=int(self.seed)) for k in range(n)]
        self.models_ = [fit_reference(estimator, frame, labels, r) for r in rows]
        self.a_: float | None = None
        if self.variant == "rmia" and task == "classification":
            probe = np.random.default_rng(int(self.seed)).permutation(len(frame))
            probe = np.sort(probe[:MAX_CALIBRATION_ROWS])
            losses = np.array(
                [per_record_loss(m, frame.iloc[probe], labels[probe]) for m in self.models_]
            )
            self.a_ = calibrate_a(losses, np.array([np.isin(probe, r) for r in rows]))
        return self

    def attack(
        self,
        model: Any,
        members: Labelled,
        non_members: Labelled,
        *,
        confidence: float = 0.95,
    ) -> MembershipResult:
        """Score the target's members and non-members against the reference models.

        Parameters
        ----------
        model : object
            The fitted target model (black box: only its outputs are read).
        members : tuple of (pandas.DataFrame, array_like)
            ``(X, y)`` of records known to be in the model's training set (at least 2).
        non_members : tuple of (pandas.DataFrame, array_like)
            ``(X, y)`` of records known not to be in it (at least 2).
        confidence : float, default 0.95
            Confidence level of the AUC's CI (DeLong), in (0, 1).

        Returns
        -------
        MembershipResult
            As :func:`reference_attack` returns it.

        Raises
        ------
        NotFittedError
            If called before :meth:`fit`.
        InputError
            If ``members`` or ``non_members`` is malformed or a label is not among a
            classifier's classes.
        """
        check_fitted(self, "models_")
        both = candidates(members, non_members)
        losses = np.array([per_record_loss(m, both.X, both.y) for m in self.models_])
        term = reference_term(losses, self.task_, self.variant, a=self.a_)
        return reference_attack(model, members, non_members, term, confidence=confidence)
