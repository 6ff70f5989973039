"""What an assessment returns: a ranked :class:`RiskReport` of aggregates only, JSON in and out."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from attrpriv._display import html_grid
from attrpriv._io import atomic_write_json, to_jsonable
from attrpriv.assess.choices import ATTACKS
from attrpriv.assess.scoring import FLAG_REASONS, score_from_dict
from attrpriv.errors import InputError
from attrpriv.stats import Score

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "ExposedRecord",
    "FeatureSetRisk",
    "MembershipSummary",
    "MitigationPath",
    "MitigationStep",
    "ModelSummary",
    "ProxyRisk",
    "RiskReport",
    "RocCurve",
    "SensitiveRisk",
    "set_label",
]

FORMAT = "attrpriv.assess.RiskReport/1"


def set_label(features: Sequence[str]) -> str:
    """A feature set as one readable key: ``"age+sex"``."""
    return "+".join(features)


def _with_ci(name: str, value: float, ci: tuple[float, float]) -> dict[str, float]:
    """``{name: value, name_ci_low: ci[0], name_ci_high: ci[1]}``."""
    return {name: float(value), f"{name}_ci_low": float(ci[0]), f"{name}_ci_high": float(ci[1])}


def _scores(spec: Mapping[str, Any]) -> dict[str, Score]:
    return {name: score_from_dict(value) for name, value in spec.items()}


@dataclass(frozen=True)
class RocCurve:
    """A ROC curve (false / true positive rates), thinned to at most ``max_points`` points."""

    fpr: tuple[float, ...]
    tpr: tuple[float, ...]

    @classmethod
    def from_arrays(cls, fpr: ArrayLike, tpr: ArrayLike, max_points: int = 200) -> RocCurve:
        """Keep the end points and evenly spaced points in between (for plots and JSON)."""
        f = np.asarray(fpr, dtype=float)
        t = np.asarray(tpr, dtype=float)
        if f.shape != t.shape or f.ndim != 1:
            raise InputError(f"fpr and tpr must be 1-d of one length, got {f.shape}, {t.shape}")
        if f.size > max_points:
            keep = np.unique(np.linspace(0, f.size - 1, max_points).round().astype(int))
            f, t = f[keep], t[keep]
        return cls(tuple(float(v) for v in f), tuple(float(v) for v in t))

    def to_dict(self) -> dict[str, list[float]]:
        return {"fpr": list(self.fpr), "tpr": list(self.tpr)}

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any]) -> RocCurve:
        return cls(tuple(map(float, spec["fpr"])), tuple(map(float, spec["tpr"])))


@dataclass(frozen=True)
class ExposedRecord:
    """One row's exposure: ``fpr``, the mean share of non-members scored as high."""

    row: int
    repeats: int
    fpr: float

    def to_dict(self) -> dict[str, Any]:
        return {"row": self.row, "repeats": self.repeats, "fpr": self.fpr}

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any]) -> ExposedRecord:
        return cls(int(spec["row"]), int(spec["repeats"]), float(spec["fpr"]))


@dataclass(frozen=True)
class MembershipSummary:
    """One model's membership attack over the repeats (the full model's: with ``exposed``)."""

    score: Score
    auc: float
    advantage: float
    tpr_at_1pct_fpr: float
    tpr_at_01pct_fpr: float
    roc: RocCurve
    exposed: tuple[ExposedRecord, ...] = ()
    tpr_at_1pct_fpr_ci: tuple[float, float] | None = None
    tpr_at_01pct_fpr_ci: tuple[float, float] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "score": self.score.to_dict(),
            "auc": self.auc,
            "advantage": self.advantage,
            "tpr_at_1pct_fpr": self.tpr_at_1pct_fpr,
            "tpr_at_01pct_fpr": self.tpr_at_01pct_fpr,
            "roc": self.roc.to_dict(),
            "exposed": [r.to_dict() for r in self.exposed],
            "tpr_at_1pct_fpr_ci": _listed(self.tpr_at_1pct_fpr_ci),
            "tpr_at_01pct_fpr_ci": _listed(self.tpr_at_01pct_fpr_ci),
        }

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any]) -> MembershipSummary:
        return cls(
            score_from_dict(spec["score"]),
            float(spec["auc"]),
            float(spec["advantage"]),
            float(spec["tpr_at_1pct_fpr"]),
            float(spec["tpr_at_01pct_fpr"]),
            RocCurve.from_dict(spec["roc"]),
            tuple(ExposedRecord.from_dict(r) for r in spec.get("exposed", ())),
            _optional_pair(spec.get("tpr_at_1pct_fpr_ci")),
            _optional_pair(spec.get("tpr_at_01pct_fpr_ci")),
        )


def _listed(pair: tuple[float, float] | None) -> list[float] | None:
    return None if pair is None else [pair[0], pair[1]]


def _optional_pair(values: Sequence[Any] | None) -> tuple[float, float] | None:
    return None if values is None else _pair(values)


def _membership(spec: Mapping[str, Any] | None) -> MembershipSummary | None:
    return None if spec is None else MembershipSummary.from_dict(spec)


@dataclass(frozen=True)
class ModelSummary:
    """The model trained on all features: its utility, overfitting gap and membership attack."""

    metric: str
    utility_train: float
    utility_test: float
    membership: MembershipSummary | None

    @property
    def gap(self) -> float:
        """The overfitting test: train metric minus test metric."""
        return self.utility_train - self.utility_test

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "utility_train": self.utility_train,
            "utility_test": self.utility_test,
            "gap": self.gap,
            "membership": None if self.membership is None else self.membership.to_dict(),
        }

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any]) -> ModelSummary:
        return cls(
            str(spec["metric"]),
            float(spec["utility_train"]),
            float(spec["utility_test"]),
            _membership(spec["membership"]),
        )


def _pair(values: Sequence[Any]) -> tuple[float, float]:
    low, high = values
    return float(low), float(high)


@dataclass(frozen=True)
class FeatureSetRisk:
    """Every score of one target feature set, with the parts it came from and why it is flagged."""

    features: tuple[str, ...]
    attacks: Mapping[str, Score]
    overall: float
    overall_ci: tuple[float, float]
    modified: float
    overfitting: float
    importance: float
    utility_without: float
    modified_ci: tuple[float, float]
    overfitting_ci: tuple[float, float]
    importance_ci: tuple[float, float]
    flags: Mapping[str, bool]
    rank: int
    membership_without: MembershipSummary | None = None
    per_feature: Mapping[str, Mapping[str, Score]] = field(default_factory=dict)
    why: str = ""

    @property
    def label(self) -> str:
        return set_label(self.features)

    def __repr__(self) -> str:
        low, high = self.modified_ci
        flag = ", flagged" if self.flagged else ""
        return (
            f"FeatureSetRisk(#{self.rank} {self.label}: modified {self.modified:+.3f} "
            f"[{low:+.3f}, {high:+.3f}]{flag})"
        )

    @property
    def flagged(self) -> bool:
        """True when any attack, the identifier rule or the modified score flags the set."""
        return any(self.flags.get(reason, False) for reason in FLAG_REASONS)

    def to_dict(self) -> dict[str, Any]:
        return {
            "features": list(self.features),
            "label": self.label,
            "rank": self.rank,
            "attacks": {k: v.to_dict() for k, v in self.attacks.items()},
            "overall": self.overall,
            "overall_ci": list(self.overall_ci),
            "modified": self.modified,
            "overfitting": self.overfitting,
            "importance": self.importance,
            "utility_without": self.utility_without,
            "modified_ci": list(self.modified_ci),
            "overfitting_ci": list(self.overfitting_ci),
            "importance_ci": list(self.importance_ci),
            "flags": dict(self.flags),
            "membership_without": (
                None if self.membership_without is None else self.membership_without.to_dict()
            ),
            "per_feature": {
                f: {k: v.to_dict() for k, v in s.items()} for f, s in self.per_feature.items()
            },
            "why": self.why,
        }

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any]) -> FeatureSetRisk:
        """Rebuild from ``to_dict()``; missing term CIs are derived from the overall CI."""
        low, high = spec["overall_ci"]
        shift = float(spec["modified"]) - float(spec["overall"])
        overfitting, importance = float(spec["overfitting"]), float(spec["importance"])
        return cls(
            features=tuple(spec["features"]),
            attacks=_scores(spec["attacks"]),
            overall=float(spec["overall"]),
            overall_ci=(float(low), float(high)),
            modified=float(spec["modified"]),
            overfitting=overfitting,
            importance=importance,
            utility_without=float(spec["utility_without"]),
            modified_ci=_pair(spec.get("modified_ci", (low + shift, high + shift))),
            overfitting_ci=_pair(spec.get("overfitting_ci", (overfitting, overfitting))),
            importance_ci=_pair(spec.get("importance_ci", (importance, importance))),
            flags={str(k): bool(v) for k, v in spec["flags"].items()},
            rank=int(spec["rank"]),
            membership_without=_membership(spec["membership_without"]),
            per_feature={f: _scores(s) for f, s in spec["per_feature"].items()},
            why=str(spec.get("why", "")),
        )


@dataclass(frozen=True)
class ProxyRisk:
    """How much a feature set carries of a sensitive attribute, as the model exposes it."""

    features: tuple[str, ...]
    drop: Score
    gain_without: Score
    flagged: bool = False

    @property
    def label(self) -> str:
        return set_label(self.features)

    def to_dict(self) -> dict[str, Any]:
        """The proxy score as JSON-ready values."""
        return {
            "features": list(self.features),
            "label": self.label,
            "drop": self.drop.to_dict(),
            "gain_without": self.gain_without.to_dict(),
            "flagged": self.flagged,
        }

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any]) -> ProxyRisk:
        """Read a proxy score back from :meth:`to_dict`'s form."""
        return cls(
            tuple(spec["features"]),
            score_from_dict(spec["drop"]),
            score_from_dict(spec["gain_without"]),
            bool(spec.get("flagged", False)),
        )


@dataclass(frozen=True)
class SensitiveRisk:
    """What the model reveals of one sensitive attribute, and its proxies, strongest first."""

    attribute: str
    model_input: bool
    metric: str
    gain: Score
    proxies: tuple[ProxyRisk, ...]

    def to_dict(self) -> dict[str, Any]:
        """The attribute's risk as JSON-ready values."""
        return {
            "attribute": self.attribute,
            "model_input": self.model_input,
            "metric": self.metric,
            "gain": self.gain.to_dict(),
            "proxies": [p.to_dict() for p in self.proxies],
        }

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any]) -> SensitiveRisk:
        """Read an attribute's risk back from :meth:`to_dict`'s form."""
        return cls(
            str(spec["attribute"]),
            bool(spec["model_input"]),
            str(spec["metric"]),
            score_from_dict(spec["gain"]),
            tuple(ProxyRisk.from_dict(p) for p in spec["proxies"]),
        )


@dataclass(frozen=True)
class MitigationStep:
    """One pass of the loop: what was mitigated (none at step 0), then the re-assessed state."""

    step: int
    feature_set: tuple[str, ...] | None
    strategy: str | None
    utility: float
    utility_paid: float
    max_score: float
    flagged: tuple[tuple[str, ...], ...]
    scores: Mapping[str, float]
    applied: Mapping[str, Any] = field(default_factory=dict)
    skipped: tuple[str, ...] = ()  # strategies of the ladder that could not apply, and why
    scores_ci: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    total_excess: float | None = None  # how far the sets' flags lie over, summed (None: old)
    candidates: tuple[Mapping[str, Any], ...] = ()  # choose="best": each probe and its verdict
    charges: tuple[int, ...] = ()  # the ledger entries charged during the step

    def to_dict(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "feature_set": None if self.feature_set is None else list(self.feature_set),
            "strategy": self.strategy,
            "utility": self.utility,
            "utility_paid": self.utility_paid,
            "max_score": self.max_score,
            "flagged": [list(s) for s in self.flagged],
            "scores": dict(self.scores),
            "applied": to_jsonable(dict(self.applied)),
            "skipped": list(self.skipped),
            "scores_ci": {k: list(v) for k, v in self.scores_ci.items()},
            "total_excess": self.total_excess,
            "candidates": [dict(c) for c in self.candidates],
            "charges": list(self.charges),
        }

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any]) -> MitigationStep:
        target = spec["feature_set"]
        return cls(
            step=int(spec["step"]),
            feature_set=None if target is None else tuple(target),
            strategy=spec["strategy"],
            utility=float(spec["utility"]),
            utility_paid=float(spec["utility_paid"]),
            max_score=float(spec["max_score"]),
            flagged=tuple(tuple(s) for s in spec["flagged"]),
            scores={str(k): float(v) for k, v in spec["scores"].items()},
            applied=dict(spec.get("applied", {})),
            skipped=tuple(str(s) for s in spec.get("skipped", ())),
            scores_ci={str(k): (float(v[0]), float(v[1]))
                       for k, v in spec.get("scores_ci", {}).items()},
            total_excess=_optional_float(spec.get("total_excess")),
            candidates=tuple(dict(c) for c in spec.get("candidates", ())),
            charges=tuple(int(i) for i in spec.get("charges", ())),
        )  # fmt: skip


def _optional_float(value: Any) -> float | None:
    return None if value is None else float(value)


@dataclass(frozen=True)
class MitigationPath:
    """The mitigation loop: the steps, and why it stopped."""

    steps: tuple[MitigationStep, ...]
    stopped: str
    threshold: float

    @property
    def final(self) -> MitigationStep:
        return self.steps[-1]

    def to_dict(self) -> dict[str, Any]:
        return {
            "steps": [s.to_dict() for s in self.steps],
            "stopped": self.stopped,
            "threshold": self.threshold,
        }

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any]) -> MitigationPath:
        steps = tuple(MitigationStep.from_dict(s) for s in spec["steps"])
        return cls(steps, str(spec["stopped"]), float(spec["threshold"]))


@dataclass(frozen=True)
class RiskReport:
    """The assessment: settings, the full model, the feature sets ranked riskiest first.

    See docs/assess/risk-scores.md for how to read it.

    Parameters
    ----------
    settings : mapping of str to object
        The assessor's parameters (``threshold`` needed; ``flag_on`` defaults to ``"estimate"``).
    model : ModelSummary
        The model trained on all features: utility, overfitting and membership attack.
    feature_sets : tuple of FeatureSetRisk
        The risk of each target feature set, riskiest first.
    mitigation : MitigationPath or None, default None
        The mitigation loop's path, from :meth:`FeatureRiskAssessor.mitigate`.
    notes : tuple of str, default ()
        What was left out and why.
    sensitive : tuple of SensitiveRisk, default ()
        Per named sensitive attribute: what the model reveals of it and its proxies.
    run : mapping of str to object, default {}
        How it ran: ``rows``, ``versions``, ``date``, ``seconds`` and ``cpu_seconds``.
    """

    settings: Mapping[str, Any]
    model: ModelSummary
    feature_sets: tuple[FeatureSetRisk, ...]
    mitigation: MitigationPath | None = None
    notes: tuple[str, ...] = ()
    sensitive: tuple[SensitiveRisk, ...] = ()
    run: Mapping[str, Any] = field(default_factory=dict)

    @property
    def threshold(self) -> float:
        return float(self.settings["threshold"])

    @property
    def flag_on(self) -> str:
        """What is compared with the threshold: ``"estimate"`` or the CI's ``"lower"`` end."""
        return str(self.settings.get("flag_on", "estimate"))

    @property
    def flagged(self) -> tuple[FeatureSetRisk, ...]:
        """Feature sets whose modified score exceeds the threshold, riskiest first."""
        return tuple(r for r in self.feature_sets if r.flagged)

    @property
    def membership_inconclusive(self) -> bool:
        """True when the full model's attack AUC CI holds 0.5 (membership inconclusive)."""
        membership = self.model.membership
        return membership is not None and membership.score.ci[0] <= 0.0

    @property
    def max_score(self) -> float:
        """The largest modified score (``-inf`` when no feature set has one)."""
        scores = [r.modified for r in self.feature_sets if not math.isnan(r.modified)]
        return max(scores, default=float("-inf"))

    def __repr__(self) -> str:
        flagged = ", ".join(r.label for r in self.flagged[:5]) or "none"
        if len(self.flagged) > 5:
            flagged += f", ... ({len(self.flagged)} in all)"
        model = self.model
        mitigated = "" if self.mitigation is None else f"; mitigated: {self.mitigation.stopped}"
        return (
            f"RiskReport({len(self.feature_sets)} feature sets; flagged over "
            f"{self.threshold:g}: {flagged}; model test {model.metric} "
            f"{model.utility_test:.3f}{mitigated})"
        )

    def to_frame(self, part: str = "feature_sets") -> pd.DataFrame:
        """One row per feature set, riskiest first (or per exposed record), as a table.

        Parameters
        ----------
        part : {"feature_sets", "records"}, default "feature_sets"
            Feature sets, or the full model's most exposed training rows.

        Returns
        -------
        pandas.DataFrame
            Scores as ``NAME``, ``NAME_ci_low``, ``NAME_ci_high``, ``flagged``, ``why``; or rows.

        Raises
        ------
        InputError
            If ``part`` is not one of the choices.
        """
        import pandas as pd

        if part == "records":
            exposed = () if self.model.membership is None else self.model.membership.exposed
            frame = pd.DataFrame([r.to_dict() for r in exposed], columns=["row", "repeats", "fpr"])
            return frame.set_index("row")
        if part != "feature_sets":
            raise InputError(f"part must be one of ['feature_sets', 'records'], got {part!r}")

        attacks = [a for a in ATTACKS if any(a in r.attacks for r in self.feature_sets)]
        rows = []
        for risk in self.feature_sets:
            row: dict[str, Any] = {"feature_set": risk.label, "rank": risk.rank}
            for attack in attacks:
                score = risk.attacks.get(attack)
                row |= _with_ci(attack, *(
                    (score.difference, score.ci) if score else (math.nan, (math.nan, math.nan))
                ))  # fmt: skip
            row |= _with_ci("overall", risk.overall, risk.overall_ci)
            row |= _with_ci("overfitting", risk.overfitting, risk.overfitting_ci)
            row |= _with_ci("importance", risk.importance, risk.importance_ci)
            row |= _with_ci("modified", risk.modified, risk.modified_ci)
            row["flagged"] = risk.flagged
            row["why"] = risk.why
            rows.append(row)
        columns = ["feature_set", "rank"] + [
            f"{name}{end}"
            for name in (*attacks, "overall", "overfitting", "importance", "modified")
            for end in ("", "_ci_low", "_ci_high")
        ] + ["flagged", "why"]  # fmt: skip
        return pd.DataFrame(rows, columns=columns).set_index("feature_set")

    def _repr_html_(self, max_rows: int = 10) -> str:
        rows = [
            (
                str(r.rank),
                r.label,
                f"{r.overall:+.3f}",
                f"{r.modified:+.3f}",
                f"[{r.modified_ci[0]:+.3f}, {r.modified_ci[1]:+.3f}]",
                "yes" if r.flagged else "no",
            )
            for r in self.feature_sets[:max_rows]
        ]
        hidden = len(self.feature_sets) - max_rows
        more = f"{hidden} more in RiskReport.to_frame(). " if hidden > 0 else ""
        return html_grid(
            ["rank", "feature set", "overall", "modified", "modified CI", "flagged"],
            rows,
            title=repr(self),
            note=f"{more}Flagged: modified score ({self.flag_on}) over {self.threshold:g}.",
        )

    def __getitem__(self, features: str | Sequence[str]) -> FeatureSetRisk:
        """The risk of one feature set, by label (``"age+sex"``) or by its features."""
        label = features if isinstance(features, str) else set_label(features)
        for risk in self.feature_sets:
            if risk.label == label:
                return risk
        raise InputError(f"feature set {label!r} was not assessed")

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready values (the form :meth:`from_dict` reads).

        Returns
        -------
        dict of str to object
            ``format``, ``settings``, ``model``, ``feature_sets``, ``mitigation``, ``notes``, etc.
        """
        return {
            "format": FORMAT,
            "settings": to_jsonable(dict(self.settings)),
            "model": self.model.to_dict(),
            "feature_sets": [r.to_dict() for r in self.feature_sets],
            "mitigation": None if self.mitigation is None else self.mitigation.to_dict(),
            "notes": list(self.notes),
            "sensitive": [r.to_dict() for r in self.sensitive],
            "run": to_jsonable(dict(self.run)),
        }

    def to_json(self) -> str:
        """The report as JSON text.

        Returns
        -------
        str
            :meth:`to_dict`, indented by 2.
        """
        return json.dumps(self.to_dict(), indent=2)

    def save(self, path: str | Path) -> Path:
        """Write the JSON form atomically.

        Parameters
        ----------
        path : str or pathlib.Path
            The file to write (replaced if it exists).

        Returns
        -------
        pathlib.Path
            The path written.
        """
        return atomic_write_json(path, self.to_dict())

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any]) -> RiskReport:
        """Read a report back from :meth:`to_dict`'s form.

        Parameters
        ----------
        spec : mapping of str to object
            The dict form, with ``format`` ``"attrpriv.assess.RiskReport/1"``.

        Returns
        -------
        RiskReport
            The report.

        Raises
        ------
        InputError
            If ``spec`` is not a risk report or is malformed.
        """
        if spec.get("format") != FORMAT:
            raise InputError(f"not an attrpriv risk report (format {spec.get('format')!r})")
        try:
            mitigation = spec["mitigation"]
            return cls(
                settings=dict(spec["settings"]),
                model=ModelSummary.from_dict(spec["model"]),
                feature_sets=tuple(FeatureSetRisk.from_dict(r) for r in spec["feature_sets"]),
                mitigation=None if mitigation is None else MitigationPath.from_dict(mitigation),
                notes=tuple(str(n) for n in spec.get("notes", ())),
                sensitive=tuple(SensitiveRisk.from_dict(r) for r in spec.get("sensitive", ())),
                run=dict(spec.get("run", {})),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"malformed risk report: {type(exc).__name__}: {exc}") from None

    @classmethod
    def from_json(cls, text: str) -> RiskReport:
        """Read a report back from :meth:`to_json`'s text.

        Parameters
        ----------
        text : str
            The JSON text.

        Returns
        -------
        RiskReport
            As in :meth:`from_dict`.

        Raises
        ------
        InputError
            As in :meth:`from_dict`.
        json.JSONDecodeError
            If ``text`` is not JSON.
        """
        return cls.from_dict(json.loads(text))

    @classmethod
    def load(cls, path: str | Path) -> RiskReport:
        """Read a report from a JSON file written by :meth:`save`.

        Parameters
        ----------
        path : str or pathlib.Path
            The file (UTF-8 JSON).

        Returns
        -------
        RiskReport
            As in :meth:`from_json`.

        Raises
        ------
        OSError
            If the file cannot be read.
        InputError, json.JSONDecodeError
            As in :meth:`from_json`.
        """
        return cls.from_json(Path(path).read_text(encoding="utf-8"))
