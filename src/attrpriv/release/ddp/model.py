"""Tabular-DDP's model tier: histograms whose dependence follows a public Markov tree.

One discrete Laplace scale per histogram, from the model, the domains and epsilon only (never
the private rows). Proof in docs/mechanisms/tabular-ddp.md, "The model tier".
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

from attrpriv._checks import EPSILON, POSITIVE, Rule, instance_of, one_of, optional, probability
from attrpriv.data.schema import Schema
from attrpriv.dp.ledger import BudgetLedger
from attrpriv.dp.mechanism import validated
from attrpriv.dp.noise import NoiseSampler
from attrpriv.dp.record import ANY_LAW, Guarantee, PrivacyRecord, Release
from attrpriv.dp.units import ANSWER, PrivacyUnit
from attrpriv.errors import InputError
from attrpriv.release.ddp.answers import (
    AUX,
    RESPONDENTS,
    TIER_CONSTRAINTS,
    AnswerHistograms,
    Progress,
    Questions,
    ScaledPlan,
    any_law_epsilon,
)
from attrpriv.release.ddp.dependence import SUBSTITUTION_SENSITIVITY
from attrpriv.release.ddp.private_tree import PrivateTree
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


class ModelDDP(AnswerHistograms[ModelPlan]):
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
    noise : NoiseSampler or None, optional
        The noise sampler; default exact OpenDP noise.
    allow_nonprivate : bool, optional
        Accept a non-private sampler (reproducible tests only).
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
        noise: NoiseSampler | None = None,
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
        self.noise = noise
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
        ``ledger`` as its own release (record in ``parts["model_step"]``).

        Parameters
        ----------
        data : pandas.DataFrame, str, pathlib.Path or dask.dataframe.DataFrame
            The private rows.
        schema : Schema
            The public domains of the columns.
        ledger : BudgetLedger or None, optional
            Charged with each record before its noise is drawn.
        label : str, optional
            A free-text name for the release in the ledger.
        progress : callable or None, optional
            Called as ``progress(done, 2)`` after calibrating and after counting.
        learn_progress : callable or None, optional
            With ``model="private"``: called as ``progress(links chosen, m - 1)``.

        Returns
        -------
        Release
            The noisy histograms, their accuracy, the record and, in ``parts``, model and scales.

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
            max_rows=int(self.max_aux_rows), seed=int(self.seed), noise=self.noise,
            allow_nonprivate=bool(self.allow_nonprivate),
        )  # fmt: skip
        model, step = learner.learn(
            data, schema, ledger=ledger, label=f"{label}: its model", progress=learn_progress
        )
        tier = ModelDDP(**{**self.get_params(deep=False), "model": model})
        result = tier.release(data, schema, ledger=ledger, label=label, progress=progress)
        return replace(result, parts={**result.parts, "model_step": step.record.to_dict()})

    def _plan(
        self,
        levels: Mapping[str, Levels],
        schema: Schema,
        sampler: NoiseSampler,
        inferred: tuple[str, ...],
    ) -> ModelPlan:
        model = self._model(levels, schema)
        bins = {c: levels[c].size for c in levels}
        scales, bounds = tree_scales(
            model, float(self.epsilon), calibration=str(self.calibration), bins=bins
        )
        return ModelPlan(
            float(self.epsilon), 0.0, sampler, model, scales, bounds, inferred=inferred
        )

    def _model(self, levels: Mapping[str, Levels], schema: Schema) -> TreeModel:
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

    def _parts(self, measured: Questions[ModelPlan], plan: ModelPlan, noisy: Any) -> dict[str, Any]:
        return {
            "model": plan.model.to_dict(),
            "model_from": plan.model.source,
            "links": [list(link) for link in plan.model.links()],
            "bounds": {
                b.column: {"own": b.own, "through_links": b.through_links, "loss": b.loss}
                for b in plan.bounds
            },
            **super()._parts(measured, plan, noisy),
        }

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
        scales = plan.scales()
        model = plan.model
        laws = (
            f"the answers are Markov on the tree of model {model.fingerprint} "
            f"({len(model.columns) - 1} links, from {model.source}), no link revealing more "
            "than the model's in either direction"
        )
        return self._record(
            plan,
            mechanism="tabular-ddp-model",
            protects=(
                "any one answer of any one respondent, changed from any value to any other, with "
                "the respondent's other answers following the model's dependence"
            ),
            sensitivity=dict.fromkeys(scales, SUBSTITUTION_SENSITIVITY),
            noise={
                "distribution": "discrete laplace",
                "scale": scales,
                "norm": "l1",
                "per": (
                    "each histogram its own scale, every answer's tree bound at most epsilon"
                    if len(set(scales.values())) > 1
                    else "every histogram: the smallest scale at which the tree bound meets epsilon"
                ),
            },
            unit=PrivacyUnit("dependent-dp", f"{ANSWER}@{model.fingerprint}"),
            assumptions=(
                RESPONDENTS,
                f"the model came from {model.source}: the guarantee holds for an adversary whose "
                "belief about a respondent's answers is Markov on its tree, no link revealing "
                "more than its own",
            ),
            guarantees=(
                Guarantee(plan.epsilon, 0.0, laws),
                Guarantee(any_law_epsilon(scales), 0.0, ANY_LAW),
            ),
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


__all__ = ["PRIVATE", "ModelDDP", "ModelPlan", "read_model"]
