"""Baseline sanitizers to read the decouple-and-sample trade-off against.

The simple ones, which every tabular sweep scores next to the sanitizers (issue 12: a sanitizer
that does not beat them is not worth its complexity):

- :class:`DropSensitive` -- the data with the sensitive column removed.
- :class:`DropProxies` -- the sensitive column and its ``k`` strongest proxies removed, the
  proxies ranked on *auxiliary* data only (:func:`rank_proxies`).
- :class:`MarginalDraw` -- the sensitive column replaced by independent draws from its marginal
  on the auxiliary data.

And those of the seed (sections 4-5):

- :class:`InputNoise` -- the "Noise" baseline (iv of section 4): Gaussian noise in the input
  space (pixels; or the public domain of each table column), no decoupler.
- :class:`LatentInterpolation` -- the beta-VAE baseline of section 5: move a record's *full*
  latent ``z`` from its sensitive class mean to the mean of a class drawn uniformly at random,
  ``z~ = z - z_{S_i} + z_{S_j}``, and decode.

All are duck-typed like :class:`attrpriv.sanitize.sanitizer.Sanitizer` (a ``sanitize`` method
returning :class:`SanitizedData`), so :func:`attrpriv.sanitize.tradeoff.sweep` takes them as they
are. None gives a formal privacy guarantee: their record is None, nothing is charged to a
ledger, and their randomness is a seeded numpy generator, not a DP noise sampler.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from attrpriv._checks import check_non_negative, check_positive_int
from attrpriv.data.schema import Categorical, Integer, Role, Schema
from attrpriv.dp.ledger import BudgetLedger
from attrpriv.errors import InputError, offending
from attrpriv.sanitize.decoupler import GlobalDecoupler
from attrpriv.sanitize.evaluate import auc_score
from attrpriv.sanitize.images import as_images
from attrpriv.sanitize.sanitizer import SanitizedData, sensitive_labels

NO_GUARANTEE = "none: an empirical baseline, not a DP mechanism (seeded numpy randomness)"


class InputNoise:
    """Gaussian noise in input space; ``scale`` is the trade-off knob (0 = the data as given).

    Images (anything :func:`attrpriv.sanitize.images.as_images` accepts): noise of std ``scale``
    per pixel, clipped to [0, 1], returned in the shape given. Tables (needs ``schema``): numeric
    and integer columns get noise of std ``scale * (upper - lower)`` of their public domain,
    clipped to it (integers rounded); each categorical value is replaced with probability
    ``min(1, scale)`` by a uniform draw from the public categories. Columns outside the schema,
    with role target or ignore, and the sensitive column (``y_s`` as a column name, else the
    schema's sensitive columns) are left as they are.

    No formal guarantee: the noise comes from ``numpy.random.default_rng(seed)``, fresh on every
    call (the same input and seed give the same output).

    Parameters
    ----------
    scale : float
        The noise level, >= 0: the pixel noise's std for images; for tables the share of each
        numeric column's public range used as the noise std, and (capped at 1) the probability
        of replacing a categorical value. Checked by :meth:`sanitize`.
    schema : Schema or None, optional
        Roles and public domains; required to perturb a DataFrame, unused for images.
    seed : int, optional
        Seeds the numpy generator (an integer >= 0, checked by :meth:`sanitize`).
    drop_sensitive : bool, optional
        Tables: leave the sensitive column(s) out of the output instead of as they are (a
        release that keeps the true sensitive column protects nothing; the sweep's input-noise
        baseline drops it).
    """

    def __init__(
        self,
        scale: float,
        *,
        schema: Schema | None = None,
        seed: int = 0,
        drop_sensitive: bool = False,
    ) -> None:
        self.scale = scale
        self.schema = schema
        self.seed = seed
        self.drop_sensitive = drop_sensitive

    def sanitize(
        self, X: Any, y_s: Any = None, *, ledger: BudgetLedger | None = None, label: str = ""
    ) -> SanitizedData:
        """Noisy copy of ``X``; ``y_s`` names what to leave alone; ``ledger`` is not charged.

        Parameters
        ----------
        X : pandas.DataFrame or array-like
            A table (needs ``schema``) or images (anything
            :func:`attrpriv.sanitize.images.as_images` accepts).
        y_s : str or array-like or None, optional
            The name of a table's sensitive column, left as it is; labels (one per row) or
            ``None`` leave the schema's sensitive columns as they are instead.
        ledger : BudgetLedger or None, optional
            Ignored (nothing is charged: no DP output); there for the signature of
            :class:`~attrpriv.sanitize.sanitizer.Sanitizer`.
        label : str, optional
            Ignored, like ``ledger``.

        Returns
        -------
        SanitizedData
            The noisy copy (a DataFrame of the columns of ``X``, less the sensitive ones with
            ``drop_sensitive``, or float32 images of the shape given), with no labels and no
            record; its parts name the baseline, the scale, the rows, the perturbed (and
            dropped) columns of a table and the absent guarantee.

        Raises
        ------
        InputError
            ``scale`` is negative or ``seed`` is not an integer >= 0; ``y_s`` names a column
            ``X`` lacks or does not have one label per row; a DataFrame comes without
            ``schema``; images are not a valid (n, h, w) or (n, 1, h, w) array in [0, 1].
        """
        scale = check_non_negative(self.scale, "scale")
        rng = np.random.default_rng(check_positive_int(self.seed, "seed", minimum=0))
        _, column = sensitive_labels(None, X, y_s)
        parts: dict[str, Any] = {"baseline": "input-noise", "scale": scale}
        data: pd.DataFrame | np.ndarray
        if isinstance(X, pd.DataFrame):
            data, changed = self._table(X, scale, column, rng)
            parts["perturbed_columns"] = changed
            if self.drop_sensitive:
                assert self.schema is not None  # _table refuses a table without one
                kept = {column} if column is not None else set(self.schema.sensitive)
                parts["dropped"] = [c for c in data.columns if c in kept]
                data = data.drop(columns=parts["dropped"])
        else:
            images = as_images(X)
            noisy = np.clip(images + rng.normal(0.0, scale, images.shape), 0.0, 1.0)
            data = noisy.astype(np.float32).reshape(np.shape(X))
        parts |= {"rows": len(data), "guarantee": NO_GUARANTEE}
        return SanitizedData(data, None, None, parts)

    def _table(
        self, X: pd.DataFrame, scale: float, column: str | None, rng: np.random.Generator
    ) -> tuple[pd.DataFrame, list[str]]:
        if self.schema is None:
            raise InputError("InputNoise needs schema= (public domains) to perturb a DataFrame")
        keep = {column} if column is not None else set(self.schema.sensitive)
        out, changed = X.copy(), []
        for col in self.schema.columns:
            if (
                col.name not in X.columns
                or col.domain is None
                or col.role in (Role.TARGET, Role.IGNORE)
                or col.name in keep
            ):
                continue
            series = X[col.name]
            if isinstance(col.domain, Categorical):
                out[col.name] = _replace_categories(series, col.domain, min(1.0, scale), rng)
            else:
                lo, hi = float(col.domain.lower), float(col.domain.upper)
                values = pd.to_numeric(series).to_numpy(dtype=float, na_value=np.nan)
                noisy = np.clip(values + rng.normal(0.0, scale * (hi - lo), len(values)), lo, hi)
                if isinstance(col.domain, Integer):
                    noisy = np.round(noisy)
                out[col.name] = pd.Series(noisy, index=X.index).astype(series.dtype)
            changed.append(col.name)
        return out, changed


def _replace_categories(
    series: pd.Series, domain: Categorical, share: float, rng: np.random.Generator
) -> pd.Series:
    """Each value replaced with probability ``share`` by a uniform public category."""
    cats = np.empty(domain.size, dtype=object)
    cats[:] = list(domain.categories)
    values = series.to_numpy(dtype=object, copy=True)
    hit = rng.random(len(values)) < share
    values[hit] = cats[rng.integers(0, domain.size, len(values))[hit]]
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        extra = [c for c in domain.categories if c not in dtype.categories]
        categorical = pd.Categorical(
            values, categories=[*dtype.categories, *extra], ordered=dtype.ordered
        )
        return pd.Series(categorical, index=series.index, name=series.name)
    return pd.Series(values, index=series.index, name=series.name).astype(dtype)


class LatentInterpolation:
    """Latent interpolation of a fitted decoupler: ``z~ = z + strength * (mean_j - mean_i)``.

    ``fit`` stores the per-class means of the full latent ``z = (z_S, z_NS)`` (posterior means
    from ``decoupler.encode``) over the auxiliary (public) data as ``class_means_``. ``sanitize``
    moves each record of class i towards class j, drawn uniformly from all classes (i included),
    and decodes. ``strength`` 1 is the paper's baseline (with a plain beta-VAE: alphas
    (1, 0, 0, 0)), 0 the plain reconstruction; it is the knob of a trade-off sweep. Tables come
    back as the decoder returns them (the modelled columns, without the sensitive one), as from
    :class:`Sanitizer` with a sampler that draws no labels.

    No formal guarantee: the class of j comes from ``numpy.random.default_rng(seed)`` (fresh on
    every call), and the record's own latent is released shifted, not replaced.

    Parameters
    ----------
    decoupler : GlobalDecoupler
        A fitted (or loaded) decoupler whose ``encode`` and ``decode`` are used.
    strength : float, optional
        How far to move towards the drawn class's mean, >= 0 (checked when used): 1 the
        paper's baseline, 0 the plain reconstruction.
    seed : int, optional
        Seeds the numpy generator drawing each record's class j (an integer >= 0, checked
        when used).
    """

    def __init__(self, decoupler: GlobalDecoupler, strength: float = 1.0, *, seed: int = 0) -> None:
        self.decoupler = decoupler
        self.strength = strength
        self.seed = seed

    def fit(self, X_aux: Any, y_aux: Any = None) -> LatentInterpolation:
        """Per-class latent means over auxiliary data; ``y_aux``: labels or a column of X_aux.

        Parameters
        ----------
        X_aux : pandas.DataFrame or numpy.ndarray
            The auxiliary (public) data, as ``decoupler.encode`` takes it.
        y_aux : array-like or str or None, optional
            The sensitive labels (one per row), or the name of their column of ``X_aux``;
            ``None``: the decoupler's sensitive column of ``X_aux``.

        Returns
        -------
        LatentInterpolation
            The interpolation itself, with ``classes_`` (sorted) and ``class_means_``
            (one row per class) set.

        Raises
        ------
        InputError
            No labels are given or found, a label is missing, there are fewer than 2 classes,
            or ``X_aux`` does not fit the decoupler.
        NotFittedError
            The decoupler is neither fitted nor loaded.
        """
        labels = self._labels(X_aux, y_aux, "y_aux")
        if pd.isna(labels).any():
            raise InputError("y_aux has missing labels; every auxiliary row needs its label")
        classes = sorted(pd.unique(labels), key=str)
        if len(classes) < 2:
            raise InputError(f"y_aux needs at least 2 classes, got {classes}")
        self.classes_ = np.empty(len(classes), dtype=object)
        self.classes_[:] = classes
        z, _ = self._latent(X_aux)
        codes = self._codes(labels)
        self.class_means_ = np.stack([z[codes == c].mean(axis=0) for c in range(len(classes))])
        return self

    def interpolate(self, z: Any, y_s: Any) -> tuple[np.ndarray, np.ndarray]:
        """(moved latents, the class each row was moved to) for latents ``z`` of class ``y_s``.

        Parameters
        ----------
        z : array-like
            Full latents (z_S then z_NS), of shape (n, m) with m the width of ``class_means_``.
        y_s : array-like
            The sensitive class of each row of ``z``, shape (n,), among the fitted classes.

        Returns
        -------
        moved : numpy.ndarray
            ``z + strength * (class_means_[j] - class_means_[i])``, float64 of shape (n, m).
        classes : numpy.ndarray
            The class j each row was moved to, drawn uniformly from the fitted classes, shape
            (n,).

        Raises
        ------
        InputError
            ``strength`` is negative or ``seed`` is not an integer >= 0, the interpolation is
            not fitted, ``z`` or ``y_s`` have the wrong shape, or a label was not fitted.
        """
        strength = check_non_negative(self.strength, "strength")
        rng = np.random.default_rng(check_positive_int(self.seed, "seed", minimum=0))
        means = self._means()
        latents = np.array(z, dtype=np.float64)
        if latents.ndim != 2 or latents.shape[1] != means.shape[1]:
            raise InputError(f"z must have shape (n, {means.shape[1]}), got {latents.shape}")
        labels = np.asarray(y_s, dtype=object)
        if labels.shape != (len(latents),):
            raise InputError(f"y_s must have one label per row of z ({len(latents)})")
        source = self._codes(labels)
        target = rng.integers(0, len(means), len(latents))
        moved = latents + strength * (means[target] - means[source])
        return moved, self.classes_[target]

    def sanitize(
        self, X: Any, y_s: Any = None, *, ledger: BudgetLedger | None = None, label: str = ""
    ) -> SanitizedData:
        """Encode, move every latent to a random class, decode. ``ledger`` is not charged.

        Parameters
        ----------
        X : pandas.DataFrame or numpy.ndarray
            The data to sanitize, as ``decoupler.encode`` takes it.
        y_s : array-like or str or None, optional
            The sensitive labels (one per row), or the name of their column of ``X``; ``None``:
            the decoupler's sensitive column of ``X``.
        ledger : BudgetLedger or None, optional
            Ignored (nothing is charged: no DP output); there for the signature of
            :class:`~attrpriv.sanitize.sanitizer.Sanitizer`.
        label : str, optional
            Ignored, like ``ledger``.

        Returns
        -------
        SanitizedData
            The decoded moved latents, with no labels and no record; its parts hold the rows,
            the strength, the classes, the share of rows moved to another class and the absent
            guarantee.

        Raises
        ------
        InputError
            No labels are given or found, the interpolation is not fitted, a label was not
            fitted, ``strength`` or ``seed`` is invalid, or ``X`` does not fit the decoupler.
        NotFittedError
            The decoupler is neither fitted nor loaded.
        """
        labels = self._labels(X, y_s, "y_s")
        self._means()
        z, k = self._latent(X)
        moved, target = self.interpolate(z, labels)
        rng = np.random.default_rng(int(self.seed))  # decoded as the sanitizer decodes
        data = self.decoupler.decode(moved[:, :k], moved[:, k:], rng=rng)
        parts = {"rows": len(z), "baseline": "latent-interpolation",
                 "strength": float(self.strength), "classes": list(self.classes_),
                 "moved_share": float(np.mean(target != labels)),
                 "guarantee": NO_GUARANTEE}  # fmt: skip
        return SanitizedData(data, None, None, parts)

    def _labels(self, X: Any, y_s: Any, name: str) -> np.ndarray:
        labels, _ = sensitive_labels(self.decoupler, X, y_s)
        if labels is None:
            raise InputError(f"{name} is required: the sensitive labels, or their column of X")
        return labels

    def _latent(self, X: Any) -> tuple[np.ndarray, int]:
        """The full latent (z_S then z_NS) and the width of z_S."""
        z_s, z_ns = self.decoupler.encode(X)
        return np.concatenate([z_s, z_ns], axis=1), z_s.shape[1]

    def _means(self) -> np.ndarray:
        if not hasattr(self, "class_means_"):
            raise InputError("this LatentInterpolation is not fitted: call fit(X_aux, y_aux)")
        means: np.ndarray = self.class_means_
        return means

    def _codes(self, labels: np.ndarray) -> np.ndarray:
        codes = pd.Index(self.classes_).get_indexer(pd.Index(labels))
        if (codes < 0).any():
            raise InputError(
                f"y_s has a label{offending(labels[codes < 0][0])} not among the classes fitted "
                f"on the auxiliary data {list(self.classes_)}"
            )
        return np.asarray(codes)


# ---------------------------------------------------------------------------- simple baselines
def rank_proxies(
    X_aux: pd.DataFrame,
    sensitive: str,
    *,
    exclude: Iterable[str] = (),
    folds: int = 5,
    bins: int = 10,
    seed: int = 0,
) -> pd.Series:
    """How well each column alone predicts the sensitive one on auxiliary data: its AUC.

    Each column is cut into cells (its categories, or ``bins`` quantile bins of a numeric
    column computed on ``X_aux``; a missing value is a cell of its own). Over ``folds``
    seeded folds, a row's score for each class is that class's add-one smoothed share in its
    cell on the *other* folds (cross-fitted, so a column with many cells is not rewarded for
    memorising rows), and the column's power is the AUC of those scores
    (:func:`attrpriv.sanitize.evaluate.auc_score`: binary, or one-vs-rest macro). Only
    auxiliary (public) data is read.

    Parameters
    ----------
    X_aux : pandas.DataFrame
        The auxiliary data, with the sensitive column.
    sensitive : str
        The sensitive column.
    exclude : iterable of str, optional
        Columns not to rank (e.g. the task's target, which a release must keep).
    folds : int, optional
        The number of cross-fitting folds, >= 2.
    bins : int, optional
        Quantile bins of a numeric column, >= 2.
    seed : int, optional
        Seeds the fold assignment.

    Returns
    -------
    pandas.Series
        Column name -> AUC, strongest proxy first.

    Raises
    ------
    InputError
        ``sensitive`` is not a column of ``X_aux``, its labels are missing or of one class,
        ``folds`` or ``bins`` is below 2, or there are fewer rows than folds.
    """
    if sensitive not in X_aux.columns:
        raise InputError(f"sensitive column {sensitive!r} is not a column of the data")
    k = check_positive_int(folds, "folds", minimum=2)
    cuts = check_positive_int(bins, "bins", minimum=2)
    labels = X_aux[sensitive].astype(object).to_numpy()
    if pd.isna(labels).any():
        raise InputError(f"sensitive column {sensitive!r} has missing values")
    classes = np.array(sorted(pd.unique(labels), key=str), dtype=object)
    if classes.size < 2 or len(X_aux) < k:
        raise InputError(f"ranking proxies needs two classes and at least {k} rows")
    onehot = (labels[:, None] == classes[None, :]).astype(float)
    fold = np.random.default_rng(check_positive_int(seed, "seed", minimum=0)).permutation(
        len(X_aux)) % k  # fmt: skip
    skip = {sensitive, *exclude}
    power = {}
    for name in (c for c in X_aux.columns if c not in skip):
        cells = _cells(X_aux[name], cuts)
        n_cells = int(cells.max()) + 1
        proba = np.zeros_like(onehot)
        for f in range(k):
            train, test = fold != f, fold == f
            counts = np.zeros((n_cells, classes.size))
            np.add.at(counts, cells[train], onehot[train])
            shares = (counts + 1.0) / (counts.sum(axis=1, keepdims=True) + classes.size)
            proba[test] = shares[cells[test]]
        power[name] = auc_score(labels, proba, classes).attack
    return pd.Series(power, dtype=float).sort_values(ascending=False, kind="stable")


def _cells(series: pd.Series, bins: int) -> np.ndarray:
    """Integer cell per row: a category or a quantile bin; a missing value is a cell of its own."""
    if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
        values = pd.to_numeric(series).to_numpy(dtype=float, na_value=np.nan)
        finite = values[np.isfinite(values)]
        edges = np.unique(np.quantile(finite, np.linspace(0, 1, bins + 1)[1:-1])) if finite.size \
            else np.array([])  # fmt: skip
        codes = np.searchsorted(edges, values, side="right")
        return np.where(np.isfinite(values), codes, edges.size + 1).astype(np.int64)
    codes = pd.Categorical(series.astype(object)).codes.astype(np.int64)
    return np.where(codes < 0, codes.max(initial=0) + 1, codes)


def _sensitive_column(X: Any, y_s: Any, what: str) -> str:
    if not isinstance(X, pd.DataFrame):
        raise InputError(f"{what} works on a table (a DataFrame)")
    if not isinstance(y_s, str):
        raise InputError(f"{what} needs y_s: the name of the sensitive column")
    if y_s not in X.columns:
        raise InputError(f"sensitive column {y_s!r} is not a column of the data")
    return y_s


class DropSensitive:
    """Baseline: the data as given, less the sensitive column (and ``columns``, if named).

    The first thing anyone would try. It leaks whatever the other columns say about the
    sensitive one; any sanitizer should leak less, or keep more utility.

    Parameters
    ----------
    columns : iterable of str, optional
        Further columns to drop.
    """

    def __init__(self, columns: Iterable[str] = ()) -> None:
        self.columns = columns

    def sanitize(
        self, X: Any, y_s: Any = None, *, ledger: BudgetLedger | None = None, label: str = ""
    ) -> SanitizedData:
        """``X`` without its sensitive column ``y_s`` (and ``columns``); nothing is charged.

        Parameters
        ----------
        X : pandas.DataFrame
            The table.
        y_s : str
            The name of its sensitive column.
        ledger : BudgetLedger or None, optional
            Ignored (no DP output).
        label : str, optional
            Ignored.

        Returns
        -------
        SanitizedData
            The remaining columns, in their order, no labels and no record; its parts name the
            dropped columns.

        Raises
        ------
        InputError
            ``X`` is not a DataFrame, or ``y_s`` is not the name of one of its columns.
        """
        column = _sensitive_column(X, y_s, "DropSensitive")
        dropped = [column, *(c for c in self.columns if c in X.columns and c != column)]
        parts = {"baseline": "drop-sensitive", "dropped": dropped, "rows": len(X),
                 "guarantee": NO_GUARANTEE}  # fmt: skip
        return SanitizedData(X.drop(columns=dropped), None, None, parts)


class DropProxies:
    """Baseline: drop the sensitive column and its ``k`` strongest proxies.

    ``fit`` ranks the other columns of the *auxiliary* data with :func:`rank_proxies` (each
    column's own cross-fitted AUC for the sensitive attribute); the private data are never
    read to choose what to drop.

    Parameters
    ----------
    k : int, optional
        How many proxies to drop (>= 0).
    keep : iterable of str, optional
        Columns never dropped (the task's target).
    seed : int, optional
        Seeds the ranking's folds.
    """

    def __init__(self, k: int = 3, *, keep: Iterable[str] = (), seed: int = 0) -> None:
        self.k = k
        self.keep = keep
        self.seed = seed

    def fit(self, X_aux: pd.DataFrame, y_s: str) -> DropProxies:
        """Rank the proxies of ``y_s`` on the auxiliary data and pick the top ``k``.

        Parameters
        ----------
        X_aux : pandas.DataFrame
            The auxiliary (public) data.
        y_s : str
            The sensitive column.

        Returns
        -------
        DropProxies
            Itself, with ``sensitive_column_``, ``ranking_`` (column -> AUC, strongest
            first) and ``proxies_`` (the ``k`` dropped) set.

        Raises
        ------
        InputError
            ``k`` is not an integer >= 0, or :func:`rank_proxies` refuses the data.
        """
        k = check_positive_int(self.k, "k", minimum=0)
        column = _sensitive_column(X_aux, y_s, "DropProxies")
        ranking = rank_proxies(X_aux, column, exclude=tuple(self.keep), seed=self.seed)
        self.sensitive_column_ = column
        self.ranking_ = ranking
        self.proxies_ = tuple(str(c) for c in ranking.index[:k])
        return self

    def sanitize(
        self, X: Any, y_s: Any = None, *, ledger: BudgetLedger | None = None, label: str = ""
    ) -> SanitizedData:
        """``X`` without the sensitive column and the fitted proxies; nothing is charged.

        Parameters
        ----------
        X : pandas.DataFrame
            The table.
        y_s : str or None, optional
            The sensitive column; ``None``: the one ``fit`` saw.
        ledger : BudgetLedger or None, optional
            Ignored (no DP output).
        label : str, optional
            Ignored.

        Returns
        -------
        SanitizedData
            The remaining columns, no labels and no record; its parts name the dropped columns
            and the proxies' AUCs on the auxiliary data.

        Raises
        ------
        InputError
            Not fitted, ``X`` is not a DataFrame, or the sensitive column is not in ``X``.
        """
        if not hasattr(self, "proxies_"):
            raise InputError("this DropProxies is not fitted: call fit(X_aux, y_s)")
        column = _sensitive_column(X, self.sensitive_column_ if y_s is None else y_s,
                                   "DropProxies")  # fmt: skip
        dropped = [column, *(c for c in self.proxies_ if c in X.columns)]
        parts = {"baseline": "drop-proxies", "dropped": dropped,
                 "proxy_auc": {c: float(self.ranking_[c]) for c in self.proxies_},
                 "rows": len(X), "guarantee": NO_GUARANTEE}  # fmt: skip
        return SanitizedData(X.drop(columns=dropped), None, None, parts)


class MarginalDraw:
    """Baseline: the sensitive column replaced by independent draws from its marginal.

    ``fit`` reads the class shares on the *auxiliary* data; ``sanitize`` draws every row's
    value from them, independently of the row, and leaves the other columns as they are. The
    released column then says nothing about the row's true value, but the other columns still
    say what they say.

    Parameters
    ----------
    seed : int, optional
        Seeds the numpy generator of the draws (fresh on every call).
    """

    def __init__(self, *, seed: int = 0) -> None:
        self.seed = seed

    def fit(self, X_aux: pd.DataFrame, y_s: str) -> MarginalDraw:
        """The class shares of ``y_s`` on the auxiliary data.

        Parameters
        ----------
        X_aux : pandas.DataFrame
            The auxiliary (public) data.
        y_s : str
            The sensitive column.

        Returns
        -------
        MarginalDraw
            Itself, with ``sensitive_column_``, ``classes_`` and ``shares_`` set.

        Raises
        ------
        InputError
            ``X_aux`` is not a DataFrame, ``y_s`` is not one of its columns, or the column
            has no value.
        """
        column = _sensitive_column(X_aux, y_s, "MarginalDraw")
        shares = X_aux[column].astype(object).value_counts(normalize=True, dropna=True)
        if shares.empty:
            raise InputError(f"sensitive column {column!r} has no value to draw from")
        shares = shares.sort_index(key=lambda idx: idx.map(str))
        self.sensitive_column_ = column
        self.classes_ = np.array(shares.index, dtype=object)
        self.shares_ = shares.to_numpy(dtype=float)
        return self

    def sanitize(
        self, X: Any, y_s: Any = None, *, ledger: BudgetLedger | None = None, label: str = ""
    ) -> SanitizedData:
        """``X`` with its sensitive column drawn from the fitted marginal; nothing is charged.

        Parameters
        ----------
        X : pandas.DataFrame
            The table.
        y_s : str or None, optional
            The sensitive column; ``None``: the one ``fit`` saw.
        ledger : BudgetLedger or None, optional
            Ignored (no DP output).
        label : str, optional
            Ignored.

        Returns
        -------
        SanitizedData
            The table with the drawn column (its dtype kept) and the drawn labels as ``y_s``;
            no record.

        Raises
        ------
        InputError
            Not fitted, ``seed`` is invalid, ``X`` is not a DataFrame, or the sensitive column
            is not in ``X``.
        """
        if not hasattr(self, "shares_"):
            raise InputError("this MarginalDraw is not fitted: call fit(X_aux, y_s)")
        column = _sensitive_column(X, self.sensitive_column_ if y_s is None else y_s,
                                   "MarginalDraw")  # fmt: skip
        rng = np.random.default_rng(check_positive_int(self.seed, "seed", minimum=0))
        drawn = self.classes_[rng.choice(len(self.classes_), size=len(X), p=self.shares_)]
        out = X.copy()
        out[column] = pd.Series(drawn, index=X.index).astype(X[column].dtype)
        parts = {
            "baseline": "marginal-draw",
            "classes": [str(c) for c in self.classes_],
            "shares": self.shares_.tolist(),
            "rows": len(X),
            "guarantee": NO_GUARANTEE,
        }
        return SanitizedData(out, np.asarray(drawn, dtype=object), None, parts)


__all__ = [
    "NO_GUARANTEE",
    "DropProxies",
    "DropSensitive",
    "InputNoise",
    "LatentInterpolation",
    "MarginalDraw",
    "rank_proxies",
]
