"""k-ary randomized response (Warner 1965; Kairouz, Oh & Viswanath 2014) from exact OpenDP bits:
replace with probability ``r = k / (e^eps + k - 1)`` by a uniform value (``r`` rounded safely).
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np

from attrpriv.dp.noise import NoiseSampler

_EXP_SAFETY = Fraction(1) - Fraction(1, 2**50)  # math.exp is within an ulp; stay below it


def keep_probability(epsilon: float, k: int) -> float:
    """Probability that k-ary randomized response reports the true value."""
    return 1.0 if k == 1 else 1.0 / (1.0 + (k - 1) * math.exp(-epsilon))


def privacy_ratio(r: float, k: int) -> Fraction:
    """Exact ratio P(report x | x) / P(report x | x') when replacing with probability r."""
    exact = Fraction(r)
    return Fraction(k) / exact - k + 1


def replace_probability(epsilon: float, k: int) -> float:
    """The smallest float r with ``privacy_ratio(r, k) <= e^epsilon`` (0 when k == 1)."""
    if k == 1:
        return 0.0
    r = min(1.0, k / (math.exp(epsilon) + k - 1))
    bound = Fraction(math.exp(epsilon)) * _EXP_SAFETY
    while r < 1.0 and privacy_ratio(r, k) > bound:
        r = math.nextafter(r, 2.0)
    return r


def realised_epsilon(r: float, k: int) -> float:
    """The epsilon that replacing with probability r over k values actually gives."""
    return 0.0 if k == 1 or r >= 1.0 else math.log(privacy_ratio(r, k))


class _BitSource:
    """Exact Bernoulli and uniform draws: OpenDP for a private sampler, numpy otherwise."""

    def __init__(self, sampler: NoiseSampler, seed: int = 0) -> None:
        self.private = bool(sampler.private)
        rng = getattr(sampler, "rng", None)
        self._rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(seed)

    def describe(self) -> dict[str, Any]:
        if self.private:
            return {"bits": "opendp make_randomized_response_bitvec (exact Bernoulli)"}
        return {"bits": "numpy (not private)"}

    def bernoulli(self, prob: float, size: int) -> np.ndarray:
        """``size`` independent booleans, each True with probability ``prob``."""
        if size == 0 or prob <= 0.0:
            return np.zeros(size, dtype=bool)
        if prob >= 1.0:
            return np.ones(size, dtype=bool)
        if not self.private:
            return np.asarray(self._rng.random(size) < prob)
        if prob > 0.5:  # 1 - prob is exact here (Sterbenz), and OpenDP needs f = 2p <= 1
            return ~self.bernoulli(1.0 - prob, size)
        return _opendp_bits(2.0 * prob, size)

    def uniform(self, k: int, size: int) -> np.ndarray:
        """``size`` independent integers uniform on {0, ..., k-1} (fair bits and rejection)."""
        out = np.zeros(size, dtype=np.int64)
        if k == 1 or size == 0:
            return out
        width = max(1, math.ceil(math.log2(k)))
        weights = np.left_shift(1, np.arange(width, dtype=np.int64))
        todo = np.arange(size)
        while todo.size:
            bits = self.bernoulli(0.5, todo.size * width).reshape(todo.size, width)
            draws = bits.astype(np.int64) @ weights
            ok = draws < k
            out[todo[ok]] = draws[ok]
            todo = todo[~ok]
        return out


@lru_cache(maxsize=64)
def _bitvec_measurement(f: float) -> Any:
    import opendp.prelude as dp

    dp.enable_features("contrib")
    domain = dp.bitvector_domain(max_weight=1)
    return dp.m.make_randomized_response_bitvec(domain, dp.discrete_distance(), f=f)


def _opendp_bits(f: float, size: int) -> np.ndarray:
    """``size`` exact Bernoulli(f / 2) bits: OpenDP's RAPPOR randomizer on an all-zero vector."""
    measurement = _bitvec_measurement(f)
    raw = measurement(bytes((size + 7) // 8))
    return np.unpackbits(np.frombuffer(raw, dtype=np.uint8))[:size].astype(bool)


def _randomized_response(codes: np.ndarray, k: int, r: float, bits: _BitSource) -> np.ndarray:
    """Replace each code in {0..k-1} with probability r by a uniform draw over all k codes."""
    replace = bits.bernoulli(r, codes.size)
    out = np.array(codes, dtype=np.int64, copy=True)
    out[replace] = bits.uniform(k, int(replace.sum()))
    return out
