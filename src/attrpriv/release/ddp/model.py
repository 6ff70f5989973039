"""Tabular-DDP's model tier: histograms whose dependence follows a public Markov tree.

One discrete Laplace scale per histogram, from the model, the domains and epsilon only (never
the private rows). Proof in docs/mechanisms/tabular-ddp.md, "The model tier".
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar, cast

from attrpriv._checks import EPSILON, POSITIVE, Rule, instance_of, one_of, optional, probability
from attrpriv.data.schema import Schema
from attrpriv.dp.ledger import BudgetLedger
from attrpriv.dp.mechanism import validated
from attrpriv.dp.noise import NoiseSampler
from attrpriv.dp.record import PrivacyRecord, Release
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
from attrpriv.release.ddp.private_tree import PrivateTree, TreeStepDiagnostics
from attrpriv.release.ddp.survey import Progress
from attrpriv.release.ddp.tree import TreeModel, learn_tree
from attrpriv.release.ddp.tree_bound import CALIBRATIONS, AnswerBound, tree_scales
from attrpriv.release.graph.learning import Levels, encode, learning_rows


@dataclass(frozen=True)
class ModelPlan(ScaledPlan):
    """A discrete Laplace scale per histogram (``scale_of``) from the public ``model``."""

    model: TreeModel
    scale_of: Mapping[str, float]
    bounds: tuple[AnswerBound, ...]

    def scales(self) -> dict[str, float]:
        """The noise scale of every released column, in release order."""
        return {c: self.scale_of[c] for c in self.model.columns}


@dataclass(frozen=True)
class ModelDiagnostics(TierDiagnostics):
    """A model-tier release: :class:`TierDiagnostics`, the public ``model`` (``--save-model``
    writes it), ``model_from``, its ``(parent, child)`` ``links``, every answer's loss ``bounds``
    (at most epsilon), and ``model_step``: the record of the DP step that learned it from the
    private rows, if one did."""

    model: TreeModel
    model_from: str
    links: tuple[tuple[str, str], ...]
    bounds: tuple[AnswerBound, ...]
    model_step: PrivacyRecord | None = None

    def _source(self) -> str:
        return (
            f"a Markov tree over {len(self.scales)} questions ({self.model_from}); "
            "noise scales from the tree bound"
        )

    def to_dict(self) -> dict[str, Any]:
        """Every field as JSON-ready values: the model, bounds and step as their dicts."""
        bounds = {b.column: {"own": b.own, "through_links": b.through_links, "loss": b.loss}
                  for b in self.bounds}  # fmt: skip
        step = None if self.model_step is None else self.model_step.to_dict()
        return {**super().to_dict(), "model": self.model.to_dict(), "bounds": bounds,
                "model_step": step}  # fmt: skip


class ModelDDP(AnswerHistograms[TreeModel, ModelPlan]):
    """Histograms of every question, each answer protected under a public Markov tree model.

    Guarantee: epsilon-dependent DP for one answer of one respondent, for every law Markov on the
    model's tree whose links reveal no more than the model's (both directions); the record also
    gives the bound for any law. See docs/mechanisms/tabular-ddp.md.

    Parameters
    ----------
    epsilon : float
        The loss bound of one answer under that class of laws.
    model : "aux", "private", TreeModel, str or pathlib.Path
        Learn from ``aux``; learn by a DP step on the private rows; a model; or a model file.
    aux : pandas.DataFrame, str, pathlib.Path or None, optional
        Public rows from the same population; needed with ``model="aux"``.
    columns : sequence of str or None, optional
        The columns to release; default every non-ignored column with a domain.
    learn_epsilon, learn_delta : float or None, optional
        With ``model="private"``: the DP learning step's row-level epsilon and delta.
    calibration : {"per-question", "uniform"}, optional
        One scale per histogram minimising the error per bin (default), or one for all.
    prior : float, optional
        Pseudo-rows per parent value smoothing the learned kernels (> 0).
    max_levels : int, optional
        Numeric columns are binned into at most this many levels.
    max_aux_rows : int, optional
        At most this many auxiliary rows are read (a uniform sample).
    seed : int, optional
        The seed of that sample (not of the noise).
    sampler, allow_nonprivate
        As in :class:`~attrpriv.dp.mechanism.Mechanism`.
    """

    _constraints: ClassVar[Mapping[str, Rule]] = {
        **TIER_CONSTRAINTS,
        "calibration": one_of(CALIBRATIONS),
        "learn_epsilon": optional(EPSILON),
        "learn_delta": optional(probability()),
        "prior": POSITIVE,
        "model": instance_of(
            (TreeModel, str, Path), "'aux', 'private', a TreeModel or a model file path"
        ),
    }

    def __init__(
        self,
        epsilon: float,
        model: TreeModel | str | Path,
        *,
        aux: Any = None,
        columns: Sequence[str] | None = None,
        learn_epsilon: float | None = None,
        learn_delta: float | None = None,
        calibration: str = "per-question",
        prior: float = 1.0,
        max_levels: int = 10,
        max_aux_rows: int = 20_000,
        seed: int = 0,
        sampler: NoiseSampler | None = None,
        allow_nonprivate: bool = False,
    ) -> None:
        self.epsilon = epsilon
        self.model = model
        self.aux = aux
        self.columns = columns
        self.learn_epsilon = learn_epsilon
        self.learn_delta = learn_delta
        self.calibration = calibration
        self.prior = prior
        self.max_levels = max_levels
        self.max_aux_rows = max_aux_rows
        self.seed = seed
        self.sampler = sampler
        self.allow_nonprivate = allow_nonprivate

    @validated
    def release(
        self,
        data: Any,
        schema: Schema,
        *,
        ledger: BudgetLedger | None = None,
        label: str = "",
        progress: Progress | None = None,
        learn_progress: Progress | None = None,
    ) -> Release:
        """Calibrate from the public model, count every question, charge the ledger, add noise.

        With ``model="private"`` the model is first learned by :class:`PrivateTree`, charged to
        ``ledger`` as its own release (its record in ``diagnostics.model_step``).

        Parameters
        ----------
        data, schema, ledger, label
            As in :meth:`~attrpriv.release.ddp.survey.SurveyMechanism.release` (``ledger`` is
            charged with each record before its noise is drawn).
        progress : callable or None, optional
            Called as ``progress(done, 2)`` once the model is found and once the counts are.
        learn_progress : callable or None, optional
            With ``model="private"``: called as ``progress(links chosen, m - 1)``.

        Returns
        -------
        Release
            The noisy histograms, their accuracy, the record and the model's diagnostics.

        Raises
        ------
        BudgetExceededError
            A release does not fit the ledger's budget (nothing more is released).
        """
        if not (isinstance(self.model, str) and self.model == PRIVATE):
            return super().release(data, schema, ledger=ledger, label=label, progress=progress)
        if self.learn_epsilon is None or self.learn_delta is None:
            raise InputError("model='private' learns the model by a DP step: give "
                             "learn_epsilon and learn_delta")  # fmt: skip
        learner = PrivateTree(
            float(self.learn_epsilon), float(self.learn_delta), self.columns,
            max_levels=int(self.max_levels), prior=float(self.prior),
            max_rows=int(self.max_aux_rows), seed=int(self.seed), sampler=self.sampler,
            allow_nonprivate=bool(self.allow_nonprivate),
        )  # fmt: skip
        step = learner.release(
            data, schema, ledger=ledger, label=f"{label}: its model", progress=learn_progress
        )
        model = cast(TreeStepDiagnostics, step.diagnostics).model
        tier = ModelDDP(**{**self.get_params(deep=False), "model": model})
        result = tier.release(data, schema, ledger=ledger, label=label, progress=progress)
        diagnostics = cast(ModelDiagnostics, result.diagnostics)
        return replace(result, diagnostics=replace(diagnostics, model_step=step.record))

    def _structure(self, levels: Mapping[str, Levels], schema: Schema) -> TreeModel:
        names = list(levels)
        cards = {c: levels[c].n_states for c in names}
        if isinstance(self.model, TreeModel):
            model = self.model
        elif isinstance(self.model, str) and self.model == PRIVATE:
            raise InputError(
                "model='private' is learned from the private rows when they are released: "
                "call release, or give a public model to calibrate"
            )
        elif isinstance(self.model, str) and self.model == AUX:
            if self.aux is None:
                raise InputError("model='aux' learns the model from aux=: give public rows")
            rows = learning_rows(self.aux, schema, names, int(self.max_aux_rows), int(self.seed))
            source = f"auxiliary rows ({len(rows):,})"
            return learn_tree(encode(rows, levels), cards, prior=float(self.prior), source=source)
        elif isinstance(self.model, (str, Path)):
            model = read_model(self.model)
        else:
            raise InputError(
                f"model must be {AUX!r}, a TreeModel or a model file path, got {self.model!r}"
            )
        model.check_columns(names, [cards[c] for c in names])
        return model

    def _plan(
        self,
        structure: TreeModel,
        levels: Mapping[str, Levels],
        sampler: NoiseSampler,
        inferred: tuple[str, ...],
    ) -> ModelPlan:
        structure.check_columns(list(levels), [lv.n_states for lv in levels.values()])
        bins = {c: levels[c].size for c in levels}
        scales, bounds = tree_scales(
            structure, float(self.epsilon), calibration=str(self.calibration), bins=bins
        )
        return ModelPlan(
            float(self.epsilon), 0.0, sampler, structure, scales, bounds, inferred=inferred
        )

    def _diagnostics(
        self, public: SurveyFacts[TreeModel], plan: ModelPlan, noisy: Histograms
    ) -> ModelDiagnostics:
        model = plan.model
        return ModelDiagnostics(
            **tier_diagnostics(plan, noisy),
            model=model,
            model_from=model.source,
            links=tuple(model.links()),
            bounds=plan.bounds,
        )

    def record(self, plan: ModelPlan) -> PrivacyRecord:
        """The guarantee of a release with ``plan``, under the model's class of laws and any law.

        Parameters
        ----------
        plan : ModelPlan
            The noise plan of the release (from :meth:`calibrate` or a release).

        Returns
        -------
        PrivacyRecord
            ``(epsilon, 0)``-dependent DP under ``dependent-dp/answer@<model>``, both guarantees.
        """
        model = plan.model
        laws = (
            f"the answers are Markov on the tree of model {model.fingerprint} "
            f"({len(model.columns) - 1} links, from {model.source}), no link revealing more "
            "than the model's in either direction"
        )
        assumption = (
            f"the model came from {model.source}: the guarantee holds for an adversary whose "
            "belief about a respondent's answers is Markov on its tree, no link revealing more "
            "than its own"
        )
        per = (
            "each histogram its own scale, every answer's tree bound at most epsilon"
            if len(set(plan.scale_of.values())) > 1
            else "every histogram: the smallest scale at which the tree bound meets epsilon"
        )
        return self._tier_record(
            plan,
            mechanism="tabular-ddp-model",
            moving="following the model's dependence",
            per=per,
            model=model.fingerprint,
            laws=(laws, assumption),
        )


PRIVATE = "private"
"""The model parameter that learns the tree from the private rows by a DP step."""


def read_model(path: str | Path) -> TreeModel:
    """A :class:`TreeModel` from a JSON file of :meth:`TreeModel.to_dict`."""
    file = Path(path)
    try:
        data = json.loads(file.read_text())
    except OSError as exc:
        raise InputError(f"cannot read the model file {file}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"the model file {file} is not JSON (line {exc.lineno})") from None
    return TreeModel.from_dict(data, source=f"model file {file.name}")


__all__ = ["PRIVATE", "ModelDDP", "ModelDiagnostics", "ModelPlan", "read_model"]
