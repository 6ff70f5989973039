"""Privacy noise: every private path draws from :class:`OpenDPNoise` (exact samplers); its grid
``2**k`` widens the sensitivity by :meth:`NoiseSampler.rounding_slack`. :class:`SeededNumpyNoise`
is for tests only: *not* private, and releases refuse it (:func:`require_private`)."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from attrpriv._checks import check_non_negative
from attrpriv.errors import InputError


class NoiseSampler(ABC):
    """Adds noise of a given scale to every entry of an array, keeping its shape."""

    private: ClassVar[bool]

    def laplace(self, values: ArrayLike, scale: float) -> np.ndarray:
        """``values`` + Laplace(0, scale) noise, as float64.

        Parameters
        ----------
        values : array_like
            Finite numbers, of any shape.
        scale : float
            The Laplace scale b (standard deviation ``sqrt(2) * b``), >= 0; 0 adds no noise.

        Returns
        -------
        numpy.ndarray
            A new float64 array of the shape of ``values``.
        """
        return self._add(_as_float(values), scale, "laplace", integer=False)

    def gaussian(self, values: ArrayLike, scale: float) -> np.ndarray:
        """``values`` + Normal(0, scale**2) noise: as :meth:`laplace`, ``scale`` the std.

        Parameters
        ----------
        values, scale
            As in :meth:`laplace` (``scale`` is the standard deviation).

        Returns
        -------
        numpy.ndarray
            As in :meth:`laplace`.
        """
        return self._add(_as_float(values), scale, "gaussian", integer=False)

    def discrete_laplace(self, counts: ArrayLike, scale: float) -> np.ndarray:
        """``counts`` + discrete Laplace noise, P(z) proportional to exp(-|z| / scale).

        Parameters
        ----------
        counts : array_like
            Integers (integer-valued floats accepted), of any shape.
        scale : float
            The scale of the noise, >= 0; 0 adds no noise.

        Returns
        -------
        numpy.ndarray
            A new int64 array of the shape of ``counts``.
        """
        return self._add(_as_int(counts), scale, "laplace", integer=True)

    def discrete_gaussian(self, counts: ArrayLike, scale: float) -> np.ndarray:
        """``counts`` + discrete Gaussian noise, P(z) proportional to exp(-z**2 / 2 scale**2).

        Parameters
        ----------
        counts, scale
            As in :meth:`discrete_laplace` (``scale`` is sigma).

        Returns
        -------
        numpy.ndarray
            As in :meth:`discrete_laplace`.
        """
        return self._add(_as_int(counts), scale, "gaussian", integer=True)

    def rounding_slack(self, size: int, norm: int = 1) -> float:
        """Extra l_norm sensitivity from rounding ``size`` float inputs to the sampler's grid.

        Parameters
        ----------
        size : int
            The number of float inputs.
        norm : int, default 1
            The norm of the sensitivity (1 for Laplace, 2 for Gaussian noise).

        Returns
        -------
        float
            The amount to add to the sensitivity; 0.0 for a sampler without a grid.
        """
        return 0.0

    def noisy_max(self, scores: ArrayLike, scale: float) -> int:
        """The index of the largest of ``scores`` plus Gumbel noise of ``scale`` (report noisy max).

        Parameters
        ----------
        scores : array_like
            Finite floats, at least one.
        scale : float
            The Gumbel scale, > 0: ``Delta^2 / (2 scale^2)``-zCDP for l_inf sensitivity ``Delta``
            (Cesar & Rogers 2021).

        Returns
        -------
        int
            The chosen index.
        """
        values = np.asarray(scores, dtype=np.float64).ravel()
        if values.size == 0 or not np.isfinite(values).all():
            raise InputError("noisy max needs at least one score, every one finite")
        if not check_non_negative(scale, "noise scale") > 0.0:
            raise InputError("noisy max needs a noise scale > 0")
        return self._select(values, float(scale))

    @abstractmethod
    def _select(self, scores: np.ndarray, scale: float) -> int:
        """:meth:`noisy_max` on checked arguments."""

    def describe(self) -> dict[str, Any]:
        """How the noise is drawn, for privacy records.

        Returns
        -------
        dict of str to Any
            ``sampler`` (the class name), ``private`` and the subclass's settings.
        """
        return {"sampler": type(self).__name__, "private": self.private}

    def _add(self, flat: np.ndarray, scale: float, kind: str, *, integer: bool) -> np.ndarray:
        scale = check_non_negative(scale, "noise scale")
        shape = flat.shape
        flat = flat.ravel()
        if scale == 0.0 or flat.size == 0:
            return flat.copy().reshape(shape)
        noisy = self._sample(flat, scale, kind, integer)
        return noisy.reshape(shape)

    @abstractmethod
    def _sample(self, flat: np.ndarray, scale: float, kind: str, integer: bool) -> np.ndarray:
        """Return ``flat`` plus noise of ``kind`` with ``scale`` > 0 (1-d in, 1-d out)."""


class OpenDPNoise(NoiseSampler):
    """Exact Laplace / Gaussian noise from OpenDP (cryptographically seeded, not reproducible).

    Parameters
    ----------
    k : int or None, default None
        The float grid exponent in [-1074, 0] (e.g. -40 for speed), None for OpenDP's default.
    """

    private = True

    def __init__(self, k: int | None = None) -> None:
        if k is not None and (isinstance(k, bool) or not isinstance(k, int) or not -1074 <= k <= 0):
            raise InputError(f"k must be None or an integer in [-1074, 0], got {k!r}")
        self.k = k

    def rounding_slack(self, size: int, norm: int = 1) -> float:
        """Extra l_norm sensitivity from rounding ``size`` float inputs to the grid ``2**k``.

        Parameters
        ----------
        size, norm
            As in :meth:`NoiseSampler.rounding_slack`.

        Returns
        -------
        float
            ``size ** (1 / norm) * 2**k``; 0.0 when ``k`` is None.
        """
        if self.k is None:
            return 0.0
        return float(size ** (1.0 / norm) * 2.0**self.k)

    def describe(self) -> dict[str, Any]:
        """How the noise is drawn, for privacy records.

        Returns
        -------
        dict of str to Any
            ``sampler``, ``private`` (True), ``library`` (``"opendp"``) and ``k``.
        """
        return {**super().describe(), "library": "opendp", "k": self.k}

    def _sample(self, flat: np.ndarray, scale: float, kind: str, integer: bool) -> np.ndarray:
        import opendp.prelude as dp

        dp.enable_features("contrib")
        if integer:
            atom, dtype, kwargs = dp.atom_domain(T="i64"), "i64", {}
            domain = dp.vector_domain(atom)
        else:
            atom, dtype = dp.atom_domain(T="f64", nan=False), "f64"
            kwargs = {} if self.k is None else {"k": self.k}
            domain = dp.vector_domain(atom, size=flat.size) if kwargs else dp.vector_domain(atom)
        metric = dp.l1_distance(T=dtype) if kind == "laplace" else dp.l2_distance(T=dtype)
        make = dp.m.make_laplace if kind == "laplace" else dp.m.make_gaussian
        measurement = make(domain, metric, scale=scale, **kwargs)
        return np.asarray(measurement(flat.tolist()), dtype=flat.dtype)

    def _select(self, scores: np.ndarray, scale: float) -> int:
        import opendp.prelude as dp

        dp.enable_features("contrib")
        space = dp.vector_domain(dp.atom_domain(T="f64", nan=False)), dp.linf_distance(T="f64")
        select = dp.m.make_noisy_max(*space, dp.zero_concentrated_divergence(), scale=scale)
        return int(select(scores.tolist()))


class SeededNumpyNoise(NoiseSampler):
    """Reproducible numpy noise for tests and examples. NOT PRIVATE: floating-point samplers leak.

    Parameters
    ----------
    seed : int or None, default 0
        Seed of its :func:`numpy.random.default_rng` generator (None: fresh entropy).
    """

    private = False

    def __init__(self, seed: int | None = 0) -> None:
        self.rng = np.random.default_rng(seed)

    def _sample(self, flat: np.ndarray, scale: float, kind: str, integer: bool) -> np.ndarray:
        size = flat.size
        noise: np.ndarray
        if integer and kind == "laplace":
            # Difference of two geometric variables is discrete Laplace with this scale.
            p = -math.expm1(-1.0 / scale)
            noise = self.rng.geometric(p, size) - self.rng.geometric(p, size)
        elif kind == "laplace":
            noise = self.rng.laplace(0.0, scale, size)
        else:
            noise = self.rng.normal(0.0, scale, size)
            if integer:
                noise = np.rint(noise).astype(np.int64)
        return np.asarray(flat + noise, dtype=flat.dtype)

    def _select(self, scores: np.ndarray, scale: float) -> int:
        return int(np.argmax(scores + self.rng.gumbel(0.0, scale, scores.size)))


def default_sampler() -> NoiseSampler:
    """The sampler releases use unless given one: exact OpenDP noise.

    Returns
    -------
    NoiseSampler
        A new :class:`OpenDPNoise` on OpenDP's default grid (``k=None``).
    """
    return OpenDPNoise()


def require_private(sampler: NoiseSampler, *, allow_nonprivate: bool = False) -> None:
    """Refuse a non-private sampler in a release unless the caller opted in explicitly.

    Parameters
    ----------
    sampler : NoiseSampler
        The sampler a release would use.
    allow_nonprivate : bool, default False
        Accept a sampler that is not private (for tests).

    Raises
    ------
    InputError
        If ``sampler`` is not a private :class:`NoiseSampler` and ``allow_nonprivate`` is False.
    """
    if not isinstance(sampler, NoiseSampler):
        raise InputError(f"noise must be a NoiseSampler, got {type(sampler).__name__}")
    if not sampler.private and not allow_nonprivate:
        raise InputError(
            f"noise sampler {type(sampler).__name__} is not private (reproducible, for tests); "
            "pass allow_nonprivate=True to release with it anyway"
        )


def _as_float(values: ArrayLike) -> np.ndarray:
    try:
        array = np.array(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError("noise input must be numeric") from None
    if not np.isfinite(array).all():
        raise InputError("noise input has NaN or infinite values; expected finite numbers")
    return array


def _as_int(values: ArrayLike) -> np.ndarray:
    try:
        raw = np.asarray(values)
        with np.errstate(invalid="ignore"):  # NaN / inf are refused just below, quietly
            array = raw.astype(np.int64)
    except (TypeError, ValueError, OverflowError):
        raise InputError("counts must be integers") from None
    if raw.dtype.kind == "f" and not np.array_equal(raw, array):
        raise InputError("counts must be integers, got non-integer values")
    if raw.dtype.kind not in "iuf" and raw.size:
        raise InputError(f"counts must be integers, got dtype {raw.dtype}")
    if raw.dtype.kind == "u" and raw.size and raw.max() > np.iinfo(np.int64).max:
        raise InputError("counts must fit in int64, got a larger unsigned value")
    return array


__all__ = [
    "NoiseSampler",
    "OpenDPNoise",
    "SeededNumpyNoise",
    "default_sampler",
    "require_private",
]
