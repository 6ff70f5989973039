"""The resampling model Theta: the n private records are i.i.d. draws from a public reference.

F given the count of a category has closed-form moments and, for one integer variable, an
exact pmf. See docs/mechanisms/attribute-private-gaussian.md, "Statistics, secrets and models".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import signal

from attrpriv._checks import check_positive_int
from attrpriv.data.schema import Schema
from attrpriv.errors import InputError
from attrpriv.release.gaussian.query import (
    Array,
    Query,
    Secret,
    Statistic,
    check_secret_range,
    design_matrix,
)
from attrpriv.release.gaussian.theta import Conditional, ThetaModel

_CHUNK = 2**22  # floats gathered at a time when drawing datasets


@dataclass(frozen=True)
class _Groups:
    """Query variables on reference rows with/without the secret category: means, covariances."""

    pos: Array
    neg: Array
    mu_pos: Array
    mu_neg: Array
    cov_pos: Array
    cov_neg: Array


class ResamplingModel(ThetaModel):
    """Theta: n records drawn i.i.d. from a public ``reference`` DataFrame.

    The secret is the share or count of a category among the n records. See
    docs/mechanisms/attribute-private-gaussian.md.

    Parameters
    ----------
    reference : pandas.DataFrame
        Public data with the columns the query and the secrets use.
    schema : Schema
        The public domains (categories are matched against them).
    n : int
        The number of private records (>= 2).
    draws : int, optional
        Datasets drawn per secret value for the Monte Carlo checks and Algorithm 2 (>= 100).
    seed : int or None, optional
        Seed of those draws (public computations, not privacy noise).
    """

    gaussian = False

    def __init__(
        self,
        reference: pd.DataFrame,
        schema: Schema,
        n: int,
        *,
        draws: int = 20_000,
        seed: int | None = 0,
    ) -> None:
        if not isinstance(reference, pd.DataFrame) or len(reference) == 0:
            raise InputError("reference must be a non-empty pandas DataFrame")
        if not isinstance(schema, Schema):
            raise InputError(f"schema must be an attrpriv Schema, got {type(schema).__name__}")
        self.reference = reference
        self.schema = schema
        self.n = check_positive_int(n, "n", minimum=2)
        self.draws = check_positive_int(draws, "draws", minimum=100)
        self.seed = seed
        self._cache: dict[tuple[Query, Statistic], _Groups] = {}

    # -- the model ---------------------------------------------------------------------------
    def support(self, secret: Secret) -> tuple[float, ...]:
        """The secret values to consider: for an interval, every share ``k / n`` (or count ``k``) in
        it.

        Parameters
        ----------
        secret : Secret
            A secret on the share or count of a category.

        Returns
        -------
        tuple of float
            The secret's values.

        Raises
        ------
        InputError
            Not a share or count, or a value out of range, off the ``1 / n`` grid or not drawable.
        SchemaError
            The column is not in the schema, or the reference is outside its domain.
        """
        stat = self._secret_statistic(secret)
        groups = self._groups(Query((stat,)), stat)
        if secret.interval is not None:
            lo, hi = (v if stat.is_mean else v / self.n for v in secret.interval)
            ks = range(math.ceil(lo * self.n - 1e-9), math.floor(hi * self.n + 1e-9) + 1)
            values = tuple(k / self.n if stat.is_mean else float(k) for k in ks)
            if len(values) < 2:
                raise InputError(f"secret {secret.describe()} holds fewer than two values at n")
        else:
            values = secret.candidate_values()
        check_secret_range(secret, values, self.n, None)
        for value in values:
            k = self._count(stat, value)
            if (k > 0 and groups.pos.shape[0] == 0) or (k < self.n and groups.neg.shape[0] == 0):
                raise InputError(
                    f"secret {stat} value {value:g} is outside the support: the reference has "
                    f"{groups.pos.shape[0]} rows with {stat.variable} and {groups.neg.shape[0]} "
                    "without"
                )
        return values

    def conditional(self, query: Query, secret: Secret, value: float) -> Conditional:
        """Mean and covariance of F given ``secret == value`` (closed forms).

        Parameters
        ----------
        query, secret, value
            As in :meth:`ThetaModel.conditional` (``secret`` on the share or count of a category).

        Returns
        -------
        Conditional
            The closed forms of its mean and covariance.

        Raises
        ------
        InputError
            The secret or ``value`` is invalid, or a statistic does not fit the reference.
        SchemaError
            A column is not in the schema, or the reference is outside its domain.
        """
        stat = self._secret_statistic(secret)
        g = self._groups(query, stat)
        k = self._count(stat, value)
        scale = query.scales(self.n)
        mean = (k * g.mu_pos + (self.n - k) * g.mu_neg) * scale
        cov = (k * g.cov_pos + (self.n - k) * g.cov_neg) * np.outer(scale, scale)
        return Conditional(mean, cov)

    def sample(
        self, query: Query, secret: Secret, value: float, size: int, rng: np.random.Generator
    ) -> Array:
        """F on ``size`` datasets: k rows drawn from the category's rows, n - k from the rest.

        Parameters
        ----------
        query, secret, value, size, rng
            As in :meth:`ThetaModel.sample` (``value`` fixes k).

        Returns
        -------
        numpy.ndarray
            float64, one row per dataset.
        """
        stat = self._secret_statistic(secret)
        g = self._groups(query, stat)
        k = self._count(stat, value)
        out = np.empty((size, query.size))
        chunk = max(1, _CHUNK // (self.n * query.size))
        for start in range(0, size, chunk):
            m = min(chunk, size - start)
            total = np.zeros((m, query.size))
            if k:
                total += g.pos[rng.integers(0, g.pos.shape[0], (m, k))].sum(axis=1)
            if self.n - k:
                total += g.neg[rng.integers(0, g.neg.shape[0], (m, self.n - k))].sum(axis=1)
            out[start : start + m] = total * query.scales(self.n)
        return out

    def pmf(self, query: Query, secret: Secret, value: float) -> tuple[Array, Array] | None:
        """Exact law of a scalar F over an integer-valued variable (by convolution).

        Parameters
        ----------
        query, secret, value
            As in :meth:`ThetaModel.conditional` (only a query of one statistic has a pmf).

        Returns
        -------
        tuple of numpy.ndarray or None
            ``(atoms, probabilities)``; ``None`` for several statistics or a non-integer variable.
        """
        if query.size != 1:
            return None
        stat = self._secret_statistic(secret)
        g = self._groups(query, stat)
        values = np.concatenate([g.pos[:, 0], g.neg[:, 0]])
        if not np.array_equal(values, np.round(values)):
            return None
        k = self._count(stat, value)
        off_pos, pmf_pos = _sum_pmf(g.pos[:, 0], k)
        off_neg, pmf_neg = _sum_pmf(g.neg[:, 0], self.n - k)
        probs = _convolve(pmf_pos, pmf_neg)
        atoms = (off_pos + off_neg + np.arange(probs.size)) * query.scales(self.n)[0]
        keep = probs > 0.0
        return atoms[keep], probs[keep] / probs[keep].sum()

    def moment_check(self, query: Query, secret: Secret) -> dict[str, Any]:
        """Monte Carlo moments (``draws`` per value, seeded) against the closed forms.

        Parameters
        ----------
        query, secret
            As in :meth:`ThetaModel.conditional`.

        Returns
        -------
        dict
            ``draws``, ``max_mean_error_sd`` and ``max_cov_rel_error``.
        """
        rng = np.random.default_rng(self.seed)
        mean_err, cov_err = 0.0, 0.0
        for value in self.support(secret):
            exact = self.conditional(query, secret, value)
            draws = self.sample(query, secret, value, self.draws, rng)
            sd = np.sqrt(np.clip(np.diag(exact.cov), 1e-300, None))
            mean_err = max(mean_err, float(np.max(np.abs(draws.mean(axis=0) - exact.mean) / sd)))
            mc_cov = np.atleast_2d(np.cov(draws, rowvar=False))
            norm = max(float(np.linalg.norm(exact.cov)), 1e-300)
            cov_err = max(cov_err, float(np.linalg.norm(mc_cov - exact.cov)) / norm)
        return {"draws": self.draws, "max_mean_error_sd": mean_err, "max_cov_rel_error": cov_err}

    def describe(self) -> dict[str, Any]:
        """A JSON-ready description for privacy records.

        Returns
        -------
        dict
            ``type`` (``"resampling"``), ``n``, ``reference_rows``, ``draws`` and ``seed``.
        """
        return {
            "type": "resampling",
            "n": self.n,
            "reference_rows": len(self.reference),
            "draws": self.draws,
            "seed": self.seed,
        }

    # -- internals ---------------------------------------------------------------------------
    def _secret_statistic(self, secret: Secret) -> Statistic:
        stat = secret.statistic
        if not stat.is_indicator:
            raise InputError(
                f"secret {stat}: the resampling model protects the share or count of a category "
                "(share(column=value) or count(column=value)); use a GaussianModel for a mean"
            )
        return stat

    def _count(self, stat: Statistic, value: float) -> int:
        """The number k of records with the category when the secret equals ``value``."""
        k = value * self.n if stat.is_mean else value
        if abs(k - round(k)) > 1e-9 * max(1.0, abs(k)):
            unit = f"a multiple of 1/n = {1 / self.n:g}" if stat.is_mean else "an integer"
            raise InputError(f"secret {stat} value {value:g} must be {unit} (n = {self.n})")
        return round(k)

    def _groups(self, query: Query, stat: Statistic) -> _Groups:
        key = (query, stat)
        if key not in self._cache:
            matrix = design_matrix(self.reference, self.schema, (*query.statistics, stat))
            inside = matrix[:, -1] == 1.0
            pos, neg = matrix[inside, :-1], matrix[~inside, :-1]
            (mu_pos, cov_pos), (mu_neg, cov_neg) = _moments(pos), _moments(neg)
            self._cache[key] = _Groups(pos, neg, mu_pos, mu_neg, cov_pos, cov_neg)
        return self._cache[key]


def _moments(rows: Array) -> tuple[Array, Array]:
    """Mean and population covariance (zero when there are no rows: the group is never drawn)."""
    width = rows.shape[1]
    if rows.shape[0] == 0:
        return np.zeros(width), np.zeros((width, width))
    centred = rows - rows.mean(axis=0)
    return rows.mean(axis=0), centred.T @ centred / rows.shape[0]


def _sum_pmf(values: Array, count: int) -> tuple[int, Array]:
    """Offset and pmf of the sum of ``count`` i.i.d. draws from integer ``values``."""
    if count == 0 or values.size == 0:
        return 0, np.ones(1)
    ints = values.astype(np.int64)
    low = int(ints.min())
    base = np.bincount(ints - low).astype(np.float64) / ints.size
    result, offset = np.ones(1), 0
    power, power_offset = base, low
    while count:
        if count & 1:
            result, offset = _convolve(result, power), offset + power_offset
        count >>= 1
        if count:
            power, power_offset = _convolve(power, power), 2 * power_offset
    return offset, result


def _convolve(a: Array, b: Array) -> Array:
    """Convolution of two pmfs (FFT; negative round-off is clipped to 0)."""
    out = np.clip(np.asarray(signal.fftconvolve(a, b), dtype=np.float64), 0.0, None)
    return np.asarray(out / out.sum(), dtype=np.float64)


__all__ = ["ResamplingModel"]
