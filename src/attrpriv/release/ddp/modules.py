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
from attrpriv.dp.record import PrivacyRecord
from attrpriv.errors import InputError
from attrpriv.release._histograms import Histograms
from attrpriv.release.ddp.answers import (
    AUX,
    TIER_CONSTRAINTS,
    AnswerHistograms,
    ScaledPlan,
    SurveyFacts,
    TierDiagnostics,
    tier_diagnostics,
)
from attrpriv.release.ddp.chunking import check_chunks, mutual_information
from attrpriv.release.ddp.dependence import SUBSTITUTION_SENSITIVITY
from attrpriv.release.graph.learning import Levels, encode, learning_rows


@dataclass(frozen=True)
class Modules:
    """The structural tier's public structure: the ``modules`` (tuples of column names, every
    released column in one) and their ``source`` (``"declared"`` or the auxiliary rows)."""

    modules: tuple[tuple[str, ...], ...]
    source: str


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


@dataclass(frozen=True)
class ModuleDiagnostics(TierDiagnostics):
    """A structural-tier release: :class:`TierDiagnostics`, its ``modules`` and ``modules_from``
    (``"declared"`` or the auxiliary rows)."""

    modules: tuple[tuple[str, ...], ...]
    modules_from: str

    def _source(self) -> str:
        count = len(self.modules)
        what = f"{count} modules ({self.modules_from})"
        if count == 1:
            what = "one module (no assumption)"
        return f"{what}; noise scale 2|M|/epsilon per module"


def _modules_rule(value: object, name: str) -> object:
    """``"aux"``, or a non-empty list of non-empty lists of column names."""
    if isinstance(value, str):
        if value != AUX:
            raise InputError(f"{name} must be lists of columns or {AUX!r}, got {value!r}")
        return value
    return groups()(value, name)


class ModularDDP(AnswerHistograms[Modules, ModulePlan]):
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
    max_levels, max_aux_rows, seed, sampler, allow_nonprivate
        As in :class:`ModelDDP` (here the auxiliary rows learn the modules).
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
        sampler: NoiseSampler | None = None,
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
        self.sampler = sampler
        self.allow_nonprivate = allow_nonprivate

    def _structure(self, levels: Mapping[str, Levels], schema: Schema) -> Modules:
        names = list(levels)
        if not isinstance(self.modules, str):
            return Modules(declared_modules(self.modules, names), "declared")
        if self.modules != AUX:
            raise InputError(f"modules must be lists of columns or {AUX!r}, got {self.modules!r}")
        if self.aux is None:
            raise InputError("modules='aux' learns the modules from aux=: give public rows")
        rows = learning_rows(self.aux, schema, names, int(self.max_aux_rows), int(self.seed))
        found = learn_modules(encode(rows, levels), levels, float(self.alpha))
        return Modules(found, f"auxiliary rows ({len(rows):,})")

    def _plan(
        self,
        structure: Modules,
        levels: Mapping[str, Levels],
        sampler: NoiseSampler,
        inferred: tuple[str, ...],
    ) -> ModulePlan:
        modules = declared_modules(structure.modules, list(levels))  # every question in one
        epsilon = float(self.epsilon)
        return ModulePlan(epsilon, 0.0, sampler, modules, structure.source, inferred=inferred)

    def _diagnostics(
        self, public: SurveyFacts[Modules], plan: ModulePlan, noisy: Histograms
    ) -> ModuleDiagnostics:
        return ModuleDiagnostics(
            **tier_diagnostics(plan, noisy), modules=plan.modules, modules_from=plan.source
        )

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
        listing = "; ".join("{" + ", ".join(module) + "}" for module in plan.modules)
        origin = "were declared" if plan.source == "declared" else f"came from {plan.source}"
        laws = (
            f"the modules {listing} are independent of one another (any law inside each)",
            f"the modules {origin}: the guarantee holds for an adversary "
            f"whose belief about the data's law keeps them independent ({listing})",
        )
        return self._tier_record(
            plan,
            mechanism="tabular-ddp-modules",
            moving="in its module moving with it in any way",
            per="every histogram of module M: 2 |M| / epsilon",
            model=plan.fingerprint,
            laws=None if len(plan.modules) == 1 else laws,  # one module: for any law
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


__all__ = [
    "ModularDDP",
    "ModuleDiagnostics",
    "ModulePlan",
    "Modules",
    "declared_modules",
    "learn_modules",
]
