"""Bayesian networks of survey columns: public binning (:class:`Levels`), structure and CPDs
with pgmpy (:func:`learn_network`), and the rows to learn from (:func:`learning_rows`).

Learning from private data is not itself private: see docs/mechanisms/tabular-ddp.md.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Hashable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from attrpriv._checks import check_choice, check_positive, check_positive_int
from attrpriv.data.aggregate import Aggregator, aggregator_for
from attrpriv.data.aggregate.base import domain_positions
from attrpriv.data.schema import Categorical, Column, Integer, Numeric, Schema
from attrpriv.errors import InputError, SchemaError
from attrpriv.release.graph.network import DiscreteNetwork

STRUCTURES = ("hc", "chow-liu", "exact")
EXACT_MAX_COLUMNS = 4
"""Exhaustive DAG search is exponential: 543 DAGs on 4 nodes (0.4 s), 29,281 on 5 (40 s)."""


@dataclass(frozen=True)
class Levels:
    """A column's levels; ``starts[t]``: where level t begins (position or bin's left edge)."""

    column: Column
    labels: tuple[Hashable, ...]
    starts: tuple[float, ...]

    @property
    def name(self) -> str:
        return self.column.name

    @property
    def size(self) -> int:
        """Number of histogram bins."""
        return len(self.labels)

    @property
    def n_states(self) -> int:
        """Number of network states: the bins, plus "missing" for a nullable column."""
        return self.size + int(self.column.nullable)

    @property
    def binned(self) -> bool:
        """Whether levels merge several domain values (always for numeric domains)."""
        domain = self.column.domain
        return isinstance(domain, Numeric) or self.size < _domain_size(domain)

    def edges(self) -> np.ndarray:
        """Numeric bin edges ``[lower, ..., upper]`` (numeric domains only)."""
        domain = self.column.domain
        if not isinstance(domain, Numeric):
            raise InputError(f"column {self.name!r} is not numeric: its levels have no edges")
        return np.array([*self.starts, domain.upper], dtype=np.float64)

    def codes(self, values: pd.Series) -> np.ndarray:
        """The level of every value (``size`` for missing); :class:`SchemaError` outside."""
        self.column.validate(values)
        domain = self.column.domain
        missing = np.asarray(values.isna())
        present = values[~missing]
        codes = np.full(len(values), self.size, dtype=np.int64)
        if isinstance(domain, Numeric):
            inner = self.edges()[1:-1]
            level = np.searchsorted(inner, present.to_numpy(np.float64), side="right")
        else:
            if isinstance(domain, Integer):
                positions = present.to_numpy(np.float64).astype(np.int64) - domain.lower
            elif isinstance(domain, Categorical):
                positions = domain_positions(self.name, domain, present.to_numpy(object))
            else:
                raise InputError(f"column {self.name!r} has no domain to take levels from")
            level = np.searchsorted(np.asarray(self.starts), positions, side="right") - 1
        codes[~missing] = level
        return codes

    def count(self, full: np.ndarray) -> np.ndarray:
        """Per-level counts from per-domain-value counts (categorical and integer domains)."""
        return np.add.reduceat(np.asarray(full, dtype=np.int64), np.asarray(self.starts, int))

    def to_dict(self) -> dict[str, Any]:
        return {"column": self.name, "labels": list(self.labels), "binned": self.binned}


def _domain_size(domain: Any) -> int:
    return int(domain.size) if isinstance(domain, (Categorical, Integer)) else 0


def levels_for(column: Column, max_levels: int = 10) -> Levels:
    """The levels of ``column`` over its public domain, at most ``max_levels`` of them."""
    max_levels = check_positive_int(max_levels, "max_levels", minimum=2)
    domain = column.domain
    if domain is None:
        raise InputError(f"column {column.name!r} has no domain (role 'ignore'); it has no levels")
    if isinstance(domain, Numeric):
        if domain.lower == domain.upper:
            raise InputError(f"column {column.name!r} has a single level ({domain.describe()})")
        edges = np.linspace(domain.lower, domain.upper, max_levels + 1)
        labels = tuple(
            f"[{a:g}, {b:g}{']' if t == max_levels - 1 else ')'}"
            for t, (a, b) in enumerate(itertools.pairwise(edges))
        )
        return Levels(column, labels, tuple(float(e) for e in edges[:-1]))
    size = _domain_size(domain)
    if size < 2:
        raise InputError(
            f"column {column.name!r} has a single level in its domain ({domain.describe()}); "
            "its histogram carries no information: leave it out"
        )
    n = min(size, max_levels)
    starts = [t * size // n for t in range(n)]
    values = domain.categories
    if n == size:
        return Levels(column, tuple(values), tuple(float(s) for s in starts))
    ends = [*starts[1:], size]
    if isinstance(domain, Integer):
        labels = tuple(
            f"{values[s]}" if e - s == 1 else f"{values[s]}..{values[e - 1]}"
            for s, e in zip(starts, ends, strict=True)
        )
    else:
        labels = tuple(
            "|".join(str(v) for v in values[s:e]) for s, e in zip(starts, ends, strict=True)
        )
    return Levels(column, labels, tuple(float(s) for s in starts))


def column_levels(
    schema: Schema, columns: Sequence[str], max_levels: int = 10
) -> dict[str, Levels]:
    """:func:`levels_for` of each of ``columns`` (distinct schema columns with a domain)."""
    if isinstance(columns, str) or not isinstance(columns, Sequence):
        raise InputError(f"columns must be a list of column names, got {columns!r}")
    if not columns:
        raise InputError("columns must name at least one column, got an empty list")
    if len(set(columns)) != len(columns):
        dupes = sorted({c for c in columns if list(columns).count(c) > 1})
        raise InputError(f"columns must be distinct, got {dupes} more than once")
    return {name: levels_for(schema[name], max_levels) for name in columns}


def count_levels(aggregator: Aggregator, levels: Mapping[str, Levels]) -> dict[str, np.ndarray]:
    """Per-level counts of every column, through the aggregation engine (pandas, DuckDB, Dask)."""
    discrete = [n for n, lv in levels.items() if not isinstance(lv.column.domain, Numeric)]
    full = aggregator.all_counts(discrete) if discrete else {}
    out: dict[str, np.ndarray] = {}
    for name, lv in levels.items():
        if name in full:
            out[name] = lv.count(full[name].to_numpy())
        else:
            out[name] = aggregator.histogram(name, lv.edges().tolist()).to_numpy(np.int64)
    return out


def level_histograms(aggregator: Aggregator, levels: Mapping[str, Levels]) -> dict[str, pd.Series]:
    """:func:`count_levels` of every column as a histogram indexed by its level labels."""
    counts = count_levels(aggregator, levels)
    return {
        name: pd.Series(
            counts[name], index=pd.Index(list(lv.labels), tupleize_cols=False), name=name
        )
        for name, lv in levels.items()
    }


def encode(frame: pd.DataFrame, levels: Mapping[str, Levels]) -> pd.DataFrame:
    """The level code of every value, one int column per level set (missing -> ``size``)."""
    missing = [name for name in levels if name not in frame.columns]
    if missing:
        raise SchemaError(f"column {missing[0]!r} is in the schema but not in the data")
    return pd.DataFrame(
        {name: lv.codes(frame[name]) for name, lv in levels.items()}, index=frame.index
    )


def learning_rows(
    data: Any, schema: Schema, columns: Sequence[str], max_rows: int, seed: int | None
) -> pd.DataFrame:
    """At most ``max_rows`` rows of ``columns`` (a uniform sample) to learn networks from."""
    max_rows = check_positive_int(max_rows, "max_learn_rows")
    with aggregator_for(data, schema) as aggregator:
        return aggregator.sample_rows(columns, max_rows, seed)


def learn_network(
    codes: pd.DataFrame,
    n_states: Mapping[str, int],
    *,
    structure: str = "hc",
    max_parents: int = 3,
    prior: float = 1.0,
) -> DiscreteNetwork:
    """A network over the level codes of ``codes``: ``structure`` search, smoothed CPDs."""
    check_choice(structure, "structure", STRUCTURES)
    max_parents = check_positive_int(max_parents, "max_parents")
    prior = check_positive(prior, "prior")
    names = [str(c) for c in codes.columns]
    if len(codes) == 0:
        raise InputError(f"no rows to learn the network of columns {names} from")
    if structure == "exact" and len(names) > EXACT_MAX_COLUMNS:
        raise InputError(
            f"structure='exact' searches every DAG and supports at most {EXACT_MAX_COLUMNS} "
            f"columns per chunk, got {len(names)}: use a smaller chunk_size, 'hc' or 'chow-liu'"
        )
    states = {name: list(range(int(n_states[name]))) for name in names}
    for name in names:
        values = codes[name].to_numpy()
        if values.size and (values.min() < 0 or values.max() >= len(states[name])):
            raise InputError(f"column {name!r} has level codes outside 0..{len(states[name]) - 1}")
    data = pd.DataFrame(
        {name: pd.Categorical(codes[name], categories=states[name]) for name in names}
    )
    try:
        edges = _structure(data, structure, max_parents) if len(names) > 1 else []
        return _fit_cpds(data, names, edges, states, prior)
    except InputError:
        raise
    except Exception as exc:  # pgmpy raises plain ValueError/KeyError/... on bad data
        raise InputError(
            f"could not learn a Bayesian network over {names} with structure={structure!r}: "
            f"{type(exc).__name__}: {exc}"
        ) from None


@contextmanager
def _pgmpy_imports() -> Iterator[None]:
    """Import pgmpy without its import-time warnings."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="IProgress not found")
        warnings.simplefilter("ignore", FutureWarning)
        yield


def _structure(data: pd.DataFrame, structure: str, max_parents: int) -> list[tuple[str, str]]:
    """The edges of the learned DAG."""
    if structure == "hc":
        with _pgmpy_imports():
            from pgmpy.causal_discovery import HillClimbSearch

        search = HillClimbSearch(
            scoring_method="bic-d",
            max_indegree=max_parents,
            return_type="dag",
            show_progress=False,
        )
        return [(str(a), str(b)) for a, b in search.fit(data).causal_graph_.edges()]
    with _pgmpy_imports():  # pgmpy 1.1 has Chow-Liu and exhaustive search only here
        from pgmpy.estimators import ExhaustiveSearch, TreeSearch
    if structure == "chow-liu":
        tree = TreeSearch(data, root_node=data.columns[0], n_jobs=1)
        dag = tree.estimate(estimator_type="chow-liu", show_progress=False)
    else:
        dag = ExhaustiveSearch(data, scoring_method="bic-d").estimate()
    return [(str(a), str(b)) for a, b in dag.edges()]


def _fit_cpds(
    data: pd.DataFrame,
    names: list[str],
    edges: list[tuple[str, str]],
    states: Mapping[str, list[int]],
    prior: float,
) -> DiscreteNetwork:
    with _pgmpy_imports():
        from pgmpy.models import DiscreteBayesianNetwork
        from pgmpy.parameter_estimator import DiscreteBayesianEstimator

    model = DiscreteBayesianNetwork(edges)
    model.add_nodes_from(names)
    estimator = DiscreteBayesianEstimator(
        prior_type="dirichlet", pseudo_counts=prior, state_names=dict(states)
    )
    model.add_cpds(*estimator.fit(model, data).parameters_)
    return DiscreteNetwork.from_pgmpy(model)


__all__ = [
    "EXACT_MAX_COLUMNS",
    "STRUCTURES",
    "Levels",
    "column_levels",
    "count_levels",
    "encode",
    "learn_network",
    "learning_rows",
    "level_histograms",
    "levels_for",
]
