"""Donor redraws: a released row's proxies copied together from one auxiliary row.

The donor shares the row's drawn sensitive value and task level and is among the nearest on
the context, least used first. Reads only public or released values, never a private proxy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.neighbors import NearestNeighbors

from attrpriv.sanitize.resample._models import NUMERIC_LEVELS, is_categorical

NO_TASK = -1
"""The task level of every row when there is no task (or its value has no auxiliary level)."""


@dataclass(frozen=True)
class Coordinates:
    """Context columns to points, each column adding at most about 1 to a squared distance."""

    columns: tuple[str, ...]
    sorted_values: tuple[np.ndarray | None, ...]
    categories: tuple[pd.Index | None, ...]

    @classmethod
    def learn(cls, aux: pd.DataFrame, columns: Sequence[str]) -> Coordinates:
        """The ranks and categories of ``columns`` on the auxiliary rows."""
        ranks: list[np.ndarray | None] = []
        categories: list[pd.Index | None] = []
        for name in columns:
            values = aux[name]
            if is_categorical(values):
                ranks.append(None)
                categories.append(pd.Index(pd.unique(values.dropna().astype(object))))
            else:
                ranks.append(np.sort(values.dropna().to_numpy(dtype=np.float64)))
                categories.append(None)
        return cls(tuple(columns), tuple(ranks), tuple(categories))

    def points(self, frame: pd.DataFrame) -> np.ndarray:
        """One point per row of ``frame`` (a missing or unknown category is all zeros)."""
        blocks = [np.zeros((len(frame), 0))]
        for name, ranks, categories in zip(
            self.columns, self.sorted_values, self.categories, strict=True
        ):
            values = frame[name]
            if categories is not None:
                codes = categories.get_indexer(pd.Index(values.astype(object)))
                block = np.zeros((len(frame), len(categories)))
                known = codes >= 0
                block[np.flatnonzero(known), codes[known]] = np.sqrt(0.5)
                blocks.append(block)
                continue
            assert ranks is not None
            x = values.to_numpy(dtype=np.float64, na_value=np.nan)
            missing = np.isnan(x)
            rank = np.searchsorted(ranks, x) / max(ranks.size, 1)
            rank[missing] = 0.5
            blocks.append(np.column_stack([rank, missing.astype(np.float64)]))
        return np.hstack(blocks)


@dataclass(frozen=True)
class TaskLevels:
    """The level of the task's target a donor must share: its value if categorical, else its
    quantile bin (at most ``NUMERIC_LEVELS``) among the auxiliary values."""

    values: pd.Index | None
    edges: np.ndarray | None

    @classmethod
    def learn(cls, aux_values: pd.Series) -> TaskLevels:
        """The levels of the auxiliary target values."""
        if is_categorical(aux_values) or aux_values.nunique() <= NUMERIC_LEVELS:
            return cls(pd.Index(pd.unique(aux_values.dropna().astype(object))), None)
        quantiles = np.linspace(0, 1, NUMERIC_LEVELS + 1)[1:-1]
        edges = np.unique(np.nanquantile(aux_values.to_numpy(dtype=np.float64), quantiles))
        return cls(None, edges)

    def of(self, values: pd.Series) -> np.ndarray:
        """The level of each value (``NO_TASK`` for a missing or unknown one)."""
        if self.values is not None:
            return np.asarray(self.values.get_indexer(pd.Index(values.astype(object))))
        assert self.edges is not None
        x = values.to_numpy(dtype=np.float64, na_value=np.nan)
        level = np.searchsorted(self.edges, x, side="right")
        return np.where(np.isnan(x), NO_TASK, level)


@dataclass(frozen=True)
class Donors:
    """The auxiliary rows' proxies, and what a released row's donor must share with it."""

    proxies: tuple[str, ...]
    block: pd.DataFrame
    sensitive: np.ndarray
    task_column: str | None
    task_levels: TaskLevels | None
    task: np.ndarray
    coordinates: Coordinates
    near: pd.DataFrame
    k: int

    @classmethod
    def fit(
        cls,
        aux: pd.DataFrame,
        codes: np.ndarray,
        proxies: Sequence[str],
        context: Sequence[str],
        task: str | None,
        k: int,
    ) -> Donors:
        """Index the auxiliary rows (``codes``: their sensitive values' domain positions) by
        sensitive value, task level and context coordinates."""
        near = [c for c in context if c != task]
        coordinates = Coordinates.learn(aux, near)
        levels = None if task is None else TaskLevels.learn(aux[task])
        own = np.full(len(aux), NO_TASK) if levels is None else levels.of(aux[task])
        block = aux[list(proxies)].reset_index(drop=True)
        return cls(
            tuple(proxies), block, np.asarray(codes), task, levels, own,
            coordinates, aux[near].reset_index(drop=True), int(k),
        )  # fmt: skip

    def draw(
        self, given: pd.DataFrame, drawn: np.ndarray, rng: np.random.Generator
    ) -> pd.DataFrame:
        """The proxies of one donor per row of ``given`` (its context columns and task target),
        whose drawn sensitive value (domain positions) is ``drawn``; ``given``'s index."""
        levels = (
            np.full(len(given), NO_TASK)
            if self.task_levels is None or self.task_column is None
            else self.task_levels.of(given[self.task_column])
        )
        used = np.zeros(len(self.block))
        donor = np.empty(len(given), dtype=np.int64)
        for value, level in sorted(set(zip(drawn.tolist(), levels.tolist(), strict=True))):
            rows = np.flatnonzero((drawn == value) & (levels == level))
            pool = self._pool(value, level)
            if not self.coordinates.columns or pool.size <= self.k:
                donor[rows] = _in_turn(pool, rows.size, rng)
                continue
            search = NearestNeighbors(n_neighbors=self.k)
            search.fit(self.coordinates.points(self.near.iloc[pool]))
            here = self.coordinates.points(given.iloc[rows])
            nearest = pool[search.kneighbors(here, return_distance=False)]
            for i in rng.permutation(rows.size):
                pick = least_used(nearest[i], used, rng)
                used[pick] += 1
                donor[rows[i]] = pick
        out = self.block.iloc[donor].copy()
        out.index = given.index
        return out

    def _pool(self, value: int, level: int) -> np.ndarray:
        """The auxiliary rows with this sensitive value and task level; failing that, with this
        sensitive value; failing that, all of them."""
        same = self.sensitive == value
        for rows in (same & (self.task == level), same):
            if rows.any():
                return np.flatnonzero(rows)
        return np.arange(len(self.block))


def least_used(options: np.ndarray, used: np.ndarray, rng: np.random.Generator) -> int:
    """The option (an auxiliary row) used least so far, at random among the least used."""
    return int(options[np.argmin(used[options] + 0.5 * rng.random(options.size))])


def _in_turn(pool: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` donors from ``pool``, each used once before any is used twice (at random): the
    least-used pick when every row of the pool is a candidate."""
    rounds = -(-n // pool.size)
    drawn: np.ndarray = np.concatenate([rng.permutation(pool) for _ in range(rounds)])[:n]
    return drawn


__all__ = ["Coordinates", "Donors", "TaskLevels"]
