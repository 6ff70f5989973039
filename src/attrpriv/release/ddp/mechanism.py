"""The earlier Tabular-DDP calibration and the paper's pairwise method: comparisons only.

Kept for ``benchmarks/ddp.py`` and ``benchmarks/ddp_tiers.py``, not exported by
:mod:`attrpriv.release` nor offered by the CLI: the first guarantee of a :class:`TabularDDP`
record rests on independence tests of the learning rows (``"quilt"``) or on no check at all
(``"pairwise"``), not on a proof for a stated class of laws; only its "any law" guarantee is
proved. The tiers that replace it are :class:`~attrpriv.release.ddp.modules.ModularDDP` and
:class:`~attrpriv.release.ddp.model.ModelDDP` (docs/mechanisms/tabular-ddp.md).

The columns (survey questions) are split into chunks of at most ``k``, a computational device:
every chunk gets one discrete Laplace scale for all its histograms. Two compositions:

``"survey"`` (the default). Every answer's loss is bounded against the full ``epsilon``. Each
chunk gets a boundary ring (:mod:`attrpriv.release.ddp.boundary`): answers outside it that,
tested on the learning rows, screen it from the rest of the survey; a network is learned over
the chunk and its ring, and every answer's checked bound (:mod:`attrpriv.release.ddp.bound`)
conditions on the ring or on a quilt behind which it lies. If a ring cannot be confirmed, or
some answer cannot be bounded below ``epsilon`` this way, every histogram gets the row-level
Laplace scale, which is sound for any dependence (the record says why).

``"chunks"`` (the Tabular-DDP paper's). A network per chunk; chunk c gets the share
``epsilon * k_c / m`` of the budget (sequential composition over the chunks) and its scale
from its dependent sensitivity (the checked bound, or Liu et al.'s pairwise coefficients,
``method="pairwise"``, which needs this composition). Answers in different chunks are assumed
independent; the release reports the loss it could reach if they are not.

The baseline is :class:`LaplaceHistograms` on whole rows. What is protected
(docs/mechanisms/tabular-ddp.md): one answer of one respondent, changed from any value to any
other, with the respondent's other answers following the dependence model given that answer.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from attrpriv._checks import (
    Check,
    check_epsilon,
    check_flag,
    check_positive,
    check_positive_int,
    one_of,
    optional,
)
from attrpriv.data.aggregate import aggregator_for
from attrpriv.data.schema import Role, Schema
from attrpriv.dp.accuracy import Accuracy
from attrpriv.dp.ledger import BudgetLedger
from attrpriv.dp.mechanism import SAMPLER_CONSTRAINTS, Mechanism, NoisePlan, check_fitted
from attrpriv.dp.noise import NoiseSampler
from attrpriv.dp.record import ANY_LAW, Guarantee, PrivacyRecord, Release
from attrpriv.dp.units import ANSWER, PrivacyUnit
from attrpriv.errors import InputError
from attrpriv.release.ddp.answers import any_law_epsilon
from attrpriv.release.ddp.bound import ALPHA, Evidence, chunk_evidence
from attrpriv.release.ddp.boundary import Boundary, Encoded, find_boundary, merge_ring
from attrpriv.release.ddp.chunking import GROUPINGS, check_chunks, dependence_chunks, order_chunks
from attrpriv.release.ddp.dependence import (
    METHODS,
    SUBSTITUTION_SENSITIVITY,
    ChunkNoise,
    ExpectedError,
    PairwiseDependence,
    chunk_noise,
    discrete_laplace_mae,
)
from attrpriv.release.graph.learning import (
    EXACT_MAX_COLUMNS,
    STRUCTURES,
    Levels,
    column_levels,
    encode,
    learn_network,
    learning_rows,
    level_histograms,
)
from attrpriv.release.graph.network import DiscreteNetwork
from attrpriv.release.laplace import (
    Counts,
    Histograms,
    _noisy_histograms,
    histogram_accuracy,
    histograms_sensitivity,
)

Progress = Callable[[int, int], None]

COMPOSITIONS = ("auto", "survey", "chunks")


@dataclass(frozen=True)
class DDPPlan(NoisePlan):
    """Every chunk's noise, with what the guarantee rests on."""

    method: str
    composition: str
    chunks: tuple[ChunkNoise, ...]
    boundaries: tuple[Boundary, ...]  # per chunk for "survey", () for "chunks"
    fallback: str  # why every histogram got the row-level Laplace scale ("" when it did not)
    learned_from: str
    n_learning_rows: int
    model: str  # a fingerprint of the chunks and their networks: the dependence model
    claims_rejected: int  # independence claims the learning rows rejected (not used)
    claims_untestable: int  # claims with too few rows per cell to test (not used)

    @property
    def epsilon_if_chunks_dependent(self) -> float:
        """The loss bound if the claims between chunks fail (answers in different chunks
        dependent for ``"chunks"``, a boundary ring not screening for ``"survey"``).

        ``"chunks"``: a secret in chunk c loses at most its chunk's budget there, and at most
        ``sum_j Delta_j / sigma`` (every answer changed) through each other chunk. ``"survey"``:
        the bounds inside a chunk rest on its ring too, so only ``sum_j Delta_j / sigma_j``
        over every histogram is left.
        """
        exposure = [p.row_sensitivity / p.scale for p in self.chunks]
        total = math.fsum(exposure)
        if self.composition == "survey":
            return total
        return max(p.epsilon + total - e for p, e in zip(self.chunks, exposure, strict=True))

    def scales(self) -> dict[str, float]:
        """The noise scale of every released column, in release order."""
        return {c: p.scale for p in self.chunks for c in p.columns}


@dataclass(frozen=True, eq=False)
class _ChunkModel:
    """One chunk's boundary (``"survey"`` only), the network over it and its ring, and the
    candidate bounds of its answers."""

    chunk: tuple[str, ...]
    boundary: Boundary | None
    network: DiscreteNetwork
    evidence: Evidence


class TabularDDP(Mechanism[Counts, DDPPlan]):
    """epsilon-dependent-DP one-way histograms of survey columns, in chunks of ``chunk_size``.

    Parameters
    ----------
    epsilon : float
        Total privacy loss (chunk c gets ``epsilon * k_c / m``).
    chunk_size : int, optional
        k, the most columns per chunk (one network each).
    columns : sequence of str, optional
        The columns to release, in order; default every non-ignored column with a domain.
    method : str, optional
        ``"quilt"`` (the checked bound, sound whatever network is learned; default) or
        ``"pairwise"`` (Liu et al., the paper's; needs ``composition="chunks"``).
    composition : str, optional
        ``"survey"`` (every answer against the full epsilon, chunks screened by tested
        boundary rings), ``"chunks"`` (the paper's split ``epsilon * k_c / m``, chunks assumed
        independent) or ``"auto"`` (default: ``"survey"`` for ``"quilt"``, ``"chunks"`` for
        ``"pairwise"``).
    structure : str, optional
        ``"hc"`` (hill climbing + BIC), ``"chow-liu"`` or ``"exact"`` (k <= 4); a chunk whose
        answers and ring number more than ``2 * chunk_size`` (4 for ``"exact"``) is learned as
        a Chow-Liu tree (the network only proposes quilts: the checks keep the bound sound
        whatever it is).
    grouping : str, optional
        ``"dependence"`` (dependent columns together, default) or ``"order"`` (consecutive
        columns, the paper's).
    chunks : sequence of sequence of str, optional
        Explicit chunks (lists of columns); replaces ``columns``, ``chunk_size``, ``grouping``
        (under ``"survey"`` a chunk whose ring cannot be confirmed is still merged).
    aux : pandas.DataFrame, str or pathlib.Path, optional
        Public auxiliary data (DataFrame or CSV/Parquet path) to learn the networks from;
        default the private data itself, which the record then says.
    max_levels : int, optional
        Binning: the most levels per column.
    max_parents : int, optional
        The networks' largest in-degree.
    prior : float, optional
        Dirichlet pseudo-count per cell.
    max_quilt_size : int or None, optional
        Largest quilt tried besides the moral-graph rings (None: every subset, exponential in
        k); lowered for an answer whose neighbourhood has more subsets than
        :data:`~attrpriv.release.graph.quilts.MAX_CANDIDATES` (a hub of a merged chunk).
    max_learn_rows : int, optional
        Rows sampled to learn from.
    seed : int or None, optional
        That sample's seed.
    nonnegative : bool, optional
        Clip released counts at 0 (the raw counts stay in ``parts["raw_values"]``).
    noise : NoiseSampler or None, optional
        The noise sampler (default OpenDP).
    allow_nonprivate : bool, optional
        Accept a non-private (test) sampler.

    Attributes
    ----------
    levels_ : dict of str to Levels
        The binned levels of every column.
    chunks_ : tuple of tuple of str
        The chunks (their columns).
    networks_ : tuple of DiscreteNetwork
        One network per chunk.
    evidence_ : tuple of Evidence
        Per chunk, the candidate bounds the learning rows support (their independence claims
        tested; see :mod:`attrpriv.release.ddp.bound`).
    boundaries_ : tuple of Boundary
        Per chunk, its boundary ring and whether the learning rows confirm it (composition
        ``"survey"``; empty for ``"chunks"``).
    composition_ : str
        The composition the mechanism was fitted for.
    learned_from_ : str
        ``"auxiliary"`` or ``"private"``.
    n_learning_rows_ : int
        Rows learned from.
    """

    _constraints: ClassVar[Mapping[str, Check]] = {
        "epsilon": check_epsilon,
        "chunk_size": check_positive_int,
        "method": one_of(METHODS),
        "composition": one_of(COMPOSITIONS),
        "structure": one_of(STRUCTURES),
        "grouping": one_of(GROUPINGS),
        "max_levels": lambda value, name: check_positive_int(value, name, minimum=2),
        "max_parents": check_positive_int,
        "prior": check_positive,
        "max_quilt_size": optional(check_positive_int),
        "max_learn_rows": check_positive_int,
        "seed": optional(lambda value, name: check_positive_int(value, name, minimum=0)),
        "nonnegative": check_flag,
        **SAMPLER_CONSTRAINTS,
    }

    def __init__(
        self,
        epsilon: float,
        chunk_size: int = 10,
        columns: Sequence[str] | None = None,
        *,
        method: str = "quilt",
        composition: str = "auto",
        structure: str = "hc",
        grouping: str = "dependence",
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
        self.composition = composition
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
        """Bin the columns, form the chunks, learn one network per chunk.

        Learns from ``aux`` when given, else from (a sample of) ``data``. Reads rows, not just
        aggregates: structure learning needs them. Spends no budget and draws no noise.
        ``progress(done, total)`` is called after each chunk.

        Parameters
        ----------
        data : pandas.DataFrame, str or pathlib.Path
            The private data (learned from only when ``aux`` is not given).
        schema : Schema
            The public domains of the columns.
        progress : callable or None, optional
            Called as ``progress(done, total)`` after each chunk.

        Returns
        -------
        TabularDDP
            The mechanism itself, fitted.

        Raises
        ------
        InputError
            A parameter is invalid, ``schema`` is not a :class:`Schema`, or the data to learn
            from has no rows.
        """
        self._validate_params()
        return self._fit(data, schema, progress)

    def _fit(self, data: Any, schema: Schema, progress: Progress | None) -> TabularDDP:
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
        models = self._models(chunks, codes, levels, progress)
        chunks = [model.chunk for model in models]
        self.levels_: dict[str, Levels] = levels
        self.chunks_: tuple[tuple[str, ...], ...] = tuple(chunks)
        self.networks_: tuple[DiscreteNetwork, ...] = tuple(m.network for m in models)
        self.evidence_: tuple[Evidence, ...] = tuple(m.evidence for m in models)
        self.boundaries_: tuple[Boundary, ...] = tuple(
            m.boundary for m in models if m.boundary is not None
        )
        self.composition_: str = self._composition()
        self.learned_from_: str = "auxiliary" if self.aux is not None else "private"
        self.n_learning_rows_: int = len(codes)
        return self

    def _models(
        self,
        chunks: list[tuple[str, ...]],
        codes: pd.DataFrame,
        levels: Mapping[str, Levels],
        progress: Progress | None,
    ) -> list[_ChunkModel]:
        """Every chunk's boundary, network and evidence. For ``"survey"``, a chunk whose ring
        is not confirmed (checked before any network is learned), or that leaks at least half
        of epsilon into one of its answers whatever the quilt, is merged with the chunks
        holding its ring (every other chunk if its ring is empty) and modelled again."""
        columns = list(codes.columns)
        survey = self._composition() == "survey"
        states = [levels[name].n_states for name in columns]
        encoded = Encoded.of(codes.to_numpy(np.int64), states) if survey else None
        rings: dict[tuple[str, ...], Boundary] = {}
        built: dict[tuple[str, ...], _ChunkModel] = {}
        stuck: set[tuple[str, ...]] = set()
        while True:
            if encoded is not None:
                for chunk in chunks:
                    if chunk not in rings:
                        at = [columns.index(name) for name in chunk]
                        rings[chunk] = find_boundary(encoded, columns, at)
                grow = [c for c in chunks if c not in stuck and not rings[c].confirmed]
            if encoded is None or not grow:
                for chunk in chunks:
                    if chunk not in built:
                        built[chunk] = self._model(chunk, rings.get(chunk), codes, levels)
                        if progress is not None:
                            left = sum(c not in built for c in chunks)
                            progress(len(built), len(built) + left)
                grow = [c for c in chunks if c not in stuck and self._leaks(built[c])]
                if not grow:
                    return [built[c] for c in chunks]
            chunk = grow[0]
            merged = merge_ring(chunks, chunk, rings[chunk].ring, columns)
            if len(merged) == len(chunks):
                stuck.add(chunk)
            else:
                chunks = merged

    def _model(
        self,
        chunk: tuple[str, ...],
        boundary: Boundary | None,
        codes: pd.DataFrame,
        levels: Mapping[str, Levels],
    ) -> _ChunkModel:
        ring = boundary.ring if boundary is not None else ()
        modelled = [*chunk, *ring]
        reach = EXACT_MAX_COLUMNS if self.structure == "exact" else 2 * int(self.chunk_size)
        large = len(modelled) > reach  # grown by merging, or by its ring
        network = learn_network(
            codes.loc[:, modelled],
            {name: levels[name].n_states for name in modelled},
            structure="chow-liu" if large else self.structure,
            max_parents=self.max_parents,
            prior=self.prior,
        )
        evidence = chunk_evidence(
            network,
            codes.loc[:, list(network.nodes)].to_numpy(),
            [levels[name].n_states for name in network.nodes],
            targets=chunk,
            ring=ring,
            prior=self.prior,
            max_quilt_size=self.max_quilt_size,
        )
        return _ChunkModel(chunk, boundary, network, evidence)

    def _leaks(self, model: _ChunkModel) -> bool:
        """A confirmed ring whose influence alone (whatever the quilt) is at least half of
        epsilon for some answer of the chunk."""
        if model.boundary is None:
            return False
        least = (min(c.influence for c in model.evidence.candidates[n]) for n in model.chunk)
        return max(least) >= float(self.epsilon) / 2

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
        k = int(self.chunk_size)
        if self.grouping == "order":
            return order_chunks(columns, k)
        return dependence_chunks(codes, {c: levels[c].n_states for c in columns}, k)

    # -- calibration -------------------------------------------------------------------------
    def calibrate(self, sampler: NoiseSampler | None = None) -> DDPPlan:
        """Every chunk's noise for the current ``epsilon`` and ``method``, from the learned
        networks (fit first). Public: no data is used beyond what ``fit`` learned.

        Parameters
        ----------
        sampler : NoiseSampler or None, optional
            The noise sampler; default the mechanism's own.

        Returns
        -------
        DDPPlan
            The noise scale of every chunk.

        Raises
        ------
        NotFittedError
            The mechanism has not been fitted.
        InputError
            A parameter of the mechanism is invalid.
        """
        check_fitted(self, "networks_")
        self._validate_params()
        return self._plan(sampler or self._sampler(), ())

    def _plan(self, sampler: NoiseSampler, inferred: tuple[str, ...]) -> DDPPlan:
        if self._composition() != self.composition_:
            raise InputError(
                f"composition changed from {self.composition_!r} to {self._composition()!r} "
                "since fit; fit again"
            )
        noise, fallback = self._chunk_noise()
        return DDPPlan(
            float(self.epsilon),
            0.0,
            sampler,
            self.method,
            self.composition_,
            noise,
            self.boundaries_,
            fallback,
            self.learned_from_,
            self.n_learning_rows_,
            _fingerprint(self.networks_),
            sum(e.rejected for e in self.evidence_),
            sum(e.untestable for e in self.evidence_),
            inferred=inferred,
        )

    def _chunk_noise(self) -> tuple[tuple[ChunkNoise, ...], str]:
        """Every chunk's noise, and why every chunk fell back to the Laplace scale ("")."""
        epsilon = float(self.epsilon)
        m = sum(len(chunk) for chunk in self.chunks_)
        survey = self.composition_ == "survey"
        laplace = histograms_sensitivity(m, "substitute") / epsilon
        found: list[ChunkNoise | None] = [
            chunk_noise(
                network,
                epsilon if survey else epsilon * len(chunk) / m,
                method=self.method,
                evidence=evidence,
                coefficients=self.coefficients,
                ceiling=laplace if survey else None,
            )
            for chunk, network, evidence in zip(
                self.chunks_, self.networks_, self.evidence_, strict=True
            )
        ]
        unconfirmed = [n for n, b in enumerate(self.boundaries_, start=1) if not b.confirmed]
        unbounded = [n for n, noise in enumerate(found, start=1) if noise is None]
        fallback = ""
        if unconfirmed:
            fallback = f"the boundary ring of chunks {unconfirmed} could not be confirmed"
        elif unbounded:
            fallback = f"no bound below epsilon for an answer of chunks {unbounded}"
        if fallback:
            return tuple(
                ChunkNoise(chunk, self.method, epsilon, laplace, self._sensitivity(chunk))
                for chunk in self.chunks_
            ), fallback
        pairs = zip(found, self.chunks_, strict=True)
        chosen = tuple(replace(n, columns=c) for n, c in pairs if n is not None)
        return chosen, fallback

    @staticmethod
    def _sensitivity(chunk: Sequence[str]) -> dict[str, float]:
        return dict.fromkeys(chunk, SUBSTITUTION_SENSITIVITY)

    def _composition(self) -> str:
        if self.composition != "auto":
            return str(self.composition)
        return "chunks" if self.method == "pairwise" else "survey"

    def _validate_params(self) -> None:
        super()._validate_params()
        if self.structure == "exact" and int(self.chunk_size) > EXACT_MAX_COLUMNS:
            raise InputError(
                f"structure 'exact' searches every DAG: chunk_size must be at most "
                f"{EXACT_MAX_COLUMNS} columns, got {self.chunk_size}"
            )
        if self.method == "pairwise" and self.composition == "survey":
            raise InputError(
                "method 'pairwise' is the paper's chunked method: give composition='chunks'"
            )

    def coefficients(self, dependence: PairwiseDependence, scale: float) -> np.ndarray:
        """The pairwise dependence coefficients rho at noise ``scale`` (method ``"pairwise"``).

        A hook: :meth:`calibrate` passes it to the chunk calibration, so a subclass (a test)
        can override the coefficients; by default they are ``dependence.coefficients(scale)``.

        Parameters
        ----------
        dependence : PairwiseDependence
            The pairwise loss frontiers of a chunk's network.
        scale : float
            The noise scale the coefficients are evaluated at.

        Returns
        -------
        numpy.ndarray
            The ``k x k`` coefficients ``rho[i, j]`` of the chunk's k columns, in [0, 1], with
            1 on the diagonal.
        """
        return dependence.coefficients(scale)

    def epsilon_if_chunks_dependent(self) -> float:
        """The loss bound if answers in different chunks depend on each other arbitrarily.

        Returns
        -------
        float
            ``DDPPlan.epsilon_if_chunks_dependent`` of :meth:`calibrate`'s plan.

        Raises
        ------
        NotFittedError
            The mechanism has not been fitted.
        InputError
            A parameter of the mechanism is invalid.
        """
        return self.calibrate().epsilon_if_chunks_dependent

    def expected_error(self, plan: DDPPlan | None = None) -> ExpectedError:
        """Expected absolute error per bin (from the scales), and the Laplace baseline's.

        The baseline is :class:`LaplaceHistograms` with substitution neighbours on the same
        columns at the same epsilon. No data is used.

        Parameters
        ----------
        plan : DDPPlan or None, optional
            A plan of this fitted mechanism; default :meth:`calibrate`'s.

        Returns
        -------
        ExpectedError
            The bin-weighted mean absolute error, the baseline's, its scale, the number of
            bins and every chunk's mean absolute error.

        Raises
        ------
        NotFittedError
            ``plan`` is None and the mechanism has not been fitted.
        InputError
            ``plan`` is None and a parameter of the mechanism is invalid.
        """
        plan = plan if plan is not None else self.calibrate()
        columns = [c for p in plan.chunks for c in p.columns]
        laplace_scale = histograms_sensitivity(len(columns), "substitute") / plan.epsilon
        bins = [sum(self.levels_[c].size for c in p.columns) for p in plan.chunks]
        maes = [discrete_laplace_mae(p.scale) for p in plan.chunks]
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
        progress: Progress | None = None,
    ) -> Release:
        """Fit if needed, count, charge the ledger (before any noise), add noise per chunk.

        ``data`` is a DataFrame or a CSV/Parquet path (counted by DuckDB) or a Dask DataFrame
        (then learn from ``aux``, or fit first on a sample). ``progress`` is :meth:`fit`'s,
        when the release has to fit.

        Parameters
        ----------
        data : pandas.DataFrame, str, pathlib.Path or dask.dataframe.DataFrame
            The private data.
        schema : Schema
            The public domains of the columns.
        ledger : BudgetLedger or None, optional
            Charged with the release's record before any noise is drawn.
        label : str, optional
            A free-text name for the release in the ledger.
        progress : callable or None, optional
            :meth:`fit`'s progress callback, when the release has to fit.

        Returns
        -------
        Release
            The noisy counts, their accuracy and the :class:`PrivacyRecord`.

        Raises
        ------
        InputError
            A parameter is invalid, or the data does not match the fitted levels.
        BudgetExceededError
            The release does not fit the ledger's budget (nothing is released).
        """
        return self._release(data, schema, progress, ledger=ledger, label=label)

    def _measure(self, data: Any, schema: Schema, progress: Progress | None) -> Counts:
        if not hasattr(self, "networks_"):
            self._fit(data, schema, progress)
        self._check_schema(schema)
        with aggregator_for(data, schema) as aggregator:
            histograms = level_histograms(aggregator, self.levels_)
        return Counts(histograms, schema.inferred_among(self.levels_))

    def _calibrate(self, measured: Counts, sampler: NoiseSampler) -> DDPPlan:
        return self._plan(sampler, measured.inferred)

    def _check_schema(self, schema: Schema) -> None:
        for name, lv in self.levels_.items():
            if name not in schema or schema[name] != lv.column:
                raise InputError(
                    f"column {name!r} differs from the schema this TabularDDP was fitted with; "
                    "fit it again"
                )

    def _noise(self, measured: Counts, plan: DDPPlan) -> Histograms:
        raw: Histograms = {}
        for chunk in plan.chunks:
            counts = {c: measured.histograms[c] for c in chunk.columns}
            raw.update(_noisy_histograms(counts, chunk.scale, plan.sampler))
        return raw

    def _post_process(self, noisy: Histograms) -> Histograms:
        if not self.nonnegative:
            return noisy
        return {c: series.clip(lower=0) for c, series in noisy.items()}

    def _accuracy(self, plan: DDPPlan, values: Histograms) -> Accuracy:
        return histogram_accuracy(values, plan.scales())

    def _parts(self, measured: Counts, plan: DDPPlan, noisy: Histograms) -> dict[str, Any]:
        error = self.expected_error(plan)
        chunks = [
            {**chunk.to_dict(), "expected_mae": mae}
            for chunk, mae in zip(plan.chunks, error.chunk_mae, strict=True)
        ]
        for chunk, boundary in zip(chunks, plan.boundaries, strict=False):
            chunk["boundary"] = boundary.to_dict()
        parts: dict[str, Any] = {
            "chunks": chunks,
            "expected_error": error.to_dict(),
            "epsilon_if_chunks_dependent": plan.epsilon_if_chunks_dependent,
            "composition": plan.composition,
            "fallback": plan.fallback,
            "learned_from": self.learned_from_,
            "n_learning_rows": self.n_learning_rows_,
            "binned": {n: list(lv.labels) for n, lv in self.levels_.items() if lv.binned},
        }
        if self.nonnegative:
            parts["raw_values"] = dict(noisy)
        return parts

    # -- the guarantee -----------------------------------------------------------------------
    def record(self, plan: DDPPlan) -> PrivacyRecord:
        """The guarantee of a release with ``plan``.

        Parameters
        ----------
        plan : DDPPlan
            The noise plan of the release (from :meth:`calibrate` or a release).

        Returns
        -------
        PrivacyRecord
            ``(epsilon, 0)``-dependent DP under the unit ``dependent-dp/answer@<model>`` (the
            plan's dependence-model fingerprint), with every column's dependent sensitivity,
            the chunks' discrete Laplace scales and the model's assumptions.
        """
        moving = (
            "the respondent's other answers moving with it as the survey's dependence model says"
            if plan.composition == "survey"
            else "the respondent's other answers in its chunk moving with it as the chunk's "
            "network says"
        )
        composition = (
            f"every answer against the full epsilon; {len(plan.chunks)} chunks, each screened "
            "from the rest of the survey by its boundary ring"
            if plan.composition == "survey"
            else f"sequential over {len(plan.chunks)} chunks, epsilon * k_c / m each"
        )
        return self._record(
            plan,
            mechanism="tabular-ddp",
            protects=(
                f"any one answer of any one respondent (changed from one value to another, "
                f"{moving}), against an adversary who knows that model"
            ),
            sensitivity={c: p.dependent_sensitivity for p in plan.chunks for c in p.columns},
            noise={
                "distribution": "discrete laplace",
                "scale": plan.scales(),
                "norm": "l1",
                "method": plan.method,
                "composition": composition,
                "chunk_epsilon": [p.epsilon for p in plan.chunks],
            },
            unit=PrivacyUnit("dependent-dp", f"{ANSWER}@{plan.model}"),
            assumptions=_model_assumptions(plan),
            guarantees=(
                Guarantee(
                    plan.epsilon,
                    0.0,
                    f"the respondent's answers follow the dependence model {plan.model} "
                    "(the chunks' networks; see the assumptions) and the independences tested "
                    "on the learning rows hold (tested, not proved: a benchmark comparison)",
                ),
                Guarantee(any_law_epsilon(plan.scales()), 0.0, ANY_LAW),
            ),
        )


def _fingerprint(networks: Sequence[DiscreteNetwork]) -> str:
    """Eight hex digits naming the dependence model: every chunk's nodes, states, parents and
    conditional probabilities. Releases compose as dependent DP only under one model."""
    digest = hashlib.sha256()
    for network in networks:
        for node in network.nodes:
            parents = network.parents.get(node, ())
            digest.update(repr((node, network.states[node], parents)).encode())
            digest.update(np.ascontiguousarray(network.cpds[node], dtype=np.float64).tobytes())
    return digest.hexdigest()[:8]


def _model_assumptions(plan: DDPPlan) -> tuple[str, ...]:
    found = ["respondents are independent of one another"]
    if plan.fallback:
        found.append(
            f"none about the answers: {plan.fallback}, so every histogram has the row-level "
            "Laplace scale, enough for any dependence"
        )
    elif plan.composition == "survey":
        found.append(
            "each chunk's answers are independent of the rest of the survey given its "
            "boundary ring (listed per chunk in the JSON output): every pair of an answer of "
            "the chunk and one outside it passed a G-test given the whole ring, at family-wise "
            f"level {ALPHA:g} per chunk (Bonferroni over the pairs); a dependence that shows in "
            "no single such pair (a parity spread over three chunks) is not seen by these "
            f"tests; if the rings do not screen, the loss is at most "
            f"{plan.epsilon_if_chunks_dependent:.4g}"
        )
    else:
        found.append(
            "answers in different chunks are independent of each other; if they are not, "
            f"the loss is at most {plan.epsilon_if_chunks_dependent:.4g}"
        )
    if plan.learned_from == "private":
        found.append(
            "networks and chunks learned from the private data: they, and the noise "
            "scales that depend on them, are not themselves private"
        )
    else:
        found.append("networks learned from public auxiliary data")
    if plan.method == "pairwise":
        found.append(
            "pairwise coefficients (the paper's method, for comparison): sound only if, given "
            "any one answer, the other answers of its chunk are independent of each other "
            "(fails e.g. for XOR)"
        )
    else:
        found.append(
            "the bound's probabilities are Dirichlet-smoothed frequencies of the "
            f"{plan.n_learning_rows} learning rows over a few answers at a time, each total "
            "variation raised by its expected estimation error; every conditional independence "
            f"it uses passed a G-test of the whole claim at level {ALPHA:g} "
            f"({plan.claims_rejected} claims rejected and {plan.claims_untestable} too sparse "
            "to test were not used)"
        )
    return tuple(found)


__all__ = ["DDPPlan", "ExpectedError", "TabularDDP", "discrete_laplace_mae"]
