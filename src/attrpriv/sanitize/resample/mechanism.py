"""Proxy resampling: the sensitive column from its DP marginal, its proxies from public models.

Only the discrete Laplace count of the sensitive column reads private sensitive values; the
rest is post-processing with models fitted on public auxiliary rows. See
docs/sanitize/resample.md.
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from attrpriv._checks import (
    EPSILON,
    NON_NEGATIVE,
    SEED,
    Rule,
    check_positive_int,
    check_probability,
    integer,
    one_of,
    optional,
)
from attrpriv.data.schema import Schema
from attrpriv.dp.accuracy import Accuracy
from attrpriv.dp.mechanism import SAMPLER_CONSTRAINTS, NoisePlan, validated
from attrpriv.dp.noise import NoiseSampler
from attrpriv.dp.record import PrivacyRecord
from attrpriv.dp.units import PrivacyUnit
from attrpriv.errors import InputError
from attrpriv.sanitize._names import (
    COLUMN_NAME,
    COLUMN_NAMES,
    PROXIES,
)
from attrpriv.sanitize.overlap import Verdict, overlap_verdict
from attrpriv.sanitize.resample._models import (
    Chain,
    Design,
    Ranking,
    SensitiveModel,
    column,
    rank_greedy,
)
from attrpriv.sanitize.resample.donors import Donors
from attrpriv.sanitize.resample.ranking import Setup, prepare, rank, sensitive_codes
from attrpriv.sanitize.table import RedrawDiagnostics, TableFacts, TableSanitizer

CONDITIONALS = ("donor", "hgb")
"""How the proxies are redrawn: copied together from an auxiliary donor row (``"donor"``), or
each from gradient boosting given the ones before it (``"hgb"``, scikit-learn's
HistGradientBoostingClassifier)."""
DRAWS = ("conditional", "marginal")
"""How each row's sensitive value is drawn: given the row's released columns, re-weighed to the
noisy marginal (``"conditional"``), or from the noisy marginal alone (``"marginal"``)."""
SENSITIVITY = 2.0
"""l1 sensitivity of the sensitive column's histogram when one row's value is substituted:
one count goes down by one and another up by one."""
AUX_PUBLIC = (
    "the auxiliary data the proxies were ranked on, the models fitted on and the donors copied "
    "from is public and disjoint from the private rows: no model or donor is a private row"
)


def _auc(value: object, name: str) -> float:
    number = check_probability(value, name, open_interval=False)
    if number <= 0.5:
        raise InputError(f"{name} must be an AUC in (0.5, 1], got {number}")
    return number


def _categories(value: object, name: str) -> tuple[Hashable, ...]:
    if not isinstance(value, (list, tuple)) or not value:
        raise InputError(f"{name} must be a non-empty list of the sensitive column's values")
    if any(v is None or (isinstance(v, float) and v != v) for v in value):
        raise InputError(f"{name} cannot hold a missing value")
    if len(set(value)) != len(value):
        raise InputError(f"{name} holds a value twice")
    return tuple(value)


@dataclass(frozen=True)
class ResamplePlan(NoisePlan):
    """Discrete Laplace noise of scale ``sensitivity / epsilon`` on every count of the marginal."""

    sensitive: str
    proxies: tuple[str, ...]
    n_levels: int
    sensitivity: float
    scale: float


@dataclass(frozen=True)
class ResampleFacts(TableFacts):
    """The unit's columns (the ``sensitive`` one counted, the ``proxies`` redrawn beside it), the
    ``n_levels`` values of its public domain, and ``inferred``."""

    sensitive: str
    proxies: tuple[str, ...]
    n_levels: int


@dataclass(frozen=True, eq=False)  # holds arrays
class PrivateRows:
    """The private input as measured: the sensitive column's exact counts (private), and the
    columns released as they are (public under the unit), in their own frame."""

    counts: np.ndarray
    public: pd.DataFrame
    columns: tuple[str, ...]
    index: pd.Index


@dataclass(frozen=True, eq=False)  # holds arrays
class ReleasedMarginal:
    """What the resampled columns are drawn from: the noisy counts and the released columns."""

    counts: np.ndarray
    public: pd.DataFrame
    columns: tuple[str, ...]
    index: pd.Index


@dataclass(frozen=True, eq=False, kw_only=True)
class ResampleDiagnostics(RedrawDiagnostics):
    """How a proxy resampling was made (public, auxiliary, noisy only): RedrawDiagnostics, the
    normalised noisy ``marginal`` drawn from, ``leakage_floor_aux`` (auxiliary AUC of the unchanged
    columns for the sensitive one), ``aux_rows``, and the ``draw``/``conditional``/``keep`` used."""

    marginal: pd.Series
    leakage_floor_aux: float
    draw: str
    conditional: str
    aux_rows: int
    keep: tuple[str, ...]

    def summary_lines(self) -> list[str]:
        """What was resampled, what passed through, what the release cannot hide (CLI lines)."""
        marginal = ", ".join(f"{k} {v:.3f}" for k, v in self.marginal.items())
        redraw = (
            "copied from donors among"
            if self.conditional == "donor"
            else "redrawn from models fitted on"
        )
        how = (
            "drawn given each row's released columns, re-weighed to its noisy marginal"
            if self.draw == "conditional"
            else "drawn from its noisy marginal"
        )
        passed, proxies = self.passed_through, ", ".join(self.proxies) or "none"
        lines = [
            f"released {self.rows} rows at epsilon={self.epsilon:g} (dp, the sensitive column "
            f"and its proxies of one row): {self.sensitive!r} {how} ({marginal}); proxies "
            f"{redraw} {self.aux_rows} auxiliary rows: {proxies}",
            f"where each column comes from: from the private rows, unchanged: "
            f"{', '.join(passed) or 'none'}; from the public (auxiliary) rows: {proxies}; drawn "
            f"from the noisy marginal: {self.sensitive!r}",
        ]
        kept = [c for c in passed if c in self.keep]
        if len(kept) == len(passed):
            lines.append(
                "every column of this release but the kept ones ("
                f"{', '.join(kept) or 'none'}) came from the public rows or the noisy marginal: "
                "beside the public rows it adds only those; 'attrpriv sanitize evaluate' shows "
                "the utility of the public rows alone beside it"
            )
        lines.append(
            f"not hidden: the other columns predict {self.sensitive!r} with AUC "
            f"{self.leakage_floor_aux:.3f} on the auxiliary data (more --proxies or a lower "
            "--target-auc lowers it; 'attrpriv sanitize evaluate' measures leakage and utility)"
        )
        return lines


class ProxyResampler(TableSanitizer[PrivateRows, ResampleFacts, ResamplePlan]):
    """Resample a sensitive column from its DP marginal and redraw its proxies from public rows.

    Guarantee: epsilon-DP for the unit ``dp/substitute:<sensitive,proxies...>`` (one row's
    sensitive value and proxies). It does not hide what the other, unchanged columns reveal.
    :meth:`fit` reads public auxiliary rows only. See docs/sanitize/resample.md.

    Parameters
    ----------
    sensitive : str
        The sensitive column (categorical or integer-coded).
    proxies : "auto" or list of str, default "auto"
        The columns to redraw: ``"auto"`` picks the best predictors on the auxiliary data.
    n_proxies : int or "auto", default "auto"
        How many ``"auto"`` picks: a count >= 0, or enough to reach ``target_auc``.
    target_auc : float, default 0.55
        The leakage floor ``n_proxies="auto"`` aims at, in (0.5, 1].
    task : str or None, default None
        The task's target column, never a proxy; default the schema's target.
    task_weight : float, default 3.0
        Weight >= 0 of a candidate's importance for the task against the sensitive column.
    epsilon : float, default 1.0
        The privacy loss of a release, > 0.
    conditional : {"donor", "hgb"}, default "donor"
        Copy the proxies from a near auxiliary donor row, or draw each from gradient boosting.
    n_donors : int, default 200
        How many nearest auxiliary rows a ``"donor"`` redraw picks among, >= 1.
    draw : {"conditional", "marginal"}, default "conditional"
        Draw the sensitive value given the row's context (re-weighed), or from the marginal.
    keep : list of str, default ()
        Columns ``"auto"`` never picks (the schema's target is always kept).
    categories : list or None, default None
        The sensitive column's public domain; default the schema's, else the auxiliary values.
    seed : int, default 0
        Seeds the ranking's split, the models and the post-processing draws, >= 0.
    sampler : NoiseSampler or None, default None
        The noise sampler; default exact OpenDP noise.
    allow_nonprivate : bool, default False
        Accept a non-private sampler (reproducible tests only).

    Attributes
    ----------
    proxies_, context_ : tuple of str
        The proxies in redraw order; the columns released unchanged and conditioned on.
    leakage_floor_ : float
        Auxiliary validation AUC of the context alone for the sensitive column.
    """

    _constraints: ClassVar[Mapping[str, Rule]] = {
        "sensitive": COLUMN_NAME,
        "proxies": PROXIES,
        "n_proxies": Rule(
            "'auto' or an integer >= 0",
            lambda value, name: (
                value if value == "auto" else check_positive_int(value, name, minimum=0)
            ),
        ),
        "target_auc": Rule("an AUC in (0.5, 1]", _auc),
        "task": optional(COLUMN_NAME),
        "task_weight": NON_NEGATIVE,
        "epsilon": EPSILON,
        "conditional": one_of(CONDITIONALS),
        "n_donors": integer(1),
        "draw": one_of(DRAWS),
        "keep": COLUMN_NAMES,
        "categories": optional(
            Rule("a non-empty list of the sensitive column's values", _categories)
        ),
        "seed": SEED,
        **SAMPLER_CONSTRAINTS,
    }

    def __init__(
        self,
        sensitive: str,
        *,
        proxies: str | Sequence[str] = "auto",
        n_proxies: int | str = "auto",
        target_auc: float = 0.55,
        task: str | None = None,
        task_weight: float = 3.0,
        epsilon: float = 1.0,
        conditional: str = "donor",
        n_donors: int = 200,
        draw: str = "conditional",
        keep: Sequence[str] = (),
        categories: Sequence[Hashable] | None = None,
        seed: int = 0,
        sampler: NoiseSampler | None = None,
        allow_nonprivate: bool = False,
    ) -> None:
        self.sensitive = sensitive
        self.proxies = proxies
        self.n_proxies = n_proxies
        self.target_auc = target_auc
        self.task = task
        self.task_weight = task_weight
        self.epsilon = epsilon
        self.conditional = conditional
        self.n_donors = n_donors
        self.draw = draw
        self.keep = keep
        self.categories = categories
        self.seed = seed
        self.sampler = sampler
        self.allow_nonprivate = allow_nonprivate

    # -- fit: public auxiliary data only ----------------------------------------------------
    @validated
    def fit(self, aux: pd.DataFrame, schema: Schema | None = None) -> ProxyResampler:
        """Rank the proxies and fit their models on public auxiliary rows.

        Parameters
        ----------
        aux : pandas.DataFrame
            Public auxiliary rows, disjoint from the private ones, sensitive column complete.
        schema : Schema or None, optional
            Public domains and roles (``ignore`` columns pass through; the target is kept).

        Returns
        -------
        ProxyResampler
            ``self``, fitted.
        """
        frame, setup = prepare(
            aux,
            self.sensitive,
            schema=schema,
            keep=tuple(self.keep),
            categories=self.categories,
            task=self.task,
        )
        sensitive, seed, n_classes = self.sensitive, int(self.seed), len(setup.domain)
        ranking, proxies = self._choose(frame, setup)
        context = tuple(c for c in setup.used if c != sensitive and c not in proxies)
        design = Design.learn(frame, context, setup.domains)
        floor = rank_greedy(frame, setup.codes, n_classes, design, 0, seed).auc_all
        law = SensitiveModel.fit(frame, setup.codes, n_classes, design, seed)
        redraw: Donors | Chain
        if self.conditional == "donor":
            redraw = Donors.fit(
                frame, setup.codes, proxies, context, setup.task, int(self.n_donors)
            )
        else:
            redraw = Chain.fit(frame, sensitive, context, proxies, setup.domains, seed)
        self.domain_ = setup.domain
        self.proxies_ = proxies
        self.context_ = context
        self.ranking_ = ranking
        self.leakage_floor_ = floor
        self.redraw_ = redraw
        self.sensitive_model_ = law
        self.columns_ = setup.used
        self.template_ = frame[[sensitive]].iloc[:0].copy()
        hashes = _hashes(frame[list(context)])  # the columns a release passes through
        self.fingerprint_, counts = np.unique(hashes, return_counts=True)
        repeated = counts[np.searchsorted(self.fingerprint_, hashes)] > 1
        self.overlap_chance_ = float(repeated.mean())
        # every used column whose domain the schema marks as read off data (not only sensitive)
        self.inferred_ = () if schema is None else schema.inferred_among(setup.used)
        self.from_aux_ = setup.from_aux
        self.aux_rows_ = len(frame)
        self.schemaless_ = schema is None
        self.fitted_for_ = self._structure()
        return self

    def _structure(self) -> tuple[Any, ...]:
        """The parameters that shape what ``fit`` learns (a release checks they still hold)."""
        proxies = self.proxies if isinstance(self.proxies, str) else tuple(self.proxies)
        categories = None if self.categories is None else tuple(self.categories)
        return (self.sensitive, proxies, self.n_proxies, self.target_auc, self.task,
                self.task_weight, tuple(self.keep), categories, self.conditional,
                self.n_donors)  # fmt: skip

    def _choose(self, frame: pd.DataFrame, setup: Setup) -> tuple[Ranking | None, tuple[str, ...]]:
        """The proxies: ranked on the auxiliary data (``"auto"``), or the ones named."""
        if isinstance(self.proxies, str):
            stop_at: float | None
            if self.n_proxies == "auto":
                count, stop_at = len(setup.candidates), float(self.target_auc)
            else:
                count, stop_at = int(self.n_proxies), None
            weight = float(self.task_weight)
            ranking = rank(frame, setup, count, int(self.seed), stop_at, task_weight=weight)
            return ranking, ranking.proxies
        proxies = tuple(self.proxies)
        for name in proxies:
            if name == self.sensitive:
                raise InputError(f"proxies names the sensitive column {name!r} itself")
            if name not in frame.columns:
                raise InputError(f"proxies names {name!r}, which is not in the auxiliary data")
            if name not in setup.candidates:
                raise InputError(f"proxies names {name!r}, which is kept or ignored")
        return None, proxies

    # -- release: the mechanism template ----------------------------------------------------
    _fitted: ClassVar[str] = "redraw_"

    def _facts(self) -> ResampleFacts:
        facts = (self.sensitive, self.proxies_, len(self.domain_))
        return ResampleFacts(*facts, inferred=self.inferred_)

    def _calibrate(self, public: ResampleFacts, sampler: NoiseSampler) -> ResamplePlan:
        epsilon = float(self.epsilon)
        return ResamplePlan(epsilon, 0.0, sampler, public.sensitive, public.proxies,
                            public.n_levels, SENSITIVITY, SENSITIVITY / epsilon,
                            inferred=public.inferred)  # fmt: skip

    def _measure(self, data: pd.DataFrame) -> tuple[PrivateRows, ResampleFacts]:
        facts = self._public_facts()
        frame = self._frame_with(data, self.columns_, "it was fitted with it")
        self._warn_of_overlap(frame)
        codes = sensitive_codes(frame[self.sensitive], self.domain_, "the private data")
        counts = np.bincount(codes, minlength=len(self.domain_)).astype(np.int64)
        public = frame.drop(columns=[self.sensitive, *self.proxies_]).reset_index(drop=True)
        return PrivateRows(counts, public, tuple(frame.columns), frame.index), facts

    def _warn_of_overlap(self, frame: pd.DataFrame) -> None:
        """Warn of, or refuse, private rows that repeat the auxiliary ones (public columns)."""
        verdict = self._verdict(frame)  # on public columns only (see the docs)
        chance = self.overlap_chance_
        if verdict == "more than chance":
            warnings.warn(
                "more of the private rows repeat an auxiliary row on the columns released "
                f"unchanged than chance would make ({chance:.0%} of the auxiliary rows repeat "
                "another): some may be the auxiliary rows themselves; fit on public rows "
                f"disjoint from the private ones (a table is refused above "
                f"{(1.0 + chance) / 2.0:.0%} of its rows)",
                UserWarning,
                stacklevel=5,
            )
        if verdict == "cannot tell":
            warnings.warn(
                f"{chance:.0%} of the auxiliary rows repeat another on the columns released "
                "unchanged: this release cannot check that the private rows are not the "
                "auxiliary ones",
                UserWarning,
                stacklevel=5,
            )
        elif verdict == "training rows":
            raise InputError(
                "most of the private rows repeat auxiliary rows the resampler was fitted on, on "
                "the columns released unchanged (far more than chance): fit it on public rows "
                "disjoint from the private ones"
            )

    def repeats_training_rows(self, data: pd.DataFrame) -> bool:
        """Whether ``data`` repeats the auxiliary rows (a release would be refused).

        Judged on the pass-through columns only, so neighbouring tables get the same decision.

        Parameters
        ----------
        data : pandas.DataFrame
            Rows with the fitted columns (``columns_``).

        Returns
        -------
        bool
            True when more rows repeat auxiliary rows than chance would make.
        """
        self._check_fitted()
        frame = self._frame_with(data, self.columns_, "it was fitted with it", "the data")
        return self._verdict(frame) == "training rows"

    def _verdict(self, frame: pd.DataFrame) -> Verdict:
        """Overlap verdict of ``frame`` against the auxiliary rows, on pass-through columns only."""
        found = float(np.isin(_hashes(frame[list(self.context_)]), self.fingerprint_).mean())
        return overlap_verdict(found, self.overlap_chance_, len(frame))

    def record(self, plan: ResamplePlan) -> PrivacyRecord:
        """The guarantee of a release with ``plan``.

        Parameters
        ----------
        plan : ResamplePlan
            The noise plan of the release.

        Returns
        -------
        PrivacyRecord
            ``(epsilon, 0)``-DP under ``dp/substitute:<sensitive,proxies...>``.
        """
        protected = [plan.sensitive, *plan.proxies]
        own = [
            AUX_PUBLIC,
            f"every column but {protected} is released unchanged: what those columns reveal "
            f"about {plan.sensitive!r} is not protected (the floor is the table without "
            f"{protected})",
        ]
        if getattr(self, "from_aux_", False):
            others = (
                "; so were the categories of every other column (no schema): a private value "
                "the auxiliary rows lack is treated as unseen, and decides nothing"
                if getattr(self, "schemaless_", False)
                else ""
            )
            own.append(
                f"the domain of {plan.sensitive!r} ({plan.n_levels} values) was read off the "
                "auxiliary data: a private value outside it is refused (an input check: the "
                f"unit's neighbours stay inside the domain){others}"
            )
        return self._record(
            plan,
            mechanism="proxy-resampling",
            protects=(
                f"each private row's value of {plan.sensitive!r} and of its proxies "
                f"{list(plan.proxies)} (substitution: neighbours differ in those columns of one "
                "row; the number of rows and every other column are public)"
            ),
            sensitivity=plan.sensitivity,
            noise={"distribution": "discrete laplace", "scale": plan.scale, "norm": "l1",
                   "per": f"count of each of the {plan.n_levels} values of {plan.sensitive!r}",
                   "post_processing": "counts clipped at 0 and normalised; each row's value "
                   + ("drawn from a model of the auxiliary data given the row's released "
                      "columns, re-weighed to that marginal" if self.draw == "conditional"
                      else "drawn from that marginal") + (
                       "; proxies copied together from one auxiliary (public) donor row with the "
                       "drawn value, among the nearest on the released columns: no private "
                       "proxy is read, and every redrawn value is an auxiliary row's"
                       if self.conditional == "donor" else
                       "; proxies drawn from models of the auxiliary data given the drawn "
                       "value and the released columns")},
            unit=PrivacyUnit("dp", "substitute:" + ",".join(protected)),
            assumptions=own,
        )  # fmt: skip

    def _add_noise(self, private: PrivateRows, plan: ResamplePlan) -> ReleasedMarginal:
        noisy = plan.sampler.discrete_laplace(private.counts, plan.scale)
        return ReleasedMarginal(noisy, private.public, private.columns, private.index)

    def _post_process(self, noisy: ReleasedMarginal) -> pd.DataFrame:
        """Draw the sensitive values, then the proxies: post-processing of the noisy counts."""
        rng = np.random.default_rng(int(self.seed))
        n = len(noisy.public)
        given = noisy.public[list(self.context_)].copy()
        if self.draw == "conditional":
            drawn = self.sensitive_model_.draw(given, marginal(noisy.counts), rng)
        else:
            drawn = rng.choice(len(self.domain_), size=n, p=marginal(noisy.counts))
        values = np.empty(n, dtype=object)
        values[:] = [self.domain_[i] for i in drawn]
        given[self.sensitive] = column(values, self.template_[self.sensitive], given.index)
        redrawn = self.redraw_.draw(given, drawn, rng)
        for proxy in self.proxies_:
            given[proxy] = redrawn[proxy]
        resampled = {self.sensitive, *self.proxies_}
        table = pd.DataFrame(
            {c: given[c] if c in resampled else noisy.public[c] for c in noisy.columns},
            columns=list(noisy.columns),
        )
        table.index = noisy.index
        return table

    def _accuracy(self, plan: ResamplePlan, values: pd.DataFrame) -> Accuracy:
        scales = {plan.sensitive: pd.Series(plan.scale, index=pd.Index(self.domain_))}
        return Accuracy.of_scales(
            "discrete laplace",
            scales,
            of=f"the noisy counts of {plan.sensitive!r} that its resampled values are drawn from",
        )

    def _diagnostics(
        self, public: ResampleFacts, plan: ResamplePlan, noisy: ReleasedMarginal
    ) -> ResampleDiagnostics:
        index = pd.Index(self.domain_)
        protected = {plan.sensitive, *plan.proxies}
        return ResampleDiagnostics(
            rows=len(noisy.public),
            noisy_counts={plan.sensitive: pd.Series(noisy.counts, index=index,
                                                    name=plan.sensitive)},
            sensitive=plan.sensitive,
            proxies=plan.proxies,
            passed_through=tuple(c for c in noisy.columns if c not in protected),
            epsilon=plan.epsilon,
            marginal=pd.Series(marginal(noisy.counts), index=index, name=plan.sensitive),
            leakage_floor_aux=self.leakage_floor_,
            draw=str(self.draw),
            conditional=str(self.conditional),
            aux_rows=self.aux_rows_,
            keep=tuple(self.keep),
        )  # fmt: skip


def marginal(counts: np.ndarray) -> np.ndarray:
    """Noisy ``counts`` clipped at 0 and normalised (uniform if none is positive)."""
    clipped = np.clip(np.asarray(counts, dtype=np.float64), 0.0, None)
    total = clipped.sum()
    if total <= 0.0:
        return np.full(clipped.size, 1.0 / clipped.size)
    share: np.ndarray = clipped / total
    return share


def _hashes(frame: pd.DataFrame) -> np.ndarray:
    """One hash per row of the values (not the index), to find auxiliary rows among private."""
    return np.asarray(pd.util.hash_pandas_object(frame, index=False), dtype=np.uint64)


__all__ = [
    "CONDITIONALS",
    "ProxyResampler",
    "ResampleDiagnostics",
    "ResampleFacts",
    "ResamplePlan",
    "marginal",
]
