"""Atomic file output: write to a temporary file beside the target, then rename."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; rename it onto ``path`` only on success."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        tmp.replace(target)
    finally:
        tmp.unlink(missing_ok=True)


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically and return the path."""
    with atomic_path(path) as tmp, tmp.open("w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    return Path(path)


def atomic_write_json(path: str | os.PathLike[str], payload: Any) -> Path:
    """Write ``payload`` as indented JSON to ``path`` atomically."""
    return atomic_write_text(path, json.dumps(to_jsonable(payload), indent=2) + "\n")


def to_jsonable(value: Any) -> Any:
    """Convert numpy / pandas containers and paths into plain JSON-ready Python objects."""
    import numpy as np
    import pandas as pd

    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, pd.Series):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, pd.DataFrame):
        return to_jsonable(value.to_dict(orient="split"))
    if isinstance(value, Path):
        return str(value)
    return value
