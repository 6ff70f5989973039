"""Block resampling: a sensitive column and its proxies redrawn from DP counts of private rows.

The noisy contingency tables (discrete Gaussian, OpenDP) are the only step that reads a
private sensitive value; proxies are picked and values drawn from them. See
docs/sanitize/block.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from attrpriv._checks import (
    EPSILON,
    NON_NEGATIVE,
    SEED,
    Rule,
    integer,
    one_of,
    optional,
    probability,
)
from attrpriv.data.schema import Categorical, Integer, Role, Schema
from attrpriv.dp.accounting import rho_for
from attrpriv.dp.accuracy import Accuracy
from attrpriv.dp.mechanism import SAMPLER_CONSTRAINTS, NoisePlan, validated
from attrpriv.dp.noise import NoiseSampler
from attrpriv.dp.record import PrivacyRecord
from attrpriv.dp.units import PrivacyUnit
from attrpriv.errors import InputError
from attrpriv.sanitize._draw import draw_categories
from attrpriv.sanitize._names import (
    COLUMN_NAME,
    COLUMN_NAMES,
    PROXIES,
)
from attrpriv.sanitize.block.codebook import codebook, typed_values
from attrpriv.sanitize.table import RedrawDiagnostics, TableFacts, TableSanitizer, data_frame

SQUARED_SENSITIVITY_PER_TABLE = 2.0
"""Squared l2 sensitivity of one contingency table when one row's protected values are
substituted: the row leaves one cell (-1) and enters another (+1)."""


CONDITIONALS = ("hgb", "none")
"""How a proxy outside the unit is drawn: given every column outside the unit too, or not."""

CROSS_FIT_FOLDS = 2
"""Each row's proxy law comes from a model fitted on the other folds' rows, never its own: a
model that had seen the row could hand its true proxy back."""

SIGNIFICANCE = 3.0
"""How many standard deviations above what independence gives a noisy table's chi-square must
be for :func:`association` to score a dependence; its upper bound lies as far above."""


@dataclass(frozen=True)
class BlockPlan(NoisePlan):
    """Discrete Gaussian noise of one scale on every cell of every measured table.

    ``scale = sensitivity / sqrt(2 rho)``, ``sensitivity = sqrt(2 m)`` for ``m`` tables.
    """

    sensitive: str
    protected: tuple[str, ...]
    tables: tuple[tuple[str, ...], ...]
    cells: int
    rho: float
    sensitivity: float
    scale: float


@dataclass(frozen=True)
class BlockFacts(TableFacts):
    """The unit's columns (``protected``: the ``sensitive`` one, first in every table, and the
    named proxies), each counted table's columns (``tables``), total ``cells``, ``inferred``."""

    sensitive: str
    protected: tuple[str, ...]
    tables: tuple[tuple[str, ...], ...]
    cells: int


@dataclass(frozen=True, eq=False)  # holds arrays
class BlockCounts:
    """The private input as measured: the exact tables (private), the codes of the columns
    released as they are, and those columns (public under the unit)."""

    tables: tuple[np.ndarray, ...]
    codes: Mapping[str, np.ndarray]
    public: pd.DataFrame
    columns: tuple[str, ...]


@dataclass(frozen=True, eq=False)  # holds arrays
class ReleasedTables:
    """What the redrawn columns are drawn from: the noisy tables (and their noise scale) and
    the released columns."""

    tables: tuple[np.ndarray, ...]
    scale: float
    codes: Mapping[str, np.ndarray]
    public: pd.DataFrame
    columns: tuple[str, ...]


@dataclass(frozen=True, eq=False, kw_only=True)
class BlockDiagnostics(RedrawDiagnostics):
    """How a block resampling was made (public, noisy only): RedrawDiagnostics, its ``delta``, each
    candidate's noisy ``association`` with the sensitive column and the most the noise leaves
    possible (``association_bound``), the pick ``threshold`` (None: proxies named), and whether
    ``public_rows`` placed the numeric bins and the counts' prior."""

    delta: float
    association: pd.Series
    association_bound: pd.Series
    threshold: float | None
    public_rows: bool

    def summary_lines(self) -> list[str]:
        """What was redrawn, what passed through, what the release cannot hide (CLI lines)."""
        passed, proxies = self.passed_through, self.proxies
        read = "no public row read"
        if self.public_rows:
            read = "public rows read for numeric bins only"
        scores, bounds = self.association, self.association_bound
        left = scores.drop(labels=[c for c in proxies if c in scores.index]).sort_values()[::-1]
        strongest = ", ".join(f"{c} {v:.2f}" for c, v in left.head(3).items() if v > 0)
        most = bounds.drop(labels=[c for c in proxies if c in bounds.index])
        picked = (
            "named"
            if self.threshold is None
            else "every column whose noisy association with it cannot be put below "
            f"{self.threshold:g}"
        )
        return [
            f"released {self.rows} rows at epsilon={self.epsilon:g}, delta={self.delta:g} (dp, "
            f"the sensitive column and named proxies of one row): {self.sensitive!r} drawn "
            "given each row's released columns from noisy counts of the private rows; proxies "
            f"{picked}: {', '.join(proxies) or 'none'}",
            f"where each column comes from: from the private rows, unchanged: "
            f"{', '.join(passed) or 'none'}; redrawn from the noisy counts of the private rows: "
            f"{', '.join([self.sensitive, *proxies])}; {read}",
            f"not hidden: what the columns released unchanged reveal about {self.sensitive!r}"
            + (
                f" (strongest noisy association left: {strongest}"
                if strongest
                else " (none of them has a noisy association with it above the noise"
            )
            + (f"; at most {most.max():.2f}" if len(most) else "")
            + "; --proxy-columns or a lower --association redraws more); 'attrpriv sanitize "
            "evaluate' measures leakage and utility",
        ]


@dataclass(frozen=True)
class Association:
    """A candidate's association with the sensitive column read off a noisy table: the
    ``estimate`` (0 unless significant) and the ``upper`` bound the noise and sampling leave
    possible, both Cramér's V in [0, 1]."""

    estimate: float
    upper: float


def association(table: np.ndarray, scale: float, depth: int = 1) -> Association:
    """Cramér's V of a noisy two-way ``table`` (rows: the sensitive values), less the noise's share.

    ``scale``: the noise std per summed cell; ``depth``: cells summed into each. The estimate is
    0 where not significant and the upper bound :data:`SIGNIFICANCE` standard deviations above
    it (1 where the noise hides the table). See docs/sanitize/block.md.
    """
    counts = np.clip(np.asarray(table, dtype=np.float64), 0.0, None)
    variance = scale**2 * depth
    small = counts.sum(axis=0) < 3.0 * math.sqrt(variance * counts.shape[0])
    if small.any():
        counts = np.column_stack([counts[:, ~small], counts[:, small].sum(axis=1)])
    counts = counts[counts.sum(axis=1) > 0][:, counts.sum(axis=0) > 0]
    total = counts.sum()
    if total <= 0 or min(counts.shape) < 2:
        return Association(0.0, 1.0)  # nothing the noise leaves readable rules a tie out
    expected = np.outer(counts.sum(axis=1), counts.sum(axis=0)) / total
    expected = np.maximum(expected, math.sqrt(variance))
    spread = (expected + variance) / expected  # each term's mean under independence
    excess = float((((counts - expected) ** 2) / expected).sum() - spread.sum())
    null_var = 2.0 * float((spread**2).sum())
    # a non-central excess lam adds about 4 lam max(spread) to the variance
    deviation = math.sqrt(null_var + 4.0 * max(excess, 0.0) * float(spread.max()))
    scale_v = total * (min(counts.shape) - 1)
    upper = math.sqrt(min(max(excess + SIGNIFICANCE * deviation, 0.0) / scale_v, 1.0))
    if excess < SIGNIFICANCE * math.sqrt(null_var):
        return Association(0.0, upper)  # no dependence beyond what sampling and noise give
    return Association(math.sqrt(min(excess / scale_v, 1.0)), upper)


def conditional(table: np.ndarray, axis: int = 0) -> np.ndarray:
    """Noisy counts clipped at 0 and normalised along ``axis``; a slice with no positive count
    takes the normalised sum of all slices (uniform if there is none)."""
    counts = np.clip(np.asarray(table, dtype=np.float64), 0.0, None)
    moved = np.moveaxis(counts, axis, 0)
    flat = moved.reshape(moved.shape[0], -1)
    pooled = flat.sum(axis=1)
    pooled = (
        pooled / pooled.sum() if pooled.sum() > 0 else np.full(flat.shape[0], 1.0 / len(pooled))
    )
    sums = flat.sum(axis=0)
    out = np.where(sums > 0, flat / np.where(sums > 0, sums, 1.0), pooled[:, None])
    return np.moveaxis(out.reshape(moved.shape), 0, axis)


def _shrunk(table: np.ndarray, scale: float) -> np.ndarray:
    """``P(proxy | s, target)`` from a noisy table, shrunk towards ``P(proxy | s)`` by its noise."""
    pooled = conditional(table.sum(axis=2), axis=1)[:, :, None]  # P(proxy | s)
    weight = scale * table.shape[1]
    shrunk: np.ndarray = (table + weight * pooled) / (table.sum(axis=1, keepdims=True) + weight)
    return shrunk


def _at(target: np.ndarray | None, n: int) -> np.ndarray:
    """Each row's target code (0 for every row without a target)."""
    return np.zeros(n, dtype=np.int64) if target is None else target


class BlockResampler(TableSanitizer[BlockCounts, BlockFacts, BlockPlan]):
    """Redraw a sensitive column and its proxies from DP counts of the private rows themselves.

    Guarantee: ``(epsilon, delta)``-DP for the unit ``dp/substitute:<sensitive,named proxies...>``
    (those columns of one row). Proxies picked by ``"auto"`` are redrawn but not in the unit;
    columns released unchanged are not protected. Needs no public rows. See docs/sanitize/block.md.

    Parameters
    ----------
    sensitive : str
        The sensitive column (its schema domain categorical or integer).
    proxies : "auto" or list of str, default "auto"
        ``"auto"`` picks them from the noisy tables; named ones join the unit.
    association : float, default 0.1
        ``"auto"`` redraws every candidate whose association with the sensitive column (Cramér's
        V, in [0, 1]) the noisy tables cannot put below this.
    task : str or None, default None
        The task's target, conditioned on and released as it is; default the schema's target.
    keep : list of str, default ()
        Columns never redrawn and not counted (released as they are).
    epsilon : float, default 1.0
        The privacy loss of a release, > 0.
    delta : float, default 1e-6
        The delta of the guarantee, in (0, 1).
    bins : int, default 10
        Bins of a numeric column with more than 20 values, >= 2.
    prior_weight : float, default 1.0
        Weight >= 0 of each public row's counts added to the noisy tables as a prior.
    conditional : {"hgb", "none"}, default "hgb"
        How an ``"auto"`` proxy is drawn: also given the columns outside the unit, or not.
    seed : int, default 0
        Seeds the post-processing draws, >= 0.
    sampler : NoiseSampler or None, default None
        The noise sampler; default exact OpenDP noise.
    allow_nonprivate : bool, default False
        Accept a non-private sampler (reproducible tests only).
    """

    _constraints: ClassVar[Mapping[str, Rule]] = {
        "sensitive": COLUMN_NAME,
        "proxies": PROXIES,
        "association": probability(open_interval=False),
        "task": optional(COLUMN_NAME),
        "keep": COLUMN_NAMES,
        "epsilon": EPSILON,
        "delta": probability(),
        "bins": integer(2),
        "prior_weight": NON_NEGATIVE,
        "conditional": one_of(CONDITIONALS),
        "seed": SEED,
        **SAMPLER_CONSTRAINTS,
    }

    def __init__(
        self,
        sensitive: str,
        *,
        proxies: str | Sequence[str] = "auto",
        association: float = 0.1,
        task: str | None = None,
        keep: Sequence[str] = (),
        epsilon: float = 1.0,
        delta: float = 1e-6,
        bins: int = 10,
        prior_weight: float = 1.0,
        conditional: str = "hgb",
        seed: int = 0,
        sampler: NoiseSampler | None = None,
        allow_nonprivate: bool = False,
    ) -> None:
        self.sensitive = sensitive
        self.proxies = proxies
        self.association = association
        self.task = task
        self.keep = keep
        self.epsilon = epsilon
        self.delta = delta
        self.bins = bins
        self.prior_weight = prior_weight
        self.conditional = conditional
        self.seed = seed
        self.sampler = sampler
        self.allow_nonprivate = allow_nonprivate

    # -- fit: public facts only -------------------------------------------------------------
    @validated
    def fit(self, schema: Schema, public: pd.DataFrame | None = None) -> BlockResampler:
        """Read the public domains and choose what to count.

        Parameters
        ----------
        schema : Schema
            Public domains and roles; ``ignore`` and ``keep`` columns pass through uncounted.
        public : pandas.DataFrame or None, optional
            Public rows (not the private ones): numeric bin edges and the counts' prior.

        Returns
        -------
        BlockResampler
            ``self``, fitted.
        """
        if not isinstance(schema, Schema):
            raise InputError(f"schema must be a Schema, got {type(schema).__name__}")
        if public is not None:
            public = data_frame(public, "the public rows")
        sensitive = self.sensitive
        if sensitive not in schema:
            raise InputError(f"the sensitive column {sensitive!r} is not in the schema")
        domain = schema.domain(sensitive)
        if not isinstance(domain, (Categorical, Integer)) or len(domain.categories) < 2:
            raise InputError(
                f"the sensitive column {sensitive!r} needs a categorical or integer domain of "
                "at least two values in the schema"
            )
        task = self.task if self.task is not None else schema.target
        if task is not None and task not in schema:
            raise InputError(f"task {task!r} is not in the schema")
        if task == sensitive:
            raise InputError(f"task {task!r} is the sensitive column itself")
        ignored = set(schema.with_role(Role.IGNORE))
        for name in self.keep:
            if name not in schema:
                raise InputError(f"keep names {name!r}, which is not in the schema")
        skip = {sensitive, task, *ignored, *self.keep}
        candidates = tuple(c for c in schema.names if c not in skip)
        if not isinstance(self.proxies, str):
            for name in self.proxies:
                if name not in candidates:
                    raise InputError(
                        f"proxies names {name!r}, which is "
                        + _not_a_candidate(name, sensitive, schema)
                    )
        counted = (sensitive, *candidates, *(() if task is None else (task,)))
        self.codes_ = dict(codebook(counted, schema, public, int(self.bins)))
        # a missing sensitive value is refused, never counted
        self.codes_[sensitive] = replace(self.codes_[sensitive], nullable=False)
        self.candidates_ = candidates
        self.task_ = task
        self.schema_ = schema
        self.prior_ = None if public is None else self._public_counts(public)
        self.inferred_ = schema.inferred_among(counted)
        self.fitted_for_ = self._structure()
        return self

    def _public_counts(self, public: pd.DataFrame) -> tuple[np.ndarray, ...]:
        """The exact tables of the public rows (their rows with a missing sensitive value are
        left out: a release refuses those)."""
        public = self._frame_with(public, list(self.codes_), "it is counted", "the public rows")
        public = public[public[self.sensitive].notna().to_numpy()]
        codes = {c: code.encode(public[c], "the public rows") for c, code in self.codes_.items()}
        return tuple(self._count(codes, t) for t in self._tables())

    def _structure(self) -> tuple[Any, ...]:
        """The parameters that shape what ``fit`` decides (a release checks they still hold)."""
        proxies = self.proxies if isinstance(self.proxies, str) else tuple(self.proxies)
        return (self.sensitive, proxies, self.task, tuple(self.keep), self.bins)

    @property
    def protected_(self) -> tuple[str, ...]:
        """The unit's columns: the sensitive one and the named proxies."""
        named = () if isinstance(self.proxies, str) else tuple(self.proxies)
        return (self.sensitive, *named)

    def _tables(self) -> tuple[tuple[str, ...], ...]:
        tail = () if self.task_ is None else (self.task_,)
        return ((self.sensitive, *tail), *((self.sensitive, c, *tail) for c in self.candidates_))

    # -- release: the mechanism template ----------------------------------------------------
    _fitted: ClassVar[str] = "codes_"

    def _facts(self) -> BlockFacts:
        tables = self._tables()
        cells = sum(int(np.prod([self.codes_[c].size for c in t])) for t in tables)
        return BlockFacts(self.sensitive, self.protected_, tables, cells, inferred=self.inferred_)

    def _calibrate(self, public: BlockFacts, sampler: NoiseSampler) -> BlockPlan:
        sensitivity = math.sqrt(SQUARED_SENSITIVITY_PER_TABLE * len(public.tables))
        epsilon, delta = float(self.epsilon), float(self.delta)
        rho = rho_for(epsilon, delta)
        return BlockPlan(epsilon, delta, sampler, public.sensitive, public.protected,
                         public.tables, public.cells, rho, sensitivity,
                         sensitivity / math.sqrt(2.0 * rho), inferred=public.inferred)  # fmt: skip

    def _measure(self, data: pd.DataFrame) -> tuple[BlockCounts, BlockFacts]:
        facts = self._public_facts()
        frame = self._frame_with(data, list(self.codes_), "it is counted")
        if frame[self.sensitive].isna().any():
            row = int(np.flatnonzero(np.asarray(frame[self.sensitive].isna()))[0])
            raise InputError(
                f"column {self.sensitive!r} in the private data has a missing value at row {row}"
            )
        codes = {c: code.encode(frame[c], "the private data") for c, code in self.codes_.items()}
        tables = tuple(self._count(codes, t) for t in facts.tables)
        released = {c: v for c, v in codes.items() if c not in self.protected_}
        public = frame.drop(columns=list(self.protected_))
        return BlockCounts(tables, released, public, tuple(frame.columns)), facts

    def _count(self, codes: Mapping[str, np.ndarray], columns: tuple[str, ...]) -> np.ndarray:
        shape = tuple(self.codes_[c].size for c in columns)
        flat = np.ravel_multi_index(tuple(codes[c] for c in columns), shape)
        return np.bincount(flat, minlength=int(np.prod(shape))).reshape(shape).astype(np.int64)

    def record(self, plan: BlockPlan) -> PrivacyRecord:
        """The guarantee of a release with ``plan``.

        Parameters
        ----------
        plan : BlockPlan
            The noise plan of the release.

        Returns
        -------
        PrivacyRecord
            ``(epsilon, delta)``-DP and ``rho``-zCDP under
            ``dp/substitute:<sensitive,named proxies...>``.
        """
        protected = list(plan.protected)
        own = [
            "every domain is the schema's; "
            + (
                "no public row is read"
                if self.prior_ is None
                else "the public rows given to fit place the numeric bins and give the values "
                "drawn in a bin"
            ),
            f"every column but {plan.sensitive!r} and the proxies the release redraws is "
            f"released unchanged: what those columns reveal about {plan.sensitive!r} is not "
            "protected",
        ]
        if self.prior_ is not None and float(self.prior_weight) > 0:
            own.append(
                f"the public rows' counts, each row weighed {float(self.prior_weight):g}, are "
                "added to the noisy tables before anything is picked or drawn: where the public "
                "rows come from another population, the redrawn columns lean towards it"
            )
        if isinstance(self.proxies, str):
            own.append(
                "the proxies are picked from the noisy tables and redrawn, but their own values "
                "are not in the unit: neighbours differ in "
                f"{protected} of one row only"
                + (
                    "; each is drawn given every column outside the unit too, by gradient "
                    "boosting fitted on the private rows' values of those columns (the same "
                    "for neighbours)"
                    if self.conditional == "hgb"
                    else ""
                )
            )
        record = self._record(
            plan,
            mechanism="block-resampling",
            protects=(
                f"each private row's value of {protected} (substitution: neighbours differ in "
                "those columns of one row; the number of rows and every other column are "
                "public)"
            ),
            sensitivity=plan.sensitivity,
            noise={"distribution": "discrete gaussian", "scale": plan.scale, "norm": "l2",
                   "rho": plan.rho,
                   "per": f"cell of each of {len(plan.tables)} contingency tables "
                   f"({plan.cells} cells): {plan.sensitive!r} against "
                   + ("the target and each candidate column with it" if self.task_ else
                      "each candidate column"),
                   "post_processing": "counts clipped at 0; proxies picked by their noisy "
                   "association (every column not shown below the threshold); each row's "
                   "sensitive value drawn by naive Bayes on the noisy "
                   "tables given its released columns, each proxy given the drawn value and "
                   "the target; a numeric value inside its drawn bin: for a proxy outside the "
                   "unit another private row's value of that bin with the same target, for one "
                   "in it uniform in the bin (or a public value of that bin)"},
            unit=PrivacyUnit("dp", "substitute:" + ",".join(protected)),
            assumptions=own,
        )  # fmt: skip
        return replace(record, rho=plan.rho)

    def _add_noise(self, private: BlockCounts, plan: BlockPlan) -> ReleasedTables:
        noisy = tuple(plan.sampler.discrete_gaussian(t, plan.scale) for t in private.tables)
        return ReleasedTables(noisy, plan.scale, private.codes, private.public, private.columns)

    def _with_prior(self, noisy: ReleasedTables) -> ReleasedTables:
        """The noisy tables plus the public rows' counts times ``prior_weight`` (post-processing
        with public data); the noisy tables as they are without public rows."""
        if self.prior_ is None or float(self.prior_weight) == 0.0:
            return noisy
        weight = float(self.prior_weight)
        tables = tuple(t + weight * p for t, p in zip(noisy.tables, self.prior_, strict=True))
        return replace(noisy, tables=tables)

    def _picked(self, noisy: ReleasedTables) -> tuple[tuple[str, ...], dict[str, Association]]:
        """The proxies and every candidate's noisy association (post-processing): ``"auto"``
        takes every candidate whose association the tables cannot put below the threshold."""
        noisy = self._with_prior(noisy)
        levels, scores = self.codes_[self.sensitive].values, {}
        for name, table in zip(self.candidates_, noisy.tables[1:], strict=True):
            two_way = table.sum(axis=2) if self.task_ is not None else table
            depth = table.shape[2] if self.task_ is not None else 1
            scores[name] = association(two_way[:levels], noisy.scale, depth)
        if not isinstance(self.proxies, str):
            return tuple(self.proxies), scores
        threshold = float(self.association)
        picked = sorted((c for c in self.candidates_ if scores[c].upper >= threshold),
                        key=lambda c: (-scores[c].estimate, -scores[c].upper))  # fmt: skip
        return tuple(picked), scores

    def _post_process(self, noisy: ReleasedTables) -> pd.DataFrame:
        """The redrawn columns from the noisy tables and the released columns only."""
        rng = np.random.default_rng(int(self.seed))
        proxies, scores = self._picked(noisy)
        noisy = self._with_prior(noisy)
        n, levels = len(noisy.public), self.codes_[self.sensitive].values
        target = None if self.task_ is None else noisy.codes[self.task_]
        joint = np.clip(noisy.tables[0].astype(np.float64), 0.0, None)[:levels]
        if target is None:
            log_p = np.tile(np.log(np.maximum(conditional(joint), 1e-12)), (n, 1))
        else:  # P(s | target), shrunk towards P(s) by the noise in each target's column
            weight = noisy.scale * levels
            pooled = conditional(joint.sum(axis=1))[:, None]
            given = (joint + weight * pooled) / (joint.sum(axis=0, keepdims=True) + weight)
            log_p = np.log(np.maximum(given, 1e-12))[:, target].T
        tables = {c: np.clip(t.astype(np.float64), 0.0, None)[:levels]
                  for c, t in zip(self.candidates_, noisy.tables[1:], strict=True)}  # fmt: skip
        for name in self.candidates_:  # naive Bayes on the columns released as they are
            if name in proxies or scores[name].estimate <= 0.0:  # none above the noise
                continue
            two_way = tables[name].sum(axis=2) if target is not None else tables[name]
            given = conditional(two_way, axis=1)  # P(k | s)
            log_p += np.log(np.maximum(given[:, noisy.codes[name]].T, 1e-12))
        drawn = draw_categories(log_p, rng)
        posterior = np.exp(log_p - log_p.max(axis=1, keepdims=True))
        posterior /= posterior.sum(axis=1, keepdims=True)  # P(s | context, target)
        redrawn = {self.sensitive: self.codes_[self.sensitive].decode(drawn, rng)}
        # the columns a proxy outside the unit may be drawn given: those released unchanged,
        # and the proxies outside the unit drawn before it (their drawn values)
        given_columns = {
            c: v for c, v in noisy.codes.items() if c != self.task_ and c not in proxies
        }
        for name in proxies:
            counts = tables[name]
            given = _shrunk(counts, noisy.scale) if target is not None else conditional(counts, 1)
            p = given[drawn, :, target] if target is not None else given[drawn, :]
            log_q = np.log(np.maximum(p, 1e-300))
            law = given if target is not None else given[:, :, None]
            context = None
            if name not in self.protected_ and self.conditional == "hgb":
                context = self._context_law(name, noisy.codes, given_columns, target)
            tied = context is None or scores[name].estimate > 0.0
            if context is not None and tied:  # the context's share not carried through s
                through_s = np.einsum("nsi,ns->ni", law[:, :, _at(target, n)].transpose(2, 0, 1),
                                      posterior)  # fmt: skip
                log_q += context - np.log(np.maximum(through_s, 1e-12))
            elif context is not None:  # no tie to s shown: its noisy slices would be noise
                log_q = context
            codes = draw_categories(log_q, rng)
            if name not in self.protected_:  # in the context of the proxies drawn after it
                given_columns[name] = codes
            if name not in self.protected_ and tied:
                posterior *= law[:, codes, _at(target, n)].T  # what the drawn value says of s
                posterior /= np.maximum(posterior.sum(axis=1, keepdims=True), 1e-300)
            code = self.codes_[name]
            if name in self.protected_:
                redrawn[name] = code.decode(codes, rng)
            else:  # its values are outside the unit: a bin's value is another row's, same target
                values = noisy.public[name].to_numpy(dtype=object)
                redrawn[name] = code.decode_seen(codes, noisy.codes[name], values,
                                                 _at(target, n), rng)  # fmt: skip
        table = noisy.public.copy()
        for name, values in redrawn.items():
            table[name] = typed_values(values, self.schema_, name, table.index)
        return table[list(noisy.columns)]

    def _context_law(
        self,
        name: str,
        original: Mapping[str, np.ndarray],
        given: Mapping[str, np.ndarray],
        target: np.ndarray | None,
    ) -> np.ndarray | None:
        """Per row, ``log P(proxy | context, target)`` (None with no column to read).

        Fitted on columns outside the unit (cross-fitted), so it costs nothing under the unit.
        """
        from sklearn.ensemble import HistGradientBoostingClassifier
        from threadpoolctl import threadpool_limits

        proxy, size = original[name], self.codes_[name].size
        tail = () if target is None else (target,)
        fitted_on = np.column_stack([*(original[c] for c in given), *tail])
        read_at = np.column_stack([*(given[c] for c in given), *tail])
        n = len(proxy)
        law = np.full((n, size), 1e-6)
        if fitted_on.shape[1] == 0:
            return None
        fold = np.random.default_rng(int(self.seed)).integers(0, CROSS_FIT_FOLDS, n)
        for k in range(CROSS_FIT_FOLDS):
            train, rows = fold != k, np.flatnonzero(fold == k)
            seen = np.unique(proxy[train])
            if len(rows) == 0 or len(seen) < 2:
                law[np.ix_(rows, seen)] = 1.0
                continue
            model = HistGradientBoostingClassifier(max_iter=60, max_leaf_nodes=15,
                                                   min_samples_leaf=40, early_stopping=False,
                                                   random_state=int(self.seed))  # fmt: skip
            with threadpool_limits(1, user_api="openmp"):  # small models: threads only spin
                model.fit(fitted_on[train], proxy[train])
                found = model.predict_proba(read_at[rows])
            law[np.ix_(rows, model.classes_)] = np.maximum(found, 1e-6)
        logs: np.ndarray = np.log(law)
        return logs

    def _accuracy(self, plan: BlockPlan, values: pd.DataFrame) -> Accuracy:
        scales = {"x".join(t): np.full(int(np.prod([self.codes_[c].size for c in t])), plan.scale)
                  for t in plan.tables}  # fmt: skip
        return Accuracy.of_scales(  # the discrete Gaussian is sub-Gaussian
            "gaussian",
            scales,
            of="every cell of the noisy tables the redrawn columns are drawn from",
        )

    def _diagnostics(
        self, public: BlockFacts, plan: BlockPlan, noisy: ReleasedTables
    ) -> BlockDiagnostics:
        proxies, scores = self._picked(noisy)
        noisy = self._with_prior(noisy)
        domain = self.codes_[self.sensitive].levels
        assert domain is not None
        counts = noisy.tables[0].sum(axis=1) if self.task_ is not None else noisy.tables[0]
        counts = counts[: len(domain)]
        redrawn = {self.sensitive, *proxies}
        return BlockDiagnostics(
            rows=len(noisy.public),
            noisy_counts={self.sensitive: pd.Series(counts, index=pd.Index(domain),
                                                    name=self.sensitive)},
            sensitive=self.sensitive,
            proxies=proxies,
            passed_through=tuple(c for c in noisy.columns if c not in redrawn),
            epsilon=plan.epsilon,
            delta=plan.delta,
            association=pd.Series({c: a.estimate for c, a in scores.items()},
                                  name="noisy association", dtype=float),
            association_bound=pd.Series({c: a.upper for c, a in scores.items()},
                                        name="association bound", dtype=float),
            threshold=float(self.association) if isinstance(self.proxies, str) else None,
            public_rows=self.prior_ is not None,
        )  # fmt: skip


def _not_a_candidate(name: str, sensitive: str, schema: Schema) -> str:
    if name == sensitive:
        return "the sensitive column"
    return "the task's target, kept or ignored" if name in schema else "not in the schema"


__all__ = [
    "Association",
    "BlockDiagnostics",
    "BlockFacts",
    "BlockPlan",
    "BlockResampler",
    "association",
    "conditional",
]
