"""Learning the model tier's tree from the private rows, as a differentially private release.

When no public rows exist, the model can still come from the private ones, but only through
a DP step whose output is then public: every pairwise contingency table of the questions gets
discrete Gaussian noise, and the Chow-Liu tree and its kernels are computed from the noisy
tables (post-processing). The step is its own release, row-level (``dp/substitute``: what one
respondent's row holds, which covers each of its answers), charged to the ledger before any
noise is drawn, with its record; the model tier then uses the tree as a public model, and its
record names the step.

Privacy argument (docs/mechanisms/tabular-ddp.md, "The model from the private rows"). Two
measurements, each discrete Gaussian noise on tables of counts. Replacing one row moves, in
the table of each pair of questions whose answers it changes, one count out of a cell and one
into another: l2 change ``sqrt(2)`` per table. (1) Every pair's table, ``m (m - 1) / 2`` of
them (l2 sensitivity ``sqrt(m (m - 1))``), noise of scale ``sigma_1``: the tree is chosen from
these (the maximum spanning tree of their mutual information: post-processing). (2) The
``m - 1`` tables of the chosen links again (sensitivity ``sqrt(2 (m - 1))``), noise of scale
``sigma_2``: the kernels come from these. Discrete Gaussian noise of scale ``sigma`` on a query
of l2 sensitivity ``Delta`` is ``Delta^2 / (2 sigma^2)``-zCDP (Canonne, Kamath & Steinke 2020),
and zCDP composes adaptively by adding ``rho`` (Bun & Steinke 2016), so the step is
``rho``-zCDP with ``rho = rho_1 + rho_2`` (half each), converted to ``(epsilon, delta)`` by the
ledger's tight conversion. At most ``max_rows`` rows are read, a sample whose positions do not
depend on the values, so a substituted row is either in it or not.
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
from attrpriv.dp.accounting import zcdp_to_epsilon
from attrpriv.dp.accuracy import Accuracy
from attrpriv.dp.ledger import BudgetLedger
from attrpriv.dp.mechanism import SAMPLER_CONSTRAINTS, Mechanism, NoisePlan
from attrpriv.dp.noise import NoiseSampler
from attrpriv.dp.record import PrivacyRecord, Release
from attrpriv.dp.units import SUBSTITUTE
from attrpriv.errors import InputError
from attrpriv.release.ddp.tree import TreeModel, smoothed, spanning_parents
from attrpriv.release.graph.learning import Levels, column_levels, encode, learning_rows

SOURCE = "a DP release of the private rows' pair tables"
"""The source a tree learned by :class:`PrivateTree` names in the record."""


@dataclass(frozen=True)
class PairCounts:
    """The private rows' tables of every pair of questions: block ``(j, k)`` of ``joint`` is
    the table of questions j and k (their states, missing included), from ``offsets``."""

    joint: np.ndarray
    offsets: np.ndarray
    levels: Mapping[str, Levels]
    inferred: tuple[str, ...]


@dataclass(frozen=True)
class PairPlan(NoisePlan):
    """Discrete Gaussian noise on every pair's table (``pair_scale``), then on the chosen
    links' tables (``link_scale``); ``rho`` is the two together."""

    rho: float
    pair_scale: float
    link_scale: float
    n_questions: int


LINK = "link: "
"""The prefix of the second measurement's tables (the chosen links)."""


def pair_sensitivity(m: int) -> float:
    """The l2 change of every pair's table when one row is replaced: ``sqrt(m (m - 1))``."""
    return math.sqrt(m * (m - 1))


def link_sensitivity(m: int) -> float:
    """The l2 change of the ``m - 1`` links' tables when one row is replaced."""
    return math.sqrt(2 * (m - 1))


def rho_for(epsilon: float, delta: float) -> float:
    """The largest rho whose zCDP guarantee converts to at most ``epsilon`` at ``delta``."""
    low, high = 0.0, epsilon  # rho <= epsilon: the conversion never gives less than rho
    for _ in range(100):
        middle = (low + high) / 2
        low, high = (middle, high) if zcdp_to_epsilon(middle, delta) <= epsilon else (low, middle)
    return low


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
        self, data: Any, schema: Schema, *, ledger: BudgetLedger | None = None, label: str = ""
    ) -> Release:
        """Count every pair of questions, charge the ledger, add noise, learn the tree.

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
        return self._release(data, schema, ledger=ledger, label=label)

    def learn(
        self, data: Any, schema: Schema, *, ledger: BudgetLedger | None = None, label: str = ""
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

        Returns
        -------
        model : TreeModel
            The tree, public from here on.
        release : Release
            The step's release (its record is the one charged).
        """
        result = self.release(data, schema, ledger=ledger, label=label)
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
                "pairs": pair_sensitivity(plan.n_questions),
                "links": link_sensitivity(plan.n_questions),
            },
            noise={
                "distribution": "discrete gaussian",
                "scale": {"pairs": plan.pair_scale, "links": plan.link_scale},
                "norm": "l2",
                "per": "every cell of every pair's table, then of the chosen links' tables",
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

    def _measure(self, data: Any, schema: Schema) -> PairCounts:
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
        return PairCounts(joint, offsets, levels, schema.inferred_among(levels))

    def _calibrate(self, measured: PairCounts, sampler: NoiseSampler) -> PairPlan:
        m = len(measured.levels)
        epsilon, delta = float(self.epsilon), float(self.delta)
        rho = rho_for(epsilon, delta)
        pair_scale = pair_sensitivity(m) / math.sqrt(rho)  # rho / 2 each: Delta^2 / (2 sigma^2)
        link_scale = link_sensitivity(m) / math.sqrt(rho)
        return PairPlan(
            epsilon, delta, sampler, rho, pair_scale, link_scale, m, inferred=measured.inferred
        )

    def _noise(self, measured: PairCounts, plan: PairPlan) -> dict[str, pd.Series]:
        names = list(measured.levels)
        cards = [measured.levels[c].n_states for c in names]
        pairs = [(j, k) for j in range(len(names)) for k in range(j + 1, len(names))]
        values = _noisy_tables(measured, pairs, plan.pair_scale, plan.sampler, "")
        chosen = spanning_parents(_information(names, cards, values, float(self.prior)))
        links = [(min(p, v), max(p, v)) for v, p in enumerate(chosen) if p != -1]
        values.update(_noisy_tables(measured, links, plan.link_scale, plan.sampler, LINK))
        return values

    def _accuracy(self, plan: PairPlan, values: Mapping[str, pd.Series]) -> Accuracy:
        scales = {
            name: pd.Series(plan.link_scale if name.startswith(LINK) else plan.pair_scale,
                            index=v.index)
            for name, v in values.items()
        }  # fmt: skip
        return Accuracy.of_scales("gaussian", scales)  # the discrete Gaussian is sub-Gaussian

    def _parts(
        self, measured: PairCounts, plan: PairPlan, noisy: Mapping[str, pd.Series]
    ) -> dict[str, Any]:
        names = list(measured.levels)
        cards = [measured.levels[c].n_states for c in names]
        model = tree_from_tables(names, cards, noisy, float(self.prior))
        return {
            "model": model.to_dict(),
            "pair_scale": plan.pair_scale,
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


def _information(
    names: Sequence[str], cards: Sequence[int], noisy: Mapping[str, pd.Series], prior: float
) -> np.ndarray:
    """Plug-in mutual information of every pair's noisy table (clipped at 0, smoothed)."""
    m = len(names)
    information = np.zeros((m, m))
    for j in range(m):
        for k in range(j + 1, m):
            p = _table(noisy[f"{names[j]} x {names[k]}"], cards[j], cards[k], prior)
            p = p / p.sum()
            outer = p.sum(axis=1, keepdims=True) * p.sum(axis=0, keepdims=True)
            information[j, k] = information[k, j] = float((p * np.log(p / outer)).sum())
    return information


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
    """The tree of the noisy tables (post-processing): the maximum spanning tree of the pair
    tables' mutual information, kernels from the links' second tables (clipped at 0, with
    ``prior``).

    Parameters
    ----------
    names : sequence of str
        The questions.
    cards : sequence of int
        Their numbers of states.
    noisy : Mapping of str to pandas.Series
        The noisy table of every pair ``"a x b"`` (a before b in ``names``) and of every chosen
        link ``"link: a x b"``, row-major.
    prior : float
        Pseudo-rows per parent value.
    source : str, optional
        Where the tables came from, for the record.

    Returns
    -------
    TreeModel
        The tree, rooted at the first question.
    """
    parents = spanning_parents(_information(names, cards, noisy, prior))
    counts = []
    for v, p in enumerate(parents):
        if p == -1:
            child = parents.index(v)  # the root's first child: its link's table
            link = _table(noisy[f"{LINK}{names[v]} x {names[child]}"], cards[v], cards[child], 0)
            counts.append(link.sum(axis=1)[None, :])
            continue
        j, k = min(p, v), max(p, v)
        link = _table(noisy[f"{LINK}{names[j]} x {names[k]}"], cards[j], cards[k], 0)
        counts.append(link if p < v else link.T)  # rows: the parent's states
    return TreeModel(tuple(names), tuple(cards), tuple(parents), smoothed(counts, prior), source)


__all__ = [
    "LINK",
    "SOURCE",
    "PairCounts",
    "PairPlan",
    "PrivateTree",
    "link_sensitivity",
    "pair_sensitivity",
    "rho_for",
    "tree_from_tables",
]
