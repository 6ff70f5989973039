"""FeatureRiskAssessor: which feature sets make a model leak, and what to do about them.

The steps of the spec (FIG. 2): take a model and a dataset (202), select target feature sets
(204), run the differential inference attack -- the same membership attack against the model
trained on all features and against the model retrained without the set -- plus feature-level
attacks and the overfitting and utility tests (206), score and rank the sets against a threshold
(208), and mitigate the riskiest set, retrain and re-assess until every score is under the
threshold (210). See docs/assess/risk-scores.md.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from sklearn.base import clone, is_classifier

from attrpriv._checks import (
    check_choice,
    check_flag,
    check_positive_int,
    check_probability,
)
from attrpriv.assess import _grid, _summary, checkpoint
from attrpriv.assess.choices import (
    ATTACKS,
    BACKENDS,
    FLAG_ON,
    MEMBERSHIP_ATTACKS,
    MODEL_CHOICES,
    REFERENCE_ATTACKS,
)
from attrpriv.assess.feature_sets import resolve_feature_sets
from attrpriv.assess.inference import MIN_RECORDS
from attrpriv.assess.mitigation import Mitigation
from attrpriv.assess.models import task_of
from attrpriv.assess.parallel import check_n_jobs, run_tasks
from attrpriv.assess.reference import (
    ReferenceTerm,
    calibrate_a,
    reference_term,
)
from attrpriv.assess.report import MitigationPath, MitigationStep, RiskReport, set_label
from attrpriv.assess.scoring import ScoreWeights
from attrpriv.assess.screening import Screening, screen_columns
from attrpriv.dp.mechanism import Parameters
from attrpriv.errors import InputError, NotFittedError, offending

if TYPE_CHECKING:
    from attrpriv.dp.ledger import BudgetLedger

__all__ = ["FeatureRiskAssessor"]

FeatureSetSpec = str | Sequence[Sequence[str]]
FAMILIES = ("singles", "pairs", "power", "preselect")
MIN_SHADOW_ROWS = 20  # training rows of each shadow model
# A set holding an identifier-like column is flagged when its membership differential's CI is
# above 0; it gets this many times the repeats, so that the CI that rule reads is narrower.
IDENTIFIER_REPEATS = 2
MIN_SHADOW_CLASS_ROWS = 6  # per class: >= 2 in the attacker's half, so every shadow half has one
MIN_PROPERTY_ROWS = 120  # the property game's 100 query records + 20 to draw shadow datasets from
_LEARNED_BY_MITIGATE = ("mitigated_", "final_report_")
_LEARNED = ("report_", "feature_names_in_", *_LEARNED_BY_MITIGATE)
_UNDER = {  # why the loop stopped when nothing is flagged, by flag_on
    "estimate": "every score is under the threshold",
    "lower": "no score is significantly over the threshold (every CI's lower end is under it)",
}


class FeatureRiskAssessor(Parameters):
    """Assess the privacy risk of each target feature set of a model by retraining without it.

    A scikit-learn style estimator: parameters are stored as given (``get_params`` /
    ``set_params``, so ``sklearn.base.clone`` works, and ``repr`` shows those that differ from
    their defaults); :meth:`fit` assesses and returns the assessor; the learned attributes end
    in ``_`` and reading one before it is learned raises :class:`~attrpriv.errors.NotFittedError`.

    Parameters
    ----------
    estimator : object
        An unfitted (or fitted: it is cloned) scikit-learn classifier, regressor or pipeline
        that can be refit on a subset of the columns (e.g. ``make_model("hgb")``). A classifier
        needs ``predict_proba``.
    feature_sets : str or sequence of sequence of str, default "singles"
        The target feature sets: ``"singles"``, ``"pairs"``, ``"power:K"``,
        ``"preselect:BY:K"`` or explicit sets (see
        :func:`~attrpriv.assess.feature_sets.resolve_feature_sets`).
    attacks : sequence of str, default ("membership", "attribute")
        Distinct names among ``"membership"`` (the differential attack), ``"attribute"``,
        ``"property"``.
    threshold : float, default 0.05
        A modified score above it flags the set (step 208); in [0, 1].
    flag_on : {"estimate", "lower"}, default "estimate"
        ``"estimate"`` flags on the point estimate; ``"lower"`` only when the lower end of the
        score's CI is above the threshold (significantly over it: fewer flags from noise, at the
        price of missing risks the repeats cannot resolve).
    weights : ScoreWeights, default ScoreWeights()
        :class:`~attrpriv.assess.scoring.ScoreWeights` of the overall/modified scores; at least
        one requested attack must have a weight > 0.
    n_repeats : int, default 3
        Seeds (split + training seed ``seed + i``) the attacks are repeated over; >= 1. A set
        holding an identifier-like column (most values unique) gets twice as many for its
        membership differential, which its flag rests on.
    test_size : float, default 0.3
        Share of the rows held out (the non-members and the utility test); in (0, 1).
    membership_attack : {"rmia", "rmia-online", "lira", "loss", "shadow"}, default "rmia"
        ``"rmia"``: offline RMIA with ``n_references`` reference models per seed, trained once
        on rows that are not attacked and shared by every retrained model
        (:mod:`attrpriv.assess.reference`; the strongest measured, docs/benchmarks.md);
        ``"rmia-online"``: RMIA with references on halves of all rows; ``"lira"``: offline
        LiRA; ``"loss"``: the loss threshold (Yeom et al.); ``"shadow"``: shadow models
        (Shokri et al.).
    n_references : int, default 2
        Reference models per seed of the reference attacks; >= 1.
    n_shadows : int, default 4
        Shadow models of the shadow membership attack, and per world (low/high) of the property
        game; >= 2.
    attack_model : {"logreg", "rf", "hgb", "mlp"}, default "hgb"
        The learner of the attribute attack and its baselines (a built-in model name;
        ``"logreg"`` is the fast choice).
    max_attack_rows : int or None, default 2000
        At most this many members (and as many non-members) are attacked; >= 10, or ``None``
        for no limit.
    sensitive : sequence of str, default ()
        Columns of ``X`` named sensitive: for each, how much better an attacker infers it
        from the model than without it, with the model trained with and without each feature
        set, and which sets are its proxies (``RiskReport.sensitive``).
    sensitive_input : bool, default True
        Whether the sensitive columns are model inputs (and target feature sets). ``False``:
        every model is trained without them; they are only inferred.
    max_repeats : int or None, default None
        Adaptive repeats: while a feature set's modified score has a CI that holds the
        threshold, add a repeat for such sets only (their retrainings and feature-level
        attacks; one more full model), up to ``max_repeats`` in all; >= ``n_repeats``, or
        ``None`` for exactly ``n_repeats``.
    checkpoint : str or pathlib.Path or None, default None
        A folder where every finished retraining and feature-level attack is kept as it
        finishes, so that a rerun on the same data and settings resumes
        (:mod:`attrpriv.assess.checkpoint`; JSON, never a pickle).
    confidence : float, default 0.95
        Confidence level of the CIs; in (0, 1).
    backend : {"sequential", "joblib", "dask"}, default "joblib"
        How the retrainings run.
    n_jobs : int, default 2
        Workers of the backend: >= 1, or -1 for one per CPU.
    progress : bool, default False
        Whether to show the progress of the retrainings on stderr.
    seed : int, default 0
        Seed of the splits, the retrainings and the attacks; >= 0.

    Notes
    -----
    The parameters are checked in :meth:`fit`, :meth:`assess` and :meth:`mitigate` (an
    :class:`~attrpriv.errors.InputError` for a bad one), not in the constructor.

    Learned: ``report_`` (the last :class:`RiskReport`), ``feature_names_in_``, and after
    :meth:`mitigate`, ``mitigated_`` (the mitigated copy of X) and ``final_report_`` (the
    assessment of ``mitigated_``, every score with its CI).
    """

    def __init__(
        self,
        estimator: Any,
        *,
        feature_sets: FeatureSetSpec = "singles",
        attacks: Sequence[str] = ("membership", "attribute"),
        threshold: float = 0.05,
        flag_on: str = "estimate",
        weights: ScoreWeights = ScoreWeights(),  # noqa: B008 - frozen, immutable
        n_repeats: int = 3,
        test_size: float = 0.3,
        membership_attack: str = "rmia",
        n_references: int = 2,
        n_shadows: int = 4,
        attack_model: str = "hgb",
        max_attack_rows: int | None = 2000,
        sensitive: Sequence[str] = (),
        sensitive_input: bool = True,
        max_repeats: int | None = None,
        checkpoint: str | Path | None = None,
        confidence: float = 0.95,
        backend: str = "joblib",
        n_jobs: int = 2,
        progress: bool = False,
        seed: int = 0,
    ) -> None:
        self.estimator = estimator
        self.feature_sets = feature_sets
        self.attacks = attacks
        self.threshold = threshold
        self.flag_on = flag_on
        self.weights = weights
        self.n_repeats = n_repeats
        self.test_size = test_size
        self.membership_attack = membership_attack
        self.n_references = n_references
        self.n_shadows = n_shadows
        self.attack_model = attack_model
        self.max_attack_rows = max_attack_rows
        self.sensitive = sensitive
        self.sensitive_input = sensitive_input
        self.max_repeats = max_repeats
        self.checkpoint = checkpoint
        self.confidence = confidence
        self.backend = backend
        self.n_jobs = n_jobs
        self.progress = progress
        self.seed = seed

    # -- public API ------------------------------------------------------------------------------

    def fit(self, X: pd.DataFrame | np.ndarray, y: pd.Series | np.ndarray) -> FeatureRiskAssessor:
        """Assess ``X`` and ``y`` (:meth:`assess`), keep the report in ``report_``; return self.

        Parameters
        ----------
        X : pandas.DataFrame or numpy.ndarray
            The features: at least 40 rows and 2 columns with distinct string names (a 2-d array's
            columns are named ``x0``, ``x1``, ...).
        y : pandas.Series or numpy.ndarray
            The target, 1-d, one value per row of ``X``, no missing value: numeric for a regressor;
            for a classifier at least 2 classes of at least 2 rows each.

        Returns
        -------
        FeatureRiskAssessor
            This assessor, with ``report_`` and ``feature_names_in_`` learned.

        Raises
        ------
        InputError
            If a parameter is invalid, ``X`` or ``y`` is malformed, or there are too few rows (or
            rows of a class) for a requested attack.
        """
        self.assess(X, y)
        return self

    def _repr_param(self, name: str, value: Any) -> str:
        """The estimator in brief (a pipeline's step types, then its model)."""
        return (
            f"estimator={describe(value)}"
            if name == "estimator"
            else super()._repr_param(name, value)
        )

    def __getattr__(self, name: str) -> Any:
        """A learned attribute read before it is learned: :class:`NotFittedError`."""
        if name in _LEARNED:
            how = "mitigate(X, y, strategies)" if name in _LEARNED_BY_MITIGATE else "fit(X, y)"
            raise NotFittedError(f"this FeatureRiskAssessor has no {name} yet: call {how} first")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def assess(self, X: pd.DataFrame | np.ndarray, y: pd.Series | np.ndarray) -> RiskReport:
        """Score every target feature set (steps 202-208) and rank them, riskiest first.

        Parameters
        ----------
        X : pandas.DataFrame or numpy.ndarray
            The features: at least 40 rows and 2 columns with distinct string names (a 2-d array's
            columns are named ``x0``, ``x1``, ...).
        y : pandas.Series or numpy.ndarray
            The target, 1-d, one value per row of ``X``, no missing value: numeric for a regressor;
            for a classifier at least 2 classes of at least 2 rows each.

        Returns
        -------
        RiskReport
            The ranked report, also kept in ``report_`` (``feature_names_in_`` is learned too).

        Raises
        ------
        InputError
            If a parameter is invalid, ``X`` or ``y`` is malformed, or there are too few rows (or
            rows of a class) for a requested attack.
        """
        self._check_params()
        frame, target = _check_data(X, y, task_of(self.estimator) == "classification")
        self._check_rows(target)
        self.feature_names_in_ = np.asarray(frame.columns, dtype=object)
        kept, screening = self._screen(frame)
        sets = self._resolve(self.feature_sets, kept)
        values = frame[list(self.sensitive)]
        self.report_ = self._assess(kept, target, sets, screening.report_notes(), values)
        return self.report_

    def mitigate(
        self,
        X: pd.DataFrame | np.ndarray,
        y: pd.Series | np.ndarray,
        strategies: Sequence[Mitigation],
        max_steps: int = 5,
        *,
        ledger: BudgetLedger | None = None,
    ) -> RiskReport:
        """Assess, then mitigate the riskiest flagged set, retrain and re-assess (step 210).

        Each time a set is the riskiest flagged one it gets the next strategy in ``strategies``
        (an escalation ladder, e.g. generalize, then local-DP noise, then drop), applied to its
        original values. Stops when no set is flagged, no strategy is left for the flagged sets,
        or after ``max_steps`` mitigations.

        Parameters
        ----------
        X : pandas.DataFrame or numpy.ndarray
            The features: at least 40 rows and 2 columns with distinct string names (a 2-d array's
            columns are named ``x0``, ``x1``, ...).
        y : pandas.Series or numpy.ndarray
            The target, 1-d, one value per row of ``X``, no missing value: numeric for a regressor;
            for a classifier at least 2 classes of at least 2 rows each.
        strategies : sequence of Mitigation
            The escalation ladder: a non-empty sequence of objects with an
            ``apply(X, features, seed=)`` method. A strategy that raises
            :class:`~attrpriv.errors.InputError` on a set is skipped for it (the reason is kept
            in the step).
        max_steps : int, default 5
            At most this many mitigations; >= 1.
        ledger : BudgetLedger or None, optional
            Charged by every strategy that draws noise (local DP), before it draws; each
            strategy's ``apply`` then takes ``ledger=``. A set's noise is drawn once per
            strategy and reused when later steps replay it on the same input, so it is charged
            once, not at every step.

        Returns
        -------
        RiskReport
            The first assessment, with the mitigation path in ``mitigation`` (also kept in
            ``report_``); the mitigated data is in ``mitigated_``, its assessment in
            ``final_report_``.

        Raises
        ------
        InputError
            If a parameter is invalid (``strategies`` and ``max_steps`` too), ``X`` or ``y`` is
            malformed, or there are too few rows (or rows of a class) for a requested attack.
        """
        self._check_params()
        max_steps = check_positive_int(max_steps, "max_steps")
        if isinstance(strategies, (str, bytes)) or not strategies:
            raise InputError("strategies must be a non-empty sequence of Mitigation objects")
        for strategy in strategies:
            if not callable(getattr(strategy, "apply", None)):
                raise InputError(f"strategy {strategy!r} has no apply(X, features, seed=) method")
        frame, target = _check_data(X, y, task_of(self.estimator) == "classification")
        self._check_rows(target)
        self.feature_names_in_ = np.asarray(frame.columns, dtype=object)
        kept, screening = self._screen(frame)
        notes, values = screening.report_notes(), frame[list(self.sensitive)]
        first, path, mitigated, final = self._loop(
            kept, target, list(strategies), max_steps, notes, values, ledger
        )
        left_out = {c: frame[c] for c in frame.columns if c not in kept.columns}  # back, as is
        self.mitigated_, self.final_report_ = mitigated.assign(**left_out), final
        self.report_ = replace(first, mitigation=path)
        return self.report_

    # -- steps -----------------------------------------------------------------------------------

    def _screen(self, X: pd.DataFrame) -> tuple[pd.DataFrame, Screening]:
        """``X`` without the columns no audit can use (:func:`screen_columns`), and the finding.

        An explicit feature set naming such a column is an input error (it cannot be scored).
        """
        screening = screen_columns(X)
        spec = self.feature_sets
        if isinstance(spec, str) and spec.strip().split(":")[0].strip().lower() in FAMILIES:
            named: set[str] = set()
        elif isinstance(spec, str):
            named = {f.strip() for g in spec.split(";") for f in g.split(",")}
        else:
            named = {f for g in spec for f in g}
        for column in sorted(named & set(screening.left_out)):
            raise InputError(
                f"feature set column {column!r} cannot be assessed: {screening.left_out[column]}"
            )
        for column in self.sensitive:
            if column not in X.columns:
                raise InputError(f"sensitive column {column!r} is not a column of X")
            if column in screening.left_out:
                raise InputError(
                    f"sensitive column {column!r} cannot be assessed: {screening.left_out[column]}"
                )
        gone = [*screening.left_out, *([] if self.sensitive_input else self.sensitive)]
        kept = X.drop(columns=list(dict.fromkeys(gone)))
        if kept.shape[1] < 2:
            raise InputError(
                f"X has {kept.shape[1]} usable column(s) after leaving out "
                f"{sorted(gone)} (unusable, or sensitive and not a model input); at least 2 are "
                "needed"
            )
        return kept, screening

    def _resolve(
        self, spec: FeatureSetSpec, X: pd.DataFrame, *, strict: bool = True
    ) -> list[tuple[str, ...]]:
        """Target feature sets on the columns of ``X``.

        ``strict=False`` (the mitigation loop, after a drop): explicit sets lose the columns
        that are gone, and sets left empty (or covering every column) are skipped.
        """
        if isinstance(spec, str) and spec.strip().split(":")[0].strip().lower() in FAMILIES:
            return resolve_feature_sets(spec, X, seed=int(self.seed))
        if strict:
            return resolve_feature_sets(spec, X, seed=int(self.seed))
        groups = [g.split(",") for g in spec.split(";")] if isinstance(spec, str) else spec
        kept = [tuple(f.strip() for f in g if f.strip() in X.columns) for g in groups]
        present = [list(g) for g in dict.fromkeys(kept) if g and len(g) < X.shape[1]]
        return resolve_feature_sets(present, X, seed=int(self.seed)) if present else []

    def _assess(
        self,
        X: pd.DataFrame,
        y: pd.Series,
        sets: list[tuple[str, ...]],
        screened: tuple[str, ...],
        sensitive: pd.DataFrame,
    ) -> RiskReport:
        """Run the grid of retrainings and attacks on ``X`` and build the ranked report.

        ``sensitive``: the sensitive columns' values (rows as in ``X``), inputs of the model or
        not; positions, not index labels, align the three (the index is reset here).
        """
        attacks = tuple(self.attacks)
        started = time.perf_counter()
        X, y = X.reset_index(drop=True), y.reset_index(drop=True)
        data = _grid.GridData(
            X=X,
            y=y,
            estimator=self.estimator,
            classification=task_of(self.estimator) == "classification",
            test_size=float(self.test_size),
            membership="membership" in attacks,
            membership_attack=self.membership_attack,
            n_shadows=int(self.n_shadows),
            n_references=int(self.n_references),
            attack_model=self.attack_model,
            max_attack_rows=self.max_attack_rows,
            confidence=float(self.confidence),
            seed=int(self.seed),
            sensitive=tuple(sensitive.columns),
            sensitive_values=sensitive.reset_index(drop=True),
            checkpoint=self._checkpoint_folder(X, y, sensitive),
        )
        repeats = range(int(self.n_repeats))
        features = list(dict.fromkeys(f for group in sets for f in group))
        skipped = _grid.skipped_attacks(X, features, attacks)
        attacked: dict[str, list[str]] = {
            kind: [f for f in features if (kind, f) not in skipped]
            for kind in ("attribute", "property")
            if kind in attacks
        }
        self._say(_plan(data, len(sets), attacked, len(repeats)))
        full, tasks, results = self._pass(data, repeats, sets, attacked, estimate=True)
        identifiers = [g for g in sets if data.membership and _grid.identifier_like(X, g)]
        doubled = range(0)  # the identifier-like sets' extra repeats (membership only)
        if identifiers:  # a fixed design: always, never because of what the first repeats showed
            more = doubled = range(len(full), IDENTIFIER_REPEATS * len(full))
            self._say(
                f"identifier-like sets: {len(more)} more repeats of the membership differential "
                f"for {len(identifiers)} set(s)"
            )
            extra, new_tasks, new_results = self._pass(data, more, identifiers, {})
            full, tasks, results = full + extra, tasks + new_tasks, results + new_results
            screened = (
                *screened,
                f"identifier-like sets ({', '.join(set_label(g) for g in identifiers)}) got "
                f"{len(full)} repeats of the membership differential instead of {len(repeats)}, "
                "so that the identifier rule is judged on a narrower CI",
            )
        outcomes = _summary.Outcomes.collect(full, tasks, results)
        weights, threshold = self.weights, float(self.threshold)
        risks = [
            _summary.set_risk(g, outcomes, data, weights, threshold, self.flag_on, doubled)
            for g in sets
        ]
        added: dict[tuple[str, ...], int] = {}
        while len(full) - len(doubled) < int(self.max_repeats or 0):
            undecided = [r.features for r in risks if _straddles(r.modified_ci, threshold)]
            if not undecided:
                break
            names = {f for group in undecided for f in group}
            some = {kind: [f for f in fs if f in names] for kind, fs in attacked.items()}
            more = range(len(full), len(full) + 1)
            self._say(f"adaptive repeats: repeat {more[0] + 1} for {len(undecided)} set(s)")
            extra, new_tasks, new_results = self._pass(data, more, undecided, some)
            full, tasks, results = full + extra, tasks + new_tasks, results + new_results
            outcomes = _summary.Outcomes.collect(full, tasks, results)
            for group in undecided:
                added[group] = added.get(group, 0) + 1
            risks = [
                _summary.set_risk(g, outcomes, data, weights, threshold, self.flag_on, doubled)
                if g in undecided
                else r
                for g, r in zip(sets, risks, strict=True)
            ]
        if added:
            n = int(self.n_repeats)
            screened = (
                *screened,
                f"adaptive repeats: {len(added)} of {len(sets)} feature set(s), whose modified "
                f"score's CI held the threshold, got up to {n + max(added.values())} repeats "
                f"instead of {n}",
            )
        notes = (
            screened
            + tuple(
                f"{kind} inference skipped for {f!r}: {why}" for (kind, f), why in skipped.items()
            )
            + tuple(
                f"{f!r} is identifier-like ({share:.0%} of its values occur once): a set holding "
                "it is flagged whenever its membership differential's CI excludes 0, whatever "
                "the threshold"
                for f, share in _grid.identifier_like(X, features).items()
                if "membership" in attacks
            )
            + outcomes.notes()
        )
        model = _summary.model_summary(full, data, doubled)
        if model.membership is not None and model.membership.score.ci[0] <= 0:
            low, high = (v + 0.5 for v in model.membership.score.ci)
            notes = (
                f"the membership attack on the full model cannot tell members from non-members "
                f"(AUC {model.membership.auc:.3f}, CI [{low:.3f}, {high:.3f}] holds 0.5): every "
                "membership differential here is inconclusive, not evidence of no risk; attack "
                "more rows (more attacked rows: --max-attack-rows) or use a stronger attack",
                *notes,
            )
        exposed = tuple(
            _summary.sensitive_risk(
                a, a in X.columns, sets, outcomes, data.confidence, threshold, self.flag_on, doubled
            )
            for a in data.sensitive
        )
        return RiskReport(
            self.settings(),
            model,
            _summary.rank(risks),
            notes=notes,
            sensitive=exposed,
            run=_run_info(data, time.perf_counter() - started),
        )

    def _loop(
        self,
        X: pd.DataFrame,
        y: pd.Series,
        strategies: list[Mitigation],
        max_steps: int,
        screened: tuple[str, ...],
        sensitive: pd.DataFrame,
        ledger: BudgetLedger | None,
    ) -> tuple[RiskReport, MitigationPath, pd.DataFrame, RiskReport]:
        """The mitigation loop; see :meth:`mitigate`."""
        done = Replays(ledger)
        sets = self._resolve(self.feature_sets, X)
        report = first = self._assess(X, y, sets, screened, sensitive)
        base = first.model.utility_test
        steps = [_step(0, None, None, report, base)]
        levels: dict[tuple[str, ...], int] = {}  # set -> index of its current strategy
        current, stopped = X, ""
        for step in range(1, max_steps + 1):
            if not report.flagged:
                break
            ladder = [
                r.features
                for r in report.flagged
                if levels.get(r.features, -1) + 1 < len(strategies)
            ]
            if not ladder:
                stopped = "no strategy left for the flagged feature sets"
                break
            target = ladder[0]
            candidate, records, skipped = _next_rung(
                X, y, target, levels, strategies, int(self.seed), done
            )
            if candidate is None:
                stopped = f"could not mitigate {set_label(target)}: {'; '.join(skipped)}"
                break
            if candidate.shape[1] < 2:
                stopped = f"mitigating {set_label(target)} would leave fewer than 2 columns"
                break
            current = candidate
            sets = self._resolve(self.feature_sets, current, strict=False)
            report = self._assess(current, y, sets, screened, sensitive)
            applied = records.get(target, {})
            name = strategies[levels[target]].name
            steps.append(_step(step, target, name, report, base, applied, skipped))
        if not stopped:
            stopped = (
                _UNDER[self.flag_on]
                if not report.flagged
                else f"the most steps allowed ({max_steps}) were taken"
            )
        path = MitigationPath(tuple(steps), stopped, float(self.threshold))
        return first, path, current, report

    def _checkpoint_folder(
        self, X: pd.DataFrame, y: pd.Series, sensitive: pd.DataFrame
    ) -> str | None:
        """``checkpoint/<digest of the data and every setting>``, or None without a checkpoint."""
        if self.checkpoint is None:
            return None
        settings = {
            **self.settings(),
            "estimator_params": {
                k: v if isinstance(v, (str, int, float, bool, type(None))) else type(v).__name__
                for k, v in self.estimator.get_params(deep=True).items()
            },
            "sensitive_values": list(pd.util.hash_pandas_object(sensitive, index=False).to_numpy()),
        }
        return str(Path(self.checkpoint) / checkpoint.data_key(X, y, settings))

    def _say(self, line: str) -> None:
        """A line of the plan on stderr, when progress is on."""
        if self.progress:
            sys.stderr.write(line + "\n")
            sys.stderr.flush()

    def _pass(
        self,
        data: _grid.GridData,
        repeats: range,
        sets: Sequence[tuple[str, ...]],
        attacked: dict[str, list[str]],
        *,
        estimate: bool = False,
    ) -> tuple[list[_grid.ModelOutcome], list[_grid.Task], list[Any]]:
        """The grid for ``repeats``: reference and full models, the retrainings without each
        set and the feature-level attacks; with ``estimate``, the time estimate on stderr."""
        normalizers = dict(zip(repeats, self._normalizers(data, repeats), strict=True))
        fitting = time.perf_counter()
        full = self._run(
            data,
            [_grid.Task("full", r, normalizer=normalizers[r]) for r in repeats],
            "training full models",
        )
        per_fit = (time.perf_counter() - fitting) / len(repeats)
        model = dict(zip(repeats, full, strict=True))
        tasks = [
            _grid.Task(
                "without", r, group, reference=model[r].membership, normalizer=normalizers[r]
            )
            for group in sets
            for r in repeats
        ]
        for kind, names in attacked.items():
            tasks += [_grid.Task(kind, r, (f,), model[r].model) for f in names for r in repeats]
        kept = _kept(data, tasks)
        if kept:
            self._say(
                f"resuming: {kept} of {len(tasks)} tasks were finished in the checkpoint and are "
                "loaded, not run again"
            )
        if estimate:
            left = sum(t.kind == "without" for t in tasks) - _kept(data, tasks, ("without",))
            workers = 1 if self.backend == "sequential" else max(int(self.n_jobs), 1)
            self._say(
                f"plan: a full model took {per_fit:.1f} s with its attacks; the {left} "
                f"retrainings left will take about {per_fit * left / workers:.0f} s on "
                f"{workers} worker(s), plus the feature-level attacks"
            )
        results = self._run(data, tasks, f"retraining without {len(sets)} feature sets")
        return full, tasks, results

    def _normalizers(self, data: _grid.GridData, repeats: range) -> list[ReferenceTerm | None]:
        """Per repeat, the reference attack's term of each candidate record (or ``None``).

        The reference models are trained once per repeat, on all features, and shared by the
        full model and every retrained one (docs/assess/attacks.md says what that costs in
        accuracy: the retrained models' attack is, if anything, underestimated).
        """
        if not (data.membership and data.membership_attack in REFERENCE_ATTACKS):
            return [None for _ in repeats]
        k = int(self.n_references)
        tasks = [_grid.Task("reference", r, index=i) for r in repeats for i in range(k)]
        found: list[_grid.ReferenceLosses] = self._run(
            data, tasks, f"training {len(tasks)} reference models"
        )
        task = task_of(data.estimator)
        terms: list[ReferenceTerm | None] = []
        for i in range(len(repeats)):
            models = found[i * k : (i + 1) * k]
            a = None
            if data.membership_attack == "rmia" and task == "classification":
                a = calibrate_a(
                    np.array([m.population for m in models]), np.array([m.trained for m in models])
                )
            losses = np.array([m.candidates for m in models])
            terms.append(reference_term(losses, task, data.membership_attack, a=a))
        return terms

    def _run(self, data: _grid.GridData, tasks: list[_grid.Task], what: str) -> list[Any]:
        return run_tasks(
            _grid.run_task,
            data,
            tasks,
            backend=self.backend,
            n_jobs=self.n_jobs,
            progress=self.progress,
            description=what,
        )

    def settings(self) -> dict[str, Any]:
        """The parameters, as the report records them.

        Returns
        -------
        dict of str to object
            Every parameter but ``backend``, ``n_jobs`` and ``progress``, as plain values: the
            estimator as its short description, ``weights`` as a dict.
        """
        return {
            "estimator": describe(self.estimator),
            "feature_sets": self.feature_sets,
            "attacks": list(self.attacks),
            "threshold": float(self.threshold),
            "flag_on": self.flag_on,
            "weights": self.weights.to_dict(),
            "n_repeats": int(self.n_repeats),
            "test_size": float(self.test_size),
            "membership_attack": self.membership_attack,
            "n_references": int(self.n_references),
            "n_shadows": int(self.n_shadows),
            "attack_model": self.attack_model,
            "max_attack_rows": self.max_attack_rows,
            "sensitive": list(self.sensitive),
            "sensitive_input": bool(self.sensitive_input),
            "max_repeats": self.max_repeats,
            "checkpoint": None if self.checkpoint is None else str(self.checkpoint),
            "confidence": float(self.confidence),
            "seed": int(self.seed),
        }

    def _check_rows(self, y: pd.Series) -> None:
        """Enough rows for each attack, counted as the grid splits them (one line if not).

        The shadow attack holds out half the rows as the attacker's and trains each shadow on
        half of those (split by class, so a classifier's class needs rows in every half); the
        rest splits into train (members, the property game's data) and test.
        """
        n_rows = len(y)
        shadow = "membership" in self.attacks and self.membership_attack == "shadow"
        if shadow and task_of(self.estimator) == "classification":
            counts = y.value_counts()
            if counts.iloc[-1] < MIN_SHADOW_CLASS_ROWS:
                raise InputError(
                    f"the rarest class{offending(counts.index[-1])} of y has "
                    f"{int(counts.iloc[-1])} rows; the "
                    f"shadow-model attack needs at least {MIN_SHADOW_CLASS_ROWS} of each class "
                    "(half for the attacker, halved again per shadow): give more rows or use "
                    "membership_attack='loss'"
                )
        kept = n_rows - int(np.ceil(n_rows * _grid.AUX_SHARE)) if shadow else n_rows
        test = int(np.ceil(kept * self.test_size))
        needs = {
            "the shadow-model attack": (shadow, (n_rows - kept) // 2, MIN_SHADOW_ROWS),
            "attribute inference": (
                "attribute" in self.attacks,
                min(kept - test, test),
                MIN_RECORDS,
            ),
            "property inference": ("property" in self.attacks, kept - test, MIN_PROPERTY_ROWS),
        }
        for attack, (used, rows, minimum) in needs.items():
            if used and rows < minimum:
                raise InputError(
                    f"{attack} gets {rows} of the {n_rows} rows after the splits (test share "
                    f"{self.test_size:g}{', half held out for the shadows' if shadow else ''}) "
                    f"and needs at least {minimum}: give more rows"
                )

    def _check_params(self) -> None:
        """Validate every parameter at the boundary (one-line InputError each)."""
        if not callable(getattr(self.estimator, "fit", None)):
            raise InputError(f"estimator must be a scikit-learn estimator, got {self.estimator!r}")
        try:
            clone(self.estimator)
        except (TypeError, RuntimeError) as exc:
            raise InputError(f"estimator cannot be cloned and retrained: {exc}") from None
        if is_classifier(self.estimator) and not hasattr(self.estimator, "predict_proba"):
            raise InputError(
                f"estimator {type(self.estimator).__name__} has no predict_proba: the attacks read "
                "class probabilities; use a probabilistic model or wrap it in "
                "sklearn.calibration.CalibratedClassifierCV"
            )
        attacks = self.attacks
        if isinstance(attacks, str) or not attacks or len(set(attacks)) != len(attacks):
            raise InputError(
                f"attacks must be distinct names among {list(ATTACKS)}, got {attacks!r}"
            )
        for attack in attacks:
            check_choice(attack, "attacks", ATTACKS)
        if not isinstance(self.weights, ScoreWeights):
            raise InputError(f"weights must be a ScoreWeights, got {type(self.weights).__name__}")
        if not any(self.weights.attack_weight(a) > 0 for a in attacks):
            raise InputError(f"weights give every requested attack {list(attacks)} weight 0")
        check_probability(self.threshold, "threshold", open_interval=False)
        check_choice(self.flag_on, "flag_on", FLAG_ON)
        if isinstance(self.sensitive, (str, bytes)) or not all(
            isinstance(c, str) for c in self.sensitive
        ):
            raise InputError(
                f"sensitive must be a sequence of column names, e.g. ('race',), got "
                f"{type(self.sensitive).__name__}"
            )
        check_flag(self.sensitive_input, "sensitive_input")
        if self.max_repeats is not None:
            check_positive_int(self.max_repeats, "max_repeats", minimum=int(self.n_repeats))
        if self.checkpoint is not None and not isinstance(self.checkpoint, (str, Path)):
            raise InputError(
                f"checkpoint must be a folder path or None, got {type(self.checkpoint).__name__}"
            )
        check_positive_int(self.n_repeats, "n_repeats")
        check_probability(self.test_size, "test_size")
        check_choice(self.membership_attack, "membership_attack", MEMBERSHIP_ATTACKS)
        check_positive_int(self.n_shadows, "n_shadows", minimum=2)
        check_positive_int(self.n_references, "n_references")
        check_choice(self.attack_model, "attack_model", MODEL_CHOICES)
        if self.max_attack_rows is not None:
            check_positive_int(self.max_attack_rows, "max_attack_rows", minimum=10)
        check_probability(self.confidence, "confidence")
        check_choice(self.backend, "backend", BACKENDS)
        check_n_jobs(self.n_jobs)
        check_positive_int(self.seed, "seed", minimum=0)


def describe(estimator: Any) -> str:
    """A short, stable description: a pipeline's step types, then its final estimator's repr."""
    steps = getattr(estimator, "steps", None)
    if steps:
        parts = [type(step).__name__ for _, step in steps[:-1]] + [repr(steps[-1][1])]
    else:
        parts = [repr(estimator)]
    return " | ".join(" ".join(part.split()) for part in parts)


@dataclass
class Replays:
    """What each strategy made of each input during one mitigation loop, so that replaying it
    on the same input reuses its output: noise is drawn, and charged to ``ledger``, once."""

    ledger: BudgetLedger | None
    made: list[tuple[tuple[str, ...], int, pd.DataFrame, pd.DataFrame, dict[str, Any]]] = field(
        default_factory=list
    )

    def apply(
        self,
        strategy: Mitigation,
        level: int,
        frame: pd.DataFrame,
        features: tuple[str, ...],
        seed: int,
        y: pd.Series,
    ) -> tuple[pd.DataFrame, dict[str, Any]]:
        """``strategy`` on ``frame``: the output it made of this input before, or a new one."""
        present = [f for f in features if f in frame.columns]
        for known, rung, before, after, record in self.made:
            if known == features and rung == level and before.equals(frame):
                return after, record
        extra = {} if self.ledger is None else {"ledger": self.ledger}
        out = strategy.apply(frame, present, seed=seed, y=y, **extra)
        to_dict = getattr(getattr(strategy, "applied_", None), "to_dict", None)
        record = dict(to_dict()) if callable(to_dict) else {}
        self.made.append((features, level, frame, out, record))
        return out, record


def _apply(
    X: pd.DataFrame,
    y: pd.Series,
    levels: dict[tuple[str, ...], int],
    strategies: Sequence[Mitigation],
    seed: int,
    done: Replays,
) -> tuple[pd.DataFrame, dict[tuple[str, ...], dict[str, Any]]]:
    """Replay the current strategy of every mitigated set on the original data, in order
    (a strategy's output on an input it saw before is reused: ``done``).

    Returns the mitigated frame and, per set, what its strategy recorded (``applied_``: its
    parameters and, for local DP, epsilon; never data values).
    """
    frame, records = X, {}
    for features, level in levels.items():
        if any(f in frame.columns for f in features):
            frame, records[features] = done.apply(
                strategies[level], level, frame, features, seed, y
            )
    return frame, records


def _next_rung(
    X: pd.DataFrame,
    y: pd.Series,
    target: tuple[str, ...],
    levels: dict[tuple[str, ...], int],
    strategies: Sequence[Mitigation],
    seed: int,
    done: Replays,
) -> tuple[pd.DataFrame | None, dict[tuple[str, ...], dict[str, Any]], tuple[str, ...]]:
    """Move ``target`` to its next strategy that applies, skipping (and saying why) those that
    raise InputError on it; ``None`` as the frame when no rung of the ladder is left.
    """
    skipped: list[str] = []
    for level in range(levels.get(target, -1) + 1, len(strategies)):
        levels[target] = level
        try:
            candidate, records = _apply(X, y, levels, strategies, seed, done)
        except InputError as exc:
            skipped.append(f"{strategies[level].name}: {exc}")
            continue
        return candidate, records, tuple(skipped)
    return None, {}, tuple(skipped)


def _step(
    step: int,
    target: tuple[str, ...] | None,
    strategy: str | None,
    report: RiskReport,
    base_utility: float,
    applied: dict[str, Any] | None = None,
    skipped: tuple[str, ...] = (),
) -> MitigationStep:
    """The state after one pass of the loop (utility of the model on all current features)."""
    return MitigationStep(
        step=step,
        feature_set=target,
        strategy=strategy,
        utility=report.model.utility_test,
        utility_paid=base_utility - report.model.utility_test,
        max_score=report.max_score,
        flagged=tuple(r.features for r in report.flagged),
        scores={r.label: r.modified for r in report.feature_sets},
        applied=applied or {},
        skipped=skipped,
    )


def _kept(
    data: _grid.GridData,
    tasks: Sequence[_grid.Task],
    kinds: Sequence[str] = ("without", "attribute", "property"),
) -> int:
    """How many of ``tasks`` (of ``kinds``) the checkpoint folder already holds."""
    if data.checkpoint is None:
        return 0
    return sum(
        checkpoint.result_path(data.checkpoint, t.kind, t.repeat, t.features).exists()
        for t in tasks
        if t.kind in kinds
    )


def _straddles(ci: tuple[float, float], threshold: float) -> bool:
    """Whether a CI holds the threshold (more repeats could decide which side the score is)."""
    return not math.isnan(ci[0]) and ci[0] <= threshold <= ci[1]


def _plan(data: _grid.GridData, n_sets: int, attacked: dict[str, list[str]], n_repeats: int) -> str:
    """What the assessment will do, in one line."""
    split = _grid.make_split(data, 0)
    references = data.n_references if data.membership_attack in REFERENCE_ATTACKS else 0
    parts = [
        f"{n_repeats * references} reference models" if data.membership and references else "",
        f"{n_repeats} full models",
        f"{n_repeats * n_sets} retrainings without {n_sets} feature sets",
        *(f"{n_repeats * len(names)} {kind} attacks" for kind, names in attacked.items()),
        f"{len(data.sensitive)} sensitive attribute(s) on every model" if data.sensitive else "",
    ]
    return (
        f"plan: {len(data.X)} rows ({len(split.train[0])} trained on, "
        f"{len(split.members[0])} + {len(split.non_members[0])} attacked), {n_repeats} "
        f"repeats: {', '.join(p for p in parts if p)}"
    )


def _run_info(data: _grid.GridData, seconds: float) -> dict[str, Any]:
    """Rows trained and attacked (those of the first repeat), versions, date, wall seconds."""
    split = _grid.make_split(data, 0)
    packages = ("attrpriv", "scikit-learn", "numpy", "pandas")
    return {
        "rows": {
            "all": len(data.X),
            "trained": len(split.train[0]),
            "held_out": len(split.test[0]),
            "attacked_members": len(split.members[0]),
            "attacked_non_members": len(split.non_members[0]),
        },
        "versions": {name: version(name) for name in packages} | {"python": sys.version.split()[0]},
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "seconds": round(seconds, 3),
    }


def _check_data(X: Any, y: Any, classification: bool) -> tuple[pd.DataFrame, pd.Series]:
    """X as a DataFrame with >= 2 named columns, y as a Series of the same length, no missing y.

    A classification target needs two classes, each with two rows (for the stratified split);
    a regression target must be numeric.
    """
    if isinstance(X, np.ndarray) and X.ndim == 2:
        X = pd.DataFrame(X, columns=[f"x{i}" for i in range(X.shape[1])])
    if not isinstance(X, pd.DataFrame):
        raise InputError(f"X must be a pandas DataFrame or a 2-d array, got {type(X).__name__}")
    if X.shape[1] < 2:
        raise InputError(f"X needs at least 2 columns (one is dropped at a time), got {X.shape[1]}")
    if not all(isinstance(c, str) for c in X.columns) or X.columns.has_duplicates:
        raise InputError("X must have distinct string column names")
    if not isinstance(y, pd.Series) and np.asarray(y).ndim != 1:
        raise InputError(f"y must be 1-d, got shape {np.asarray(y).shape}")
    target = y if isinstance(y, pd.Series) else pd.Series(np.asarray(y))
    if len(target) != len(X):
        raise InputError(f"y must be 1-d with one value per row of X ({len(X)}), got {len(target)}")
    if target.isna().any():
        raise InputError(f"y has {int(target.isna().sum())} missing values; drop those rows first")
    if len(X) < 40:
        raise InputError(f"X needs at least 40 rows to split into train and test, got {len(X)}")
    if not classification and not pd.api.types.is_numeric_dtype(target):
        name = f"target {target.name!r}" if target.name is not None else "y"
        raise InputError(
            f"{name} must be numeric for a regressor, got dtype {target.dtype}; use a "
            "classifier for a categorical target"
        )
    if classification:
        counts = target.value_counts()
        if len(counts) < 2:
            raise InputError(
                f"y has a single class{offending(counts.index[0])}; a classifier needs at least "
                "2 classes"
            )
        if counts.iloc[-1] < 2:
            raise InputError(
                f"the rarest class{offending(counts.index[-1])} of y has 1 row; each class needs "
                "at least 2 rows "
                "for the stratified train/test split"
            )
    return X.reset_index(drop=True), target.reset_index(drop=True)
