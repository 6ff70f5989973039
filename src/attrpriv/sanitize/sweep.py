"""Privacy-utility sweep of a fitted decoupler over local samplers (the seed's section 4).

For each sampler: sanitize the auxiliary data (what the attacker can do: the decoupler and the
sampler are public) and the private data; leakage = adversary trained on the sanitized auxiliary
data to recover the true y_S, tested on the sanitized private data, minus the prior; utility =
a task model trained on half of the sanitized private data, tested on the other half sanitized
and real (CAS). Uses :mod:`attrpriv.sanitize.evaluate` for the scores.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from attrpriv.errors import InputError
from attrpriv.sanitize.decoupler import GlobalDecoupler
from attrpriv.sanitize.evaluate import leakage, pareto_auc, utility
from attrpriv.sanitize.samplers import SampledLatents
from attrpriv.sanitize.sanitizer import LatentSampler, Sanitizer


@dataclass(frozen=True)
class SweepPoint:
    """One sampler's leakage and utility, with their parts."""

    name: str
    family: str
    leakage: float
    utility: float
    cas: float
    parts: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "family": self.family, "leakage": self.leakage,
                "utility": self.utility, "cas": self.cas, **self.parts}  # fmt: skip


@dataclass(frozen=True)
class SweepResult:
    """All points, and the area under each family's Pareto front (leakage budget [0, 0.5])."""

    points: tuple[SweepPoint, ...]
    pareto_auc: dict[str, float]

    def to_dict(self) -> dict[str, Any]:
        return {"points": [p.to_dict() for p in self.points], "pareto_auc": dict(self.pareto_auc),
                "pareto_max_leakage": 0.5}  # fmt: skip


class KeepLatents:
    """Reference only, not a sanitizer: keeps z_S, so the output is the plain reconstruction."""

    def sample(
        self, z_s: Any, y_s: Any = None, *, ledger: Any = None, label: str = ""
    ) -> SampledLatents:
        """``z_s`` unchanged (a copy); no labels, no record."""
        return SampledLatents(np.array(z_s, dtype=np.float64), None, None)


def _features(frame: pd.DataFrame, drop: tuple[str, ...]) -> pd.DataFrame:
    return frame.drop(columns=[c for c in drop if c in frame.columns])


def sweep(
    decoupler: GlobalDecoupler,
    aux: pd.DataFrame,
    private: pd.DataFrame,
    samplers: Mapping[str, tuple[str, LatentSampler]],
    *,
    target: str,
    seed: int = 0,
    reference: bool = True,
) -> SweepResult:
    """Evaluate every ``name -> (family, sampler)``; ``target`` is the utility task's column.

    With ``reference``, two rows of family "reference" (left out of the Pareto AUC) are added:
    the decoupler's plain reconstruction (z_S kept) and the real data, to read the others against.
    """
    sensitive = decoupler.sensitive_column_
    if sensitive is None:
        raise InputError("the decoupler was not fitted on a named sensitive column")
    for frame, what in ((aux, "auxiliary"), (private, "private")):
        for column in (sensitive, target):
            if column not in frame.columns:
                raise InputError(f"{what} data lacks column {column!r}")
    points = [
        _point(Sanitizer(decoupler, sampler), name, family, aux, private, (sensitive, target), seed)
        for name, (family, sampler) in samplers.items()
    ]
    if reference:
        points.append(_point(Sanitizer(decoupler, KeepLatents()), "reconstruction (z_S kept)",
                             "reference", aux, private, (sensitive, target), seed))  # fmt: skip
        kept = list(dict.fromkeys([*decoupler.codec_.columns, sensitive, target]))
        points.append(_point(None, "real data", "reference", aux[kept], private[kept],
                             (sensitive, target), seed))  # fmt: skip
    aucs = {}
    for family in sorted({p.family for p in points} - {"reference"}):
        pts = np.array([[p.leakage, p.utility] for p in points if p.family == family])
        aucs[family] = pareto_auc(pts, max_leakage=0.5)
    return SweepResult(tuple(points), aucs)


def _point(
    pipeline: Sanitizer | None,
    name: str,
    family: str,
    aux: pd.DataFrame,
    private: pd.DataFrame,
    columns: tuple[str, str],
    seed: int,
) -> SweepPoint:
    """Leakage and utility of one sanitizer (sensitive and target columns left out of x)."""
    sensitive, target = columns
    clean_aux: pd.DataFrame | np.ndarray = aux  # the real data (modelled columns) by default
    clean_priv: pd.DataFrame | np.ndarray = private
    if pipeline is not None:
        clean_aux, clean_priv = pipeline.sanitize(aux).data, pipeline.sanitize(private).data
    assert isinstance(clean_aux, pd.DataFrame) and isinstance(clean_priv, pd.DataFrame)
    x_aux, x_priv = _features(clean_aux, columns), _features(clean_priv, columns)
    leak = leakage(
        x_aux, aux[sensitive].astype(str), x_priv, private[sensitive].astype(str), seed=seed
    )
    half, y = len(private) // 2, private[target].astype(str).to_numpy()
    real = private[list(x_priv.columns)].iloc[half:]
    use = utility(
        x_priv.iloc[:half], y[:half], x_priv.iloc[half:], y[half:],
        x_real=real, y_real=y[half:], seed=seed,
    )  # fmt: skip
    cas = use.on_real.attack if use.on_real is not None else float("nan")
    parts = {"leakage_parts": leak.to_dict(), "utility_parts": use.to_dict()}
    return SweepPoint(name, family, leak.difference, use.on_sanitized.attack, cas, parts)
