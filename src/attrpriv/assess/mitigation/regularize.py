"""Regularization: a model-level strategy; the data stay as they are, the model memorises less.

See docs/assess/mitigation.md.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from typing import Any, ClassVar

from sklearn.base import clone
from sklearn.ensemble import (
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.neural_network import MLPClassifier, MLPRegressor
from sklearn.pipeline import Pipeline

from attrpriv._checks import Rule, instance_of, optional
from attrpriv.assess.mitigation.base import Applied
from attrpriv.dp.mechanism import Parameters, validated
from attrpriv.errors import InputError

FOREST_MIN_LEAF = 20
"""Default ``min_samples_leaf`` of a random forest (scikit-learn's is 1: full trees)."""
BOOSTING_MIN_LEAF = 100
"""Default ``min_samples_leaf`` of histogram gradient boosting (scikit-learn's is 20)."""
BOOSTING_L2 = 1.0
"""Default ``l2_regularization`` of histogram gradient boosting (scikit-learn's is 0)."""
PENALTY_FACTOR = 10.0
"""How much stronger the default penalty of a linear model or a perceptron is made."""

KNOWN = "random forests, histogram gradient boosting, LogisticRegression, Ridge and MLPs"


class Regularize(Parameters):
    """Retrain a more regularized model: ``apply_model`` returns a clone with new parameters.

    Parameters
    ----------
    params : mapping of str to Any or None, default None
        The parameters to set. Keys are the estimator's parameter names as its ``get_params()``
        lists them (``model__min_samples_leaf`` for a built-in pipeline); for a ``Pipeline``, a
        parameter of its final estimator may also be named without the step prefix
        (``min_samples_leaf``) unless the pipeline has a parameter of that name itself (then the
        prefixed form is needed). ``None``: defaults for the final estimator, never looser than
        its own values (random forest ``min_samples_leaf=20``; histogram gradient boosting
        ``min_samples_leaf=100, l2_regularization=1.0``; LogisticRegression ``C / 10``; Ridge
        and MLPs ``alpha * 10``).
    """

    name = "regularize"
    applied_: Applied | None = None
    _constraints: ClassVar[Mapping[str, Rule]] = {
        "params": optional(instance_of(Mapping, "a mapping of parameter name to value")),
    }

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        self.params = params

    @validated
    def apply_model(self, estimator: Any) -> Any:
        """A new, unfitted estimator: a clone of ``estimator`` with the chosen parameters.

        Parameters
        ----------
        estimator : object
            A scikit-learn estimator or ``Pipeline`` (left as it is).

        Returns
        -------
        object
            ``sklearn.base.clone(estimator)`` with the parameters set; ``applied_`` records them
            (full names, as ``set_params`` took them).

        Raises
        ------
        InputError
            If ``estimator`` is not a scikit-learn estimator, a key is unknown or ambiguous, a
            value is refused by the estimator's own checks, or ``params`` is None and the final
            estimator is not one with defaults.
        """
        if not hasattr(estimator, "get_params") or not hasattr(estimator, "set_params"):
            raise InputError(
                f"estimator must be a scikit-learn estimator (get_params, set_params), got "
                f"{type(estimator).__name__}"
            )
        model = clone(estimator)
        prefix, final = _final_step(model)
        if self.params is None:
            _check_valid(final, "estimator")
            chosen = {prefix + key: value for key, value in _defaults(final).items()}
        else:
            chosen = _resolve(model, prefix, final, self.params)
        for path in dict.fromkeys(_owner_path(key) for key in chosen):
            _check_valid(_owner(model, path), "estimator")
        for key, value in chosen.items():
            model.set_params(**{key: value})
            _check_valid(_owner(model, _owner_path(key)), f"params[{key!r}]")
        self.applied_ = Applied(self.name, (), chosen, None)
        return model


def _final_step(model: Any) -> tuple[str, Any]:
    """The estimator a (nested) pipeline ends with, and the prefix of its parameter names."""
    prefix, final = "", model
    while isinstance(final, Pipeline):
        step, final = final.steps[-1]
        prefix += f"{step}__"
    return prefix, final


def _defaults(final: Any) -> dict[str, Any]:
    """Stronger regularization for a known final estimator (its own parameter names)."""
    own = final.get_params(deep=False)
    if isinstance(final, (RandomForestClassifier, RandomForestRegressor)):
        return {"min_samples_leaf": _larger_leaf(own["min_samples_leaf"], FOREST_MIN_LEAF)}
    if isinstance(final, (HistGradientBoostingClassifier, HistGradientBoostingRegressor)):
        return {
            "min_samples_leaf": _larger_leaf(own["min_samples_leaf"], BOOSTING_MIN_LEAF),
            "l2_regularization": max(float(own["l2_regularization"]), BOOSTING_L2),
        }
    if isinstance(final, LogisticRegression):
        if math.isinf(own["C"]) or own.get("penalty", "l2") is None:
            raise InputError(
                "estimator: its LogisticRegression has no penalty (C=inf or penalty=None), so "
                "the default C / 10 changes nothing; pass params= (e.g. {'C': 1.0})"
            )
        return {"C": own["C"] / PENALTY_FACTOR}
    if isinstance(final, (Ridge, MLPClassifier, MLPRegressor)):
        return {"alpha": own["alpha"] * PENALTY_FACTOR}
    raise InputError(
        f"estimator: Regularize has no defaults for {type(final).__name__} (it knows {KNOWN}); "
        "pass params={name: value}"
    )


def _larger_leaf(current: Any, default: int) -> Any:
    """``default``, or ``current`` when larger; a leaf size given as a share of the rows (a
    float) is the user's choice and is kept."""
    return current if isinstance(current, float) else max(int(current), default)


def _resolve(model: Any, prefix: str, final: Any, params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` by full parameter name (a final step's bare names given their prefix)."""
    if not params:
        raise InputError("params must name at least one parameter, or be None for the defaults")
    known = model.get_params(deep=True)
    bare = set(final.get_params(deep=True)) if prefix and hasattr(final, "get_params") else set()
    chosen: dict[str, Any] = {}
    for key, value in params.items():
        if not isinstance(key, str) or (key not in known and key not in bare):
            raise InputError(
                f"params: {key!r} is not a parameter of the {type(model).__name__}; expected "
                f"one of {_some_names(key, known, prefix)}"
            )
        if key in known and key in bare:
            raise InputError(
                f"params: {key!r} is both a parameter of the pipeline and of its final step; "
                f"name it {prefix + key!r} for the final step"
            )
        full = key if key in known else prefix + key
        if full in chosen:
            raise InputError(f"params: {full!r} is given twice (with and without its prefix)")
        chosen[full] = value
    return chosen


def _some_names(key: object, known: Mapping[str, Any], prefix: str) -> str:
    """A few valid names: the closest to ``key`` first, the final step's own otherwise."""
    names = [name for name in known if name.startswith(prefix)] or list(known)
    close = difflib.get_close_matches(str(key), names, n=5, cutoff=0.6)
    shown = close or names[:8]
    return ", ".join(shown) + (" ..." if len(names) > len(shown) else "")


def _owner_path(key: str) -> str:
    """The name of the (sub-)estimator a full parameter name belongs to ("" for the model)."""
    return key.rpartition("__")[0]


def _owner(model: Any, path: str) -> Any:
    return model.get_params(deep=True)[path] if path else model


def _check_valid(estimator: Any, name: str) -> None:
    """scikit-learn's own check of an estimator's parameters, as an InputError naming ``name``."""
    check = getattr(estimator, "_validate_params", None)
    if check is None:
        return
    try:
        check()
    except (TypeError, ValueError) as error:
        raise InputError(f"{name}: {' '.join(str(error).split())}") from None
