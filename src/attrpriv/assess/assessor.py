"""FeatureRiskAssessor: which feature sets make a model leak, and what to do about them.

See docs/assess/risk-scores.md.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd
from sklearn.base import clone, is_classifier

from attrpriv._checks import (
    FLAG,
    SEED,
    Rule,
    check_choice,
    check_non_negative,
    check_positive_int,
    instance_of,
    integer,
    one_of,
    optional,
    probability,
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
from attrpriv.assess.feature_sets import SPEC_FORMS, resolve_feature_sets
from attrpriv.assess.inference import MIN_RECORDS
from attrpriv.assess.loop import Loop, LoopSettings, model_level
from attrpriv.assess.mitigation import Mitigation, ModelMitigation
from attrpriv.assess.mitigation.choice import CHOICES
from attrpriv.assess.models import task_of
from attrpriv.assess.parallel import check_n_jobs, run_tasks
from attrpriv.assess.reference import (
    ReferenceTerm,
    calibrate_a,
    reference_term,
)
from attrpriv.assess.report import (
    ModelSummary,
    RiskReport,
    set_label,
)
from attrpriv.assess.scoring import ScoreWeights
from attrpriv.assess.screening import Screening, screen_columns
from attrpriv.dp.mechanism import Mechanism, Parameters, validated
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
_LEARNED_BY_MITIGATE = ("mitigated_", "final_report_", "mitigated_estimator_")
_LEARNED = ("report_", "feature_names_in_", *_LEARNED_BY_MITIGATE)
_UNDER = {  # why the loop stopped when nothing is flagged, by flag_on
    "estimate": "every score is under the threshold",
    "lower": "no score is significantly over the threshold (every CI's lower end is under it)",
}


def _estimator(value: object, name: str) -> object:
    """A cloneable scikit-learn estimator (a classifier needs ``predict_proba``)."""
    if not callable(getattr(value, "fit", None)):
        raise InputError(f"{name} must be a scikit-learn estimator, got {value!r}")
    try:
        clone(value)
    except (TypeError, RuntimeError) as exc:
        raise InputError(f"{name} cannot be cloned and retrained: {exc}") from None
    if is_classifier(value) and not hasattr(value, "predict_proba"):
        raise InputError(
            f"{name} {type(value).__name__} has no predict_proba: the attacks read class "
            "probabilities; use a probabilistic model or wrap it in "
            "sklearn.calibration.CalibratedClassifierCV"
        )
    return value


def _attacks(value: object, name: str) -> tuple[str, ...]:
    """Distinct attack names."""
    if (
        isinstance(value, str)
        or not isinstance(value, (list, tuple))
        or not value
        or len(set(value)) != len(value)
    ):
        raise InputError(f"{name} must be distinct names among {list(ATTACKS)}, got {value!r}")
    return tuple(check_choice(attack, name, ATTACKS) for attack in value)


def _feature_sets(value: object, name: str) -> object:
    """A family's name or a list of explicit sets (resolved against the columns in ``fit``)."""
    if not isinstance(value, (str, list, tuple)):
        raise InputError(f"{name} must be a string ({SPEC_FORMS}) or a list of sets")
    return value


def _column_list(value: object, name: str) -> tuple[str, ...]:
    """Column names, e.g. ``('race',)`` (none is fine)."""
    if (
        isinstance(value, (str, bytes))
        or not isinstance(value, (list, tuple))
        or not all(isinstance(c, str) for c in value)
    ):
        raise InputError(
            f"{name} must be a sequence of column names, e.g. ('race',), got {type(value).__name__}"
        )
    return tuple(value)


def _folder(value: object, name: str) -> object:
    """A folder path, or None."""
    if value is not None and not isinstance(value, (str, Path)):
        raise InputError(f"{name} must be a folder path or None, got {type(value).__name__}")
    return value


class FeatureRiskAssessor(Parameters):
    """Assess the privacy risk of each target feature set of a model by retraining without it.

    A scikit-learn style estimator; parameters are checked when it runs, not here. See
    docs/assess/risk-scores.md.

    Parameters
    ----------
    estimator : object
        A scikit-learn classifier, regressor or pipeline (cloned), e.g. ``make_model("hgb")``.
    feature_sets : str or sequence of sequence of str, default "singles"
        ``"singles"``, ``"pairs"``, ``"power:K"``, ``"preselect:BY:K"`` or explicit sets.
    attacks : sequence of str, default ("membership", "attribute")
        Distinct names among ``"membership"`` (differential), ``"attribute"``, ``"property"``.
    threshold : float, default 0.05
        A modified score above it flags the set; in [0, 1].
    flag_on : {"estimate", "lower"}, default "estimate"
        Compare the point estimate, or the lower end of its CI, with the threshold.
    weights : ScoreWeights, default ScoreWeights()
        Weights of the overall score; a requested attack must have one > 0.
    n_repeats : int, default 3
        Seeds the attacks are repeated over (doubled for identifier-like sets); >= 1.
    test_size : float, default 0.3
        Share of the rows held out (non-members and utility test); in (0, 1).
    membership_attack : {"rmia", "rmia-online", "lira", "loss", "shadow"}, default "rmia"
        The membership attack; ``"rmia"`` (offline, shared reference models) is the strongest.
    n_references : int, default 2
        Reference models per seed of the reference attacks; >= 1.
    n_shadows : int, default 4
        Shadow models of the shadow attack, and per world of the property game; >= 2.
    attack_model : {"logreg", "rf", "hgb", "mlp"}, default "hgb"
        The learner of the attribute attack and its baselines (``"logreg"`` is fastest).
    max_attack_rows : int or None, default 2000
        At most this many members (and non-members) attacked; >= 10, or ``None``.
    sensitive : sequence of str, default ()
        Sensitive columns: what the model reveals of each, and which sets are their proxies.
    sensitive_input : bool, default True
        Whether the sensitive columns are model inputs; ``False``: they are only inferred.
    max_repeats : int or None, default None
        Add repeats for sets whose CI holds the threshold, up to this many; ``None``: no more.
    checkpoint : str or pathlib.Path or None, default None
        A folder keeping finished work (JSON), so that a rerun with the same inputs resumes.
    confidence : float, default 0.95
        Confidence level of the CIs; in (0, 1).
    backend : {"sequential", "joblib", "dask"}, default "joblib"
        How the retrainings run.
    n_jobs : int, default 2
        Workers of the backend: >= 1, or -1 for one per CPU.
    progress : bool, default False
        Whether to show progress on stderr.
    seed : int, default 0
        Seed of the splits, the retrainings and the attacks; >= 0.
    """

    _constraints: ClassVar[Mapping[str, Rule]] = {
        "estimator": Rule("a scikit-learn estimator (a classifier with predict_proba)", _estimator),
        "feature_sets": Rule("a family's name or a list of feature sets", _feature_sets),
        "attacks": Rule(f"distinct names among {list(ATTACKS)}", _attacks),
        "threshold": probability(open_interval=False),
        "flag_on": one_of(FLAG_ON),
        "weights": instance_of(ScoreWeights, "a ScoreWeights"),
        "n_repeats": integer(),
        "test_size": probability(),
        "membership_attack": one_of(MEMBERSHIP_ATTACKS),
        "n_references": integer(),
        "n_shadows": integer(2),
        "attack_model": one_of(MODEL_CHOICES),
        "max_attack_rows": optional(integer(10)),
        "sensitive": Rule("a list of column names (may be empty)", _column_list),
        "sensitive_input": FLAG,
        "max_repeats": optional(integer()),
        "checkpoint": Rule("None or a folder path", _folder),
        "confidence": probability(),
        "backend": one_of(BACKENDS),
        "n_jobs": Rule(
            "an integer >= 1, or -1 for one per CPU", lambda value, _: check_n_jobs(value)
        ),
        "progress": FLAG,
        "seed": SEED,
    }

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
        """Assess ``X`` and ``y`` (:meth:`assess`) and keep the report in ``report_``.

        Parameters
        ----------
        X, y : array_like
            The features and the target, as for :meth:`assess`.

        Returns
        -------
        FeatureRiskAssessor
            This assessor, with ``report_`` and ``feature_names_in_`` learned.
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

    @validated
    def assess(self, X: pd.DataFrame | np.ndarray, y: pd.Series | np.ndarray) -> RiskReport:
        """Score every target feature set and rank them, riskiest first.

        Parameters
        ----------
        X, y : array_like
            Features (>= 40 rows, >= 2 named columns) and a complete target (2+ rows per class).

        Returns
        -------
        RiskReport
            The ranked report, also kept in ``report_``.

        Raises
        ------
        InputError
            If a parameter or the data are invalid, or too few rows for a requested attack.
        """
        frame, target = _check_data(X, y, task_of(self.estimator) == "classification")
        self._check_rows(target)
        self.feature_names_in_ = np.asarray(frame.columns, dtype=object)
        kept, screening = self._screen(frame)
        sets = self._resolve(self.feature_sets, kept)
        values = frame[list(self.sensitive)]
        self.report_ = self._assess(kept, target, sets, screening.report_notes(), values)
        return self.report_

    @validated
    def mitigate(
        self,
        X: pd.DataFrame | np.ndarray,
        y: pd.Series | np.ndarray,
        strategies: Sequence[Mitigation | ModelMitigation],
        max_steps: int = 5,
        *,
        ledger: BudgetLedger | None = None,
        choose: str = "ladder",
        max_utility_loss: float | None = None,
        allow_unledgered: bool = False,
    ) -> RiskReport:
        """Assess, then mitigate flagged sets and re-assess, until none is flagged.

        ``choose="ladder"`` gives the riskiest flagged set its next rung of ``strategies``;
        ``"best"`` takes the strategy (on one of the riskiest flagged sets, or on the model)
        that removes the most excess risk per utility lost. See docs/assess/mitigation.md.

        Parameters
        ----------
        X, y : array_like
            Features (>= 40 rows, >= 2 named columns) and a complete target (2+ rows per class).
        strategies : sequence of Mitigation or ModelMitigation
            The ladder (``"ladder"``) or the candidates (``"best"``); a strategy raising
            ``InputError`` on a set is skipped for it. A model-level one (``apply_model``, such
            as ``Regularize``) changes the estimator, not the features.
        max_steps : int, default 5
            At most this many mitigations; >= 1.
        ledger : BudgetLedger or None, optional
            Charged once per set and strategy by every strategy that draws noise, before it
            draws (probes of ``"best"`` included). Required when a strategy draws noise.
        choose : {"ladder", "best"}, default "ladder"
            How the next step is picked.
        max_utility_loss : float or None, default None
            The most test utility (the model's metric, absolute) the path may lose in all, >= 0;
            a step that would lose more is not taken and the loop stops saying so.
        allow_unledgered : bool, default False
            Let a noise-drawing strategy run with no ledger (its privacy loss then goes
            uncounted).

        Returns
        -------
        RiskReport
            The first assessment with the path; also ``mitigated_``, ``final_report_`` and
            ``mitigated_estimator_``.

        Raises
        ------
        InputError
            If a parameter or the data are invalid, too few rows for a requested attack, or a
            strategy draws noise with no ledger.
        """
        max_steps = check_positive_int(max_steps, "max_steps")
        choose = check_choice(choose, "choose", CHOICES)
        if max_utility_loss is not None:
            max_utility_loss = check_non_negative(max_utility_loss, "max_utility_loss")
        if isinstance(strategies, (str, bytes)) or not strategies:
            raise InputError("strategies must be a non-empty sequence of Mitigation objects")
        for strategy in strategies:
            if not callable(getattr(strategy, "apply", None)) and not model_level(strategy):
                raise InputError(
                    f"strategy {strategy!r} has no apply(X, features, seed=) or "
                    "apply_model(estimator) method"
                )
            if isinstance(strategy, Mechanism) and ledger is None and not allow_unledgered:
                raise InputError(
                    f"strategy {strategy.name!r} draws noise: pass ledger= to charge it (or "
                    "allow_unledgered=True to leave its privacy loss uncounted)"
                )
        frame, target = _check_data(X, y, task_of(self.estimator) == "classification")
        self._check_rows(target)
        self.feature_names_in_ = np.asarray(frame.columns, dtype=object)
        kept, screening = self._screen(frame)
        notes, values = screening.report_notes(), frame[list(self.sensitive)]
        sets = self._resolve(self.feature_sets, kept)
        first = self._assess(kept, target, sets, notes, values)

        def assess(
            X: pd.DataFrame, sets: Sequence[tuple[str, ...]] | None, estimator: Any
        ) -> RiskReport:
            chosen = self._resolve(self.feature_sets if sets is None else list(sets), X,
                                   strict=False)  # fmt: skip
            return self._assess(X, target, chosen, notes, values, estimator=estimator)

        settings = LoopSettings(float(self.threshold), str(self.flag_on), int(self.seed),
                                max_steps, choose, max_utility_loss, self.estimator,
                                _UNDER[self.flag_on])  # fmt: skip
        done = Loop(assess, kept, target, strategies, settings, ledger).run(first)
        left_out = {c: frame[c] for c in frame.columns if c not in kept.columns}  # back, as is
        self.mitigated_ = done.frame.assign(**left_out)
        self.final_report_, self.mitigated_estimator_ = done.report, done.estimator
        self.report_ = replace(first, mitigation=done.path)
        return self.report_

    # -- steps -----------------------------------------------------------------------------------

    def _screen(self, X: pd.DataFrame) -> tuple[pd.DataFrame, Screening]:
        """``X`` without the columns no audit can use, and the finding."""
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
        """Target sets on ``X``'s columns; ``strict=False`` drops gone columns and empty sets."""
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
        *,
        estimator: Any = None,
    ) -> RiskReport:
        """Run the grid on ``X`` and build the ranked report (``sensitive`` aligned by position);
        ``estimator`` replaces the assessor's (a model-level mitigation)."""
        estimator = self.estimator if estimator is None else estimator
        attacks = tuple(self.attacks)
        started = time.perf_counter()
        X, y = X.reset_index(drop=True), y.reset_index(drop=True)
        data = _grid.GridData(
            X=X,
            y=y,
            estimator=estimator,
            classification=task_of(estimator) == "classification",
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
            checkpoint=self._checkpoint_folder(X, y, sensitive, estimator),
        )
        repeats = range(int(self.n_repeats))
        features = list(dict.fromkeys(f for group in sets for f in group))
        skipped = _grid.skipped_attacks(X, features, attacks)
        attacked = _attacked(features, skipped, attacks)
        self._say(_plan(data, len(sets), attacked, len(repeats)))
        full, tasks, results = self._pass(data, repeats, sets, attacked, estimate=True)
        identifiers = _identifier_sets(X, sets, data.membership)
        doubled = range(0)  # the identifier-like sets' extra repeats (membership only)
        if identifiers:  # a fixed design: always, never because of what the first repeats showed
            more = doubled = range(len(full), IDENTIFIER_REPEATS * len(full))
            self._say(
                f"identifier-like sets: {len(more)} more repeats of the membership differential "
                f"for {len(identifiers)} set(s)"
            )
            extra, new_tasks, new_results = self._pass(data, more, identifiers, {})
            full, tasks, results = full + extra, tasks + new_tasks, results + new_results
            screened = (*screened, _identifier_note(identifiers, len(full), len(repeats)))
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
            some = _narrowed(attacked, undecided)
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
        screened = (*screened, *_adaptive_note(added, len(sets), int(self.n_repeats)))
        shares = _grid.identifier_like(X, features) if "membership" in attacks else {}
        notes = screened + _skip_notes(skipped) + _identifier_notes(shares) + outcomes.notes()
        model = _summary.model_summary(full, data, doubled)
        notes = (*_inconclusive_note(model), *notes)
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

    def _checkpoint_folder(
        self, X: pd.DataFrame, y: pd.Series, sensitive: pd.DataFrame, estimator: Any
    ) -> str | None:
        """``checkpoint/<digest of the data and every setting>``, or None without a checkpoint."""
        if self.checkpoint is None:
            return None
        settings = {
            **self.settings(),
            "estimator_params": {
                k: v if isinstance(v, (str, int, float, bool, type(None))) else type(v).__name__
                for k, v in estimator.get_params(deep=True).items()
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
        """The grid for ``repeats``: reference, full and retrained models, feature-level attacks."""
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
        """Per repeat, the reference term of each candidate (references shared by all models)."""
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
            Every parameter but ``backend``, ``n_jobs`` and ``progress``, as plain values.
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
        """Enough rows for each attack, counted as the grid splits them (one line if not)."""
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

    def _validate_params(self) -> dict[str, Any]:
        """The declared constraints, then those between parameters (one-line InputError each)."""
        cleaned = super()._validate_params()
        if not any(self.weights.attack_weight(a) > 0 for a in cleaned["attacks"]):
            raise InputError(f"weights give every requested attack {list(self.attacks)} weight 0")
        if self.max_repeats is not None:
            check_positive_int(self.max_repeats, "max_repeats", minimum=cleaned["n_repeats"])
        return cleaned


def describe(estimator: Any) -> str:
    """A short, stable description: a pipeline's step types, then its final estimator's repr."""
    steps = getattr(estimator, "steps", None)
    if steps:
        parts = [type(step).__name__ for _, step in steps[:-1]] + [repr(steps[-1][1])]
    else:
        parts = [repr(estimator)]
    return " | ".join(" ".join(part.split()) for part in parts)


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


def _attacked(
    features: list[str], skipped: dict[tuple[str, str], str], attacks: tuple[str, ...]
) -> dict[str, list[str]]:
    """The features each requested feature-level attack runs on (those it does not skip)."""
    return {
        kind: [f for f in features if (kind, f) not in skipped]
        for kind in ("attribute", "property")
        if kind in attacks
    }


def _identifier_sets(
    X: pd.DataFrame, sets: list[tuple[str, ...]], membership: bool
) -> list[tuple[str, ...]]:
    """The sets holding an identifier-like feature, when the membership attack runs."""
    return [g for g in sets if membership and _grid.identifier_like(X, g)]


def _narrowed(
    attacked: dict[str, list[str]], undecided: list[tuple[str, ...]]
) -> dict[str, list[str]]:
    """Each attack's features, kept to those in an undecided set."""
    names = {f for group in undecided for f in group}
    return {kind: [f for f in fs if f in names] for kind, fs in attacked.items()}


def _identifier_note(identifiers: list[tuple[str, ...]], n_full: int, n_repeats: int) -> str:
    """The note on the identifier-like sets' extra repeats of the membership differential."""
    return (
        f"identifier-like sets ({', '.join(set_label(g) for g in identifiers)}) got "
        f"{n_full} repeats of the membership differential instead of {n_repeats}, "
        "so that the identifier rule is judged on a narrower CI"
    )


def _adaptive_note(added: dict[tuple[str, ...], int], n_sets: int, n: int) -> tuple[str, ...]:
    """The note on the adaptive repeats (none if no set got one)."""
    if not added:
        return ()
    return (
        f"adaptive repeats: {len(added)} of {n_sets} feature set(s), whose modified "
        f"score's CI held the threshold, got up to {n + max(added.values())} repeats "
        f"instead of {n}",
    )


def _skip_notes(skipped: dict[tuple[str, str], str]) -> tuple[str, ...]:
    """A note for each (attack, feature) pair that a feature-level attack skipped."""
    return tuple(f"{kind} inference skipped for {f!r}: {why}" for (kind, f), why in skipped.items())


def _identifier_notes(shares: dict[str, float]) -> tuple[str, ...]:
    """A note for each identifier-like feature, with the share of its values that occur once."""
    return tuple(
        f"{f!r} is identifier-like ({share:.0%} of its values occur once): a set holding "
        "it is flagged whenever its membership differential's CI excludes 0, whatever "
        "the threshold"
        for f, share in shares.items()
    )


def _inconclusive_note(model: ModelSummary) -> tuple[str, ...]:
    """The note that the full model's membership attack is inconclusive (none if it is not)."""
    if model.membership is not None and model.membership.score.ci[0] <= 0:
        low, high = (v + 0.5 for v in model.membership.score.ci)
        return (
            f"the membership attack on the full model cannot tell members from non-members "
            f"(AUC {model.membership.auc:.3f}, CI [{low:.3f}, {high:.3f}] holds 0.5): every "
            "membership differential here is inconclusive, not evidence of no risk; attack "
            "more rows (more attacked rows: --max-attack-rows) or use a stronger attack",
        )
    return ()


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
    """X as a DataFrame with >= 2 named columns, y as a Series of the same length, checked."""
    X = _checked_frame(X)
    target = _checked_target(y, len(X))
    if len(X) < 40:
        raise InputError(f"X needs at least 40 rows to split into train and test, got {len(X)}")
    _check_target_kind(target, classification)
    return X.reset_index(drop=True), target.reset_index(drop=True)


def _checked_frame(X: Any) -> pd.DataFrame:
    """X as a DataFrame (a 2-d array gets columns x0, x1, ...) with >= 2 distinct string names."""
    if isinstance(X, np.ndarray) and X.ndim == 2:
        X = pd.DataFrame(X, columns=[f"x{i}" for i in range(X.shape[1])])
    if not isinstance(X, pd.DataFrame):
        raise InputError(f"X must be a pandas DataFrame or a 2-d array, got {type(X).__name__}")
    if X.shape[1] < 2:
        raise InputError(f"X needs at least 2 columns (one is dropped at a time), got {X.shape[1]}")
    if not all(isinstance(c, str) for c in X.columns) or X.columns.has_duplicates:
        raise InputError("X must have distinct string column names")
    return X


def _checked_target(y: Any, n_rows: int) -> pd.Series:
    """y as a 1-d Series of ``n_rows`` values, none missing."""
    if not isinstance(y, pd.Series) and np.asarray(y).ndim != 1:
        raise InputError(f"y must be 1-d, got shape {np.asarray(y).shape}")
    target = y if isinstance(y, pd.Series) else pd.Series(np.asarray(y))
    if len(target) != n_rows:
        raise InputError(f"y must be 1-d with one value per row of X ({n_rows}), got {len(target)}")
    if target.isna().any():
        raise InputError(f"y has {int(target.isna().sum())} missing values; drop those rows first")
    return target


def _check_target_kind(target: pd.Series, classification: bool) -> None:
    """A regression target must be numeric; a classification one needs 2 classes of 2+ rows."""
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
