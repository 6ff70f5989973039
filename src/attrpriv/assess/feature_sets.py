"""Target feature sets: ``"singles" | "pairs" | "power:K[:N]" | "preselect:BY[:K]"`` or explicit
sets (``"age,sex;race"``), read by :func:`resolve_feature_sets`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from attrpriv._checks import check_choice, check_positive_int
from attrpriv.errors import InputError

FeatureSet = tuple[str, ...]

PRESELECT_BY = ("uniqueness", "cardinality", "variance")
SPEC_FORMS = "'singles', 'pairs', 'power:K', 'power:K:N', 'preselect:BY[:K]' or 'a,b;c'"
MAX_ENUMERATED = 100_000  # power-set size above which a count limit is required
_ENUMERATE_TO_SAMPLE = 1_000_000  # above this many subsets, sample by rejection instead


def _check_features(features: Sequence[str], name: str = "features") -> list[str]:
    """Distinct, non-empty column names, in their given order."""
    if isinstance(features, str) or not isinstance(features, Sequence):
        raise InputError(f"{name} must be a sequence of column names, got {features!r}")
    names = list(dict.fromkeys(features))
    if not names:
        raise InputError(f"{name} must name at least one column, got none")
    for feature in names:
        if not isinstance(feature, str) or not feature:
            raise InputError(f"{name} must be non-empty strings, got {feature!r}")
    return names


def singles(features: Sequence[str]) -> list[FeatureSet]:
    """Every feature on its own."""
    return [(f,) for f in _check_features(features)]


def pairs(features: Sequence[str]) -> list[FeatureSet]:
    """Every unordered pair of features, in the order the features are given."""
    return list(itertools.combinations(_check_features(features), 2))


def power_set_size(n_features: int, max_size: int) -> int:
    """Number of non-empty subsets of at most ``max_size`` of ``n_features`` features."""
    return sum(math.comb(n_features, k) for k in range(1, min(max_size, n_features) + 1))


def power_set(
    features: Sequence[str], max_size: int, max_count: int | None = None, seed: int = 0
) -> list[FeatureSet]:
    """Non-empty subsets of <= ``max_size`` features (``max_count`` drawn when more)."""
    names = _check_features(features)
    size = min(check_positive_int(max_size, "max_size"), len(names))
    total = power_set_size(len(names), size)
    if max_count is None:
        if total > MAX_ENUMERATED:
            raise InputError(
                f"max_count is needed: the power set of {len(names)} features up to size {size} "
                f"has {total} sets (at most {MAX_ENUMERATED} without a count limit)"
            )
        return _enumerate(names, size)
    count = check_positive_int(max_count, "max_count")
    if total <= count:
        return _enumerate(names, size)
    rng = np.random.default_rng(check_positive_int(seed, "seed", minimum=0))
    if total <= _ENUMERATE_TO_SAMPLE:
        every = _enumerate(names, size)
        chosen = np.sort(rng.choice(total, size=count, replace=False))
        return [every[i] for i in chosen]
    return _sample_subsets(names, size, count, rng)


def _enumerate(names: list[str], max_size: int) -> list[FeatureSet]:
    return [c for k in range(1, max_size + 1) for c in itertools.combinations(names, k)]


def _sample_subsets(
    names: list[str], max_size: int, count: int, rng: np.random.Generator
) -> list[FeatureSet]:
    """Uniform subsets by rejection: a size with probability C(n, k) / total, then a k-subset."""
    n = len(names)
    weights = np.array([math.comb(n, k) for k in range(1, max_size + 1)], dtype=float)
    weights /= weights.sum()
    chosen: set[tuple[int, ...]] = set()
    while len(chosen) < count:
        k = int(rng.choice(max_size, p=weights)) + 1
        chosen.add(tuple(sorted(int(i) for i in rng.choice(n, size=k, replace=False))))
    ordered = sorted(chosen, key=lambda idx: (len(idx), idx))
    return [tuple(names[i] for i in idx) for idx in ordered]


def selection_scores(X: pd.DataFrame, by: str = "uniqueness") -> dict[str, float]:
    """Per-column score of :func:`preselect` (``uniqueness``, ``cardinality``, ``variance``)."""
    frame = _check_frame(X)
    check_choice(by, "by", PRESELECT_BY)
    scores: dict[str, float] = {}
    for column in frame.columns:
        values = frame[column]
        if by == "uniqueness":
            counts = values.value_counts(dropna=False)
            scores[column] = float(counts[counts == 1].size) / max(len(values), 1)
        elif by == "cardinality":
            scores[column] = float(values.nunique(dropna=True))
        elif _is_numeric(values):
            scores[column] = _scaled_variance(values)
    return scores


def preselect(X: pd.DataFrame, by: str = "uniqueness", top: int = 5) -> list[FeatureSet]:
    """The ``top`` features with the highest :func:`selection_scores` (ties: column order)."""
    scores = selection_scores(X, by)
    top = check_positive_int(top, "top")
    if not scores:
        raise InputError(f"preselect by {by!r} needs at least one numeric column, got none")
    ranked = sorted(scores, key=lambda c: -scores[c])  # sorted() is stable: ties keep order
    return [(c,) for c in ranked[:top]]


def _is_numeric(values: pd.Series) -> bool:
    return bool(pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values))


def _scaled_variance(values: pd.Series) -> float:
    numbers = values.to_numpy(dtype=float, na_value=np.nan)
    numbers = numbers[np.isfinite(numbers)]
    if numbers.size == 0:
        return 0.0
    spread = float(numbers.max() - numbers.min())
    return 0.0 if spread == 0.0 else float(np.var((numbers - numbers.min()) / spread))


def _check_frame(X: object) -> pd.DataFrame:
    if not isinstance(X, pd.DataFrame):
        raise InputError(f"X must be a pandas DataFrame, got {type(X).__name__}")
    bad = [c for c in X.columns if not isinstance(c, str)]
    if bad:
        raise InputError(f"X column names must be strings, got {bad[0]!r}")
    return X


def resolve_feature_sets(
    spec: str | Sequence[Sequence[str]], X: pd.DataFrame, *, seed: int = 0
) -> list[FeatureSet]:
    """A spec (see the module docstring) as distinct sets, each leaving a column behind."""
    frame = _check_frame(X)
    columns = list(frame.columns)
    if isinstance(spec, str):
        sets = _parse_string(spec, frame, seed)
    elif isinstance(spec, Sequence):
        sets = [_explicit_set(item, columns) for item in spec]
    else:
        raise InputError(f"feature_sets must be a string ({SPEC_FORMS}) or a list of sets")
    return _finish(sets, columns, explicit=not _is_family(spec))


def _is_family(spec: object) -> bool:
    if not isinstance(spec, str):
        return False
    keyword = spec.strip().split(":", 1)[0].strip().lower()
    return keyword in ("singles", "pairs", "power", "preselect")


def _parse_string(spec: str, frame: pd.DataFrame, seed: int) -> list[FeatureSet]:
    text = spec.strip()
    if not text:
        raise InputError(f"feature_sets is empty; expected {SPEC_FORMS}")
    parts = [p.strip() for p in text.split(":")]
    keyword, args = parts[0].lower(), parts[1:]
    columns = list(frame.columns)
    if keyword in ("singles", "pairs"):
        if args:
            raise InputError(f"feature_sets {spec!r}: {keyword!r} takes no ':' arguments")
        return singles(columns) if keyword == "singles" else pairs(columns)
    if keyword == "power":
        return _parse_power(spec, args, columns, seed)
    if keyword == "preselect":
        return _parse_preselect(spec, args, frame)
    if ":" in text:
        raise InputError(f"feature_sets {spec!r}: unknown form {parts[0]!r}; expected {SPEC_FORMS}")
    return [_explicit_set(group.split(","), columns, spec) for group in text.split(";")]


def _parse_int(spec: str, text: str, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise InputError(
            f"feature_sets {spec!r}: {what} must be a whole number >= 1, got {text!r}"
        ) from None
    if value < 1:
        raise InputError(f"feature_sets {spec!r}: {what} must be >= 1, got {value}")
    return value


def _parse_power(spec: str, args: list[str], columns: list[str], seed: int) -> list[FeatureSet]:
    if len(args) not in (1, 2):
        raise InputError(f"feature_sets {spec!r}: expected 'power:K' or 'power:K:N'")
    size = _parse_int(spec, args[0], "K (the largest set size)")
    count = _parse_int(spec, args[1], "N (the number of sets)") if len(args) == 2 else None
    if len(columns) < 2:
        raise InputError(f"feature_sets {spec!r}: needs at least 2 columns, got {len(columns)}")
    try:
        return power_set(columns, min(size, len(columns) - 1), count, seed)
    except InputError as exc:
        raise InputError(f"feature_sets {spec!r}: {exc}") from None


def _parse_preselect(spec: str, args: list[str], frame: pd.DataFrame) -> list[FeatureSet]:
    if len(args) not in (1, 2) or args[0].lower() not in PRESELECT_BY:
        raise InputError(
            f"feature_sets {spec!r}: expected 'preselect:BY' or 'preselect:BY:K' "
            f"with BY one of {list(PRESELECT_BY)}"
        )
    top = _parse_int(spec, args[1], "K (how many features)") if len(args) == 2 else 5
    return preselect(frame, args[0].lower(), top)


def _explicit_set(item: object, columns: list[str], spec: str | None = None) -> FeatureSet:
    """One explicit set: a column name or a sequence of them, all columns of the data."""
    where = f"feature_sets {spec!r}: " if spec is not None else ""
    names = [item] if isinstance(item, str) else item
    if not isinstance(names, Sequence):
        raise InputError(f"{where}each feature set must be a list of column names, got {item!r}")
    cleaned = [n.strip() if isinstance(n, str) else n for n in names]
    if not cleaned or any(not isinstance(n, str) or not n for n in cleaned):
        raise InputError(f"{where}a feature set has an empty or non-text name: {item!r}")
    known = set(columns)
    for name in cleaned:
        if name not in known:
            shown = ", ".join(columns[:12]) + (" ..." if len(columns) > 12 else "")
            raise InputError(
                f"{where}unknown column {name!r}; expected a column of the data ({shown}) "
                f"or one of the forms {SPEC_FORMS}"
            )
    return tuple(dict.fromkeys(str(n) for n in cleaned))


def _finish(sets: list[FeatureSet], columns: list[str], *, explicit: bool) -> list[FeatureSet]:
    """Keep each set once; refuse (explicit) or skip (generated) sets covering every column."""
    if not sets:
        raise InputError(f"feature_sets names no set; expected {SPEC_FORMS} or a list of sets")
    everything = frozenset(columns)
    seen: set[frozenset[str]] = set()
    result: list[FeatureSet] = []
    for feature_set in sets:
        key = frozenset(feature_set)
        if key == everything:
            if explicit:
                raise InputError(
                    f"feature set {list(feature_set)} covers every column; nothing would be left "
                    "to retrain the model on"
                )
            continue
        if key not in seen:
            seen.add(key)
            result.append(feature_set)
    if not result:
        raise InputError("no feature set leaves a column to retrain on; the data has one column")
    return result


__all__ = [
    "MAX_ENUMERATED",
    "PRESELECT_BY",
    "FeatureSet",
    "pairs",
    "power_set",
    "power_set_size",
    "preselect",
    "resolve_feature_sets",
    "selection_scores",
    "singles",
]
