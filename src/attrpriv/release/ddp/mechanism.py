"""The earlier Tabular-DDP calibration and the paper's pairwise method: comparisons only.

Not exported nor offered by the CLI: only its "any law" guarantee is proved. The tiers that
replace it are :class:`~attrpriv.release.ddp.modules.ModularDDP` and
:class:`~attrpriv.release.ddp.model.ModelDDP`. See docs/mechanisms/tabular-ddp.md.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from attrpriv._checks import (
    EPSILON,
    FLAG,
    POSITIVE,
    SEED,
    Rule,
    groups,
    instance_of,
    integer,
    names,
    one_of,
    optional,
)
from attrpriv.data.aggregate import aggregator_for
from attrpriv.data.schema import Schema
from attrpriv.dp.accuracy import Accuracy
from attrpriv.dp.mechanism import SAMPLER_CONSTRAINTS, NoisePlan, check_fitted, validated
from attrpriv.dp.noise import NoiseSampler
from attrpriv.dp.record import ANY_LAW, Diagnostics, Guarantee, PrivacyRecord
from attrpriv.dp.units import ANSWER, PrivacyUnit
from attrpriv.errors import InputError
from attrpriv.release._histograms import (
    Histograms,
    flat_bins,
    histogram_accuracy,
    histograms_sensitivity,
    split_bins,
)
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
from attrpriv.release.ddp.survey import Progress, SurveyMechanism, question_names
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
        """Loss bound if chunk claims fail: the chunk's budget plus ``sum_j Delta_j / sigma_j``."""
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
    """One chunk's boundary (``"survey"`` only), network, ring and candidate answer bounds."""

    chunk: tuple[str, ...]
    boundary: Boundary | None
    network: DiscreteNetwork
    evidence: Evidence


@dataclass(frozen=True, eq=False)
class ChunkFacts:
    """What the fit found, from which the noise is calibrated (public, as the record says);
    ``inferred``: the released columns whose domains were read off the private data."""

    levels: Mapping[str, Levels]
    chunks: tuple[tuple[str, ...], ...]
    networks: tuple[DiscreteNetwork, ...]
    evidence: tuple[Evidence, ...]
    boundaries: tuple[Boundary, ...]
    composition: str
    learned_from: str
    n_learning_rows: int
    inferred: tuple[str, ...] = ()


@dataclass(frozen=True)
class DDPDiagnostics(Diagnostics):
    """How a Tabular-DDP release was calibrated: its chunks, their noise and its expected error.

    ``boundaries`` has one ring per chunk under ``"survey"``, none under ``"chunks"``;
    ``fallback`` says why every histogram got the row-level Laplace scale (``""``: none did);
    ``binned`` lists the levels of the columns whose values were merged; ``raw_values`` are the
    noisy counts before the non-negative clip (with ``nonnegative`` only).
    """

    chunks: tuple[ChunkNoise, ...]
    boundaries: tuple[Boundary, ...]
    expected_error: ExpectedError
    epsilon_if_chunks_dependent: float
    composition: str
    fallback: str
    learned_from: str
    n_learning_rows: int
    binned: Mapping[str, tuple[Hashable, ...]]
    raw_values: Histograms | None = None

    def summary_lines(self) -> list[str]:
        """The chunks and the error expected per bin; then why the noise fell back, if it did."""
        error = self.expected_error
        lines = [
            f"{len(self.chunks)} chunks ({self.composition}), networks learned from "
            f"{self.n_learning_rows:,} {self.learned_from} rows; expected |error| per bin "
            f"{error.mae:.4g}, {error.gain:.2f}x smaller than row-level Laplace noise"
        ]
        if self.fallback:
            lines.append(f"row-level Laplace scale on every histogram: {self.fallback}")
        return lines

    def to_dict(self) -> dict[str, Any]:
        """Every field as JSON-ready values; each chunk with its expected error and boundary."""
        chunks = [
            {**chunk.to_dict(), "expected_mae": mae}
            for chunk, mae in zip(self.chunks, self.expected_error.chunk_mae, strict=True)
        ]
        for chunk, boundary in zip(chunks, self.boundaries, strict=False):
            chunk["boundary"] = boundary.to_dict()
        found = {**super().to_dict(), "chunks": chunks}
        found["expected_error"] = self.expected_error.to_dict()
        del found["boundaries"]  # in their chunks
        if self.raw_values is None:
            del found["raw_values"]
        return found


_NOT_FIT_PARAMS = frozenset({"nonnegative", "sampler", "allow_nonprivate"})
"""The parameters a fit does not depend on: changing them after ``fit`` needs no new fit."""


def _hashable(value: Any) -> Any:
    """A parameter's value in a form ``==`` compares (sequences of names as nested tuples)."""
    if isinstance(value, (list, tuple)):
        return tuple(_hashable(v) for v in value)
    return value


class TabularDDP(SurveyMechanism[Histograms, ChunkFacts, DDPPlan]):
    """Epsilon-dependent-DP one-way histograms of survey columns, in chunks of ``chunk_size``.

    Protects one answer of one respondent, the other answers following the learned dependence
    model; only the "any law" bound is proved. Parameters and fitted attributes are described in
    docs/mechanisms/tabular-ddp.md, "Parameters and checks".
    """

    _constraints: ClassVar[Mapping[str, Rule]] = {
        "epsilon": EPSILON,
        "chunk_size": integer(),
        "method": one_of(METHODS),
        "composition": one_of(COMPOSITIONS),
        "structure": one_of(STRUCTURES),
        "grouping": one_of(GROUPINGS),
        "max_levels": integer(2),
        "max_parents": integer(),
        "prior": POSITIVE,
        "max_quilt_size": optional(integer()),
        "max_learn_rows": integer(),
        "seed": optional(SEED),
        "nonnegative": FLAG,
        "columns": optional(names()),
        "chunks": optional(groups()),
        "aux": optional(
            instance_of((pd.DataFrame, str, Path), "public rows: a DataFrame or a file path")
        ),
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
        sampler: NoiseSampler | None = None,
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
        self.sampler = sampler
        self.allow_nonprivate = allow_nonprivate

    # -- learning ----------------------------------------------------------------------------
    @validated
    def fit(self, data: Any, schema: Schema, *, progress: Progress | None = None) -> TabularDDP:
        """Bin the columns, form the chunks, learn a network per chunk (no budget, no noise)."""
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
        self.fitted_for_ = self._fit_params()
        return self

    def _fit_params(self) -> tuple[Any, ...]:
        """The parameters ``fit`` depends on (epsilon too: chunks merge at epsilon / 2); the
        rows to learn from by identity."""
        shaping = [p for p in self._param_names() if p not in _NOT_FIT_PARAMS]
        return tuple(
            (p, id(self.aux) if p == "aux" else _hashable(getattr(self, p))) for p in shaping
        )

    def _models(
        self,
        chunks: list[tuple[str, ...]],
        codes: pd.DataFrame,
        levels: Mapping[str, Levels],
        progress: Progress | None,
    ) -> list[_ChunkModel]:
        """Chunk models; under ``"survey"`` an unconfirmed or leaking chunk is merged, redone."""
        columns = list(codes.columns)
        survey = self._composition() == "survey"
        states = [levels[name].n_states for name in columns]
        encoded = Encoded.of(codes.to_numpy(np.int64), states) if survey else None
        rings: dict[tuple[str, ...], Boundary] = {}
        built: dict[tuple[str, ...], _ChunkModel] = {}
        stuck: set[tuple[str, ...]] = set()
        while True:
            if encoded is not None:
                rings.update(self._new_rings(encoded, columns, chunks, rings))
                grow = [c for c in chunks if c not in stuck and not rings[c].confirmed]
            if encoded is None or not grow:
                self._build_models(chunks, rings, built, codes, levels, progress)
                grow = [c for c in chunks if c not in stuck and self._leaks(built[c])]
                if not grow:
                    return [built[c] for c in chunks]
            chunk = grow[0]
            merged = merge_ring(chunks, chunk, rings[chunk].ring, columns)
            if len(merged) == len(chunks):
                stuck.add(chunk)
            else:
                chunks = merged

    @staticmethod
    def _new_rings(
        encoded: Encoded,
        columns: list[str],
        chunks: list[tuple[str, ...]],
        rings: Mapping[tuple[str, ...], Boundary],
    ) -> dict[tuple[str, ...], Boundary]:
        """The boundary of every chunk that has none in ``rings`` yet, in order."""
        return {
            chunk: find_boundary(encoded, columns, [columns.index(name) for name in chunk])
            for chunk in chunks
            if chunk not in rings
        }

    def _build_models(
        self,
        chunks: list[tuple[str, ...]],
        rings: Mapping[tuple[str, ...], Boundary],
        built: dict[tuple[str, ...], _ChunkModel],
        codes: pd.DataFrame,
        levels: Mapping[str, Levels],
        progress: Progress | None,
    ) -> None:
        """Model every chunk not in ``built`` yet, in order, into ``built``, reporting progress."""
        for chunk in chunks:
            if chunk not in built:
                built[chunk] = self._model(chunk, rings.get(chunk), codes, levels)
                if progress is not None:
                    left = sum(c not in built for c in chunks)
                    progress(len(built), len(built) + left)

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
        """A confirmed ring whose influence alone is >= epsilon / 2 for an answer of the chunk."""
        if model.boundary is None:
            return False
        least = (min(c.influence for c in model.evidence.candidates[n]) for n in model.chunk)
        return max(least) >= float(self.epsilon) / 2

    def _columns(self, schema: Schema) -> list[str]:
        if self.chunks is not None:
            if self.columns is not None:
                raise InputError("give either columns or chunks, not both")
            return [c for chunk in check_chunks(self.chunks) for c in chunk]
        return question_names(schema, self.columns)

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
    def _public_facts(self) -> ChunkFacts:
        check_fitted(self, "networks_", how="fit(data, schema)", unchanged=self._fit_params())
        return self._facts()

    def _facts(self, inferred: tuple[str, ...] = ()) -> ChunkFacts:
        """The fitted state as public facts (not checked against the parameters)."""
        return ChunkFacts(
            self.levels_,
            self.chunks_,
            self.networks_,
            self.evidence_,
            self.boundaries_,
            self.composition_,
            self.learned_from_,
            self.n_learning_rows_,
            inferred,
        )

    def _calibrate(self, public: ChunkFacts, sampler: NoiseSampler) -> DDPPlan:
        noise, fallback = self._chunk_noise(public)
        return DDPPlan(
            float(self.epsilon),
            0.0,
            sampler,
            self.method,
            public.composition,
            noise,
            public.boundaries,
            fallback,
            public.learned_from,
            public.n_learning_rows,
            _fingerprint(public.networks),
            sum(e.rejected for e in public.evidence),
            sum(e.untestable for e in public.evidence),
            inferred=public.inferred,
        )

    def _chunk_noise(self, fitted: ChunkFacts) -> tuple[tuple[ChunkNoise, ...], str]:
        """Every chunk's noise, and why every chunk fell back to the Laplace scale ("")."""
        epsilon = float(self.epsilon)
        m = sum(len(chunk) for chunk in fitted.chunks)
        survey = fitted.composition == "survey"
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
                fitted.chunks, fitted.networks, fitted.evidence, strict=True
            )
        ]
        unconfirmed = [n for n, b in enumerate(fitted.boundaries, start=1) if not b.confirmed]
        unbounded = [n for n, noise in enumerate(found, start=1) if noise is None]
        fallback = ""
        if unconfirmed:
            fallback = f"the boundary ring of chunks {unconfirmed} could not be confirmed"
        elif unbounded:
            fallback = f"no bound below epsilon for an answer of chunks {unbounded}"
        if fallback:
            return tuple(
                ChunkNoise(chunk, self.method, epsilon, laplace, self._sensitivity(chunk))
                for chunk in fitted.chunks
            ), fallback
        pairs = zip(found, fitted.chunks, strict=True)
        chosen = tuple(replace(n, columns=c) for n, c in pairs if n is not None)
        return chosen, fallback

    @staticmethod
    def _sensitivity(chunk: Sequence[str]) -> dict[str, float]:
        return dict.fromkeys(chunk, SUBSTITUTION_SENSITIVITY)

    def _composition(self) -> str:
        if self.composition != "auto":
            return str(self.composition)
        return "chunks" if self.method == "pairwise" else "survey"

    def _validate_params(self) -> dict[str, Any]:
        cleaned = super()._validate_params()
        if self.structure == "exact" and int(self.chunk_size) > EXACT_MAX_COLUMNS:
            raise InputError(
                f"structure 'exact' searches every DAG: chunk_size must be at most "
                f"{EXACT_MAX_COLUMNS} columns, got {self.chunk_size}"
            )
        if self.method == "pairwise" and self.composition == "survey":
            raise InputError(
                "method 'pairwise' is the paper's chunked method: give composition='chunks'"
            )
        return cleaned

    def coefficients(self, dependence: PairwiseDependence, scale: float) -> np.ndarray:
        """The ``k x k`` pairwise coefficients at noise ``scale`` (a hook tests override)."""
        return dependence.coefficients(scale)

    def epsilon_if_chunks_dependent(self) -> float:
        """The loss bound if answers in different chunks depend on each other arbitrarily."""
        return self.calibrate().epsilon_if_chunks_dependent

    def expected_error(self, plan: DDPPlan | None = None) -> ExpectedError:
        """Expected absolute error per bin, and that of substitution Laplace histograms."""
        plan = plan if plan is not None else self.calibrate()
        return _expected_error(plan, self.levels_)

    # -- the release -------------------------------------------------------------------------
    def _measure(
        self, data: Any, schema: Schema, progress: Progress | None
    ) -> tuple[Histograms, ChunkFacts]:
        if hasattr(self, "networks_"):
            check_fitted(self, "networks_", how="fit(data, schema)", unchanged=self._fit_params())
        else:
            self._fit(data, schema, progress)
        self._check_schema(schema)
        with aggregator_for(data, schema) as aggregator:
            histograms = level_histograms(aggregator, self.levels_)
        return histograms, self._facts(schema.inferred_among(self.levels_))

    def _check_schema(self, schema: Schema) -> None:
        for name, lv in self.levels_.items():
            if name not in schema or schema[name] != lv.column:
                raise InputError(
                    f"column {name!r} differs from the schema this TabularDDP was fitted with; "
                    "fit it again"
                )

    def _add_noise(self, private: Histograms, plan: DDPPlan) -> Histograms:
        raw: Histograms = {}
        for chunk in plan.chunks:
            counts = {c: private[c] for c in chunk.columns}
            flat = plan.sampler.discrete_laplace(flat_bins(counts), chunk.scale)
            raw.update(split_bins(flat, counts))
        return raw

    def _post_process(self, noisy: Histograms) -> Histograms:
        if not self.nonnegative:
            return noisy
        return {c: series.clip(lower=0) for c, series in noisy.items()}

    def _accuracy(self, plan: DDPPlan, values: Histograms) -> Accuracy:
        return histogram_accuracy(values, plan.scales())

    def _diagnostics(self, public: ChunkFacts, plan: DDPPlan, noisy: Histograms) -> DDPDiagnostics:
        levels = public.levels
        return DDPDiagnostics(
            chunks=plan.chunks,
            boundaries=plan.boundaries,
            expected_error=_expected_error(plan, levels),
            epsilon_if_chunks_dependent=plan.epsilon_if_chunks_dependent,
            composition=plan.composition,
            fallback=plan.fallback,
            learned_from=plan.learned_from,
            n_learning_rows=plan.n_learning_rows,
            binned={n: lv.labels for n, lv in levels.items() if lv.binned},
            raw_values=dict(noisy) if self.nonnegative else None,
        )

    # -- the guarantee -----------------------------------------------------------------------
    def record(self, plan: DDPPlan) -> PrivacyRecord:
        """The ``dependent-dp/answer@<model>`` record of a release with ``plan``."""
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


def _expected_error(plan: DDPPlan, levels: Mapping[str, Levels]) -> ExpectedError:
    """Expected absolute error per bin of ``plan``, and that of substitution Laplace noise."""
    columns = [c for p in plan.chunks for c in p.columns]
    laplace_scale = histograms_sensitivity(len(columns), "substitute") / plan.epsilon
    bins = [sum(levels[c].size for c in p.columns) for p in plan.chunks]
    maes = [discrete_laplace_mae(p.scale) for p in plan.chunks]
    total = sum(bins)
    return ExpectedError(
        mae=math.fsum(b * m for b, m in zip(bins, maes, strict=True)) / total,
        laplace_mae=discrete_laplace_mae(laplace_scale),
        laplace_scale=laplace_scale,
        n_bins=total,
        chunk_mae=tuple(maes),
    )


def _fingerprint(networks: Sequence[DiscreteNetwork]) -> str:
    """Eight hex digits naming the dependence model; releases compose only under one model."""
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


__all__ = [
    "ChunkFacts",
    "DDPDiagnostics",
    "DDPPlan",
    "ExpectedError",
    "TabularDDP",
    "discrete_laplace_mae",
]
