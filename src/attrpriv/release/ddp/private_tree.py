"""Learning the model tier's tree from the private rows, as a differentially private release.

When no public rows exist, the model can still come from the private ones, but only through
a DP step whose output is then public: the tree's links are chosen one at a time by report
noisy max on a dependence score, and the chosen links' contingency tables get discrete
Gaussian noise, from which the kernels come (post-processing). The step is its own release,
row-level (``dp/substitute``: what one respondent's row holds, which covers each of its
answers), charged to the ledger before any noise is drawn, with its record; the model tier
then uses the tree as a public model, and its record names the step.

Privacy argument (docs/mechanisms/tabular-ddp.md, "The model from the private rows"). Two
steps, both zCDP, composed by adding their rho (Bun & Steinke 2016), half each. (1) The tree,
grown one link at a time (Prim): each round picks, by report noisy max (Gumbel noise, the
exponential mechanism; OpenDP's ``make_noisy_max``), the link from the tree to a question not
yet in it with the largest dependence score ``s(j, k) = sum_{a,b} |n_ab - n_a n_b / n|`` (the
l1 distance of the pair's table from the product of its margins, in counts). Replacing one row
(``n`` fixed) moves at most two cells of ``n_ab`` by one, and ``n_a``, ``n_b`` by one in two
states each, so ``s`` moves by at most ``2 + 4 + 4 / n`` (:func:`score_sensitivity`, checked by
brute force); a round of scale ``beta`` is then ``Delta^2 / (2 beta^2)``-zCDP (Cesar & Rogers
2021), ``m - 1`` rounds add up. (2) The ``m - 1`` chosen links' tables, with discrete Gaussian
noise: replacing a row moves one count out of a cell and one into another in each, l2
sensitivity ``sqrt(2 (m - 1))``, ``Delta^2 / (2 sigma^2)``-zCDP (Canonne, Kamath & Steinke
2020); the kernels come from them (post-processing). ``rho`` converts to ``(epsilon, delta)``
by the ledger's tight conversion. At most ``max_rows`` rows are read, a sample whose positions
do not depend on the values, so a substituted row is either in it or not. The number of rows is
treated as public (substitution keeps it).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from scipy.sparse import csr_matrix

from attrpriv._checks import (
    Check,
    check_epsilon,
    check_positive,
    check_positive_int,
    check_probability,
)
from attrpriv.data.schema import Role, Schema
from attrpriv.dp.accounting import rho_for
from attrpriv.dp.accuracy import Accuracy
from attrpriv.dp.ledger import BudgetLedger
from attrpriv.dp.mechanism import SAMPLER_CONSTRAINTS, Mechanism, NoisePlan
from attrpriv.dp.noise import NoiseSampler
from attrpriv.dp.record import PrivacyRecord, Release
from attrpriv.dp.units import SUBSTITUTE
from attrpriv.errors import InputError
from attrpriv.release.ddp.answers import Progress
from attrpriv.release.ddp.tree import TreeModel, smoothed
from attrpriv.release.graph.learning import Levels, column_levels, encode, learning_rows

SOURCE = "a DP release of the private rows' links"
"""The source a tree learned by :class:`PrivateTree` names in the record."""


@dataclass(frozen=True)
class PairCounts:
    """The private rows' tables of every pair of questions: block ``(j, k)`` of ``joint`` is
    the table of questions j and k (their states, missing included), from ``offsets``."""

    joint: np.ndarray
    offsets: np.ndarray
    levels: Mapping[str, Levels]
    inferred: tuple[str, ...]
    n_rows: int
    progress: Progress | None = None  # where to report the links chosen


@dataclass(frozen=True)
class PairPlan(NoisePlan):
    """Report noisy max of scale ``select_scale`` for each of the ``m - 1`` links, then
    discrete Gaussian noise of ``link_scale`` on the chosen links' tables; ``rho`` is all of
    it together."""

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
    """``s(j, k) = sum_{a,b} |n_ab - n_a n_b / n|`` for every pair of questions (symmetric,
    zero diagonal), from the stacked contingency table ``joint``."""
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


class PrivateTree(Mechanism[PairCounts, PairPlan]):
    """The Chow-Liu tree of the private rows, learned as an ``(epsilon, delta)``-DP release
    (row-level, substitution): the model tier's model when no public rows exist.

    Parameters
    ----------
    epsilon : float
        The step's epsilon (row-level: it protects every answer of a row).
    delta : float
        The step's delta, in (0, 1).
    columns : sequence of str or None, optional
        The questions; default every non-ignored column with a domain.
    max_levels : int, optional
        Numeric columns are binned into at most this many levels.
    prior : float, optional
        Pseudo-rows per parent value added to the noisy tables' kernels (> 0).
    max_rows : int, optional
        At most this many rows are read (a sample whose positions do not depend on values).
    seed : int, optional
        The seed of that sample (not of the noise).
    noise : NoiseSampler or None, optional
        The noise sampler; default exact OpenDP noise.
    allow_nonprivate : bool, optional
        Accept a non-private sampler (reproducible tests only).
    """

    _constraints: ClassVar[Mapping[str, Check]] = {
        "epsilon": check_epsilon,
        "delta": lambda v, n: check_probability(v, n),
        "max_levels": lambda v, n: check_positive_int(v, n, minimum=2),
        "prior": check_positive,
        "max_rows": lambda v, n: check_positive_int(v, n, minimum=1),
        "seed": lambda v, n: check_positive_int(v, n, minimum=0),
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
        noise: NoiseSampler | None = None,
        allow_nonprivate: bool = False,
    ) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.columns = columns
        self.max_levels = max_levels
        self.prior = prior
        self.max_rows = max_rows
        self.seed = seed
        self.noise = noise
        self.allow_nonprivate = allow_nonprivate

    def release(
        self,
        data: Any,
        schema: Schema,
        *,
        ledger: BudgetLedger | None = None,
        label: str = "",
        progress: Progress | None = None,
    ) -> Release:
        """Count every pair of questions, charge the ledger, choose the links, measure them.

        Parameters
        ----------
        data : pandas.DataFrame, str, pathlib.Path or dask.dataframe.DataFrame
            The private rows.
        schema : Schema
            The public domains of the columns.
        ledger : BudgetLedger or None, optional
            Charged with the step's record before any noise is drawn.
        label : str, optional
            A free-text name for the release in the ledger.
        progress : callable or None, optional
            Called as ``progress(links chosen, m - 1)`` about every tenth of the links.

        Returns
        -------
        Release
            The noisy pair tables (``values``, one Series per pair), the record, and in
            ``parts["model"]`` the learned tree (``TreeModel.to_dict``; ``TreeModel.from_dict``
            reads it back).

        Raises
        ------
        InputError
            A parameter is invalid, or fewer than two questions are given.
        BudgetExceededError
            The step does not fit the ledger's budget (nothing is released).
        """
        return self._release(data, schema, progress, ledger=ledger, label=label)

    def learn(
        self,
        data: Any,
        schema: Schema,
        *,
        ledger: BudgetLedger | None = None,
        label: str = "",
        progress: Progress | None = None,
    ) -> tuple[TreeModel, Release]:
        """:meth:`release`, and the tree it learned.

        Parameters
        ----------
        data : pandas.DataFrame, str, pathlib.Path or dask.dataframe.DataFrame
            The private rows.
        schema : Schema
            The public domains of the columns.
        ledger : BudgetLedger or None, optional
            Charged with the step's record before any noise is drawn.
        label : str, optional
            A free-text name for the release in the ledger.
        progress : callable or None, optional
            As for :meth:`release`.

        Returns
        -------
        model : TreeModel
            The tree, public from here on.
        release : Release
            The step's release (its record is the one charged).
        """
        result = self.release(data, schema, ledger=ledger, label=label, progress=progress)
        source = (
            f"{SOURCE} (epsilon {self.epsilon:g}, delta {self.delta:g}, row-level, "
            "charged as its own release)"
        )
        return TreeModel.from_dict(result.parts["model"], source=source), result

    def record(self, plan: PairPlan) -> PrivacyRecord:
        """The step's guarantee: ``(epsilon, delta)``-DP and ``rho``-zCDP for one row.

        Parameters
        ----------
        plan : PairPlan
            The noise plan.

        Returns
        -------
        PrivacyRecord
            Row-level (``dp/substitute``), with ``rho``.
        """
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
        if self.columns is None:
            names = [c.name for c in schema.columns if c.role is not Role.IGNORE and c.domain]
        else:
            names = list(self.columns)
        levels = column_levels(schema, names, int(self.max_levels))
        if len(levels) < 2:
            raise InputError("a tree needs at least two questions; give more columns")
        return levels

    def _measure(self, data: Any, schema: Schema, progress: Progress | None) -> PairCounts:
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
        inferred = schema.inferred_among(levels)
        return PairCounts(joint, offsets, levels, inferred, len(codes), progress)

    def _calibrate(self, measured: PairCounts, sampler: NoiseSampler) -> PairPlan:
        m = len(measured.levels)
        epsilon, delta = float(self.epsilon), float(self.delta)
        rho = rho_for(epsilon, delta)
        # rho / 2 over the m - 1 selections, rho / 2 on the links' tables: Delta^2 / (2 beta^2)
        select_scale = score_sensitivity(measured.n_rows) * math.sqrt((m - 1) / rho)
        link_scale = link_sensitivity(m) / math.sqrt(rho)
        return PairPlan(
            epsilon, delta, sampler, rho, select_scale, link_scale, m, measured.n_rows,
            inferred=measured.inferred,
        )  # fmt: skip

    def _noise(self, measured: PairCounts, plan: PairPlan) -> dict[str, pd.Series]:
        scores = dependence_scores(measured.joint, measured.offsets, measured.n_rows)
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
            if measured.progress is not None and (done % every == 0 or done == m - 1):
                measured.progress(done, m - 1)
        return _noisy_tables(measured, links, plan.link_scale, plan.sampler, LINK)

    def _accuracy(self, plan: PairPlan, values: Mapping[str, pd.Series]) -> Accuracy:
        scales = {name: pd.Series(plan.link_scale, index=v.index) for name, v in values.items()}
        return Accuracy.of_scales("gaussian", scales)  # the discrete Gaussian is sub-Gaussian

    def _parts(
        self, measured: PairCounts, plan: PairPlan, noisy: Mapping[str, pd.Series]
    ) -> dict[str, Any]:
        names = list(measured.levels)
        cards = [measured.levels[c].n_states for c in names]
        model = tree_from_tables(names, cards, noisy, float(self.prior))
        return {
            "model": model.to_dict(),
            "select_scale": plan.select_scale,
            "link_scale": plan.link_scale,
            "rho": plan.rho,
        }


def _noisy_tables(
    measured: PairCounts,
    blocks: Sequence[tuple[int, int]],
    scale: float,
    sampler: NoiseSampler,
    prefix: str,
) -> dict[str, pd.Series]:
    """The tables of ``blocks`` (pairs of question positions) plus noise, in one draw."""
    names, offsets = list(measured.levels), measured.offsets
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
    """The tree of the noisy links' tables (post-processing): the links as chosen, rooted at
    the first question, kernels from the tables (clipped at 0, with ``prior``).

    Parameters
    ----------
    names : sequence of str
        The questions.
    cards : sequence of int
        Their numbers of states.
    noisy : Mapping of str to pandas.Series
        The noisy table of every chosen link ``"link: a x b"`` (a nearer the root), row-major.
    prior : float
        Pseudo-rows per parent value.
    source : str, optional
        Where the tables came from, for the record.

    Returns
    -------
    TreeModel
        The tree.
    """
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
    "PairPlan",
    "PrivateTree",
    "dependence_scores",
    "link_sensitivity",
    "score_sensitivity",
    "tree_from_tables",
]
