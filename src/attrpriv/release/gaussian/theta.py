"""Models Theta of the data for the attribute-private Gaussian mechanism.

Queries and secrets (:mod:`attrpriv.release.gaussian.query`) are sums or means of per-record
variables. A model describes the distribution of the n records (the ``theta`` of the Pufferfish
framework): :class:`GaussianModel` (records i.i.d. multivariate Gaussian, closed forms, Section
4.3 of the paper) and :class:`~attrpriv.release.gaussian.resampling.ResamplingModel` (records
i.i.d. from a public reference dataset). A model answers: which secret values are in its
support, and what is the conditional mean and covariance of F given that a secret takes a value.
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
        """Mean and covariance of F given ``secret == value``."""

    @abstractmethod
    def sample(
        self, query: Query, secret: Secret, value: float, size: int, rng: np.random.Generator
    ) -> Array:
        """``size`` draws of F (rows) on datasets drawn from the model with ``secret == value``."""

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """A JSON-ready description for privacy records."""

    def approximation_cov(self, query: Query, secret: Secret) -> Array:
        """The covariance shared by the Gaussian approximations of F given each secret value
        (Algorithm 2 needs one per secret): the mean of the conditional covariances."""
        covs = [self.conditional(query, secret, v).cov for v in self.support(secret)]
        return np.asarray(np.mean(covs, axis=0), dtype=np.float64)

    def pmf(self, query: Query, secret: Secret, value: float) -> tuple[Array, Array] | None:
        """The exact distribution of a scalar F given the secret, when finite and known."""
        return None

    def moment_check(self, query: Query, secret: Secret) -> dict[str, Any] | None:
        """Monte Carlo check of the conditional moments, for models that estimate them."""
        return None


class GaussianModel(ThetaModel):
    """Records i.i.d. N(mean, cov) over named per-record variables (Section 4.3 of the paper).

    Given the mean of variable i equal to a, the mean of the other variables is Gaussian with
    mean ``mu_J + V_Ji / V_ii (a - mu_i)`` and covariance ``(V_JJ - V_Ji V_iJ / V_ii) / n``.
    ``bounds`` (optional) gives each variable's public range, the support of mean secrets.

    The model is exact only for Gaussian records. On *discrete* variables (a category's
    indicator, named ``column=value``, or any variable listed in ``discrete``; at release, every
    integer column of the schema too) F given a secret is a sum of discrete records, and the
    delta this model states can be several times too small; the mechanism refuses such a model
    unless ``force=True`` (the record then says so). :meth:`from_data` keeps its reference data,
    against which the mechanism checks the model's conditional moments before a release.

    Parameters
    ----------
    variables : sequence of str
        The k per-record variables: distinct non-empty names, a column (``"age"``) or a
        category's indicator (``"sex=Female"``).
    mean : sequence of float
        The mean of a record, one finite value per variable.
    cov : sequence of sequence of float
        The ``k x k`` covariance of a record: finite, symmetric and positive semi-definite.
    n : int
        The number of records in a dataset (an integer >= 1).
    bounds : mapping of str to tuple of float, optional
        ``(lower, upper)``, the public range of some variables (used as it is, not checked):
        the support of secrets on their means.
    discrete : sequence of str, optional
        Variables that are discrete (a single string is ignored); indicators are always.
    force : bool, optional
        Let the mechanism use the model although some variables are discrete.

    Raises
    ------
    InputError
        ``variables`` is not a list of distinct non-empty names, ``mean`` or ``cov`` does not
        fit them, ``n`` is not an integer >= 1, ``discrete`` names unknown variables, or
        ``force`` is not a bool.
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
        """Mean and covariance of per-record variables estimated from public reference data.

        Indicators and integer columns are discrete: refused by the mechanism unless ``force``.

        The covariance is the sample covariance (``ddof=1``); each variable's bounds are its
        public domain (``[0, 1]`` for an indicator).

        Parameters
        ----------
        reference : pandas.DataFrame
            Public data with the variables' columns, without missing values.
        schema : Schema
            The public domains; the reference columns are validated against them.
        variables : sequence of str or Statistic
            The per-record variables: ``"age"`` (a numeric or integer column),
            ``"sex=Female"`` (a category's indicator), or statistics (their variables).
        n : int
            The number of records in a dataset (an integer >= 1).
        force : bool, optional
            As for :class:`GaussianModel`.

        Returns
        -------
        GaussianModel
            The fitted model, with ``reference`` and ``schema`` kept for the mechanism's
            moment check.

        Raises
        ------
        InputError
            ``reference`` is not a DataFrame, lacks a column or has missing values in it, a
            variable is not a valid name or does not fit its column's domain (a categorical
            column without a category, a category outside the domain or of a continuous
            column), or the estimated model is invalid (e.g. from a single row).
        SchemaError
            A column is not in the schema, or the reference has values outside its domain.
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
            The index of ``statistic.variable`` in ``variables``.

        Raises
        ------
        InputError
            The statistic's variable is not in the model.
        """
        try:
            return self.variables.index(statistic.variable)
        except ValueError:
            raise InputError(
                f"statistic {statistic}: variable {statistic.variable!r} is not in the model; "
                f"it has {list(self.variables)}"
            ) from None

    def support(self, secret: Secret) -> tuple[float, ...]:
        """The secret values to consider; :class:`InputError` for values outside the support.

        Parameters
        ----------
        secret : Secret
            A secret on one of the model's variables.

        Returns
        -------
        tuple of float
            :meth:`Secret.candidate_values` (the interval's end points for an interval).

        Raises
        ------
        InputError
            The secret's variable is not in the model, a value is outside the support (a
            share outside [0, 1], a count outside [0, n], a mean outside the variable's
            ``bounds`` where given), or the variable has zero variance and the secret more
            than one value.
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
        """Mean and covariance of F given ``secret == value`` (closed form, see above).

        Parameters
        ----------
        query : Query
            The released statistics, over the model's variables.
        secret : Secret
            The protected statistic, over one of the model's variables.
        value : float
            The value of the secret's statistic (on its own scale).

        Returns
        -------
        Conditional
            ``mean`` (shape ``(k,)``) and ``cov`` (shape ``(k, k)``) of F given the secret.

        Raises
        ------
        InputError
            A statistic of ``query`` or the secret's is not over a variable of the model.
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
        """Draw whole datasets of n records, condition each on the secret exactly (Matheron's
        rule: shift every record by ``V_.i / V_ii (a - mean_i)``) and compute F on it.

        Parameters
        ----------
        query : Query
            The released statistics, over the model's variables.
        secret : Secret
            The protected statistic, over one of the model's variables.
        value : float
            The value of the secret's statistic (on its own scale).
        size : int
            The number of datasets to draw.
        rng : numpy.random.Generator
            The source of randomness.

        Returns
        -------
        numpy.ndarray
            float64 of shape ``(size, k)``: F on each dataset.

        Raises
        ------
        InputError
            A statistic of ``query`` or the secret's is not over a variable of the model.
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
            ``type`` (``"gaussian"``), ``n``, ``variables``, ``mean``, ``cov``, ``discrete``,
            ``force`` and ``reference_rows`` (``None`` unless made by :meth:`from_data`).
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
