"""Models under assessment: refittable built-in pipelines; skops or ONNX files, never pickles."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, clone, is_classifier
from sklearn.compose import ColumnTransformer, make_column_selector
from sklearn.ensemble import (
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.neural_network import MLPClassifier, MLPRegressor
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder, StandardScaler

from attrpriv._checks import check_choice
from attrpriv.assess._onnx import OnnxModel
from attrpriv.assess.choices import MODEL_CHOICES
from attrpriv.errors import InputError, private_values_shown

__all__ = [
    "CATEGORICAL_DTYPES",
    "SAFE_TYPES",
    "Task",
    "align",
    "coded_columns",
    "fit_without",
    "load_model",
    "make_coder",
    "make_model",
    "make_preprocessor",
    "per_record_loss",
    "predict_outputs",
    "save_model",
    "task_of",
]

Task = Literal["classification", "regression"]
MODEL_TASKS = ("classification", "regression")
CATEGORICAL_DTYPES = ["object", "category", "string", "bool"]
MAX_CATEGORIES = 32
PICKLE_SUFFIXES = (".pkl", ".pickle", ".joblib", ".sav", ".p")

# Types skops does not trust by default but which the built-in models are made of: they hold
# numbers, arrays and dtype names only (no callables). Anything else must be trusted by the user.
SAFE_TYPES = (
    "numpy.dtype",
    "sklearn.compose._column_transformer.make_column_selector",
    "sklearn.tree._tree.Tree",
    "sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor",
    "sklearn.ensemble._hist_gradient_boosting.binning._BinMapper",
    "sklearn.neural_network._stochastic_optimizers.AdamOptimizer",
    "sklearn.neural_network._stochastic_optimizers.SGDOptimizer",
)


def make_preprocessor() -> ColumnTransformer:
    """Encode a DataFrame by its dtypes, chosen at fit time (so any column subset works)."""
    categorical = make_pipeline(
        SimpleImputer(strategy="constant", fill_value="missing"),
        OneHotEncoder(
            handle_unknown="infrequent_if_exist", sparse_output=False, max_categories=MAX_CATEGORIES
        ),
    )
    numeric = make_pipeline(SimpleImputer(strategy="median"), StandardScaler())
    return ColumnTransformer(
        [
            ("categorical", categorical, make_column_selector(dtype_include=CATEGORICAL_DTYPES)),
            (
                "numeric",
                numeric,
                make_column_selector(dtype_include="number", dtype_exclude="bool"),
            ),
        ],
        verbose_feature_names_out=False,
    )


def make_coder() -> ColumnTransformer:
    """Encode a DataFrame for boosting's native categorical splits (codes first)."""
    codes = OrdinalEncoder(
        handle_unknown="use_encoded_value", unknown_value=np.nan, max_categories=MAX_CATEGORIES
    )
    return ColumnTransformer(
        [
            ("categorical", codes, make_column_selector(dtype_include=CATEGORICAL_DTYPES)),
            (
                "numeric",
                SimpleImputer(strategy="median"),
                make_column_selector(dtype_include="number", dtype_exclude="bool"),
            ),
        ],
        verbose_feature_names_out=False,
    )


def coded_columns(coder: ColumnTransformer) -> list[str]:
    """The columns a fitted :func:`make_coder` turned into codes, in output order (first)."""
    return [str(c) for name, _, columns in coder.transformers_ if name == "categorical"
            for c in columns]  # fmt: skip


def make_model(name: str, *, task: str = "classification", seed: int = 0) -> Pipeline:
    """A built-in model: ``logreg`` (Ridge for regression), ``rf`` (full trees), ``hgb`` or ``mlp``.

    Parameters
    ----------
    name : {"logreg", "rf", "hgb", "mlp"}
        Logistic regression, 100 trees, histogram gradient boosting, or a 64-unit perceptron.
    task : {"classification", "regression"}, default "classification"
        Whether to build a classifier or a regressor.
    seed : int, default 0
        ``random_state`` of the model (unused by ``logreg``).

    Returns
    -------
    sklearn.pipeline.Pipeline
        An unfitted pipeline: a ``"prepare"`` encoding step, then the ``"model"`` step.

    Raises
    ------
    InputError
        If ``name`` or ``task`` is not one of the choices.
    """
    name = check_choice(name, "model", MODEL_CHOICES)
    task = check_choice(task, "task", MODEL_TASKS)
    regression = task == "regression"
    final: BaseEstimator
    if name == "logreg":
        final = Ridge(alpha=1.0) if regression else LogisticRegression(max_iter=1000)
    elif name == "rf":
        forest = RandomForestRegressor if regression else RandomForestClassifier
        final = forest(n_estimators=100, n_jobs=1, random_state=seed)
    elif name == "hgb":
        boost = HistGradientBoostingRegressor if regression else HistGradientBoostingClassifier
        final = boost(random_state=seed)
    else:
        mlp = MLPRegressor if regression else MLPClassifier
        final = mlp(hidden_layer_sizes=(64,), max_iter=300, random_state=seed)
    return Pipeline([("prepare", make_preprocessor()), ("model", final)])


def task_of(model: Any) -> Task:
    """``"classification"`` when the model gives class probabilities, else ``"regression"``."""
    if isinstance(model, OnnxModel):
        return model.task
    if is_classifier(model) or hasattr(model, "predict_proba"):
        return "classification"
    return "regression"


def fit_without(
    estimator: Any, X: pd.DataFrame, y: pd.Series | np.ndarray, drop: Iterable[str] = ()
) -> Any:
    """A fitted clone of ``estimator`` trained on ``X`` without the columns in ``drop``.

    Parameters
    ----------
    estimator : object
        A scikit-learn estimator (cloned: it is left as it is).
    X, y : pandas.DataFrame, array_like
        The training records and their labels.
    drop : iterable of str, default ()
        Columns of ``X`` to train without; at least one column must be left.

    Returns
    -------
    object
        The fitted clone.

    Raises
    ------
    InputError
        If ``X`` is not a DataFrame, ``drop`` is unknown or total, or ``y`` has the wrong length.
    """
    frame = _frame(X)
    dropped = list(dict.fromkeys(drop))
    unknown = [c for c in dropped if c not in frame.columns]
    if unknown:
        raise InputError(f"cannot drop unknown column(s) {unknown}; X has {list(frame.columns)}")
    if len(dropped) >= frame.shape[1]:
        raise InputError(f"dropping {dropped} would leave no feature to train on")
    if len(y) != len(frame):
        raise InputError(f"y has {len(y)} rows but X has {len(frame)}")
    model = clone(estimator)
    model.fit(frame.drop(columns=dropped), y)
    return model


def align(model: Any, X: pd.DataFrame) -> pd.DataFrame:
    """The columns of ``X`` the model was fitted on, in its order (extra columns ignored)."""
    frame = _frame(X)
    names = getattr(model, "feature_names_in_", None)
    if names is None:
        return frame
    missing = [c for c in names if c not in frame.columns]
    if missing:
        raise InputError(f"X lacks column(s) {missing} that the model was trained on")
    return frame[list(names)]


def predict_outputs(model: Any, X: pd.DataFrame) -> np.ndarray:
    """What a black-box query returns: class probabilities, or the prediction as one column."""
    frame = align(model, X)
    if task_of(model) == "classification":
        return np.asarray(model.predict_proba(frame), dtype=float)
    return np.asarray(model.predict(frame), dtype=float).reshape(len(frame), -1)


def per_record_loss(model: Any, X: pd.DataFrame, y: pd.Series | np.ndarray) -> np.ndarray:
    """Each record's loss: cross-entropy of its true class, or squared error for regressors."""
    outputs = predict_outputs(model, X)
    labels = np.asarray(y)
    if task_of(model) == "regression":
        return np.asarray((labels.astype(float) - outputs[:, 0]) ** 2)
    columns = class_columns(model, labels)
    true_proba = outputs[np.arange(len(labels)), columns]
    return np.asarray(-np.log(np.clip(true_proba, 1e-12, 1.0)))


def class_columns(model: Any, labels: np.ndarray) -> np.ndarray:
    """Index of each label in ``model.classes_`` (InputError for a class the model never saw)."""
    classes = np.asarray(model.classes_)
    lookup = {value: i for i, value in enumerate(classes.tolist())}
    unknown = sorted({str(v) for v in labels.tolist() if v not in lookup})
    if unknown:
        if private_values_shown():
            what = f"label(s) {unknown[:5]} are not among the model's classes {list(classes)}"
        else:
            what = (
                f"{len(unknown)} label(s) of y are not among the model's {classes.size} classes "
                "(labels hidden: --debug shows them)"
            )
        raise InputError(what)
    return np.array([lookup[v] for v in labels.tolist()], dtype=np.int64)


# -- files ---------------------------------------------------------------------------------------


def save_model(model: Any, path: str | Path) -> Path:
    """Write a fitted model as a skops file (never a pickle).

    Parameters
    ----------
    model : object
        The fitted model.
    path : str or pathlib.Path
        Where to write it (e.g. ``model.skops``); a pickle suffix is refused.

    Returns
    -------
    pathlib.Path
        The path written.

    Raises
    ------
    InputError
        If ``path`` has a pickle suffix.
    """
    import skops.io as sio

    target = Path(path)
    if target.suffix in PICKLE_SUFFIXES:
        raise InputError(f"model path {str(target)!r}: use a .skops file, not a pickle suffix")
    sio.dump(model, target)
    return target


def load_model(path: str | Path, *, trusted: Sequence[str] = ()) -> Any:
    """Load a model from a skops file (types checked) or an ONNX file (query-only); never a pickle.

    Parameters
    ----------
    path : str or pathlib.Path
        A ``.onnx`` file, or a skops file.
    trusted : sequence of str, default ()
        skops type names to trust besides :data:`SAFE_TYPES` (see ``skops.io.get_untrusted_types``).

    Returns
    -------
    object
        The estimator, or a query-only model (``predict``, ``predict_proba``) for ONNX.

    Raises
    ------
    InputError
        If the file is missing, a pickle, unreadable, or holds untrusted types.
    """
    file = Path(path)
    if not file.is_file():
        raise InputError(f"model file {str(file)!r} does not exist")
    head = file.read_bytes()[:4]
    if file.suffix == ".onnx":
        return OnnxModel(file)
    if file.suffix in PICKLE_SUFFIXES or head[:1] == b"\x80":
        raise InputError(
            f"model file {str(file)!r} is a pickle, which can run code when loaded; "
            "save it with attrpriv.assess.save_model / skops.io.dump, or export it to ONNX"
        )
    if head != b"PK\x03\x04":
        raise InputError(f"model file {str(file)!r} is neither a skops (.skops) nor an ONNX file")
    return _load_skops(file, trusted)


def _load_skops(file: Path, trusted: Sequence[str]) -> Any:
    import skops.io as sio

    try:
        untrusted = sio.get_untrusted_types(file=file)
    except Exception as error:  # a zip that is not a skops archive
        raise InputError(
            f"model file {str(file)!r} is not a readable skops file: {error}"
        ) from None
    allowed = set(SAFE_TYPES) | set(trusted)
    refused = [t for t in untrusted if t not in allowed]
    if refused:
        raise InputError(
            f"model file {str(file)!r} holds type(s) not trusted by default: {refused}; "
            "check them and pass trusted=[...] (CLI: --trust TYPE) to load it"
        )
    return sio.load(file, trusted=list(untrusted))


def _frame(X: Any) -> pd.DataFrame:
    if not isinstance(X, pd.DataFrame):
        raise InputError(f"X must be a pandas DataFrame with named columns, got {type(X).__name__}")
    return X
