"""Regularize: a model-level strategy that returns a more regularized clone of the estimator."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.ensemble import RandomForestClassifier
from sklearn.pipeline import Pipeline
from sklearn.svm import SVC

from attrpriv.assess.choices import MODEL_CHOICES, STRATEGY_FORMS
from attrpriv.assess.mitigation import Applied, Regularize, parse_strategy
from attrpriv.assess.models import make_model, make_preprocessor
from attrpriv.errors import InputError

DEFAULTS = {
    ("rf", "classification"): {"model__min_samples_leaf": 20},
    ("rf", "regression"): {"model__min_samples_leaf": 20},
    ("hgb", "classification"): {"model__min_samples_leaf": 100, "model__l2_regularization": 1.0},
    ("hgb", "regression"): {"model__min_samples_leaf": 100, "model__l2_regularization": 1.0},
    ("logreg", "classification"): {"model__C": 0.1},  # LogisticRegression(C=1.0)
    ("logreg", "regression"): {"model__alpha": 10.0},  # Ridge(alpha=1.0)
    ("mlp", "classification"): {"model__alpha": 1e-3},  # scikit-learn's alpha=1e-4
    ("mlp", "regression"): {"model__alpha": 1e-3},
}


def _final_params(model: Pipeline) -> dict[str, Any]:
    return dict(model.named_steps["model"].get_params(deep=False))


@pytest.mark.parametrize("key", sorted(DEFAULTS), ids="-".join)
def test_the_defaults_of_every_built_in_model(key: tuple[str, str]) -> None:
    name, task = key
    model = make_model(name, task=task)
    before = _final_params(model)
    strategy = Regularize()
    new = strategy.apply_model(model)
    assert new is not model and new.named_steps["model"] is not model.named_steps["model"]
    assert _final_params(model) == before  # the input is left as it is
    expected = DEFAULTS[key]
    assert strategy.applied_ == Applied("regularize", (), expected, None)
    after = _final_params(new)
    for full, value in expected.items():
        assert after[full.removeprefix("model__")] == pytest.approx(value)
    untouched = {k for k in before if f"model__{k}" not in expected}
    assert {k: after[k] for k in untouched} == {k: before[k] for k in untouched}
    json.dumps(strategy.applied_.to_dict())


def test_every_built_in_model_has_defaults() -> None:
    assert {name for name, _ in DEFAULTS} == set(MODEL_CHOICES)


def test_given_params_are_set_on_a_clone_in_either_form() -> None:
    model = make_model("rf")
    strategy = Regularize({"min_samples_leaf": 50, "model__max_depth": 8})
    new = strategy.apply_model(model)
    chosen = ["model__min_samples_leaf", "model__max_depth"]
    assert [new.get_params()[key] for key in chosen] == [50, 8]
    assert [model.get_params()[key] for key in chosen] == [1, None]
    assert strategy.applied_ is not None
    assert strategy.applied_.params == {"model__min_samples_leaf": 50, "model__max_depth": 8}


def test_a_bare_estimator_takes_its_own_names() -> None:
    forest = RandomForestClassifier(n_estimators=5)
    strategy = Regularize()
    new = strategy.apply_model(forest)
    assert new.min_samples_leaf == 20 and forest.min_samples_leaf == 1
    assert strategy.applied_ is not None and strategy.applied_.params == {"min_samples_leaf": 20}
    assert Regularize({"max_leaf_nodes": 16}).apply_model(forest).max_leaf_nodes == 16


def test_a_nested_pipeline_ends_at_its_last_estimator() -> None:
    inner = Pipeline([("scale", make_preprocessor()), ("clf", RandomForestClassifier())])
    outer = Pipeline([("model", inner)])
    strategy = Regularize()
    new = strategy.apply_model(outer)
    assert strategy.applied_ is not None
    assert strategy.applied_.params == {"model__clf__min_samples_leaf": 20}
    assert new.get_params()["model__clf__min_samples_leaf"] == 20


def test_the_defaults_never_loosen_the_estimator() -> None:
    forest = RandomForestClassifier(min_samples_leaf=50)
    assert Regularize().apply_model(forest).min_samples_leaf == 50
    share = RandomForestClassifier(min_samples_leaf=0.01)  # a share of the rows: kept
    assert Regularize().apply_model(share).min_samples_leaf == 0.01
    boost = make_model("hgb").set_params(model__l2_regularization=3.0)
    assert Regularize().apply_model(boost).named_steps["model"].l2_regularization == 3.0


def test_an_unknown_key_is_refused_naming_it_and_some_valid_ones() -> None:
    with pytest.raises(InputError, match=r"'min_sample_leaf' is not a parameter.*min_samples_leaf"):
        Regularize({"min_sample_leaf": 3}).apply_model(make_model("rf"))
    with pytest.raises(InputError, match=r"'gamma' is not a parameter of the Pipeline; expected"):
        Regularize({"gamma": 3}).apply_model(make_model("rf"))


def test_an_ambiguous_or_repeated_key_is_refused() -> None:
    with pytest.raises(InputError, match=r"'verbose' is both .* name it 'model__verbose'"):
        Regularize({"verbose": 1}).apply_model(make_model("rf"))
    with pytest.raises(InputError, match=r"'model__max_depth' is given twice"):
        Regularize({"max_depth": 3, "model__max_depth": 4}).apply_model(make_model("rf"))


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"min_samples_leaf": -1}, r"^params\['model__min_samples_leaf'\]: The 'min_samples_leaf'"),
        ({"model__criterion": "x"}, r"^params\['model__criterion'\]: .* Got 'x' instead\.$"),
        ({"max_depth": "None"}, r"^params\['model__max_depth'\]: .*or None\. Got 'None'"),
    ],
)
def test_a_bad_value_is_refused_by_scikit_learns_check(
    params: dict[str, Any], message: str
) -> None:
    model = make_model("rf")
    with pytest.raises(InputError, match=message):
        Regularize(params).apply_model(model)
    assert model.named_steps["model"].get_params() == make_model("rf")[-1].get_params()


def test_an_estimator_without_defaults_needs_params() -> None:
    with pytest.raises(InputError, match=r"no defaults for SVC .*pass params="):
        Regularize().apply_model(SVC())
    assert Regularize({"C": 0.1}).apply_model(SVC()).C == 0.1
    with pytest.raises(InputError, match=r"no penalty .*pass params="):
        Regularize().apply_model(make_model("logreg").set_params(model__C=np.inf))


def test_other_bad_inputs_are_refused() -> None:
    with pytest.raises(InputError, match=r"^estimator must be a scikit-learn estimator"):
        Regularize().apply_model("rf")
    with pytest.raises(InputError, match=r"^params must be a mapping of parameter name to value"):
        Regularize([("C", 1.0)]).apply_model(SVC())  # type: ignore[arg-type]
    with pytest.raises(InputError, match=r"^params must name at least one parameter"):
        Regularize({}).apply_model(SVC())


def test_regularize_follows_scikit_learn() -> None:
    strategy = Regularize({"min_samples_leaf": 30})
    copy = clone(strategy)
    assert type(copy) is Regularize and copy.get_params() == {"params": {"min_samples_leaf": 30}}
    assert copy.params is not strategy.params
    assert repr(copy) == "Regularize(params={'min_samples_leaf': 30})"
    assert repr(Regularize()) == "Regularize()"
    assert Regularize().set_params(params={"C": 2}).params == {"C": 2}


def test_parse_strategy_round_trip() -> None:
    assert parse_strategy(" Regularize ").get_params() == {"params": None}
    params = {"min_samples_leaf": 50, "max_features": "sqrt", "ccp_alpha": 0.001}
    spec = "regularize:" + ":".join(f"{key}={value}" for key, value in params.items())
    strategy = parse_strategy(spec)
    assert isinstance(strategy, Regularize) and strategy.params == params
    assert [type(v) for v in strategy.params.values()] == [int, str, float]
    new = strategy.apply_model(make_model("rf"))
    assert {k: new.get_params()[f"model__{k}"] for k in params} == params
    assert "regularize[:KEY=VALUE[:KEY=VALUE...]]" in STRATEGY_FORMS
    for bad in [
        "regularize:",
        "regularize:min_samples_leaf",
        "regularize:=3",
        "regularize:a=1:a=2",
    ]:
        with pytest.raises(
            InputError, match=r"expected 'regularize\[:KEY=VALUE\[:KEY=VALUE...\]\]'"
        ):
            parse_strategy(bad)


def test_the_regularized_model_fits() -> None:
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=120), "b": rng.choice(["u", "v"], 120)})
    y = (X["a"] > 0).astype(int)
    new = Regularize().apply_model(make_model("logreg"))
    assert new.fit(X, y).score(X, y) > 0.8
