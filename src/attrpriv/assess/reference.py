"""Membership inference with reference models: RMIA, online, with few models.

Zarifzadeh, Liu, Mitra & Shokri, "Low-Cost High-Power Membership Inference Attacks" (ICML
2024). The attacker knows the training algorithm and the population the target's training rows
were drawn from (including the records it asks about), but not which of them were used. It
trains a few *reference models*, each on a random half of the population, so that every
candidate record is in about half of them. A record's score is its likelihood ratio

    score(x) = log Pr(y | x, target) - log mean_k Pr(y | x, reference_k)

for a classifier (``Pr(y | x, .)``: the probability the model gives the record's true class),
and ``mean_k loss_k(x) - loss_target(x)`` (squared errors) for a regressor. The mean over
reference models is RMIA's ``Pr(x)``: how likely the record's label is under a model trained on
the population whether or not it saw the record. Dividing by it calibrates each record's
difficulty, which the loss attack cannot do: a record every model finds easy (probability 1
everywhere) scores 0, not "member", and the scores of a full-depth forest no longer tie.
RMIA's pairwise test against population records ``z`` with threshold ``gamma = 1`` ranks the
candidates exactly as this ratio does, so the ROC, the AUC and every TPR at a fixed FPR are
those of RMIA with ``gamma = 1``.

The reference models are the only extra cost: trained once per seed of an assessment and shared
by every retrained target model (:class:`~attrpriv.assess.assessor.FeatureRiskAssessor`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import logsumexp

from attrpriv._checks import check_positive_int
from attrpriv.assess.membership import (
    Labelled,
    MembershipResult,
    candidates,
    labelled,
    membership_result,
    stratified_halves,
)
from attrpriv.assess.models import Task, fit_without, per_record_loss, task_of
from attrpriv.errors import InputError, NotFittedError

__all__ = ["ReferenceAttack", "fit_reference", "reference_attack", "reference_term"]

MIN_REFERENCE_ROWS = 20


def fit_reference(
    estimator: Any,
    X: pd.DataFrame,
    y: np.ndarray,
    *,
    index: int,
    seed: int,
    drop: Sequence[str] = (),
) -> Any:
    """The ``index``-th reference model: a clone of ``estimator`` on a random half of ``(X, y)``.

    The half is drawn within each class for a classifier (every class is seen) from a generator
    seeded by ``(seed, index)``, so reference ``index`` of a seed is the same whichever process
    trains it.

    Parameters
    ----------
    estimator : object
        The target's training algorithm (cloned, left as it is).
    X : pandas.DataFrame
        The population the attacker knows: the target's candidate records among them.
    y : numpy.ndarray
        Their labels, one per row of ``X``.
    index : int
        Which reference model of this seed, >= 0.
    seed : int
        The seed of the assessment's repeat.
    drop : sequence of str, default ()
        Columns to train without (a reference for a model retrained without them).

    Returns
    -------
    object
        The fitted clone.
    """
    rng = np.random.default_rng([seed, index])
    classification = task_of(estimator) == "classification"
    inside, _ = stratified_halves(y if classification else None, len(X), rng)
    return fit_without(estimator, X.iloc[inside], y[inside], drop)


def reference_term(losses: np.ndarray, task: Task) -> np.ndarray:
    """Each record's reference term, from the reference models' losses on it.

    Parameters
    ----------
    losses : numpy.ndarray
        Shape ``(n_references, n_records)``: each reference model's per-record loss (cross
        entropy of the true class, or squared error), as
        :func:`~attrpriv.assess.models.per_record_loss` gives it.
    task : {"classification", "regression"}
        The models' task.

    Returns
    -------
    numpy.ndarray
        Shape ``(n_records,)``: ``log mean_k Pr(y | x, reference_k)`` for a classifier (RMIA's
        ``Pr(x)``, the mean of probabilities, not of logs), ``-mean_k loss_k`` for a regressor.
    """
    if task == "classification":
        return np.asarray(logsumexp(-losses, axis=0) - np.log(losses.shape[0]))
    return np.asarray(-losses.mean(axis=0))


def reference_attack(
    model: Any,
    members: Labelled,
    non_members: Labelled,
    reference: np.ndarray,
    *,
    confidence: float = 0.95,
) -> MembershipResult:
    """Score members and non-members by their likelihood ratio to the reference models.

    Parameters
    ----------
    model : object
        The fitted target model (black box: only its outputs are read).
    members : tuple of (pandas.DataFrame, array_like)
        ``(X, y)`` of records known to be in the model's training set (at least 2).
    non_members : tuple of (pandas.DataFrame, array_like)
        ``(X, y)`` of records known not to be in it (at least 2).
    reference : numpy.ndarray
        Each candidate's reference term (:func:`reference_term`), members first, then
        non-members, in their order.
    confidence : float, default 0.95
        Confidence level of the AUC's CI (DeLong), in (0, 1).

    Returns
    -------
    MembershipResult
        The attack's ROC, AUC, advantage and TPRs at low FPR; ``attack`` is ``"reference"``.

    Raises
    ------
    InputError
        If ``members`` or ``non_members`` is not an ``(X, y)`` pair of a DataFrame and as many
        labels (at least 2 records), ``reference`` does not hold one value per candidate, or a
        label is not among a classifier's classes.
    """
    both = candidates(members, non_members)
    reference = np.asarray(reference, dtype=float)
    if reference.shape != both.labels.shape:
        raise InputError(
            f"reference has shape {reference.shape}, expected ({both.labels.size},): one value "
            "per member, then per non-member"
        )
    own = -per_record_loss(model, both.X, both.y)
    return membership_result(
        both.labels, own - reference, attack="reference", confidence=confidence
    )


class ReferenceAttack:
    """RMIA with few reference models (online), against a black-box classifier or regressor.

    Threat model: the attacker knows the training algorithm and holds the population the
    target's training rows were drawn from, candidates included (the online setting of LiRA and
    RMIA), but not which rows the target was trained on. See :mod:`attrpriv.assess.reference`.

    Parameters
    ----------
    n_references : int, default 2
        Reference models, each trained on a random half of the population, >= 1 (checked in
        :meth:`fit`).
    seed : int, default 0
        Seed of the reference models' halves.
    """

    def __init__(self, n_references: int = 2, seed: int = 0) -> None:
        self.n_references = n_references
        self.seed = seed

    def fit(self, estimator: Any, X: pd.DataFrame, y: Any) -> ReferenceAttack:
        """Train the reference models on random halves of the population.

        Parameters
        ----------
        estimator : object
            The target's training algorithm: a scikit-learn classifier or regressor, cloned for
            every reference model.
        X : pandas.DataFrame
            The population (at least 20 records), the candidates of :meth:`attack` among them.
        y : array_like
            Their labels, one per row of ``X``; for a classifier at least 2 records of each
            class.

        Returns
        -------
        ReferenceAttack
            This attack, with ``task_`` and ``models_`` learned.

        Raises
        ------
        InputError
            If ``n_references`` is invalid, ``X`` is not a DataFrame, ``y`` does not hold one
            label per row, there are fewer than 20 records, or a class has fewer than 2.
        """
        n = check_positive_int(self.n_references, "n_references")
        frame, labels = labelled((X, y), "population")
        if len(frame) < MIN_REFERENCE_ROWS:
            raise InputError(
                f"the population must hold at least {MIN_REFERENCE_ROWS} records, got {len(frame)}"
            )
        if (
            task_of(estimator) == "classification"
            and np.unique(labels, return_counts=True)[1].min() < 2
        ):
            raise InputError("each class of y needs at least 2 records, one for each half")
        self.task_: Task = task_of(estimator)
        self.models_ = [
            fit_reference(estimator, frame, labels, index=k, seed=int(self.seed)) for k in range(n)
        ]
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
        if not hasattr(self, "models_"):
            raise NotFittedError("this ReferenceAttack has no models_ yet: call fit(...) first")
        both = candidates(members, non_members)
        losses = np.array([per_record_loss(m, both.X, both.y) for m in self.models_])
        term = reference_term(losses, self.task_)
        return reference_attack(model, members, non_members, term, confidence=confidence)
