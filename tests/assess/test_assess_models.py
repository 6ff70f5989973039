"""Built-in models, retraining without features, and safe model files (skops, ONNX, no pickle)."""

from __future__ import annotations

import operator
import pickle
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler

from attrpriv import InputError
from attrpriv.assess.choices import MODEL_CHOICES
from attrpriv.assess.models import (
    MAX_CATEGORIES,
    align,
    coded_columns,
    fit_without,
    load_model,
    make_coder,
    make_model,
    per_record_loss,
    predict_outputs,
    save_model,
    task_of,
)
from attrpriv.errors import showing_private_values


@pytest.fixture(scope="module")
def adult(
    adult_xy: Callable[[int, int], tuple[pd.DataFrame, np.ndarray]],
) -> tuple[pd.DataFrame, np.ndarray]:
    return adult_xy(600, 3)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("name", MODEL_CHOICES)
def test_every_builtin_model_fits_any_column_subset(name: str, adult) -> None:
    X, y = adult
    model = make_model(name, seed=1)
    assert isinstance(model, Pipeline)
    for columns in (list(X.columns), ["age", "hours_per_week"], ["sex", "workclass"]):
        fitted = fit_without(model, X, y, [c for c in X.columns if c not in columns])
        proba = predict_outputs(fitted, X)
        assert proba.shape == (len(X), 2)
        assert np.allclose(proba.sum(axis=1), 1.0)
        assert list(fitted.feature_names_in_) == [c for c in X.columns if c in columns]
    assert task_of(model) == "classification"


def test_missing_values_are_encoded_inside_the_pipeline(adult) -> None:
    X, y = adult
    holed = X.copy()
    holed.loc[:20, "workclass"] = np.nan
    holed.loc[:20, "age"] = np.nan
    fitted = make_model("logreg").fit(holed, y)
    assert np.isfinite(predict_outputs(fitted, holed)).all()


def test_the_coder_gives_one_code_column_per_category_column() -> None:
    many = [f"v{i:02d}" for i in range(MAX_CATEGORIES + 8)]
    frame = pd.DataFrame(
        {
            "size": [1.0, np.nan, 3.0] * 40,
            "colour": (["red", "blue", None] * 40),
            "many": (many * 4)[:120],
            "flag": [True, False] * 60,
        }
    )
    coder = make_coder().fit(frame)
    assert coded_columns(coder) == ["colour", "many", "flag"]
    codes = pd.DataFrame(coder.transform(frame), columns=coder.get_feature_names_out())
    assert list(codes.columns) == ["colour", "many", "flag", "size"]  # codes first
    assert codes["colour"].isna().sum() == 40  # a missing value stays missing
    assert codes["colour"].nunique() == 2
    assert codes["many"].nunique() == MAX_CATEGORIES  # the rarest grouped into one code
    assert codes["size"].notna().all()  # numbers median-imputed, not scaled
    assert set(codes["size"]) == {1.0, 2.0, 3.0}
    unseen = pd.DataFrame({"size": [2.0], "colour": ["green"], "many": ["new"], "flag": [True]})
    coded = coder.transform(unseen)[0]
    assert np.isnan(coded[0]) and np.isnan(coded[1])  # an unseen value is missing


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("name", MODEL_CHOICES)
def test_regression_models(name: str, adult) -> None:
    X, _ = adult
    target = X["hours_per_week"].to_numpy(dtype=float)
    fitted = fit_without(make_model(name, task="regression"), X, target, ["hours_per_week"])
    assert task_of(fitted) == "regression"
    assert predict_outputs(fitted, X).shape == (len(X), 1)
    loss = per_record_loss(fitted, X, target)
    assert loss.shape == (len(X),) and (loss >= 0).all()


def test_fit_without_leaves_its_inputs_alone(adult) -> None:
    X, y = adult
    before_x, before_y = X.copy(), y.copy()
    estimator = make_model("logreg")
    fitted = fit_without(estimator, X, y, ["sex", "relationship"])
    pd.testing.assert_frame_equal(X, before_x)
    np.testing.assert_array_equal(y, before_y)
    assert not hasattr(estimator, "classes_")  # a fitted clone, never the estimator itself
    assert "sex" not in fitted.feature_names_in_
    assert align(fitted, X).shape[1] == X.shape[1] - 2


@pytest.mark.parametrize(
    ("drop", "message"),
    [
        (["height"], r"cannot drop unknown column\(s\) \['height'\]"),
        (None, "would leave no feature to train on"),
    ],
)
def test_fit_without_refuses_bad_drops(adult, drop, message: str) -> None:
    X, y = adult
    with pytest.raises(InputError, match=message):
        fit_without(make_model("logreg"), X, y, list(X.columns) if drop is None else drop)


def test_fit_without_refuses_arrays_and_length_mismatch(adult) -> None:
    X, y = adult
    with pytest.raises(InputError, match="X must be a pandas DataFrame"):
        fit_without(make_model("logreg"), X.to_numpy(), y)
    with pytest.raises(InputError, match="y has 10 rows but X has 600"):
        fit_without(make_model("logreg"), X, y[:10])


def test_per_record_loss_is_the_true_class_cross_entropy(adult) -> None:
    X, y = adult
    fitted = make_model("logreg").fit(X, y)
    proba = fitted.predict_proba(X)
    column = np.searchsorted(fitted.classes_, y)
    expected = -np.log(proba[np.arange(len(y)), column])
    np.testing.assert_allclose(per_record_loss(fitted, X, y), expected)
    with pytest.raises(InputError, match=r"1 label\(s\) of y are not among"):
        per_record_loss(fitted, X.iloc[:2], np.array(["unknown", "<=50K"]))
    with pytest.raises(InputError, match=r"X lacks column\(s\) \['age'\]"):
        predict_outputs(fitted, X.drop(columns=["age"]))


@given(st.text(min_size=1, max_size=12).filter(lambda s: s not in MODEL_CHOICES))
@settings(max_examples=25, deadline=None)
def test_unknown_model_names_are_refused(name: str) -> None:
    with pytest.raises(InputError, match="model must be one of"):
        make_model(name)


def test_unknown_task_is_refused() -> None:
    with pytest.raises(InputError, match="task must be one of"):
        make_model("rf", task="ranking")


# -- model files ---------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("name", ["rf", "hgb", "mlp"])
def test_skops_round_trip(name: str, adult, tmp_path: Path) -> None:
    X, y = adult[0].iloc[:200], adult[1][:200]
    estimator = make_model(name)
    if name == "rf":  # skops writes every tree: keep the file small
        estimator.set_params(model__n_estimators=10)
    fitted = estimator.fit(X, y)
    path = save_model(fitted, tmp_path / "model.skops")
    loaded = load_model(path)
    np.testing.assert_array_equal(loaded.predict_proba(X), fitted.predict_proba(X))


class _Tripwire:
    """Unpickling this writes a file: proof that a pickle was opened."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (Path.touch, (self.marker,))


@pytest.mark.parametrize("name", ["model.pkl", "model.joblib", "model.skops"])
def test_pickles_are_refused_without_being_opened(name: str, tmp_path: Path) -> None:
    marker = tmp_path / "unpickled"
    path = tmp_path / name
    path.write_bytes(pickle.dumps(_Tripwire(marker), protocol=4))
    with pytest.raises(InputError, match="is a pickle, which can run code") as caught:
        load_model(path)
    assert "\n" not in str(caught.value)
    assert not marker.exists()


def test_save_refuses_a_pickle_suffix(adult, tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"use a \.skops file"):
        save_model(make_model("logreg"), tmp_path / "model.pkl")


def test_untrusted_types_are_refused_unless_listed(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    X, y = rng.random((40, 2)), np.arange(40) % 2
    model = make_pipeline(FunctionTransformer(operator.neg), LogisticRegression()).fit(X, y)
    path = save_model(model, tmp_path / "custom.skops")
    with pytest.raises(InputError, match=r"not trusted by default: \['_operator.neg'\]"):
        load_model(path)
    loaded = load_model(path, trusted=["_operator.neg"])
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


@pytest.mark.parametrize(
    ("content", "name", "message"),
    [
        (None, "absent.skops", "does not exist"),
        (b"hello world", "model.bin", "neither a skops"),
        (b"PK\x03\x04broken", "model.skops", "not a readable skops file"),
    ],
)
def test_other_bad_files(content, name: str, message: str, tmp_path: Path) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(InputError, match=message):
        load_model(path)


def test_onnx_models_are_query_only_and_match_sklearn(adult, tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")
    skl2onnx = pytest.importorskip("skl2onnx")
    X, y = adult
    numeric = X[["age", "education_num", "hours_per_week"]].astype(np.float32)
    fitted = make_pipeline(StandardScaler(), LogisticRegression()).fit(numeric.to_numpy(), y)
    onnx_model = skl2onnx.to_onnx(fitted, numeric.to_numpy()[:1])
    path = tmp_path / "model.onnx"
    path.write_bytes(onnx_model.SerializeToString())
    loaded = load_model(path)
    assert task_of(loaded) == "classification"
    np.testing.assert_allclose(
        predict_outputs(loaded, numeric), fitted.predict_proba(numeric.to_numpy()), atol=1e-5
    )
    assert list(loaded.classes_) == list(fitted.classes_)
    np.testing.assert_allclose(
        per_record_loss(loaded, numeric, y),
        -np.log(
            fitted.predict_proba(numeric.to_numpy())[
                np.arange(len(y)), np.searchsorted(fitted.classes_, y)
            ]
        ),
        rtol=1e-4,
    )
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    with pytest.raises(InputError, match="not a readable ONNX model"):
        load_model(bad)


def test_unknown_labels_are_named_only_when_private_values_are_shown() -> None:
    X = pd.DataFrame({"a": [0.0, 1.0, 2.0, 3.0], "b": [1.0, 0.0, 1.0, 0.0]})
    model = make_model("logreg").fit(X, ["no", "yes", "no", "yes"])
    with pytest.raises(InputError) as caught:
        per_record_loss(model, X, np.array(["no", "secret", "no", "yes"]))
    assert "secret" not in str(caught.value)
    assert "1 label(s) of y are not among the model's 2 classes (labels hidden" in str(caught.value)
    with showing_private_values(), pytest.raises(InputError, match=r"\['secret'\] are not among"):
        per_record_loss(model, X, np.array(["no", "secret", "no", "yes"]))
