"""The mitigation loop: strategies applied to feature sets (or the model) until none is flagged.

Two ways to pick the next step (``choose``): ``"ladder"`` gives the riskiest flagged set the
next rung of the strategies in their order; ``"best"`` probes every strategy on each of the
riskiest flagged sets and on the model and takes the one that removes the most excess risk per
utility lost, confirmed by a full re-assessment. See docs/assess/mitigation.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import pandas as pd

from attrpriv.assess.mitigation import Mitigation
from attrpriv.assess.mitigation.choice import (
    MIN_REDUCTION,
    Candidate,
    admissible,
    ranked,
    total_excess,
)
from attrpriv.assess.report import MitigationPath, MitigationStep, RiskReport, set_label
from attrpriv.errors import InputError

if TYPE_CHECKING:
    from attrpriv.dp.ledger import BudgetLedger

Assess = Callable[[pd.DataFrame, Sequence[tuple[str, ...]] | None, Any], RiskReport]
"""Re-assess a frame: on the given sets' columns it holds (None: every set of the assessor's
spec), with the given estimator."""

Levels = dict[tuple[str, ...], int]
"""Each mitigated set's current strategy (an index); the model's under the empty set ``()``."""

MAX_PROBED_SETS = 3
"""``choose="best"`` probes the strategies on this many of the riskiest flagged sets a round."""

NO_CANDIDATE = "no candidate step removes risk within the utility budget"


@dataclass(frozen=True)
class LoopSettings:
    """What the loop needs besides the data: the flag rule (``threshold``, ``flag_on``), the
    strategies' ``seed``, ``max_steps``, ``choose``, ``max_utility_loss`` (None: no budget), the
    base ``estimator`` and the words for "nothing is flagged" (``under``)."""

    threshold: float
    flag_on: str
    seed: int
    max_steps: int
    choose: str
    max_utility_loss: float | None
    estimator: Any
    under: str


@dataclass(frozen=True, eq=False)  # holds frames
class LoopResult:
    """The path, the mitigated frame, its re-assessment and the estimator it was assessed with."""

    path: MitigationPath
    frame: pd.DataFrame
    report: RiskReport
    estimator: Any


def model_level(strategy: object) -> bool:
    """True for a strategy that changes the model (``apply_model``), not the features."""
    return callable(getattr(strategy, "apply_model", None))


@dataclass
class Replays:
    """Each strategy's output per input, reused on replay: noise drawn and charged once."""

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
        record = _applied(strategy)
        self.made.append((features, level, frame, out, record))
        return out, record

    def charged(self) -> int:
        """How many releases the ledger holds (0 without one)."""
        return 0 if self.ledger is None else len(self.ledger.entries())

    def charges_since(self, count: int) -> tuple[int, ...]:
        """The ids of the ledger's entries after the first ``count``."""
        return () if self.ledger is None else tuple(e.id for e in self.ledger.entries()[count:])


def _applied(strategy: object) -> dict[str, Any]:
    to_dict = getattr(getattr(strategy, "applied_", None), "to_dict", None)
    return dict(to_dict()) if callable(to_dict) else {}


@dataclass
class State:
    """Where the loop stands: each set's strategy, the frame and estimator they give, their
    assessment, and the records of what was applied."""

    levels: Levels
    frame: pd.DataFrame
    estimator: Any
    report: RiskReport
    records: dict[tuple[str, ...], dict[str, Any]] = field(default_factory=dict)


class Loop:
    """One run of the mitigation loop over ``X``, ``y`` (see :func:`run`)."""

    def __init__(
        self,
        assess: Assess,
        X: pd.DataFrame,
        y: pd.Series,
        strategies: Sequence[Any],
        settings: LoopSettings,
        ledger: BudgetLedger | None,
    ) -> None:
        self.assess, self.X, self.y = assess, X, y
        self.strategies, self.settings = list(strategies), settings
        self.done = Replays(ledger)

    def build(self, levels: Levels) -> tuple[pd.DataFrame, Any, dict[tuple[str, ...], Any]]:
        """Replay every set's current strategy on the original data, and the model's on the
        base estimator (``InputError`` from a strategy that cannot apply)."""
        frame, records = self.X, {}
        estimator = self.settings.estimator
        for features, level in levels.items():
            strategy = self.strategies[level]
            if model_level(strategy):
                estimator = strategy.apply_model(estimator)
                records[features] = _applied(strategy)
            elif any(f in frame.columns for f in features):
                frame, records[features] = self.done.apply(
                    strategy, level, frame, features, self.settings.seed, self.y
                )
        if frame.shape[1] < 2:
            raise InputError("it would leave fewer than 2 columns")
        return frame, estimator, records

    def excess(self, report: RiskReport, sets: Sequence[tuple[str, ...]] | None = None) -> float:
        return total_excess(report, self.settings.threshold, self.settings.flag_on, sets)

    def step(
        self,
        number: int,
        target: tuple[str, ...] | None,
        strategy: str | None,
        state: State,
        base: float,
        skipped: tuple[str, ...] = (),
        candidates: tuple[Candidate, ...] = (),
        charges: tuple[int, ...] = (),
    ) -> MitigationStep:
        """The state after one pass (utility of the model on all current features)."""
        report = state.report
        applied = state.records.get(() if target is None else target, {})
        return MitigationStep(
            step=number,
            feature_set=target,
            strategy=strategy,
            utility=report.model.utility_test,
            utility_paid=base - report.model.utility_test,
            max_score=report.max_score,
            flagged=tuple(r.features for r in report.flagged),
            scores={r.label: r.modified for r in report.feature_sets},
            applied=applied,
            skipped=skipped,
            scores_ci={r.label: r.modified_ci for r in report.feature_sets},
            total_excess=self.excess(report),
            candidates=tuple(c.to_dict() for c in candidates),
            charges=charges,
        )

    def run(self, first: RiskReport) -> LoopResult:
        settings = self.settings
        base = first.model.utility_test
        state = State({}, self.X, settings.estimator, first)
        steps = [self.step(0, None, None, state, base)]
        stopped = ""
        pick = self.next_rung if settings.choose == "ladder" else self.best
        for number in range(1, settings.max_steps + 1):
            if not state.report.flagged:
                break
            count = self.done.charged()
            moved, stopped = pick(state, base)
            if moved is None:
                break
            state, target, name, skipped, candidates = moved
            steps.append(self.step(number, target, name, state, base, skipped, candidates,
                                   self.done.charges_since(count)))  # fmt: skip
            if stopped:
                break
        if not stopped:
            stopped = (
                settings.under
                if not state.report.flagged
                else f"the most steps allowed ({settings.max_steps}) were taken"
            )
        path = MitigationPath(tuple(steps), stopped, settings.threshold)
        return LoopResult(path, state.frame, state.report, state.estimator)

    def built(
        self, levels: Levels, label: str, skipped: list[str]
    ) -> tuple[pd.DataFrame, Any, dict[tuple[str, ...], Any]] | None:
        """:meth:`build`, or None with why in ``skipped`` (``label`` names the step)."""
        try:
            return self.build(levels)
        except InputError as exc:
            skipped.append(f"{label}: {exc}")
            return None

    # -- choose="ladder" --------------------------------------------------------------------
    def next_rung(self, state: State, base: float) -> tuple[Moved | None, str]:
        """The riskiest flagged set with a rung left moves to its next applicable rung."""
        ladder = [
            r.features
            for r in state.report.flagged
            if state.levels.get(r.features, -1) + 1 < len(self.strategies)
        ]
        if not ladder:
            return None, "no strategy left for the flagged feature sets"
        target, skipped = ladder[0], list[str]()
        for level in range(state.levels.get(target, -1) + 1, len(self.strategies)):
            levels, name = {**state.levels, target: level}, self.strategies[level].name
            made = self.built(levels, name, skipped)
            if made is None:
                continue
            frame, estimator, records = made
            report = self.assess(frame, None, estimator)
            paid, budget = base - report.model.utility_test, self.settings.max_utility_loss
            if budget is not None and paid > budget:
                return None, (
                    f"could not mitigate {set_label(target)}: {name} would pay {paid:.4f} of "
                    f"test utility in all, over the budget {budget:g}"
                )
            moved = State(levels, frame, estimator, report, records)
            return (moved, target, name, tuple(skipped), ()), ""
        return None, f"could not mitigate {set_label(target)}: {'; '.join(skipped)}"

    # -- choose="best" ----------------------------------------------------------------------
    def candidates(self, state: State) -> list[tuple[tuple[str, ...], int]]:
        """Each strategy not in use on each of the riskiest flagged sets, and each model-level
        strategy not in use on the model."""
        flagged = [r.features for r in state.report.flagged][:MAX_PROBED_SETS]
        used = set(state.levels.values())
        out: list[tuple[tuple[str, ...], int]] = []
        for index, strategy in enumerate(self.strategies):
            if model_level(strategy):
                out += [((), index)] if index not in used else []
            else:
                out += [(s, index) for s in flagged if state.levels.get(s) != index]
        return out

    def probe(self, state: State, base: float, skipped: list[str]) -> list[tuple[Candidate, State]]:
        """Each candidate assessed on the riskiest flagged sets only (the same seeds and
        splits): the excess it removes from them and the utility it costs."""
        flagged = [r.features for r in state.report.flagged][:MAX_PROBED_SETS]
        before = self.excess(state.report, flagged)
        paid_now = base - state.report.model.utility_test
        probed = []
        for key, index in self.candidates(state):
            strategy, levels = self.strategies[index], {**state.levels, key: index}
            made = self.built(levels, f"{strategy.name} on {set_label(key) or 'the model'}",
                              skipped)  # fmt: skip
            if made is None:
                continue
            frame, estimator, records = made
            present = [s for s in flagged if any(f in frame.columns for f in s)]
            report = self.assess(frame, present or None, estimator)
            paid = base - report.model.utility_test
            candidate = Candidate(key or None, strategy.name, before - self.excess(report),
                                  paid - paid_now, paid)  # fmt: skip
            probed.append((candidate, State(levels, frame, estimator, report, records)))
        return probed

    def confirm(self, trial: State, state: State, base: float) -> tuple[State | None, str]:
        """``trial`` re-assessed on every set: taken when the total excess falls (by
        :data:`MIN_REDUCTION`) within the utility budget; else None and why."""
        full = self.assess(trial.frame, None, trial.estimator)
        now, after = self.excess(state.report), self.excess(full)
        paid, budget = base - full.model.utility_test, self.settings.max_utility_loss
        if not after <= now - MIN_REDUCTION:
            return None, (
                f"re-assessed on every set, the excess over the threshold went from {now:.4f} "
                f"to {after:.4f}"
            )
        if budget is not None and paid > budget:
            return None, (
                f"re-assessed on every set, it pays {paid:.4f} of test utility in all, over the "
                f"budget {budget:g}"
            )
        return State(trial.levels, trial.frame, trial.estimator, full, trial.records), "chosen"

    def best(self, state: State, base: float) -> tuple[Moved | None, str]:
        """Probe the candidates on the flagged sets, then confirm the best on every set."""
        skipped: list[str] = []
        probed = self.probe(state, base, skipped)
        trials = {id(c): t for c, t in probed}
        judged: list[Candidate] = []
        chosen: tuple[State, Candidate] | None = None
        for candidate in ranked(c for c, _ in probed):
            verdict = admissible(candidate, self.settings.max_utility_loss)
            if not verdict and chosen is not None:
                verdict = "not needed: a better one was taken"
            if not verdict:
                moved, verdict = self.confirm(trials[id(candidate)], state, base)
                chosen = None if moved is None else (moved, candidate)
            judged.append(replace(candidate, verdict=verdict))
        if chosen is None:
            flagged = [r.features for r in state.report.flagged][:MAX_PROBED_SETS]
            lines = [f"{c.label()}: {c.verdict}" for c in judged] + skipped
            return None, (
                f"{NO_CANDIDATE} for {', '.join(set_label(s) for s in flagged)} (over the "
                f"threshold {self.settings.threshold:g}): " + "; ".join(lines)
            )
        moved, taken = chosen
        return (moved, taken.feature_set, taken.strategy, tuple(skipped), tuple(judged)), ""


Moved = tuple[State, tuple[str, ...] | None, str, tuple[str, ...], tuple[Candidate, ...]]
"""A step taken: the new state, its set (None: the model), the strategy, what could not apply,
and the candidates probed with their verdicts."""
