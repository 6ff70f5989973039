"""Finished tasks of an assessment kept on disk as JSON (never a pickle), under a digest of the
data and settings, so that a rerun resumes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from attrpriv._io import atomic_write_json, to_jsonable
from attrpriv.assess.inference import AttributeInferenceResult
from attrpriv.assess.membership import MembershipResult, membership_result
from attrpriv.assess.outcomes import ModelOutcome, TaskFailure
from attrpriv.assess.scoring import score_from_dict
from attrpriv.stats import Score

__all__ = ["CHECKPOINTED", "data_key", "from_json", "result_path", "to_json"]

CHECKPOINTED = ("without", "attribute", "property")
FORMAT = "attrpriv.assess.checkpoint/1"


def data_key(X: pd.DataFrame, y: pd.Series, settings: Mapping[str, Any]) -> str:
    """A SHA-256 digest (24 hex digits) of ``X``, ``y`` and ``settings``: a folder name."""
    digest = hashlib.sha256()
    digest.update(pd.util.hash_pandas_object(X, index=False).to_numpy().tobytes())
    digest.update(pd.util.hash_pandas_object(y, index=False).to_numpy().tobytes())
    digest.update(json.dumps([list(map(str, X.columns)), list(map(str, X.dtypes))]).encode())
    digest.update(json.dumps(to_jsonable(dict(settings)), sort_keys=True, default=str).encode())
    return digest.hexdigest()[:24]


def result_path(folder: str | Path, kind: str, repeat: int, features: tuple[str, ...]) -> Path:
    """Where one task's result is kept: ``folder/<kind>-<repeat>-<digest of features>.json``."""
    name = hashlib.sha256(json.dumps(list(features)).encode()).hexdigest()[:16]
    return Path(folder) / f"{kind}-{repeat}-{name}.json"


def to_json(result: Any, path: Path) -> None:
    """Write a task's result (model outcome, score or failure) to ``path`` as JSON, atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, {"format": FORMAT, **_encode(result)})


def from_json(path: Path) -> Any | None:
    """A task's result read back from ``path``, or ``None`` if missing or unreadable."""
    try:
        spec = json.loads(path.read_text())
        if spec.get("format") != FORMAT:
            return None
        return _decode(spec)
    except (OSError, ValueError, KeyError, TypeError):
        return None


# -- encoding ------------------------------------------------------------------------------------


def _encode(result: Any) -> dict[str, Any]:
    if isinstance(result, Score):
        return {"type": "score", "score": result.to_dict()}
    if isinstance(result, TaskFailure):
        return {"type": "failure", **vars(result), "features": list(result.features)}
    assert isinstance(result, ModelOutcome)
    return {
        "type": "outcome",
        "utility_train": result.utility_train,
        "utility_test": result.utility_test,
        "membership": None if result.membership is None else _membership(result.membership),
        "differential": None if result.differential is None else result.differential.to_dict(),
        "sensitive": {a: _attribute(r) for a, r in result.sensitive.items()},
    }


def _membership(result: MembershipResult) -> dict[str, Any]:
    return {
        "attack": result.attack,
        "confidence": result.score.confidence,
        "labels": result.labels.tolist(),
        "scores": result.scores.tolist(),
    }


def _attribute(result: AttributeInferenceResult) -> dict[str, Any]:
    return {**result.to_dict(), "hits": result.hits.tolist()}


def _decode(spec: Mapping[str, Any]) -> Any:
    if spec["type"] == "score":
        return score_from_dict(spec["score"])
    if spec["type"] == "failure":
        return TaskFailure(
            str(spec["kind"]), int(spec["repeat"]), tuple(spec["features"]), str(spec["reason"])
        )
    membership = spec["membership"]
    differential = spec["differential"]
    return ModelOutcome(
        utility_train=float(spec["utility_train"]),
        utility_test=float(spec["utility_test"]),
        membership=None
        if membership is None
        else membership_result(
            np.asarray(membership["labels"], dtype=np.int64),
            np.asarray(membership["scores"], dtype=float),
            attack=str(membership["attack"]),
            confidence=float(membership["confidence"]),
        ),
        differential=None if differential is None else score_from_dict(differential),
        sensitive={a: _attribute_result(r) for a, r in spec["sensitive"].items()},
    )


def _attribute_result(spec: Mapping[str, Any]) -> AttributeInferenceResult:
    return AttributeInferenceResult(
        feature=str(spec["feature"]),
        kind=str(spec["kind"]),
        metric=str(spec["metric"]),
        score=score_from_dict(spec["score"]),
        baselines={k: float(v) for k, v in spec["baselines"].items()},
        attacks={k: float(v) for k, v in spec["attacks"].items()},
        parts=dict(spec["parts"]),
        hits=np.asarray(spec["hits"], dtype=np.int64),
    )
