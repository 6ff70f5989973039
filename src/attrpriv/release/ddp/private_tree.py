"""The model tier's tree learned from the private rows, as a row-level DP release.

Links chosen by report noisy max, their tables measured with discrete Gaussian noise (zCDP,
half the budget each); charged to the ledger as its own release. Privacy argument in
docs/mechanisms/tabular-ddp.md, "The model from the private rows".
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from scipy.sparse import csr_matrix

from attrpriv._checks import EPSILON, POSITIVE, SEED, Rule, integer, names, optional, probability
from attrpriv.data.schema import Schema
from attrpriv.dp.accounting import rho_for
from attrpriv.dp.accuracy import Accuracy
from attrpriv.dp.mechanism import SAMPLER_CONSTRAINTS, NoisePlan
from attrpriv.dp.noise import NoiseSampler
from attrpriv.dp.record import Diagnostics, PrivacyRecord
from attrpriv.dp.units import SUBSTITUTE
from attrpriv.errors import InputError
from attrpriv.release.ddp.survey import Progress, SurveyMechanism, question_names
from attrpriv.release.ddp.tree import TreeModel, smoothed
from attrpriv.release.graph.learning import Levels, column_levels, encode, learning_rows

SOURCE = "a DP release of the private rows' links"
"""The source a tree learned by :class:`PrivateTree` names in the record."""


@dataclass(frozen=True)
class PairCounts:
    """Private pair tables: block ``(j, k)`` of ``joint`` (see ``offsets``) is ``names`` j and k."""

    joint: np.ndarray
    offsets: np.ndarray
    names: tuple[str, ...]
    progress: Progress | None = None  # where to report the links chosen


@dataclass(frozen=True)
class PairFacts:
    """What the step calibrates from: the questions' ``levels``, the rows read, the inferred."""

    levels: Mapping[str, Levels]
    n_rows: int
    inferred: tuple[str, ...] = ()


@dataclass(frozen=True)
class TreeStepDiagnostics(Diagnostics):
    """The tree the step learned (``model``, from the noisy links' tables: public from here on),
    the Gumbel ``select_scale`` of each noisy max, the discrete Gaussian ``link_scale`` on the
    chosen links' tables, and the step's zCDP ``rho``."""

    model: TreeModel
    select_scale: float
    link_scale: float
    rho: float

    def summary_lines(self) -> list[str]:
        """The tree learned, in one line: ``"a tree over 5 questions, from a DP release ..."``."""
        return [f"a tree over {len(self.model.columns)} questions, from {self.model.source}"]

    def to_dict(self) -> dict[str, Any]:
        """Every field as JSON-ready values, the model as its dict."""
        return {**super().to_dict(), "model": self.model.to_dict()}


@dataclass(frozen=True)
class PairPlan(NoisePlan):
    """Noisy max (``select_scale``) per link, discrete Gaussian ``link_scale`` on the chosen."""

    rho: float
    select_scale: float
    link_scale: float
    n_questions: int
    n_rows: int


LINK = "link: "
"""The prefix of the chosen links' noisy tables."""


def score_sensitivity(n_rows: int) -> float:
    """How far one replaced row moves a pair's dependence score: ``6 + 4 / n``."""
    return 6.0 + 4.0 / max(n_rows, 1)


def link_sensitivity(m: int) -> float:
    """The l2 change of the ``m - 1`` links' tables when one row is replaced."""
    return math.sqrt(2 * (m - 1))


def dependence_scores(joint: np.ndarray, offsets: np.ndarray, n_rows: int) -> np.ndarray:
    """``s(j, k) = sum_{a,b} |n_ab - n_a n_b / n|`` per question pair, from stacked ``joint``."""
    m = len(offsets) - 1
    scores = np.zeros((m, m))
    for j in range(m):
        rows = joint[offsets[j] : offsets[j + 1], offsets[j] : offsets[j + 1]].diagonal()
        for k in range(j + 1, m):
            table = joint[offsets[j] : offsets[j + 1], offsets[k] : offsets[k + 1]]
            columns = joint[offsets[k] : offsets[k + 1], offsets[k] : offsets[k + 1]].diagonal()
            expected = np.outer(rows, columns) / max(n_rows, 1)
            scores[j, k] = scores[k, j] = float(np.abs(table - expected).sum())
    return scores


class PrivateTree(SurveyMechanism[PairCounts, PairFacts, PairPlan]):
    """The Chow-Liu tree of the private rows, learned as a row-level ``(epsilon, delta)``-DP
    release.

    Used by :class:`ModelDDP` with ``model="private"``; ``max_rows`` rows at most are read (a
    sample whose positions do not depend on values). The tree, public from here on, is the
    release's ``diagnostics.model``; its progress counts the links chosen. See
    docs/mechanisms/tabular-ddp.md.
    """

    _constraints: ClassVar[Mapping[str, Rule]] = {
        "epsilon": EPSILON,
        "delta": probability(),
        "max_levels": integer(2),
        "prior": POSITIVE,
        "max_rows": integer(1),
        "seed": SEED,
        "columns": optional(names()),
        **SAMPLER_CONSTRAINTS,
    }

    def __init__(
        self,
        epsilon: float,
        delta: float,
        columns: Sequence[str] | None = None,
        *,
        max_levels: int = 10,
        prior: float = 1.0,
        max_rows: int = 100_000,
        seed: int = 0,
        sampler: NoiseSampler | None = None,
        allow_nonprivate: bool = False,
    ) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.columns = columns
        self.max_levels = max_levels
        self.prior = prior
        self.max_rows = max_rows
        self.seed = seed
        self.sampler = sampler
        self.allow_nonprivate = allow_nonprivate

    def record(self, plan: PairPlan) -> PrivacyRecord:
        """The row-level (``dp/substitute``) record: ``(epsilon, delta)``-DP and ``rho``-zCDP."""
        return PrivacyRecord(
            mechanism="tabular-ddp-private-tree",
            definition=SUBSTITUTE.definition,
            epsilon=plan.epsilon,
            delta=plan.delta,
            rho=plan.rho,
            protects="what any one respondent's row holds (every answer of it)",
            sensitivity={
                "score (each selection)": score_sensitivity(plan.n_rows),
                "links": link_sensitivity(plan.n_questions),
            },
            noise={
                "distribution": "gumbel (report noisy max), then discrete gaussian",
                "scale": {"selection": plan.select_scale, "links": plan.link_scale},
                "norm": "linf for the scores, l2 for the links' tables",
                "per": "each link chosen by report noisy max, then every cell of its table",
                **plan.sampler.describe(),
            },
            unit=SUBSTITUTE,
            assumptions=self._assumptions(plan),
        )

    # -- the mechanism template -------------------------------------------------------------
    def _levels(self, schema: Schema) -> dict[str, Levels]:
        names = question_names(schema, self.columns)
        levels = column_levels(schema, names, int(self.max_levels))
        if len(levels) < 2:
            raise InputError("a tree needs at least two questions; give more columns")
        return levels

    def _measure(
        self, data: Any, schema: Schema, progress: Progress | None
    ) -> tuple[PairCounts, PairFacts]:
        levels = self._levels(schema)
        rows = learning_rows(data, schema, list(levels), int(self.max_rows), int(self.seed))
        codes = encode(rows, levels)
        sizes = np.array([levels[c].n_states for c in levels])
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        cells = (codes.to_numpy(np.int64) + offsets[:-1]).ravel()
        index = np.repeat(np.arange(len(codes)), len(levels))
        onehot = csr_matrix(
            (np.ones(cells.size), (index, cells)), shape=(len(codes), int(offsets[-1]))
        )
        joint = np.rint((onehot.T @ onehot).toarray()).astype(np.int64)
        facts = PairFacts(levels, len(codes), schema.inferred_among(levels))
        return PairCounts(joint, offsets, tuple(levels), progress), facts

    def _calibrate(self, public: PairFacts, sampler: NoiseSampler) -> PairPlan:
        m = len(public.levels)
        epsilon, delta = float(self.epsilon), float(self.delta)
        rho = rho_for(epsilon, delta)
        # rho / 2 over the m - 1 selections, rho / 2 on the links' tables: Delta^2 / (2 beta^2)
        select_scale = score_sensitivity(public.n_rows) * math.sqrt((m - 1) / rho)
        link_scale = link_sensitivity(m) / math.sqrt(rho)
        return PairPlan(
            epsilon, delta, sampler, rho, select_scale, link_scale, m, public.n_rows,
            inferred=public.inferred,
        )  # fmt: skip

    def _add_noise(self, private: PairCounts, plan: PairPlan) -> dict[str, pd.Series]:
        scores = dependence_scores(private.joint, private.offsets, plan.n_rows)
        m = scores.shape[0]
        inside, links = [0], []
        outside = list(range(1, m))
        every = max((m - 1) // 10, 1)
        for done in range(1, m):  # Prim, one noisy max per link
            candidates = scores[np.ix_(inside, outside)]  # rows: in the tree; columns: not yet
            chosen = plan.sampler.noisy_max(candidates.ravel(), plan.select_scale)
            u, v = inside[chosen // len(outside)], outside[chosen % len(outside)]
            links.append((u, v))
            inside.append(v)
            outside.remove(v)
            if private.progress is not None and (done % every == 0 or done == m - 1):
                private.progress(done, m - 1)
        return _noisy_tables(private, links, plan.link_scale, plan.sampler, LINK)

    def _accuracy(self, plan: PairPlan, values: Mapping[str, pd.Series]) -> Accuracy:
        scales = {name: pd.Series(plan.link_scale, index=v.index) for name, v in values.items()}
        return Accuracy.of_scales("gaussian", scales)  # the discrete Gaussian is sub-Gaussian

    def _diagnostics(
        self, public: PairFacts, plan: PairPlan, noisy: Mapping[str, pd.Series]
    ) -> TreeStepDiagnostics:
        names = list(public.levels)
        cards = [public.levels[c].n_states for c in names]
        source = (
            f"{SOURCE} (epsilon {self.epsilon:g}, delta {self.delta:g}, row-level, "
            "charged as its own release)"
        )
        model = tree_from_tables(names, cards, noisy, float(self.prior), source)
        return TreeStepDiagnostics(model, plan.select_scale, plan.link_scale, plan.rho)


def _noisy_tables(
    measured: PairCounts,
    blocks: Sequence[tuple[int, int]],
    scale: float,
    sampler: NoiseSampler,
    prefix: str,
) -> dict[str, pd.Series]:
    """The tables of ``blocks`` (pairs of question positions) plus noise, in one draw."""
    names, offsets = measured.names, measured.offsets
    flat = np.concatenate(
        [measured.joint[offsets[j] : offsets[j + 1], offsets[k] : offsets[k + 1]].ravel()
         for j, k in blocks]
    )  # fmt: skip
    noisy = sampler.discrete_gaussian(flat, scale)
    values, start = {}, 0
    for j, k in blocks:
        size = int((offsets[j + 1] - offsets[j]) * (offsets[k + 1] - offsets[k]))
        values[f"{prefix}{names[j]} x {names[k]}"] = pd.Series(noisy[start : start + size])
        start += size
    return values


def _table(values: pd.Series, rows: int, columns: int, prior: float) -> np.ndarray:
    """A noisy table as counts: clipped at 0, ``prior`` spread over its cells."""
    table: np.ndarray = np.maximum(values.to_numpy(np.float64), 0.0).reshape(rows, columns)
    return table + prior / (rows * columns)


def tree_from_tables(
    names: Sequence[str],
    cards: Sequence[int],
    noisy: Mapping[str, pd.Series],
    prior: float,
    source: str = SOURCE,
) -> TreeModel:
    """The tree of the noisy links' tables (post-processing), rooted at the first question."""
    position = {name: t for t, name in enumerate(names)}
    parents = [-1] * len(names)
    tables: dict[int, np.ndarray] = {}
    for key, values in noisy.items():
        a, b = key.removeprefix(LINK).split(" x ")
        u, v = position[a], position[b]
        parents[v] = u
        tables[v] = _table(values, cards[u], cards[v], 0.0)
    counts = []
    for v, p in enumerate(parents):
        if p == -1:  # the root's margin, from its first link's table
            child = parents.index(v)
            counts.append(tables[child].sum(axis=1)[None, :])
        else:
            counts.append(tables[v])
    return TreeModel(tuple(names), tuple(cards), tuple(parents), smoothed(counts, prior), source)


__all__ = [
    "LINK",
    "SOURCE",
    "PairCounts",
    "PairFacts",
    "PairPlan",
    "PrivateTree",
    "TreeStepDiagnostics",
    "dependence_scores",
    "link_sensitivity",
    "score_sensitivity",
    "tree_from_tables",
]
