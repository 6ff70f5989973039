"""Local DP on a feature set: k-ary randomized response, clipped Laplace, or randomized response
over public bins; m features per record get ``m * epsilon``. Domains must be public. See
docs/assess/mitigation.md.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd

from attrpriv._checks import (
    EPSILON,
    Rule,
    check_finite_number,
    instance_of,
    integer,
    one_of,
    optional,
)
from attrpriv.assess.mitigation.base import Strategy, check_inputs, is_numeric, with_values
from attrpriv.assess.mitigation.randomizers import (
    _BitSource,
    _randomized_response,
    keep_probability,
    realised_epsilon,
    replace_probability,
)
from attrpriv.data.schema import Categorical, Integer, Numeric, PrivateDomainWarning, Schema
from attrpriv.dp.accuracy import Accuracy
from attrpriv.dp.ledger import BudgetLedger
from attrpriv.dp.mechanism import SAMPLER_CONSTRAINTS, Mechanism, NoisePlan
from attrpriv.dp.noise import NoiseSampler
from attrpriv.dp.record import Diagnostics, PrivacyRecord, Release
from attrpriv.dp.units import PrivacyUnit
from attrpriv.errors import InputError, offending

if TYPE_CHECKING:
    from attrpriv.assess.mitigation.base import Transformed, Work

NUMERIC_RANDOMIZERS = ("laplace", "bins")
"""How a numeric feature is randomized: clipped Laplace noise, or randomized response over
equal-width bins of its public bounds."""
BINNED = "binned randomized response"
"""The ``distribution`` of a binned numeric feature's plan."""


@dataclass(frozen=True)
class Columns:
    """The private input: a copy of the frame, the features to randomize and the seed."""

    frame: pd.DataFrame
    features: tuple[str, ...]
    seed: int


@dataclass(frozen=True)
class LocalFacts:
    """The public facts local DP is calibrated on: the ``features``, numeric clipping ``bounds``,
    categorical ``values`` (None: missing) and where each domain came from (``sources``:
    ``"bounds="``, ``"domain="``, ``"schema"`` or observed)."""

    features: tuple[str, ...]
    bounds: Mapping[str, tuple[float, float]]
    values: Mapping[str, tuple[Any, ...]]
    sources: Mapping[str, str]


@dataclass(frozen=True)
class LocalPlan(NoisePlan):
    """How each feature is randomized (public parameters, plus the declared domain values)."""

    per_value_epsilon: float
    features: Mapping[str, Mapping[str, Any]]

    def public(self) -> dict[str, dict[str, Any]]:
        """The plan without the domain values."""
        return {f: {k: v for k, v in p.items() if k != "values"} for f, p in self.features.items()}


@dataclass(frozen=True)
class LocalDPDiagnostics(Diagnostics):
    """How each feature was randomized: per feature, its public plan (distribution, scale or keep
    probability, domain size, realised epsilon)."""

    features: Mapping[str, Mapping[str, Any]]

    def summary_lines(self) -> list[str]:
        """One line per feature, in order: its noise and the epsilon it gives."""
        lines = []
        for feature, plan in self.features.items():
            if plan["distribution"] == "laplace":
                lines.append(
                    f"{feature!r}: Laplace noise of scale {plan['scale']:.4g} on values clipped "
                    f"to [{plan['lower']:g}, {plan['upper']:g}] (epsilon {plan['epsilon']:.4g})"
                )
                continue
            if plan["distribution"] == BINNED:
                what = (
                    f"the midpoints of {plan['k']} equal-width bins of "
                    f"[{plan['lower']:g}, {plan['upper']:g}]"
                )
            else:
                what = f"{plan['k']} values"
            lines.append(
                f"{feature!r}: randomized response over {what} ({plan['domain_source']}), kept "
                f"with probability {plan['keep_probability']:.4g} (epsilon {plan['epsilon']:.4g})"
            )
        return lines


class LocalDPNoise(Strategy, Mechanism[Columns, LocalFacts, LocalPlan]):
    """epsilon-local DP per record and feature (``epsilon`` per value): randomized response for
    categories; for numbers, clipped Laplace noise (``numeric="laplace"``) or randomized response
    over ``bins`` equal-width bins of the public bounds, released as bin midpoints
    (``numeric="bins"``). Public domains: ``bounds`` (numeric bounds), ``domain`` (categorical
    values, None for missing), else ``schema``."""

    name = "ldp"
    _constraints: ClassVar[Mapping[str, Rule]] = {
        "epsilon": EPSILON,
        "schema": optional(instance_of(Schema, "an attrpriv Schema")),
        "bounds": optional(instance_of(Mapping, "a mapping of column to (low, high)")),
        "domain": optional(instance_of(Mapping, "a mapping of column to its values")),
        "numeric": one_of(NUMERIC_RANDOMIZERS),
        "bins": integer(2),
        **SAMPLER_CONSTRAINTS,
    }

    def __init__(
        self,
        epsilon: float,
        *,
        bounds: Mapping[str, tuple[float, float]] | None = None,
        domain: Mapping[str, Sequence[Any]] | None = None,
        schema: Schema | None = None,
        numeric: str = "laplace",
        bins: int = 5,
        sampler: NoiseSampler | None = None,
        allow_nonprivate: bool = False,
    ) -> None:
        self.epsilon = epsilon
        self.bounds = bounds
        self.domain = domain
        self.schema = schema
        self.numeric = numeric
        self.bins = bins
        self.sampler = sampler
        self.allow_nonprivate = allow_nonprivate

    def release(
        self,
        X: pd.DataFrame,
        features: Sequence[str],
        *,
        seed: int = 0,
        ledger: BudgetLedger | None = None,
        label: str = "",
    ) -> Release:
        """Randomize ``features`` of ``X`` (not changed) into a Release; ``ledger`` is charged
        (entry ``label``) before any noise is drawn. ``seed`` seeds a non-private sampler only."""
        frame, names = check_inputs(X, features)
        return self._release(frame.copy(deep=True), names, seed, ledger=ledger, label=label)

    def _transform(self, work: Work) -> Transformed:
        label = f"local DP on {work.features}"
        result = self._release(work.X, work.features, work.seed, ledger=work.ledger, label=label)
        return result.values, result.diagnostics.to_dict(), result.record.epsilon

    def _measure(
        self, X: pd.DataFrame, features: tuple[str, ...], seed: int
    ) -> tuple[Columns, LocalFacts]:
        """The frame to randomize, and each feature's public domain (checked against the data)."""
        bounds: dict[str, tuple[float, float]] = {}
        values: dict[str, tuple[Any, ...]] = {}
        sources: dict[str, str] = {}
        for feature in features:
            column = X[feature]
            categorical = self.domain is not None and feature in self.domain
            if is_numeric(column) and not categorical:  # numeric with domain= is a category
                bounds[feature], sources[feature] = self._bounds(column)
                if column.isna().any():
                    raise InputError(
                        f"column {feature!r} has missing values; numeric={self.numeric!r} needs "
                        "a number in every row (impute first, or make it categorical)"
                    )
            else:
                declared, sources[feature] = self._domain(column)
                values[feature] = tuple(declared)
        return Columns(X, features, seed), LocalFacts(features, bounds, values, sources)

    def _calibrate(self, public: LocalFacts, sampler: NoiseSampler) -> LocalPlan:
        epsilon = float(self.epsilon)
        plans = {f: self._plan(f, public, epsilon, sampler) for f in public.features}
        inferred = () if self.schema is None else self.schema.inferred_among(public.features)
        from_schema = tuple(f for f in inferred if public.sources[f] == "schema")
        return LocalPlan(
            epsilon * len(public.features), 0.0, sampler, epsilon, plans, inferred=from_schema
        )

    def _add_noise(self, private: Columns, plan: LocalPlan) -> pd.DataFrame:
        X = private.frame
        bits = _BitSource(plan.sampler, private.seed)
        for feature, feature_plan in plan.features.items():
            X[feature] = _randomize(X[feature], feature_plan, plan.sampler, bits)
        return X

    def _accuracy(self, plan: LocalPlan, values: pd.DataFrame) -> Accuracy:
        scales = {
            f: float(p["scale"]) for f, p in plan.features.items() if p["distribution"] == "laplace"
        }
        return Accuracy.of_scales(
            "laplace",
            scales,
            of="each value of the Laplace-noised numeric features (randomized-response "
            "features, binned numeric ones included, have no noise scale: their keep "
            "probabilities are in the diagnostics)",
        )

    def _diagnostics(
        self, public: LocalFacts, plan: LocalPlan, noisy: pd.DataFrame
    ) -> LocalDPDiagnostics:
        return LocalDPDiagnostics(plan.public())

    def replace_probability(self, epsilon: float, k: int) -> float:
        """Randomized response's replacement probability for epsilon over k values."""
        return replace_probability(epsilon, k)

    def laplace_scale(self, epsilon: float, lower: float, upper: float, slack: float) -> float:
        """Laplace scale for one value clipped to [lower, upper] (plus the sampler's rounding)."""
        return (upper - lower + slack) / epsilon

    def _plan(
        self, feature: str, public: LocalFacts, epsilon: float, sampler: NoiseSampler
    ) -> dict[str, Any]:
        """How one feature is randomized: public parameters only (plus the domain values)."""
        if feature in public.bounds and self.numeric == "bins":
            lower, upper = public.bounds[feature]
            return {
                "distribution": BINNED,
                "lower": lower,
                "upper": upper,
                "midpoints": bin_midpoints(lower, upper, int(self.bins)),
                **self._response(epsilon, int(self.bins), public.sources[feature]),
            }
        if feature in public.bounds:
            lower, upper = public.bounds[feature]
            scale = self.laplace_scale(epsilon, lower, upper, sampler.rounding_slack(1))
            return {
                "distribution": "laplace",
                "lower": lower,
                "upper": upper,
                "scale": scale,
                "sensitivity": upper - lower,
                "epsilon": epsilon,
            }
        values = list(public.values[feature])
        return {
            "distribution": "k-ary randomized response",
            **self._response(epsilon, len(values), public.sources[feature]),
            "values": values,
        }

    def _response(self, epsilon: float, k: int, source: str) -> dict[str, Any]:
        """The public parameters of k-ary randomized response at ``epsilon`` per value."""
        r = self.replace_probability(epsilon, k)
        return {
            "k": k,
            "domain_source": source,
            "replace_probability": r,
            "keep_probability": 1.0 - r + r / k,
            "nominal_keep_probability": keep_probability(epsilon, k),
            "epsilon": realised_epsilon(r, k),
            "sensitivity": 1.0,
        }

    def _bounds(self, column: pd.Series) -> tuple[tuple[float, float], str]:
        """The public clipping bounds of a numeric column, and where they came from."""
        name = str(column.name)
        if self.bounds is not None and name in self.bounds:
            pair = self.bounds[name]
            if isinstance(pair, (str, bytes)) or not isinstance(pair, Sequence) or len(pair) != 2:
                raise InputError(f"bounds[{name!r}] must be a (lower, upper) pair, got {pair!r}")
            lower = check_finite_number(pair[0], f"bounds[{name!r}] lower")
            upper = check_finite_number(pair[1], f"bounds[{name!r}] upper")
            if lower > upper:
                raise InputError(f"bounds[{name!r}] lower {lower} is above upper {upper}")
            return (lower, upper), "bounds="
        if self.schema is not None and name in self.schema:
            domain = self.schema.domain(name)
            if isinstance(domain, (Numeric, Integer)):
                return (float(domain.lower), float(domain.upper)), "schema"
        raise InputError(
            f"bounds: numeric feature {name!r} needs public bounds; pass "
            f"bounds={{{name!r}: (lower, upper)}} or a schema with a numeric domain for it"
        )

    def _domain(self, column: pd.Series) -> tuple[list[Any], str]:
        """The public list of values (missing included when declared or observed)."""
        name, missing = str(column.name), bool(column.isna().any())
        declared: list[Any] | None = None
        if self.domain is not None and name in self.domain:
            declared, source = _check_domain(self.domain[name], name), "domain="
        elif self.schema is not None and name in self.schema:
            schema_domain = self.schema.domain(name)
            if isinstance(schema_domain, (Categorical, Integer)):
                declared, source = list(schema_domain.categories), "schema"
                if self.schema[name].nullable:
                    declared.append(None)
        if declared is None:
            warnings.warn(
                f"LocalDPNoise: the domain of {name!r} is read from the data, which reveals which "
                "values occur; pass domain= or a schema to keep it public",
                PrivateDomainWarning,
                stacklevel=4,
            )
            observed = list(pd.unique(column.dropna()))
            return observed + ([None] if missing else []), "observed (leaks the values present)"
        outside = ~column.isin([v for v in declared if not _is_missing(v)]) & column.notna()
        if outside.any() or (missing and not any(_is_missing(v) for v in declared)):
            bad = column[outside].iloc[0] if outside.any() else None
            raise InputError(
                f"column {name!r} has a value{offending(bad)} outside its declared domain "
                f"({len(declared)} values); add it to domain[{name!r}] (None for missing)"
            )
        return declared, source

    def record(self, plan: LocalPlan) -> PrivacyRecord:
        """The guarantee: ``m * epsilon``-DP for a record's values of the ``m`` features.

        Parameters
        ----------
        plan : LocalPlan
            The noise plan of the release.

        Returns
        -------
        PrivacyRecord
            The guarantee; the assumptions name the binned numeric features and their bins.
        """
        features = list(plan.features)
        epsilon = plan.per_value_epsilon
        binned = {f: p for f, p in plan.features.items() if p["distribution"] == BINNED}
        return self._record(
            plan,
            mechanism="local-dp-noise",
            protects=(
                f"each record's values of {features}: any two values it could hold give "
                f"outputs within a factor e^{epsilon:g} per feature (local DP, no trusted curator)"
            ),
            sensitivity={f: float(p["sensitivity"]) for f, p in plan.features.items()},
            noise={"per_feature": plan.public()},
            unit=PrivacyUnit("dp", "substitute:" + ",".join(features)),
            assumptions=(
                "columns outside the feature set are kept as they are: what they reveal about "
                "the randomized values (through correlation) is not protected",
                *(
                    f"domain of {f!r} read from the data"
                    for f, p in plan.features.items()
                    if "observed" in str(p.get("domain_source", ""))
                ),
                *(
                    f"the {p['k']} equal-width bins of {f!r} over [{p['lower']:g}, "
                    f"{p['upper']:g}] are fixed before the data are read (public bounds); a "
                    "value is released as the midpoint of its randomized bin"
                    for f, p in binned.items()
                ),
            ),
        )


def _check_domain(values: object, name: str) -> list[Any]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or not values:
        raise InputError(f"domain[{name!r}] must be a non-empty list of values, got {values!r}")
    listed = list(values)
    try:
        distinct = len(set(listed))
    except TypeError:
        raise InputError(f"domain[{name!r}] values must be hashable (text, numbers)") from None
    if distinct != len(listed):
        raise InputError(f"domain[{name!r}] has duplicate values")
    return listed


def _is_missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and np.isnan(value))


def _randomize(
    column: pd.Series, plan: Mapping[str, Any], sampler: NoiseSampler, bits: _BitSource
) -> Any:
    """One feature's randomized values (a new array; the column is not touched)."""
    if plan["distribution"] == "laplace":
        clipped = np.clip(column.to_numpy(dtype=float), plan["lower"], plan["upper"])
        return sampler.laplace(clipped, plan["scale"])
    if plan["distribution"] == BINNED:
        codes = bin_codes(column.to_numpy(dtype=float), plan["lower"], plan["upper"], plan["k"])
        noisy = _randomized_response(codes, plan["k"], plan["replace_probability"], bits)
        return np.asarray(plan["midpoints"], dtype=float)[noisy]
    values: list[Any] = plan["values"]
    missing_code = next((i for i, v in enumerate(values) if _is_missing(v)), -1)
    lookup = {v: i for i, v in enumerate(values) if not _is_missing(v)}
    codes = np.array([missing_code if pd.isna(v) else lookup[v] for v in column], dtype=np.int64)
    noisy = _randomized_response(codes, len(values), plan["replace_probability"], bits)
    table = np.empty(len(values), dtype=object)
    table[:] = [None if _is_missing(v) else v for v in values]
    declared = [v for v in values if not _is_missing(v)]
    drawn = table[noisy]
    if is_numeric(column) and missing_code < 0:  # integer codes with a declared domain
        try:
            return drawn.astype(column.dtype)
        except (TypeError, ValueError):  # the domain has values of another type: keep objects
            return drawn
    return with_values(column, drawn, declared)


def bin_codes(values: np.ndarray, lower: float, upper: float, k: int) -> np.ndarray:
    """Each value's bin among ``k`` equal-width bins of ``[lower, upper]``: ``[e_i, e_{i+1})``,
    the last closed; values outside go to the outer bins (a public, data-independent map)."""
    width = (upper - lower) / k
    if width <= 0:
        return np.zeros(values.shape, dtype=np.int64)
    codes = np.floor((np.clip(values, lower, upper) - lower) / width)
    return np.asarray(np.clip(codes, 0, k - 1), dtype=np.int64)


def bin_midpoints(lower: float, upper: float, k: int) -> list[float]:
    """The midpoints of ``k`` equal-width bins of ``[lower, upper]``, in order."""
    width = (upper - lower) / k
    return [lower + (i + 0.5) * width for i in range(k)]
