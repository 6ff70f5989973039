"""A query-only model read from an ONNX file (onnxruntime), for attacks that only query."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from attrpriv.errors import InputError

_NUMPY_TYPES = {
    "tensor(float)": np.float32,
    "tensor(double)": np.float64,
    "tensor(int64)": np.int64,
    "tensor(int32)": np.int32,
    "tensor(string)": np.object_,
    "tensor(bool)": np.bool_,
}


class OnnxModel:
    """Query-only ONNX model (skl2onnx layout); pass ``classes`` without a ZipMap output."""

    def __init__(self, path: str | Path, *, classes: Sequence[Any] | None = None) -> None:
        try:
            import onnxruntime as ort
        except ImportError:
            raise InputError(
                f"model file {str(path)!r} is ONNX: install onnxruntime to query it "
                "(pip install 'attrpriv[onnx]')"
            ) from None
        try:
            self._session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        except Exception as error:
            raise InputError(
                f"model file {str(path)!r} is not a readable ONNX model: {error}"
            ) from None
        self.path = Path(path)
        self._inputs = self._session.get_inputs()
        self._outputs = [o.name for o in self._session.get_outputs()]
        self._classes = None if classes is None else np.asarray(classes)
        self.task: Literal["classification", "regression"] = (
            "classification" if len(self._outputs) >= 2 else "regression"
        )

    @property
    def feature_names_in_(self) -> np.ndarray | None:
        """Column names when the model takes one input per column."""
        if len(self._inputs) == 1:
            return None
        return np.array([i.name for i in self._inputs], dtype=object)

    @property
    def classes_(self) -> np.ndarray:
        if self._classes is None:
            raise InputError(
                f"ONNX model {str(self.path)!r}: class labels unknown until its ZipMap output "
                "is read; call predict_proba first or pass classes=[...]"
            )
        return self._classes

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        """The model's first output: labels (classifier) or values (regressor)."""
        out = self._session.run([self._outputs[0]], self._feed(X))[0]
        return np.asarray(out).reshape(len(X)) if self.task == "regression" else np.asarray(out)

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        """Class probabilities, one column per class of :attr:`classes_`."""
        if self.task != "classification":
            raise InputError(f"ONNX model {str(self.path)!r} has no probability output")
        out = self._session.run([self._outputs[1]], self._feed(X))[0]
        if isinstance(out, list):  # ZipMap: a list of {class: probability}
            keys = list(out[0]) if out else []
            if self._classes is None:
                self._classes = np.asarray(keys)
            return np.array([[row[k] for k in self._classes.tolist()] for row in out], dtype=float)
        return np.asarray(out, dtype=float)

    def _feed(self, X: pd.DataFrame) -> dict[str, np.ndarray]:
        if not isinstance(X, pd.DataFrame):
            raise InputError(f"X must be a pandas DataFrame, got {type(X).__name__}")
        if len(self._inputs) == 1:
            spec = self._inputs[0]
            return {spec.name: X.to_numpy(dtype=_NUMPY_TYPES.get(spec.type, np.float32))}
        missing = [i.name for i in self._inputs if i.name not in X.columns]
        if missing:
            raise InputError(f"X lacks column(s) {missing} that the ONNX model takes as inputs")
        return {
            i.name: X[i.name].to_numpy(dtype=_NUMPY_TYPES.get(i.type, np.float32)).reshape(-1, 1)
            for i in self._inputs
        }
