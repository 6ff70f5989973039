"""Saving and loading a fitted GlobalDecoupler: JSON config + torch state dicts, never pickle.

Also the keyed-hash fingerprint of the training rows (never their values).
"""

from __future__ import annotations

import hashlib
import json
import math
import secrets
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pandas as pd
import torch

from attrpriv.errors import InputError

CONFIG_FILE, WEIGHTS_FILE, FORMAT = "decoupler.json", "weights.pt", "attrpriv-decoupler/1"
FINGERPRINT_FILE = "fingerprint.npz"
SCHEME = "attrpriv-rows/1"
"""Keyed BLAKE2b (64-bit digests, a random 128-bit key per model) of each row's canonical values."""

_MISSING = "\x00"  # a missing value (NaN, None, pd.NA, NaT): never the text of a present one


# -- the fingerprint of the training rows ----------------------------------------------------
@dataclass(frozen=True, eq=False)
class RowFingerprint:
    """Keyed hashes of the rows a decoupler was trained on: which rows, never their values.

    The sensitive column is left out, so neighbours get the same decision; the key is random
    per fit. ``repeated``: the share of training rows equal to another (the chance share).
    """

    key: bytes
    columns: tuple[str, ...]
    core_columns: tuple[str, ...]
    rows: np.ndarray
    core: np.ndarray
    n_rows: int
    repeated: float = 0.0
    repeated_core: float = 0.0

    @classmethod
    def of_table(
        cls, frame: pd.DataFrame, columns: Sequence[str], core_columns: Sequence[str]
    ) -> RowFingerprint:
        """The fingerprint of the rows of ``frame`` over ``columns`` (and ``core_columns``)."""
        key = secrets.token_bytes(16)
        cells: dict[str, np.ndarray] = {}  # each column made canonical once, for both sets
        full = table_hashes(key, frame, columns, cells)
        core = table_hashes(key, frame, core_columns, cells)
        return cls(key, tuple(columns), tuple(core_columns), np.unique(full), np.unique(core),
                   len(frame), _repeated(full), _repeated(core))  # fmt: skip

    @classmethod
    def of_images(cls, images: np.ndarray) -> RowFingerprint:
        """The fingerprint of ``images`` (float, (n, 1, h, w) in [0, 1])."""
        key = secrets.token_bytes(16)
        empty = np.zeros(0, dtype=np.uint64)
        hashes = image_hashes(key, images)
        return cls(key, (), (), np.unique(hashes), empty, len(images), _repeated(hashes))

    def chance(self, columns: tuple[str, ...]) -> float:
        """The share chance gives for a comparison on ``columns`` (as :meth:`match_table` says)."""
        return (
            self.repeated_core
            if columns == self.core_columns and columns != self.columns
            else self.repeated
        )

    def match_table(self, frame: pd.DataFrame) -> tuple[np.ndarray, tuple[str, ...]]:
        """Which rows of ``frame`` are training rows, and the columns they were compared on."""
        present = set(map(str, frame.columns))
        missing = [c for c in self.core_columns if c not in present]
        if missing:
            raise InputError(
                f"data lacks column(s) {missing} of the decoupler's training rows: cannot tell "
                "whether its rows were trained on"
            )
        if all(c in present for c in self.columns):
            columns, known = self.columns, self.rows
        else:
            columns, known = self.core_columns, self.core
        return np.isin(table_hashes(self.key, frame, columns), known), columns

    def match_images(self, images: np.ndarray) -> np.ndarray:
        """Which of ``images`` (float, (n, 1, h, w) in [0, 1]) are training images."""
        return np.isin(image_hashes(self.key, images), self.rows)

    def to_config(self) -> dict[str, Any]:
        """What ``decoupler.json`` says about the fingerprint (the digests go to an npz)."""
        return {
            "scheme": SCHEME,
            "key": self.key.hex(),
            "columns": list(self.columns),
            "core_columns": list(self.core_columns),
            "rows": self.n_rows,
            "distinct": len(self.rows),
            "repeated": self.repeated,
            "repeated_core": self.repeated_core,
            "file": FINGERPRINT_FILE,
        }


def _repeated(hashes: np.ndarray) -> float:
    """The share of the rows whose digest another row shares."""
    if hashes.size == 0:
        return 0.0
    _, inverse, counts = np.unique(hashes, return_inverse=True, return_counts=True)
    return float((counts[inverse] > 1).mean())


def _digests(key: bytes, items: Any) -> np.ndarray:
    """Little-endian uint64 keyed BLAKE2b digests of byte strings."""
    out = b"".join(hashlib.blake2b(item, key=key, digest_size=8).digest() for item in items)
    return np.frombuffer(out, dtype="<u8").astype(np.uint64)


def table_hashes(
    key: bytes,
    frame: pd.DataFrame,
    columns: Sequence[str],
    cells: dict[str, np.ndarray] | None = None,
) -> np.ndarray:
    """One keyed digest per row of ``frame`` over ``columns``, on canonical values."""
    cells = {} if cells is None else cells
    labels = {str(c): c for c in frame.columns}
    for name in columns:
        if name not in cells:
            cells[name] = _canonical(frame[labels[name]])
    if not columns:
        return _digests(key, (b"" for _ in range(len(frame))))
    rows = zip(*(cells[name].tolist() for name in columns), strict=True)
    return _digests(key, ("".join(row).encode("utf-8", "surrogatepass") for row in rows))


def image_hashes(key: bytes, images: np.ndarray) -> np.ndarray:
    """One keyed digest per image, of its pixels quantised to 8 bits (and its size)."""
    flat = np.round(np.clip(np.asarray(images, dtype=np.float64), 0.0, 1.0) * 255).astype(np.uint8)
    flat = flat.reshape(len(flat), -1)
    size = str(flat.shape[1]).encode()
    return _digests(key, (size + b":" + row.tobytes() for row in flat))


def _canonical(series: pd.Series) -> np.ndarray:
    """The length-prefixed canonical text of each value (each distinct value made once)."""
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    texts = [_cell(value) for value in list(uniques)] + [_MISSING]
    prefixed = np.asarray([f"{len(t)}:{t}" for t in texts], dtype=object)
    return np.asarray(prefixed[codes])  # a missing value's code -1 takes the last, the marker


def _cell(value: Any) -> str:
    if value is None or value is pd.NA or value is pd.NaT:
        return _MISSING
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return _number(float(value))
    return str(value)


def _number(value: float) -> str:
    if math.isnan(value):
        return _MISSING
    if value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    return format(value, ".15g")


# -- files -----------------------------------------------------------------------------------
def plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def write_files(
    directory: Path, config: dict[str, Any], weights: dict[str, Any], fingerprint: Any
) -> Path:
    """Write ``decoupler.json`` (``config``, with the fingerprint's entry), ``weights.pt`` (a
    dict of state dicts) and, with a ``RowFingerprint``, ``fingerprint.npz``; each atomically."""
    directory.mkdir(parents=True, exist_ok=True)
    config = {"format": FORMAT} | config
    if fingerprint is not None:
        config["fingerprint"] = fingerprint.to_config()
        tmp = directory / (FINGERPRINT_FILE + ".tmp")
        with tmp.open("wb") as handle:
            np.savez(handle, rows=fingerprint.rows, core=fingerprint.core)
        tmp.replace(directory / FINGERPRINT_FILE)
    else:  # a refit without one must not leave the earlier fit's file behind
        (directory / FINGERPRINT_FILE).unlink(missing_ok=True)
    tmp = directory / (WEIGHTS_FILE + ".tmp")
    torch.save(weights, tmp)
    tmp.replace(directory / WEIGHTS_FILE)
    tmp = directory / (CONFIG_FILE + ".tmp")
    tmp.write_text(json.dumps(config, indent=2))
    tmp.replace(directory / CONFIG_FILE)
    return directory


T = TypeVar("T")


def read_saved(directory: Path, build: Callable[[dict[str, Any]], T]) -> T:
    """``build(config)`` on the config of a saved decoupler; a directory that is not one, or
    that ``build`` fails on (other than with an InputError), is refused in one line."""
    config_path, weights_path = directory / CONFIG_FILE, directory / WEIGHTS_FILE
    if not config_path.is_file() or not weights_path.is_file():
        raise InputError(
            f"decoupler directory {str(directory)!r} lacks {CONFIG_FILE} or {WEIGHTS_FILE}"
        )
    try:
        config = json.loads(config_path.read_text())
    except json.JSONDecodeError as exc:
        raise InputError(f"decoupler config {str(config_path)!r} is not valid JSON: {exc}") from exc
    if not isinstance(config, dict) or config.get("format") != FORMAT:
        raise InputError(f"{str(config_path)!r} is not an attrpriv decoupler config ({FORMAT})")
    try:
        return build(config)
    except InputError:
        raise
    except Exception as exc:  # any failure to rebuild from disk means a damaged directory
        cause = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(
            f"decoupler directory {str(directory)!r} is damaged or does not match its config "
            f"({type(exc).__name__}: {cause}); refit and save it again"
        ) from None


def read_weights(path: Path) -> Any:
    """The tensors of a weights file, loaded with ``weights_only=True``; a file that holds any
    other Python object (a pickle that could run code) is refused in one line, never run."""
    import pickle

    import torch

    with warnings.catch_warnings():  # torch warns about the pickle protocol of such a file
        warnings.simplefilter("ignore", UserWarning)
        try:
            return torch.load(path, weights_only=True)
        except pickle.UnpicklingError as exc:
            if not str(exc).startswith("Weights only load failed") or not _is_pickle(path):
                # a damaged file (the caller says so), without torch's advice to load it unsafely
                raise ValueError(f"{path.name} cannot be read as tensors") from None
            raise InputError(
                f"{str(path)!r} holds Python objects besides tensors (a pickle, which could run "
                "code): it is refused and was not run; refit the decoupler and save it with "
                "attrpriv"
            ) from None


def _is_pickle(path: Path) -> bool:
    """Whether ``path`` is one well-formed pickle stream (read op by op, never run)."""
    import pickletools

    try:
        for _ in pickletools.genops(path.read_bytes()):
            pass
    except Exception:  # ValueError, struct errors: not a pickle
        return False
    return True


def read_fingerprint(spec: Any, directory: Path) -> RowFingerprint | None:
    """The stored fingerprint, or None for a decoupler saved without one (an older version)."""
    if spec is None:
        return None
    if spec.get("scheme") != SCHEME:
        raise InputError(
            f"decoupler directory {str(directory)!r} has a training-row fingerprint of scheme "
            f"{spec.get('scheme')!r}, not {SCHEME!r} (another version?)"
        )
    with np.load(directory / str(spec["file"]), allow_pickle=False) as arrays:
        rows, core = arrays["rows"].astype(np.uint64), arrays["core"].astype(np.uint64)
    if len(rows) != int(spec["distinct"]):
        raise ValueError(f"{spec['file']} holds {len(rows)} digests, not {spec['distinct']}")
    return RowFingerprint(
        bytes.fromhex(spec["key"]),
        tuple(spec["columns"]),
        tuple(spec["core_columns"]),
        rows,
        core,
        int(spec["rows"]),
        float(spec.get("repeated", 0.0)),
        float(spec.get("repeated_core", 0.0)),
    )
