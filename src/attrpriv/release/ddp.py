"""Tabular-DDP: survey histograms under dependent differential privacy.

The columns (survey questions) are split into chunks of at most ``k``; a Bayesian network is
learned per chunk (:mod:`attrpriv.release.bayesnet`); chunk c gets the share
``epsilon * k_c / m`` of the budget (sequential composition over the chunks, as in the
Tabular-DDP paper; shares proportional to chunk size, so equal when every chunk has k columns)
and one discrete Laplace scale for all its histograms, from the chunk's dependent sensitivity
(:mod:`attrpriv.release.dependence`: the sound Markov-quilt bound by default, or Liu et al.'s
pairwise coefficients). The baseline is :class:`LaplaceHistograms` on whole rows: with these
shares a chunk whose answers all depend on each other gets exactly the baseline's noise.

What is protected (docs/mechanisms/tabular-ddp.md): one answer of one respondent, changed from
any value to any other, with the respondent's other answers in the same chunk following the
chunk's network given that answer. Answers in different chunks are assumed independent; the
release reports the loss it could reach if they are not (``epsilon_if_chunks_dependent``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from attrpriv._checks import check_choice, check_epsilon, check_positive_int
from attrpriv.data.aggregate import aggregator_for
from attrpriv.data.schema import Role, Schema
from attrpriv.dp.ledger import BudgetLedger
from attrpriv.dp.noise import NoiseSampler, default_sampler, require_private
from attrpriv.dp.record import PrivacyRecord, Release
from attrpriv.errors import InputError
from attrpriv.release.bayesnet import (
    STRUCTURES,
    Levels,
    column_levels,
    count_levels,
    encode,
    learn_network,
    learning_rows,
)
from attrpriv.release.chunking import GROUPINGS, check_chunks, dependence_chunks, order_chunks
from attrpriv.release.dependence import (
    METHODS,
    ChunkNoise,
    ExpectedError,
    PairwiseDependence,
    chunk_noise,
    discrete_laplace_mae,
)
from attrpriv.release.histogram import LaplaceHistograms
from attrpriv.release.network import DiscreteNetwork

Progress = Callable[[int, int], None]


class TabularDDP:
    """epsilon-dependent-DP one-way histograms of survey columns, in chunks of ``chunk_size``.

    Parameters
    ----------
    epsilon : total privacy loss (chunk c gets ``epsilon * k_c / m``).
    chunk_size : k, the most columns per chunk (one network each).
    columns : the columns to release, in order; default every non-ignored column with a domain.
    method : ``"quilt"`` (sound for any network, default) or ``"pairwise"`` (Liu et al.).
    structure : ``"hc"`` (hill climbing + BIC), ``"chow-liu"`` or ``"exact"`` (k <= 4).
    grouping : ``"order"`` (consecutive columns) or ``"dependence"`` (dependent columns together).
    chunks : explicit chunks (lists of columns); replaces ``columns``, ``chunk_size``, ``grouping``.
    aux : public auxiliary data (DataFrame or CSV/Parquet path) to learn the networks from;
        default the private data itself, which the record then says.
    max_levels, max_parents, prior : binning, network in-degree, Dirichlet pseudo-count per cell.
    max_quilt_size : largest quilt tried besides the moral-graph rings (None: every subset,
        exponential in k).
    max_learn_rows : rows sampled to learn from; seed : that sample's seed.
    nonnegative : clip released counts at 0 (the raw counts stay in ``parts["raw_values"]``).
    noise, allow_nonprivate : the noise sampler (default OpenDP), and accepting a test sampler.
    """

    def __init__(
        self,
        epsilon: float,
        chunk_size: int = 10,
        columns: Sequence[str] | None = None,
        *,
        method: str = "quilt",
        structure: str = "hc",
        grouping: str = "order",
        chunks: Sequence[Sequence[str]] | None = None,
        aux: Any = None,
        max_levels: int = 10,
        max_parents: int = 3,
        prior: float = 1.0,
        max_quilt_size: int | None = 3,
        max_learn_rows: int = 100_000,
        seed: int | None = 0,
        nonnegative: bool = False,
        noise: NoiseSampler | None = None,
        allow_nonprivate: bool = False,
    ) -> None:
        self.epsilon = epsilon
        self.chunk_size = chunk_size
        self.columns = columns
        self.method = method
        self.structure = structure
        self.grouping = grouping
        self.chunks = chunks
        self.aux = aux
        self.max_levels = max_levels
        self.max_parents = max_parents
        self.prior = prior
        self.max_quilt_size = max_quilt_size
        self.max_learn_rows = max_learn_rows
        self.seed = seed
        self.nonnegative = nonnegative
        self.noise = noise
        self.allow_nonprivate = allow_nonprivate

    # -- learning ----------------------------------------------------------------------------
    def fit(self, data: Any, schema: Schema, *, progress: Progress | None = None) -> TabularDDP:
        """Bin the columns, form the chunks, learn one network per chunk, then :meth:`plan`.

        Learns from ``aux`` when given, else from (a sample of) ``data``. Reads rows, not just
        aggregates: structure learning needs them. Spends no budget and draws no noise.
        ``progress(done, total)`` is called after each chunk.
        """
        check_epsilon(self.epsilon)
        check_choice(self.method, "method", METHODS)
        check_choice(self.structure, "structure", STRUCTURES)
        check_choice(self.grouping, "grouping", GROUPINGS)
        if not isinstance(schema, Schema):
            raise InputError(f"schema must be an attrpriv Schema, got {type(schema).__name__}")
        columns = self._columns(schema)
        levels = column_levels(schema, columns, self.max_levels)
        source = data if self.aux is None else self.aux
        rows = learning_rows(source, schema, columns, self.max_learn_rows, self.seed)
        if len(rows) == 0:
            raise InputError("the data to learn the networks from has no rows")
        codes = encode(rows, levels)
        chunks = self._chunks(columns, codes, levels)
        networks = []
        for index, chunk in enumerate(chunks):
            networks.append(
                learn_network(
                    codes.loc[:, list(chunk)],
                    {name: levels[name].n_states for name in chunk},
                    structure=self.structure,
                    max_parents=self.max_parents,
                    prior=self.prior,
                )
            )
            if progress is not None:
                progress(index + 1, len(chunks))
        self.levels_: dict[str, Levels] = levels
        self.chunks_: tuple[tuple[str, ...], ...] = tuple(chunks)
        self.networks_: tuple[DiscreteNetwork, ...] = tuple(networks)
        self.learned_from_: str = "auxiliary" if self.aux is not None else "private"
        self.n_learning_rows_: int = len(codes)
        return self.plan()

    def plan(self) -> TabularDDP:
        """(Re)compute every chunk's noise for the current ``epsilon``, ``method`` and
        ``max_quilt_size``, keeping the learned networks (fit first)."""
        if not hasattr(self, "networks_"):
            raise InputError("this TabularDDP is not fitted yet: call fit(data, schema) first")
        epsilon = check_epsilon(self.epsilon)
        check_choice(self.method, "method", METHODS)
        m = sum(len(chunk) for chunk in self.chunks_)
        self.noise_: tuple[ChunkNoise, ...] = tuple(
            replace(self.plan_chunk(network, epsilon * len(chunk) / m), columns=chunk)
            for chunk, network in zip(self.chunks_, self.networks_, strict=True)
        )
        self.planned_for_: tuple[Any, ...] = self._plan_key()
        return self

    def _plan_key(self) -> tuple[Any, ...]:
        """What the noise scales depend on besides the networks."""
        return (self.epsilon, self.method, self.max_quilt_size, type(self).coefficients)

    def plan_chunk(self, network: DiscreteNetwork, epsilon: float) -> ChunkNoise:
        """The noise of one chunk whose answers follow ``network``, with budget ``epsilon``."""
        return chunk_noise(
            network,
            epsilon,
            method=self.method,
            max_quilt_size=self.max_quilt_size,
            coefficients=self.coefficients,
        )

    def coefficients(self, dependence: PairwiseDependence, scale: float) -> np.ndarray:
        """The pairwise dependence coefficients rho at noise ``scale`` (method ``"pairwise"``)."""
        return dependence.coefficients(scale)

    def _columns(self, schema: Schema) -> list[str]:
        if self.chunks is not None:
            if self.columns is not None:
                raise InputError("give either columns or chunks, not both")
            return [c for chunk in check_chunks(self.chunks) for c in chunk]
        if self.columns is None:
            return [c.name for c in schema.columns if c.role is not Role.IGNORE and c.domain]
        if isinstance(self.columns, str):
            raise InputError(f"columns must be a list of column names, got {self.columns!r}")
        return list(self.columns)

    def _chunks(
        self, columns: list[str], codes: pd.DataFrame, levels: Mapping[str, Levels]
    ) -> list[tuple[str, ...]]:
        if self.chunks is not None:
            return check_chunks(self.chunks)
        k = check_positive_int(self.chunk_size, "chunk_size")
        if self.grouping == "order":
            return order_chunks(columns, k)
        return dependence_chunks(codes, {c: levels[c].n_states for c in columns}, k)

    # -- the guarantee and its cost ----------------------------------------------------------
    def _fitted(self) -> tuple[ChunkNoise, ...]:
        if not hasattr(self, "noise_"):
            raise InputError("this TabularDDP is not fitted yet: call fit(data, schema) first")
        return self.noise_

    def _by_column(self) -> list[tuple[str, ChunkNoise]]:
        """(column, its chunk's noise) in release order."""
        plans = self._fitted()
        return [(c, p) for chunk, p in zip(self.chunks_, plans, strict=True) for c in chunk]

    def epsilon_if_chunks_dependent(self) -> float:
        """The loss bound if answers in different chunks depend on each other arbitrarily.

        A secret in chunk c loses at most its chunk's budget there, and at most
        ``sum_j Delta_j / sigma`` (every answer changed) through each other chunk.
        """
        plans = self._fitted()
        exposure = [p.row_sensitivity / p.scale for p in plans]
        total = math.fsum(exposure)
        return max(p.epsilon + total - e for p, e in zip(plans, exposure, strict=True))

    def record(self, sampler: NoiseSampler) -> PrivacyRecord:
        """The guarantee of the fitted configuration."""
        plans = self._fitted()
        epsilon, method = self.planned_for_[:2]  # what the scales were calibrated for
        scales = {c: p.scale for c, p in self._by_column()}
        return PrivacyRecord(
            mechanism="tabular-ddp",
            definition="dependent-dp",
            epsilon=epsilon,
            delta=0.0,
            protects=(
                "any one answer of any one respondent (changed from one value to another, "
                "the respondent's other answers in its chunk moving with it as the chunk's "
                "network says), against an adversary who knows those networks"
            ),
            sensitivity={c: p.dependent_sensitivity for c, p in self._by_column()},
            noise={
                "distribution": "discrete laplace",
                "scale": scales,
                "norm": "l1",
                "method": method,
                "composition": f"sequential over {len(plans)} chunks, epsilon * k_c / m each",
                "chunk_epsilon": [p.epsilon for p in plans],
                **sampler.describe(),
            },
            assumptions=self._assumptions(sampler),
        )

    def _assumptions(self, sampler: NoiseSampler) -> tuple[str, ...]:
        found = [
            "respondents are independent of one another",
            "answers in different chunks are independent of each other; if they are not, "
            f"the loss is at most {self.epsilon_if_chunks_dependent():.4g}",
        ]
        if self.learned_from_ == "private":
            found.append(
                "networks and chunks learned from the private data: they, and the noise "
                "scales that depend on them, are not themselves private"
            )
        else:
            found.append("networks learned from public auxiliary data")
        if self.planned_for_[1] == "pairwise":
            found.append(
                "pairwise coefficients: sound only if, given any one answer, the other "
                "answers of its chunk are independent of each other (fails e.g. for XOR)"
            )
        if not sampler.private:
            found.append("noise sampler is not private")
        return tuple(found)

    def expected_error(self) -> ExpectedError:
        """Expected absolute error per bin (from the scales), and the Laplace baseline's."""
        plans = self._fitted()
        sampler = self.noise if self.noise is not None else default_sampler()
        columns = [c for p in plans for c in p.columns]
        epsilon = self.planned_for_[0]
        baseline = LaplaceHistograms(epsilon, columns, neighbours="substitute")
        laplace_scale = float(baseline.record(len(columns), epsilon, sampler).noise["scale"])
        bins = [sum(self.levels_[c].size for c in p.columns) for p in plans]
        maes = [discrete_laplace_mae(p.scale) for p in plans]
        total = sum(bins)
        return ExpectedError(
            mae=math.fsum(b * m for b, m in zip(bins, maes, strict=True)) / total,
            laplace_mae=discrete_laplace_mae(laplace_scale),
            laplace_scale=laplace_scale,
            n_bins=total,
            chunk_mae=tuple(maes),
        )

    # -- the release -------------------------------------------------------------------------
    def release(
        self,
        data: Any,
        schema: Schema,
        *,
        ledger: BudgetLedger | None = None,
        label: str = "",
    ) -> Release:
        """Fit if needed, count, charge the ledger (before any noise), add noise per chunk.

        ``data`` is a DataFrame or a CSV/Parquet path (counted by DuckDB) or a Dask DataFrame
        (then learn from ``aux``, or fit first on a sample).
        """
        sampler = self.noise if self.noise is not None else default_sampler()
        require_private(sampler, allow_nonprivate=self.allow_nonprivate)
        if not hasattr(self, "noise_"):
            self.fit(data, schema)
        elif self.planned_for_ != self._plan_key():
            self.plan()  # epsilon or method changed since fit: never release stale scales
        self._check_schema(schema)
        with aggregator_for(data, schema) as aggregator:
            counts = count_levels(aggregator, self.levels_)
        record = self.record(sampler)
        if ledger is not None:
            ledger.charge(record, label=label)
        raw: dict[str, pd.Series] = {}
        for chunk, plan in zip(self.chunks_, self.noise_, strict=True):
            flat = np.concatenate([counts[c] for c in chunk])
            noisy = sampler.discrete_laplace(flat, plan.scale)
            start = 0
            for name in chunk:
                size = self.levels_[name].size
                index = pd.Index(list(self.levels_[name].labels), tupleize_cols=False)
                raw[name] = pd.Series(noisy[start : start + size], index=index, name=name)
                start += size
        values = {c: raw[c].clip(lower=0) for c in raw} if self.nonnegative else raw
        return Release(values, record, self._parts(raw if self.nonnegative else None))

    def _check_schema(self, schema: Schema) -> None:
        for name, lv in self.levels_.items():
            if name not in schema or schema[name] != lv.column:
                raise InputError(
                    f"column {name!r} differs from the schema this TabularDDP was fitted with; "
                    "fit it again"
                )

    def _parts(self, raw: Mapping[str, pd.Series] | None) -> dict[str, Any]:
        error = self.expected_error()
        chunks = [
            {**plan.to_dict(), "expected_mae": mae}
            for plan, mae in zip(self.noise_, error.chunk_mae, strict=True)
        ]
        parts: dict[str, Any] = {
            "chunks": chunks,
            "expected_error": error.to_dict(),
            "epsilon_if_chunks_dependent": self.epsilon_if_chunks_dependent(),
            "learned_from": self.learned_from_,
            "n_learning_rows": self.n_learning_rows_,
            "binned": {n: list(lv.labels) for n, lv in self.levels_.items() if lv.binned},
        }
        if raw is not None:
            parts["raw_values"] = dict(raw)
        return parts


__all__ = ["ExpectedError", "TabularDDP", "discrete_laplace_mae"]
