"""The parameter contract: every estimator-like class declares a rule for every parameter.

Every class of attrpriv built on :class:`attrpriv.dp.mechanism.Parameters` (the mechanisms, the
assessor, the attacks, the mitigation strategies, the decoupler, the sanitizers and their
baselines) declares one :class:`attrpriv._checks.Rule` per ``__init__`` parameter, which says in
words what it accepts; scikit-learn's ``clone`` / ``get_params`` / ``set_params`` work on each.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from typing import Any, ClassVar

import pytest
from sklearn.base import clone

import attrpriv
from attrpriv._checks import SEED, Rule, integer
from attrpriv.dp.mechanism import Parameters, validated
from attrpriv.errors import InputError


def _classes() -> list[type[Parameters]]:
    found: dict[str, type[Parameters]] = {}
    for info in pkgutil.walk_packages(attrpriv.__path__, "attrpriv."):
        if info.name.startswith("attrpriv.cli"):
            continue
        module = importlib.import_module(info.name)
        for obj in vars(module).values():
            if (
                inspect.isclass(obj)
                and issubclass(obj, Parameters)
                and obj.__module__ == module.__name__
                and not inspect.isabstract(obj)
            ):
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return [found[name] for name in sorted(found)]


CLASSES = _classes()


def undeclared(cls: type[Parameters]) -> list[str]:
    """The problems of a class's declarations: parameters without a rule, rules without a
    parameter, entries that are not rules or say nothing."""
    names = set(cls._param_names())
    problems = [f"{n}: no rule" for n in sorted(names - set(cls._constraints))]
    problems += [f"{n}: not a parameter" for n in sorted(set(cls._constraints) - names)]
    problems += [
        f"{n}: not a Rule with a description"
        for n, rule in cls._constraints.items()
        if not isinstance(rule, Rule) or not str(rule)
    ]
    return problems


def test_the_classes_are_found() -> None:
    names = {cls.__name__ for cls in CLASSES}
    expected = {
        "FeatureRiskAssessor", "GlobalDecoupler", "ReferenceAttack", "ShadowModelAttack",
        "Generalize", "SyntheticReplacement", "Encrypt", "Drop", "LocalDPNoise",
        "InputNoise", "LatentInterpolation", "DropSensitive", "DropProxies", "MarginalDraw",
        "Sanitizer", "LaplaceHistograms", "TabularDDP", "ModelDDP", "BlockResampler",
    }  # fmt: skip
    assert expected <= names, expected - names


@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: cls.__name__)
def test_every_parameter_is_declared(cls: type[Parameters]) -> None:
    assert undeclared(cls) == []
    assert list(cls.constraints()) == list(cls._constraints)


def test_the_check_catches_an_undeclared_parameter() -> None:
    class Broken(Parameters):
        _constraints: ClassVar[dict[str, Rule]] = {"seed": SEED, "gone": integer()}

        def __init__(self, seed: int = 0, size: int = 3) -> None:
            self.seed = seed
            self.size = size

    assert undeclared(Broken) == ["size: no rule", "gone: not a parameter"]


def test_rules_say_what_they_accept() -> None:
    from attrpriv.assess.reference import ReferenceAttack

    assert ReferenceAttack.constraints() == {
        "n_references": "an integer >= 1",
        "variant": "one of ['rmia', 'rmia-online', 'lira']",
        "train_size": "None or an integer >= 1",
        "seed": "an integer >= 0",
    }


class Scaled(Parameters):
    """A small estimator: one validated entry point."""

    _constraints: ClassVar[dict[str, Rule]] = {"factor": integer(), "seed": SEED}

    def __init__(self, factor: int = 2, *, seed: int = 0) -> None:
        self.factor = factor
        self.seed = seed

    @validated
    def fit(self, x: int) -> Scaled:
        self.value_ = x * self.factor
        return self


def test_a_validated_entry_point_refuses_a_bad_parameter_before_running() -> None:
    estimator = Scaled(factor=0)
    with pytest.raises(InputError, match=r"^factor must be an integer >= 1, got 0$"):
        estimator.fit(3)
    assert not hasattr(estimator, "value_")
    assert Scaled(factor=3).fit(2).value_ == 6
    assert Scaled()._validate_params() == {"factor": 2, "seed": 0}


def _simple_instances() -> list[Any]:
    from attrpriv.assess.membership import ShadowModelAttack
    from attrpriv.assess.mitigation import Drop, Generalize, SyntheticReplacement
    from attrpriv.assess.reference import ReferenceAttack
    from attrpriv.sanitize.baselines import DropProxies, DropSensitive, InputNoise, MarginalDraw

    return [
        ShadowModelAttack(n_shadows=3),
        ReferenceAttack(n_references=4, variant="lira"),
        Drop(),
        Generalize(bins=4),
        SyntheticReplacement(n_folds=3),
        DropProxies(k=2, keep=("age",)),
        DropSensitive(columns=("race",)),
        InputNoise(0.5, seed=3),
        MarginalDraw(seed=2),
    ]


@pytest.mark.parametrize("estimator", _simple_instances(), ids=lambda e: type(e).__name__)
def test_the_estimators_follow_scikit_learn(estimator: Any) -> None:
    params = estimator.get_params()
    copy = clone(estimator)
    assert type(copy) is type(estimator) and copy.get_params() == params
    assert copy._validate_params().keys() == estimator._constraints.keys()
    with pytest.raises(InputError, match="has no parameter 'nope'"):
        copy.set_params(nope=1)
    for name in estimator._constraints:
        copy.set_params(**{name: params[name]})
    assert copy.get_params() == params
