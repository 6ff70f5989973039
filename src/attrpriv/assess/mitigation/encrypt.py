"""Deterministic AES-SIV (RFC 5297) encryption of values: protects data at rest, not what a model
learns (frequencies survive). Keys never appear in results. See docs/assess/mitigation.md.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESSIV

from attrpriv._checks import Rule, optional
from attrpriv.assess.mitigation.base import (
    Strategy,
    Transformed,
    Work,
    check_inputs,
    is_numeric,
    with_values,
)
from attrpriv.errors import InputError

KEY_SIZES = (32, 48, 64)  # AES-SIV: two AES-128, -192 or -256 keys


class Encrypt(Strategy):
    """Deterministic AES-SIV encryption of each value's string form, as base64 tokens."""

    name = "encrypt"

    _constraints: ClassVar[Mapping[str, Rule]] = {
        "key": optional(Rule(f"a key of {KEY_SIZES} bytes", lambda value, name: _check_key(value))),
    }

    def __init__(self, key: bytes | None = None) -> None:
        self.key = key
        self._generated: bytes | None = None

    def __repr__(self) -> str:
        return "Encrypt(key=<hidden>)"

    def export_key(self) -> bytes:
        """The key in use (generated on first use when none was given). Keep it secret."""
        if self.key is not None:
            return _check_key(self.key)
        if self._generated is None:
            self._generated = AESSIV.generate_key(bit_length=512)
        return self._generated

    def _transform(self, work: Work) -> Transformed:
        X, features = work.X, work.features
        cipher = AESSIV(self.export_key())
        numeric = [f for f in features if is_numeric(X[f])]
        for feature in features:
            column = X[feature]
            tokens = {v: _encrypt(cipher, feature, v) for v in pd.unique(column.dropna())}
            X[feature] = with_values(column, _mapped(column, tokens), list(tokens.values()))
        params: dict[str, Any] = {
            "cipher": "AES-SIV",
            "key_bits": 8 * len(self.export_key()),
            "encoding": "base64",
        }
        if numeric:
            params["note"] = (
                f"numeric {numeric} became unordered categories: a lower score comes from the "
                "lost order (less information, as with generalization), not from encryption"
            )
        return X, params, None

    def decrypt(self, X: pd.DataFrame, features: Sequence[str]) -> pd.DataFrame:
        """A new frame with ``features`` decrypted back to the original values' string forms."""
        frame, names = check_inputs(X, features)
        cipher, out = AESSIV(self.export_key()), frame.copy(deep=True)
        for feature in names:
            column = out[feature]
            plain = {v: _decrypt(cipher, feature, v) for v in pd.unique(column.dropna())}
            out[feature] = _mapped(column, plain)
        return out


def _mapped(column: pd.Series, table: dict[Any, str]) -> np.ndarray:
    """The column's values looked up in ``table`` (missing values stay missing), as objects."""
    return np.array([None if pd.isna(v) else table[v] for v in column], dtype=object)


def _check_key(key: object) -> bytes:
    if not isinstance(key, bytes) or len(key) not in KEY_SIZES:
        size = len(key) if isinstance(key, bytes) else type(key).__name__
        raise InputError(f"key must be {KEY_SIZES} bytes long (AES-SIV), got {size}")
    return key


def _encrypt(cipher: AESSIV, feature: str, value: Any) -> str:
    token = cipher.encrypt(str(value).encode("utf-8"), [feature.encode("utf-8")])
    return base64.urlsafe_b64encode(token).decode("ascii")


def _decrypt(cipher: AESSIV, feature: str, token: Any) -> str:
    try:
        raw = base64.urlsafe_b64decode(str(token).encode("ascii"))
        return cipher.decrypt(raw, [feature.encode("utf-8")]).decode("utf-8")
    except (InvalidTag, binascii.Error, ValueError, UnicodeError):
        raise InputError(
            f"column {feature!r}: a value is not a token of this key and column"
        ) from None
