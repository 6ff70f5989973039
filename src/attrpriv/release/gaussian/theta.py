"""Models Theta of the data for the attribute-private Gaussian mechanism.

A model gives the support of a secret and the conditional mean and covariance of F given its
value. See docs/mechanisms/attribute-private-gaussian.md, "Statistics, secrets and models".
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from attrpriv._checks import check_flag, check_positive_int
from attrpriv.data.schema import Integer, Schema
from attrpriv.errors import InputError
from attrpriv.release.gaussian.calibration import check_covariance
from attrpriv.release.gaussian.query import (
    Array,
    Query,
    Secret,
    Statistic,
    check_secret_range,
    design_matrix,
    secret_per_record,
    variable_bounds,
)


@dataclass(frozen=True)
class Conditional:
    """Mean and covariance of the query F given that a secret takes a value."""

    mean: Array
    cov: Array


class ThetaModel(ABC):
    """The distribution of the n private records (one theta); see the module docstring."""

    n: int
    gaussian: ClassVar[bool]
    """True when F given a secret is exactly Gaussian (Algorithm 1 applies as is)."""
    draws: int = 20_000
    """Datasets drawn per secret value where draws are needed (Algorithm 2, checks)."""
    seed: int | None = 0
    """Seed of those draws (public computations, not privacy noise)."""

    @abstractmethod
    def support(self, secret: Secret) -> tuple[float, ...]:
        """The secret values to consider; :class:`InputError` for values outside the support."""

    @abstractmethod
    def conditional(self, query: Query, secret: Secret, value: float) -> Conditional:
        """``mean`` (shape ``(k,)``) and ``cov`` (``(k, k)``) of F, the ``query``'s statistics,
        given that the ``secret``'s statistic equals ``value`` (on its own scale)."""

    @abstractmethod
    def sample(
        self, query: Query, secret: Secret, value: float, size: int, rng: np.random.Generator
    ) -> Array:
        """``size`` draws of F (float64, shape ``(size, k)``), one per dataset drawn with ``rng``
        from the model with ``secret == value`` (as in :meth:`conditional`)."""

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """A JSON-ready description for privacy records."""

    def approximation_cov(self, query: Query, secret: Secret) -> Array:
        """Covariance shared by F's Gaussian approximations: mean conditional covariance."""
        covs = [self.conditional(query, secret, v).cov for v in self.support(secret)]
        return np.asarray(np.mean(covs, axis=0), dtype=np.float64)

    def pmf(self, query: Query, secret: Secret, value: float) -> tuple[Array, Array] | None:
        """The exact distribution of a scalar F given the secret, when finite and known."""
        return None

    def moment_check(self, query: Query, secret: Secret) -> dict[str, Any] | None:
        """Monte Carlo check of the conditional moments, for models that estimate them."""
        return None


class GaussianModel(ThetaModel):
    """Records i.i.d. N(mean, cov) over named per-record variables (closed forms).

    Exact only for Gaussian records: on discrete variables (indicators, ``discrete``, integer
    columns) its delta can be too small, so the mechanism refuses it unless ``force=True``. See
    docs/mechanisms/attribute-private-gaussian.md.

    Parameters
    ----------
    variables : sequence of str
        Distinct names: a column (``"age"``) or a category's indicator (``"sex=Female"``).
    mean : sequence of float
        The mean of a record, one finite value per variable.
    cov : sequence of sequence of float
        The ``k x k`` covariance of a record: finite, symmetric, positive semi-definite.
    n : int
        The number of records in a dataset (>= 1).
    bounds : mapping of str to tuple of float, optional
        ``(lower, upper)`` public ranges (not checked): the support of mean secrets.
    discrete : sequence of str, optional
        Variables that are discrete (indicators always are).
    force : bool, optional
        Let the mechanism use the model although some variables are discrete.
    """

    gaussian = True

    def __init__(
        self,
        variables: Sequence[str],
        mean: Sequence[float],
        cov: Sequence[Sequence[float]],
        n: int,
        *,
        bounds: Mapping[str, tuple[float, float]] | None = None,
        discrete: Sequence[str] = (),
        force: bool = False,
    ) -> None:
        names = tuple(variables) if not isinstance(variables, str) else ()
        if not names or not all(isinstance(v, str) and v for v in names):
            raise InputError(f"variables must be a list of names, got {variables!r}")
        if len(set(names)) != len(names):
            raise InputError(f"variables must be distinct, got {list(names)}")
        self.variables = names
        self.mean = _vector(mean, "mean", len(names))
        self.cov = check_covariance(cov, "model covariance", len(names))
        self.n = check_positive_int(n, "n")
        self.bounds = dict(bounds or {})
        listed = () if isinstance(discrete, str) else tuple(discrete)
        unknown = sorted(set(listed) - set(names))
        if unknown:
            raise InputError(f"discrete variables {unknown} are not among the model's {names}")
        self.discrete = tuple(v for v in names if v in listed or "=" in v)
        self.force = check_flag(force, "force")
        self.reference: pd.DataFrame | None = None
        self.schema: Schema | None = None

    @classmethod
    def from_data(
        cls,
        reference: Any,
        schema: Schema,
        variables: Sequence[str | Statistic],
        n: int,
        *,
        force: bool = False,
    ) -> GaussianModel:
        """A model estimated from public reference data (sample covariance, ``ddof=1``).

        Indicators and integer columns are discrete: refused by the mechanism unless ``force``.

        Parameters
        ----------
        reference : pandas.DataFrame
            Public data with the variables' columns, without missing values.
        schema : Schema
            The public domains; the reference columns are validated against them.
        variables : sequence of str or Statistic
            ``"age"``, ``"sex=Female"``, or statistics (their variables).
        n : int
            The number of records in a dataset (>= 1).
        force : bool, optional
            As for :class:`GaussianModel`.

        Returns
        -------
        GaussianModel
            The fitted model, keeping ``reference`` and ``schema`` for the moment check.

        Raises
        ------
        InputError
            The reference or a variable is invalid, or the estimate is (e.g. from one row).
        SchemaError
            A column is not in the schema, or the reference is outside its domain.
        """
        stats = [_as_variable_stat(v) for v in variables]
        matrix = design_matrix(reference, schema, stats)
        names = [s.variable for s in stats]
        bounds = {s.variable: variable_bounds(schema, s) for s in stats}
        discrete = [s.variable for s in stats if is_discrete(schema, s)]
        cov = np.atleast_2d(np.cov(matrix, rowvar=False, ddof=1))
        model = cls(
            names,
            matrix.mean(axis=0).tolist(),
            cov.tolist(),
            n,
            bounds=bounds,
            discrete=discrete,
            force=force,
        )
        model.reference, model.schema = reference, schema
        return model

    def index(self, statistic: Statistic) -> int:
        """The position of a statistic's per-record variable among :attr:`variables`.

        Parameters
        ----------
        statistic : Statistic
            A statistic over one of the model's variables.

        Returns
        -------
        int
            The index of ``statistic.variable``.
        """
        try:
            return self.variables.index(statistic.variable)
        except ValueError:
            raise InputError(
                f"statistic {statistic}: variable {statistic.variable!r} is not in the model; "
                f"it has {list(self.variables)}"
            ) from None

    def support(self, secret: Secret) -> tuple[float, ...]:
        """The secret values to consider.

        Parameters
        ----------
        secret : Secret
            A secret on one of the model's variables.

        Returns
        -------
        tuple of float
            :meth:`Secret.candidate_values`.

        Raises
        ------
        InputError
            Unknown variable, a value outside the support, or several values of a constant variable.
        """
        i = self.index(secret.statistic)
        values = secret.candidate_values()
        check_secret_range(secret, values, self.n, self.bounds.get(secret.statistic.variable))
        if self.cov[i, i] <= 0.0 and len(set(values)) > 1:
            raise InputError(
                f"secret {secret.statistic}: its variable has zero variance in the model, so it "
                "cannot take different values"
            )
        return values

    def conditional(self, query: Query, secret: Secret, value: float) -> Conditional:
        """Mean and covariance of F given ``secret == value`` (closed form).

        Parameters
        ----------
        query, secret, value
            As in :meth:`ThetaModel.conditional`, over the model's variables.

        Returns
        -------
        Conditional
            Its mean and covariance.
        """
        i = self.index(secret.statistic)
        cols = [self.index(s) for s in query.statistics]
        a = secret_per_record(secret.statistic, value, self.n)
        gain = self.cov[cols, i] / self.cov[i, i]
        mean = self.mean[cols] + gain * (a - self.mean[i])
        cov = (self.cov[np.ix_(cols, cols)] - np.outer(gain, self.cov[i, cols])) / self.n
        scale = query.scales(self.n) * self.n  # statistic = scale * n * (per-record mean)
        return Conditional(mean * scale, (cov + cov.T) / 2.0 * np.outer(scale, scale))

    def sample(
        self, query: Query, secret: Secret, value: float, size: int, rng: np.random.Generator
    ) -> Array:
        """F on ``size`` datasets of n records, each conditioned exactly on the secret.

        Parameters
        ----------
        query, secret, value, size, rng
            As in :meth:`ThetaModel.sample`, over the model's variables.

        Returns
        -------
        numpy.ndarray
            The draws, one row each.
        """
        i = self.index(secret.statistic)
        cols = [self.index(s) for s in query.statistics]
        a = secret_per_record(secret.statistic, value, self.n)
        root = _psd_root(self.cov)
        out = np.empty((size, query.size))
        chunk = max(1, 2**22 // (self.n * len(self.variables)))
        for start in range(0, size, chunk):
            m = min(chunk, size - start)
            noise = rng.standard_normal((m, len(self.variables), self.n))  # the records' noise
            means = self.mean + noise.mean(axis=2) @ root.T  # = mean of mu + noise_j root^T
            means = means + np.outer(a - means[:, i], self.cov[:, i] / self.cov[i, i])
            out[start : start + m] = means[:, cols] * query.scales(self.n) * self.n
        return out

    def describe(self) -> dict[str, Any]:
        """A JSON-ready description for privacy records.

        Returns
        -------
        dict
            ``type`` (``"gaussian"``), the parameters and ``reference_rows``.
        """
        return {
            "type": "gaussian",
            "n": self.n,
            "variables": list(self.variables),
            "mean": self.mean.tolist(),
            "cov": self.cov.tolist(),
            "discrete": list(self.discrete),
            "force": self.force,
            "reference_rows": None if self.reference is None else len(self.reference),
        }


def is_discrete(schema: Schema, statistic: Statistic) -> bool:
    """A category's indicator, or a column whose public domain is the integers."""
    return statistic.is_indicator or isinstance(schema.domain(statistic.column), Integer)


def _vector(values: object, name: str, size: int) -> Array:
    try:
        array = np.array(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a list of numbers") from None
    if array.shape != (size,):
        raise InputError(f"{name} must have {size} entries, got shape {array.shape}")
    if not np.isfinite(array).all():
        raise InputError(f"{name} has NaN or infinite entries")
    return array


def _psd_root(cov: Array) -> Array:
    """A matrix L with L L^T = cov (eigen-decomposition; works when cov is singular)."""
    values, vectors = np.linalg.eigh(cov)
    return np.asarray(vectors * np.sqrt(np.clip(values, 0.0, None)), dtype=np.float64)


def _as_variable_stat(variable: str | Statistic) -> Statistic:
    """``"age"`` -> mean(age); ``"sex=Female"`` -> share(sex=Female); statistics as they are."""
    if isinstance(variable, Statistic):
        return variable
    if not isinstance(variable, str) or not variable:
        raise InputError(f"variables must be names like 'age' or 'sex=Female', got {variable!r}")
    column, sep, value = variable.partition("=")
    return Statistic("share", column, value) if sep else Statistic("mean", column)


__all__ = ["Conditional", "GaussianModel", "ThetaModel", "is_discrete"]
