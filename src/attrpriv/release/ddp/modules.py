"""Tabular-DDP's structural tier: histograms whose questions fall into independent modules.

Scale ``2 |M| / epsilon`` on each histogram of module M, from the public modules, domains and
epsilon only. Proof in docs/mechanisms/tabular-ddp.md, "The structural tier".
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import pandas as pd
from scipy import stats

from attrpriv._checks import Rule, groups, probability
from attrpriv.data.schema import Schema
from attrpriv.dp.noise import NoiseSampler
from attrpriv.dp.record import ANY_LAW, Guarantee, PrivacyRecord
from attrpriv.dp.units import ANSWER, PrivacyUnit
from attrpriv.errors import InputError
from attrpriv.release.ddp.answers import (
    AUX,
    RESPONDENTS,
    TIER_CONSTRAINTS,
    AnswerHistograms,
    Questions,
    ScaledPlan,
    any_law_epsilon,
)
from attrpriv.release.ddp.chunking import check_chunks, mutual_information
from attrpriv.release.ddp.dependence import SUBSTITUTION_SENSITIVITY
from attrpriv.release.graph.learning import (
    Levels,
    encode,
    learning_rows,
)


@dataclass(frozen=True)
class ModulePlan(ScaledPlan):
    """The ``modules`` (and ``source``): scale ``2 |M| / epsilon`` on each histogram of module M."""

    modules: tuple[tuple[str, ...], ...]
    source: str

    def scales(self) -> dict[str, float]:
        """The noise scale of every released column, in release order."""
        epsilon = self.epsilon
        return {
            c: SUBSTITUTION_SENSITIVITY * len(module) / epsilon
            for module in self.modules
            for c in module
        }

    @property
    def fingerprint(self) -> str:
        """Eight hex digits naming the modules: releases compose under one partition."""
        text = ";".join(",".join(module) for module in self.modules)
        return hashlib.sha256(text.encode()).hexdigest()[:8]


def _modules_rule(value: object, name: str) -> object:
    """``"aux"``, or a non-empty list of non-empty lists of column names."""
    if isinstance(value, str):
        if value != AUX:
            raise InputError(f"{name} must be lists of columns or {AUX!r}, got {value!r}")
        return value
    return groups()(value, name)


class ModularDDP(AnswerHistograms[ModulePlan]):
    """Histograms of every question, each answer protected if the modules are independent.

    Guarantee: epsilon-dependent DP for one answer of one respondent, for every law under which
    the modules are independent (any law inside a module); the record also gives the bound for any
    law. See docs/mechanisms/tabular-ddp.md.

    Parameters
    ----------
    epsilon : float
        The loss bound of one answer under that class of laws.
    modules : sequence of sequence of str, or "aux"
        Lists of columns, each column in at most one (the rest form one more), or ``"aux"``.
    aux : pandas.DataFrame, str, pathlib.Path or None, optional
        Public rows from the same population; needed with ``modules="aux"``.
    columns : sequence of str or None, optional
        The columns to release; default every non-ignored column with a domain.
    alpha : float, optional
        With ``modules="aux"``: the family-wise level of the pair G-tests (Bonferroni).
    max_levels : int, optional
        Numeric columns are binned into at most this many equal-width levels.
    max_aux_rows : int, optional
        At most this many auxiliary rows are read to learn the modules (a uniform sample).
    seed : int, optional
        The seed of that sample (not of the noise).
    noise : NoiseSampler or None, optional
        The noise sampler; default exact OpenDP noise.
    allow_nonprivate : bool, optional
        Accept a non-private sampler (reproducible tests only).
    """

    _constraints: ClassVar[Mapping[str, Rule]] = {
        **TIER_CONSTRAINTS,
        "modules": Rule("'aux' or a list of lists of column names", _modules_rule),
        "alpha": probability(),
    }

    def __init__(
        self,
        epsilon: float,
        modules: Sequence[Sequence[str]] | str,
        *,
        aux: Any = None,
        columns: Sequence[str] | None = None,
        alpha: float = 0.05,
        max_levels: int = 10,
        max_aux_rows: int = 20_000,
        seed: int = 0,
        noise: NoiseSampler | None = None,
        allow_nonprivate: bool = False,
    ) -> None:
        self.epsilon = epsilon
        self.modules = modules
        self.aux = aux
        self.columns = columns
        self.alpha = alpha
        self.max_levels = max_levels
        self.max_aux_rows = max_aux_rows
        self.seed = seed
        self.noise = noise
        self.allow_nonprivate = allow_nonprivate

    def _plan(
        self,
        levels: Mapping[str, Levels],
        schema: Schema,
        sampler: NoiseSampler,
        inferred: tuple[str, ...],
    ) -> ModulePlan:
        names = list(levels)
        if isinstance(self.modules, str):
            if self.modules != AUX:
                raise InputError(
                    f"modules must be lists of columns or {AUX!r}, got {self.modules!r}"
                )
            if self.aux is None:
                raise InputError("modules='aux' learns the modules from aux=: give public rows")
            rows = learning_rows(self.aux, schema, names, int(self.max_aux_rows), int(self.seed))
            found = learn_modules(encode(rows, levels), levels, float(self.alpha))
            source = f"auxiliary rows ({len(rows):,})"
        else:
            found = declared_modules(self.modules, names)
            source = "declared"
        return ModulePlan(float(self.epsilon), 0.0, sampler, found, source, inferred=inferred)

    def _parts(
        self, measured: Questions[ModulePlan], plan: ModulePlan, noisy: Any
    ) -> dict[str, Any]:
        return {
            "modules": [list(module) for module in plan.modules],
            "modules_from": plan.source,
            **super()._parts(measured, plan, noisy),
        }

    def record(self, plan: ModulePlan) -> PrivacyRecord:
        """The guarantee of a release with ``plan``, for independent modules and for any law.

        Parameters
        ----------
        plan : ModulePlan
            The noise plan of the release (from :meth:`calibrate` or a release).

        Returns
        -------
        PrivacyRecord
            ``(epsilon, 0)``-dependent DP under ``dependent-dp/answer@<modules>``, both guarantees.
        """
        scales = plan.scales()
        listing = "; ".join("{" + ", ".join(module) + "}" for module in plan.modules)
        if len(plan.modules) == 1:  # no assumption: the one guarantee holds for any law
            assumptions: tuple[str, ...] = (RESPONDENTS,)
            guarantees: tuple[Guarantee, ...] = (Guarantee(plan.epsilon, 0.0, ANY_LAW),)
        else:
            origin = "were declared" if plan.source == "declared" else f"came from {plan.source}"
            assumptions = (
                RESPONDENTS,
                f"the modules {origin}: the guarantee holds for an adversary "
                f"whose belief about the data's law keeps them independent ({listing})",
            )
            laws = f"the modules {listing} are independent of one another (any law inside each)"
            guarantees = (
                Guarantee(plan.epsilon, 0.0, laws),
                Guarantee(any_law_epsilon(scales), 0.0, ANY_LAW),
            )
        return self._record(
            plan,
            mechanism="tabular-ddp-modules",
            protects=(
                "any one answer of any one respondent, changed from any value to any other, with "
                "the respondent's other answers in its module moving with it in any way"
            ),
            sensitivity=dict.fromkeys(scales, SUBSTITUTION_SENSITIVITY),
            noise={
                "distribution": "discrete laplace",
                "scale": scales,
                "norm": "l1",
                "per": "every histogram of module M: 2 |M| / epsilon",
            },
            unit=PrivacyUnit("dependent-dp", f"{ANSWER}@{plan.fingerprint}"),
            assumptions=assumptions,
            guarantees=guarantees,
        )


def declared_modules(
    modules: Sequence[Sequence[str]], columns: Sequence[str]
) -> tuple[tuple[str, ...], ...]:
    """The declared modules restricted to ``columns``, then the unnamed columns as one more."""
    found = check_chunks(modules, what="module", allow_empty=True)
    released = set(columns)
    for number, module in enumerate(found, start=1):
        for name in module:
            if name not in released:
                raise InputError(f"module {number} names {name!r}, which is not a released column")
    named = {c for module in found for c in module}
    rest = tuple(c for c in columns if c not in named)
    return tuple(found) + ((rest,) if rest else ())


def learn_modules(
    codes: pd.DataFrame, levels: Mapping[str, Levels], alpha: float
) -> tuple[tuple[str, ...], ...]:
    """Connected components of the column pairs a G-test rejects at family-wise level ``alpha``."""
    names = [str(c) for c in codes.columns]
    states = {c: levels[c].n_states + 1 for c in names}  # + the missing code
    information = mutual_information(codes, states)
    n, m = len(codes), len(names)
    pairs = max(m * (m - 1) // 2, 1)
    parent = list(range(m))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(m):
        for j in range(i + 1, m):
            df = max((states[names[i]] - 1) * (states[names[j]] - 1), 1)
            p = float(stats.chi2.sf(2.0 * n * information[i, j], df))
            if p < alpha / pairs:
                parent[root(i)] = root(j)
    groups: dict[int, list[str]] = {}
    for i, name in enumerate(names):
        groups.setdefault(root(i), []).append(name)
    return tuple(tuple(g) for g in sorted(groups.values(), key=lambda g: names.index(g[0])))


__all__ = ["ModularDDP", "ModulePlan", "declared_modules", "learn_modules"]
