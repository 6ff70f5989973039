"""Proxy resampling: the sensitive column from its DP marginal, its proxies from public models.

:class:`ProxyResampler` learns on public auxiliary rows which columns best predict the sensitive
one (its proxies) and a chain of models, each proxy given the sensitive value, the other columns
and the proxies before it. A release counts the sensitive column of the private rows over its
public domain with discrete Laplace noise (OpenDP, the only step that reads a private sensitive
value), draws every row's sensitive value given its released columns, re-weighed to that noisy
marginal (or from the marginal alone, independently of the row), then each proxy from its
auxiliary-data model given the new value and the row's other columns; every other column is
released as it is. The privacy argument is in ``docs/sanitize/resample.md``.
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd

from attrpriv._checks import (
    Check,
    check_epsilon,
    check_non_negative,
    check_positive_int,
    check_probability,
    one_of,
    optional,
)
from attrpriv.data.schema import Schema
from attrpriv.dp.accuracy import Accuracy
from attrpriv.dp.mechanism import SAMPLER_CONSTRAINTS, Mechanism, NoisePlan, check_fitted
from attrpriv.dp.noise import NoiseSampler
from attrpriv.dp.record import PrivacyRecord, Release
from attrpriv.dp.units import PrivacyUnit
from attrpriv.errors import InputError
from attrpriv.sanitize._names import column_name, column_names, proxies_choice
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
from attrpriv.sanitize.resample.ranking import Setup, data_frame, prepare, rank, sensitive_codes

if TYPE_CHECKING:
    from attrpriv.dp.ledger import BudgetLedger

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
    """Discrete Laplace noise of one scale on every count of the sensitive column's marginal.

    Parameters
    ----------
    sensitive : str
        The sensitive column.
    proxies : tuple of str
        Its proxies, in the order they are redrawn (chosen on public auxiliary data).
    n_levels : int
        The number of values in the sensitive column's public domain (bins of the marginal).
    sensitivity : float
        The l1 sensitivity of the counts under the unit (2: one row's value substituted).
    scale : float
        The discrete Laplace scale of every count, ``sensitivity / epsilon``.
    """

    sensitive: str
    proxies: tuple[str, ...]
    n_levels: int
    sensitivity: float
    scale: float


@dataclass(frozen=True)
class PrivateRows:
    """The private input as measured: the sensitive column's exact counts (private), and the
    columns released as they are (public under the unit), in their own frame."""

    counts: np.ndarray
    public: pd.DataFrame
    columns: tuple[str, ...]
    index: pd.Index


@dataclass(frozen=True)
class ReleasedMarginal:
    """What the resampled columns are drawn from: the noisy counts and the released columns."""

    counts: np.ndarray
    public: pd.DataFrame
    columns: tuple[str, ...]
    index: pd.Index


class ResampledRelease(Release):
    """A proxy-resampling release: ``values`` is the released table, with its record.

    The accuracy and :meth:`to_frame` describe the DP statistic the table's sensitive column is
    drawn from: the noisy count of each value of the sensitive column (also in
    ``parts["noisy_counts"]``).

    Parameters
    ----------
    values : pandas.DataFrame
        The released table: one row per private row, in its order and with its index; the
        sensitive column and its proxies redrawn, every other column as it was.
    record : PrivacyRecord
        The guarantee behind the release.
    parts : Mapping of str to Any, default {}
        Diagnostics from public or released quantities only: ``sensitive``, ``proxies``,
        ``noisy_counts``, ``marginal``, ``passed_through`` and ``leakage_floor_aux``.
    accuracy : Accuracy or None, default None
        The discrete Laplace scale and interval of every noisy count.
    """

    @property
    def data(self) -> pd.DataFrame:
        """The released table (``values``)."""
        table: pd.DataFrame = self.values
        return table

    def __repr__(self) -> str:
        record = self.record
        changed = [self.parts.get("sensitive"), *self.parts.get("proxies", ())]
        return (
            f"ResampledRelease({record.mechanism}, {record.unit.key}, {record.guarantee}: "
            f"{len(self.values)} rows, resampled {changed})"
        )

    def to_frame(self) -> pd.DataFrame:
        """One row per value of the sensitive column: its noisy count and noise interval.

        Returns
        -------
        pandas.DataFrame
            The columns ``name`` (the sensitive column), ``level`` (its value), ``value`` (the
            noisy count), ``half_width``, ``lower`` and ``upper`` (the 95% noise interval), as
            :meth:`attrpriv.dp.Release.to_frame` writes them. The table itself is ``values``.
        """
        counts = self.parts["noisy_counts"]
        return Release({str(counts.name): counts}, self.record, accuracy=self.accuracy).to_frame()


class ProxyResampler(Mechanism[PrivateRows, ResamplePlan]):
    """Resample a sensitive column from its DP marginal and redraw its proxies from public rows.

    :meth:`fit` uses public auxiliary rows only: it ranks the columns that predict the sensitive
    one (``proxies="auto"``: greedy permutation importance of gradient boosting, the AUC drop on
    a validation split, refitted after each pick) and indexes the auxiliary rows as donors by
    sensitive value, task level and context (``conditional="donor"``), or fits, for each proxy
    in turn, a model of the proxy given the sensitive value, the other (context) columns and
    the proxies before it (``"hgb"``).
    :meth:`release` counts the private sensitive column over its public domain with discrete
    Laplace noise of scale ``2 / epsilon`` (the ledger is charged first), clips the counts at 0
    and normalises them, draws every row's sensitive value from a public model of it given the
    row's released columns, re-weighed so that the values follow that noisy marginal
    (``draw="conditional"``; ``"marginal"``: from the marginal alone, independently of the
    row), then copies its proxies from a donor (an auxiliary row with that value and the row's
    task level, near on the context) or redraws them from the models; every other column is
    released as it is.
    Neither draw reads a private sensitive value or proxy.

    The release is epsilon-DP for the unit ``dp/substitute:<sensitive,proxies...>``: neighbouring
    private tables differ in the sensitive value and the proxies of one row. It does not protect
    what the other columns themselves reveal about the sensitive one (the floor is the table
    without the sensitive column and its proxies). See ``docs/sanitize/resample.md``.

    Parameters
    ----------
    sensitive : str
        The sensitive column (categorical or integer-coded: its marginal is a histogram).
    proxies : "auto" or list of str, default "auto"
        The columns to redraw: ``"auto"`` picks the ``n_proxies`` best predictors of the
        sensitive column on the auxiliary data; a list names them (redrawn in its order).
    n_proxies : int or "auto", default "auto"
        How many proxies ``"auto"`` picks: as many as it takes for the other columns to predict
        the sensitive one with validation AUC at most ``target_auc`` on the auxiliary data, by
        the upper end of its 95% CI (so a few hundred auxiliary rows do not stop it on noise;
        every candidate at most); or a count >= 0 (0: only the sensitive column is
        resampled; with a task, a fixed count takes the columns the task needs least first,
        which need not hide the sensitive one).
    target_auc : float, default 0.55
        The leakage floor ``n_proxies="auto"`` aims at, in (0.5, 1].
    task : str or None, default None
        The task's target column the release should stay useful for: never a proxy, and the
        ranking weighs each candidate's importance for it (``task_weight``). Default the
        schema's target; without either the ranking looks at the sensitive column alone.
    task_weight : float, default 3.0
        How much a candidate's validation AUC drop for the task counts against its AUC drop
        for the sensitive column when ``"auto"`` picks the next proxy, >= 0 (0: the sensitive
        column alone decides). Of two columns that hide the sensitive one alike, the one the
        task needs less is redrawn first; ``n_proxies="auto"`` may then redraw more columns.
    epsilon : float, default 1.0
        The privacy loss of a release, > 0.
    conditional : {"donor", "hgb"}, default "donor"
        How the proxies are redrawn. ``"donor"``: all of them copied from one auxiliary row
        with the same drawn sensitive value and the same level of the task's target, among the
        ``n_donors`` nearest to the row on the context columns, the least used so far (so the
        redrawn columns keep their joint law with each other and the target). ``"hgb"``: each
        from gradient boosting over its values given the sensitive value, the context and the
        proxies before it (a numeric proxy's frequent values and quantile bins of the rest, an
        auxiliary value of the drawn level taken at random).
    n_donors : int, default 200
        How many nearest auxiliary rows a ``"donor"`` redraw picks among, >= 1.
    draw : {"conditional", "marginal"}, default "conditional"
        How each row's sensitive value is drawn: from gradient boosting of it given the context
        columns (fitted on the auxiliary rows), its probabilities re-weighed by the noisy
        marginal over the auxiliary one, so the released table keeps the sensitive column's
        dependence on the released columns; or from the noisy marginal alone.
    keep : list of str, default ()
        Columns ``"auto"`` never picks, e.g. the task's target (a schema's target column is
        always kept).
    categories : list or None, default None
        The public domain of the sensitive column; default the schema's (a categorical or
        integer domain), else the values of the auxiliary data.
    seed : int, default 0
        Seeds the ranking's split, the models and the post-processing draws, >= 0.
    noise : NoiseSampler or None, default None
        The noise sampler; default exact OpenDP noise.
    allow_nonprivate : bool, default False
        Accept a non-private sampler (reproducible tests only).

    Attributes
    ----------
    proxies_ : tuple of str
        The proxies, in the order they are redrawn.
    context_ : tuple of str
        The columns the models condition on, released unchanged.
    domain_ : tuple
        The public domain of the sensitive column (the bins of its marginal).
    ranking_ : Ranking or None
        The greedy ranking behind ``proxies="auto"`` (None for a list).
    leakage_floor_ : float
        The validation AUC, on the auxiliary data, of gradient boosting predicting the
        sensitive column from the context columns alone: what the release cannot hide.
    redraw_ : Donors or Chain
        What redraws the proxies: the indexed auxiliary rows (``"donor"``) or the fitted
        models, one per proxy (``"hgb"``).
    sensitive_model_ : SensitiveModel
        The model of the sensitive column given the context columns (``draw="conditional"``).
    """

    _constraints: ClassVar[Mapping[str, Check]] = {
        "sensitive": column_name,
        "proxies": proxies_choice,
        "n_proxies": lambda value, name: (
            value if value == "auto" else check_positive_int(value, name, minimum=0)
        ),
        "target_auc": _auc,
        "task": optional(column_name),
        "task_weight": check_non_negative,
        "epsilon": check_epsilon,
        "conditional": one_of(CONDITIONALS),
        "n_donors": lambda value, name: check_positive_int(value, name, minimum=1),
        "draw": one_of(DRAWS),
        "keep": column_names,
        "categories": optional(_categories),
        "seed": lambda value, name: check_positive_int(value, name, minimum=0),
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
        noise: NoiseSampler | None = None,
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
        self.noise = noise
        self.allow_nonprivate = allow_nonprivate

    # -- fit: public auxiliary data only ----------------------------------------------------
    def fit(self, aux: pd.DataFrame, schema: Schema | None = None) -> ProxyResampler:
        """Rank the proxies and fit their models on public auxiliary rows.

        Parameters
        ----------
        aux : pandas.DataFrame
            Public auxiliary rows, disjoint from the private ones, with the sensitive column
            (no missing value) and the columns the private data will have. Not modified.
        schema : Schema or None, optional
            Public domains and roles: the sensitive column's domain, the categories of the
            categorical columns; columns with role ``ignore`` are neither proxies nor context
            (they pass through a release), the target is never picked as a proxy.

        Returns
        -------
        ProxyResampler
            ``self``, fitted.

        Raises
        ------
        InputError
            A parameter is invalid, ``aux`` is not a DataFrame with rows and string column
            names, a named column is missing, the sensitive column has a missing value or one
            outside its domain or fewer than two values, or ``n_proxies`` exceeds the
            candidate columns.
        """
        self._validate_params()
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
    def release(
        self, data: pd.DataFrame, *, ledger: BudgetLedger | None = None, label: str = ""
    ) -> ResampledRelease:
        """Resample the sensitive column and redraw its proxies in the private rows.

        Parameters
        ----------
        data : pandas.DataFrame
            The private rows, with every column the resampler was fitted with (others pass
            through). Not modified.
        ledger : BudgetLedger or None, optional
            Charged with the release's record before any noise is drawn.
        label : str, optional
            A free-text name for the release in the ledger.

        Returns
        -------
        ResampledRelease
            The released table (``values``, same rows, index and column order as ``data``),
            its :class:`PrivacyRecord`, the noisy marginal's accuracy and diagnostics.

        Raises
        ------
        NotFittedError
            The resampler is not fitted, or a parameter that shapes the fit changed since.
        InputError
            A parameter is invalid, ``data`` is not a DataFrame with rows, lacks a fitted
            column, has a sensitive value that is missing or outside the public domain, or
            mostly repeats the auxiliary rows.
        BudgetExceededError
            The release does not fit the ledger's budget (nothing is released).
        """
        out = self._release(data, ledger=ledger, label=label)
        return ResampledRelease(out.values, out.record, out.parts, out.accuracy)

    def calibrate(self, sampler: NoiseSampler | None = None) -> ResamplePlan:
        """The noise of a release (public: the fitted domain and proxies, no private data).

        Parameters
        ----------
        sampler : NoiseSampler or None, optional
            The noise sampler; default the mechanism's own.

        Returns
        -------
        ResamplePlan
            The discrete Laplace scale of every count of the marginal.

        Raises
        ------
        NotFittedError
            The resampler is not fitted.
        InputError
            A parameter of the mechanism is invalid.
        """
        self._check_fitted()
        self._validate_params()
        return self._plan(sampler or self._sampler())

    def _check_fitted(self) -> None:
        check_fitted(self, "redraw_", unchanged=self._structure())

    def _plan(self, sampler: NoiseSampler) -> ResamplePlan:
        epsilon = float(self.epsilon)
        return ResamplePlan(epsilon, 0.0, sampler, self.sensitive, self.proxies_,
                            len(self.domain_), SENSITIVITY, SENSITIVITY / epsilon,
                            inferred=self.inferred_)  # fmt: skip

    def _measure(self, data: pd.DataFrame) -> PrivateRows:
        self._check_fitted()
        frame = data_frame(data, "the private data")
        for name in self.columns_:
            if name not in frame.columns:
                raise InputError(f"the private data has no column {name!r} (it was fitted with it)")
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
                stacklevel=4,
            )
        if verdict == "cannot tell":
            warnings.warn(
                f"{self.overlap_chance_:.0%} of the auxiliary rows repeat another on the columns "
                "released unchanged: this release cannot check that the private rows are not "
                "the auxiliary ones",
                UserWarning,
                stacklevel=4,
            )
        elif verdict == "training rows":
            raise InputError(
                "most of the private rows repeat auxiliary rows the resampler was fitted on, on "
                "the columns released unchanged (far more than chance): fit it on public rows "
                "disjoint from the private ones"
            )
        codes = sensitive_codes(frame[self.sensitive], self.domain_, "the private data")
        counts = np.bincount(codes, minlength=len(self.domain_)).astype(np.int64)
        public = frame.drop(columns=[self.sensitive, *self.proxies_]).reset_index(drop=True)
        return PrivateRows(counts, public, tuple(frame.columns), frame.index)

    def repeats_training_rows(self, data: pd.DataFrame) -> bool:
        """Whether ``data`` repeats the auxiliary rows this resampler was fitted on (and a
        release of it would be refused), judged on the columns a release passes through
        unchanged (``context_``): never on the sensitive column or its proxies, which a release
        protects, so that neighbouring tables get the same decision.

        Parameters
        ----------
        data : pandas.DataFrame
            Rows with the columns it was fitted with (``columns_``).

        Returns
        -------
        bool
            True when more of its rows repeat auxiliary rows than chance would make.

        Raises
        ------
        NotFittedError
            The resampler is not fitted.
        InputError
            ``data`` is not a DataFrame or lacks a column it was fitted with.
        """
        self._check_fitted()
        frame = data_frame(data, "the data")
        missing = [c for c in self.columns_ if c not in frame.columns]
        if missing:
            raise InputError(f"the data has no column {missing[0]!r} (it was fitted with it)")
        return self._verdict(frame) == "training rows"

    def _verdict(self, frame: pd.DataFrame) -> Verdict:
        """:func:`~attrpriv.sanitize.overlap.overlap_verdict` of the share of ``frame``'s rows
        that repeat an auxiliary row on the columns passed through. It reads those columns only,
        which the unit leaves public (and the number of rows, public too): the decision is the
        same on every neighbour."""
        found = float(np.isin(_hashes(frame[list(self.context_)]), self.fingerprint_).mean())
        return overlap_verdict(found, self.overlap_chance_, len(frame))

    def _calibrate(self, measured: PrivateRows, sampler: NoiseSampler) -> ResamplePlan:
        return self._plan(sampler)

    def record(self, plan: ResamplePlan) -> PrivacyRecord:
        """The guarantee of a release with ``plan``.

        Parameters
        ----------
        plan : ResamplePlan
            The noise plan of the release (from :meth:`calibrate` or a release).

        Returns
        -------
        PrivacyRecord
            ``(epsilon, 0)``-DP under ``dp/substitute:<sensitive,proxies...>``, with the
            counts' l1 sensitivity (2) and discrete Laplace scale, and its assumptions.
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

    def _noise(self, measured: PrivateRows, plan: ResamplePlan) -> ReleasedMarginal:
        noisy = plan.sampler.discrete_laplace(measured.counts, plan.scale)
        return ReleasedMarginal(noisy, measured.public, measured.columns, measured.index)

    def _post_process(self, noisy: ReleasedMarginal) -> pd.DataFrame:
        """Draw the sensitive values (given the released columns, re-weighed to the noisy
        marginal, or from the marginal alone), then the proxies from the models: a function of
        the noisy counts, the released columns and the public models only."""
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

    def _parts(
        self, measured: PrivateRows, plan: ResamplePlan, noisy: ReleasedMarginal
    ) -> dict[str, Any]:
        index = pd.Index(self.domain_)
        protected = {plan.sensitive, *plan.proxies}
        return {
            "sensitive": plan.sensitive,
            "proxies": list(plan.proxies),
            "noisy_counts": pd.Series(noisy.counts, index=index, name=plan.sensitive),
            "marginal": pd.Series(marginal(noisy.counts), index=index, name=plan.sensitive),
            "passed_through": [c for c in noisy.columns if c not in protected],
            "leakage_floor_aux": self.leakage_floor_,
        }


def marginal(counts: np.ndarray) -> np.ndarray:
    """Noisy counts clipped at 0 and normalised (uniform when none is positive).

    Parameters
    ----------
    counts : numpy.ndarray
        The noisy counts, one per value of the domain.

    Returns
    -------
    numpy.ndarray
        A probability vector of the same length.
    """
    clipped = np.clip(np.asarray(counts, dtype=np.float64), 0.0, None)
    total = clipped.sum()
    if total <= 0.0:
        return np.full(clipped.size, 1.0 / clipped.size)
    share: np.ndarray = clipped / total
    return share


def _hashes(frame: pd.DataFrame) -> np.ndarray:
    """One hash per row of the values (not the index), to find auxiliary rows among private."""
    return np.asarray(pd.util.hash_pandas_object(frame, index=False), dtype=np.uint64)


__all__ = ["CONDITIONALS", "ProxyResampler", "ResamplePlan", "ResampledRelease", "marginal"]
