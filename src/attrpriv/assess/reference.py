"""Membership inference with reference models: offline RMIA (Zarifzadeh, Liu, Mitra & Shokri, ICML
2024; ``score = log Pr(y|x, target) - log Pr(x)``, ``Pr(x) = ((1 + a) mean_k Pr(y|x, ref_k) +
(1 - a)) / 2``), online RMIA, and LiRA (Carlini et al., S&P 2022). See docs/assess/attacks.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np
import pandas as pd
from scipy.special import logsumexp
from sklearn.metrics import roc_auc_score

from attrpriv._checks import SEED, Rule, check_choice, check_positive_int, integer, one_of, optional
from attrpriv.assess.choices import REFERENCE_ATTACKS
from attrpriv.assess.membership import (
    BlackBoxAttack,
    Candidates,
    Labelled,
    MembershipResult,
    labelled,
    scored_candidates,
)
from attrpriv.assess.models import Task, fit_without, per_record_loss, task_of
from attrpriv.dp.mechanism import validated
from attrpriv.errors import InputError

__all__ = [
    "ReferenceAttack",
    "ReferenceTerm",
    "calibrate_a",
    "fit_reference",
    "known_rows",
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
    """Sorted positions of the ``size`` rows reference ``index`` trains on (seeded; per class)."""
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


def known_rows(
    y: np.ndarray | None, pool: np.ndarray, trained: np.ndarray, *, index: int, seed: int
) -> np.ndarray:
    """Sorted positions an informed offline reference trains on: every row of ``pool`` (the
    unattacked rows) that ``trained`` the target, filled up to the target's size with other
    ``pool`` rows (per class, as many as the target's class counts ask; seeded by ``index``)."""
    known = np.intersect1d(pool, trained)
    others = np.setdiff1d(pool, trained)
    rng = np.random.default_rng([seed, index])
    if y is None:
        need = min(trained.size - known.size, others.size)
        return np.sort(np.r_[known, rng.choice(others, size=need, replace=False)])
    filler = []
    for cls in np.unique(y[trained]):
        need = int(np.sum(y[trained] == cls) - np.sum(y[known] == cls))
        spare = others[y[others] == cls]
        filler.append(rng.choice(spare, size=min(need, spare.size), replace=False))
    return np.sort(np.concatenate([known, *filler]))


def fit_reference(
    estimator: Any,
    X: pd.DataFrame,
    y: np.ndarray,
    rows: np.ndarray,
    *,
    drop: Sequence[str] = (),
) -> Any:
    """A clone of ``estimator`` trained on ``rows`` of ``(X, y)``, without ``drop``."""
    return fit_without(estimator, X.iloc[rows], y[rows], drop)


def signal(losses: np.ndarray, kind: Signal) -> np.ndarray:
    """What an attack reads of a loss: ``"log"`` probability, ``"logit"`` or ``"loss"``."""
    if kind == "logit":
        log_p = -losses
        return np.asarray(log_p - np.log(np.clip(-np.expm1(log_p), 1e-12, 1.0)))
    return np.asarray(-losses)


def calibrate_a(losses: np.ndarray, trained: np.ndarray) -> float:
    """Offline RMIA's ``a``: the :data:`A_GRID` value with the best mean AUC, each reference playing
    the target against the others (:data:`UNCALIBRATED_A` with fewer than two).
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
    """The references' term per candidate, members first: ``score = signal(target) - values``."""

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
    """Each candidate's :class:`ReferenceTerm` from the references' ``losses`` (offline: OUT only).

    ``"rmia-online"``: ``log mean_k p_k``; ``"lira"``: the mean logit; regressors: ``-mean_k loss``.
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
    """Score ``members``, then ``non_members``, of ``model`` against ``reference``."""

    def score(both: Candidates) -> np.ndarray:
        if reference.values.shape != both.labels.shape:
            raise InputError(
                f"reference has shape {reference.values.shape}, expected ({both.labels.size},): "
                "one value per member, then per non-member"
            )
        return reference.scores(per_record_loss(model, both.X, both.y))

    return scored_candidates(
        members, non_members, score, attack=reference.attack, confidence=confidence
    )


class ReferenceAttack(BlackBoxAttack):
    """A membership attack with reference models (RMIA or LiRA) against a black-box model.

    Threat model: the attacker knows the training algorithm and holds population records, which
    must exclude the candidates for ``"rmia"`` and ``"lira"`` and include them for
    ``"rmia-online"``. See docs/assess/attacks.md.

    Parameters
    ----------
    n_references : int, default 2
        Reference models, >= 1.
    variant : {"rmia", "rmia-online", "lira"}, default "rmia"
        Which attack.
    train_size : int or None, default None
        Population records each reference trains on; ``None``: half (best: the target's size).
    seed : int, default 0
        Seed of the references' training rows.
    """

    _constraints: ClassVar[Mapping[str, Rule]] = {
        "n_references": integer(),
        "variant": one_of(REFERENCE_ATTACKS),
        "train_size": optional(integer()),
        "seed": SEED,
    }

    _fitted = "models_"

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

    @validated
    def fit(self, estimator: Any, X: pd.DataFrame, y: Any) -> ReferenceAttack:
        """Train the reference models on random samples of the population.

        Parameters
        ----------
        estimator : object
            The target's training algorithm (a scikit-learn classifier or regressor), cloned.
        X, y : pandas.DataFrame, array_like
            The population (>= 20 records) and its labels (>= 2 per class for a classifier).

        Returns
        -------
        ReferenceAttack
            This attack, with ``task_``, ``models_`` and ``a_`` learned.

        Raises
        ------
        InputError
            If a parameter is invalid, ``X``/``y`` are malformed or there are too few records.
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

    def _scores(self, model: Any, both: Candidates) -> np.ndarray:
        losses = np.array([per_record_loss(m, both.X, both.y) for m in self.models_])
        term = reference_term(losses, self.task_, self.variant, a=self.a_)
        return term.scores(per_record_loss(model, both.X, both.y))

    def _attack_name(self) -> str:
        return str(self.variant)
