"""The anchor users would pick instead of the sanitizer: DP synthetic data (MST) at epsilon 1.

    pip install 'attrpriv[anchors]'            # private-pgm's mbi 1.1.0 (pulls jax, CPU wheels)
    python benchmarks/dp_synthetic.py            # Adult, German credit, census_kdd (minutes)
    python benchmarks/dp_synthetic.py --datasets german_credit --epsilon 1 --seeds 3
    python benchmarks/dp_synthetic.py --datasets census_kdd --sensitive race   # another attribute

``mbi`` is NOT a project dependency: without it the script prints one line and stops.

Each table (Adult: sensitive ``sex``, task ``income``; German credit: ``personal_status_sex``,
four classes present, task ``credit_risk``; census_kdd, subsampled to 20,000 rows: ``sex``, task
``income``) loses its ``ignore`` columns and is shuffled (seed 0) into disjoint auxiliary (40%,
public) / private (40%, released) / test (20%, real held-out) parts. Releases of the private part:

- ``MST``: McKenna, Miklau & Sheldon (2021), written here on mbi 1.1.0's primitives (mbi 1.x no
  longer ships the mechanism). Columns are made discrete with a public codebook computed on the
  auxiliary part only (categories from the schema, numeric columns in about 10 auxiliary-quantile
  bins, a slot for missing values); then noisy 1-way marginals, a maximum spanning tree over the
  2-way marginals chosen by the exponential mechanism (OpenDP's ``make_noisy_max``), noisy 2-way
  marginals along the tree (exact discrete Gaussian noise from
  :class:`attrpriv.dp.noise.OpenDPNoise`), mbi's mirror descent for the tree model, and rows
  sampled from it. The budget: rho-zCDP with rho the largest whose conversion (OpenDP's
  ``make_zCDP_to_approxDP``) gives (epsilon, 1e-6)-DP, a third each to the 1-way marginals, the
  tree and the 2-way marginals; neighbours differ by one added or removed row. Bins are decoded
  to a value drawn from the auxiliary values in the bin.
- ``the public rows alone (no release)``: a task model trained on the publisher's public rows
  only (none: chance). It anchors the column ``retained private information`` = a release's
  utility minus this one: what the release carries of the private rows that the public rows do
  not (0 or below: a user holding the public rows does not need the release). The publisher
  holds the whole auxiliary part by default; ``--public-share 0.1`` only a tenth as many rows
  as the private ones, ``--public-share 0`` none (the attacker keeps the whole auxiliary part
  in every regime); ``--public-where year=94`` (census_kdd) takes the public rows from another
  year than the private ones (a shifted population; the attacker's rows too).
- the simple baselines of the sanitize sweep, computed here the same way: the real private rows,
  ``drop sensitive``, ``drop sensitive + top 3 proxies`` (ranked on the publisher's public rows,
  or on the private rows when it holds none), and ``marginal draw`` (the sensitive column
  redrawn from the public rows' marginal; skipped with no public rows).
- ``sanitize synthesize --method mst (OpenDP)``: :class:`~attrpriv.sanitize.DPSynthesizer`,
  OpenDP 0.16's own MST (``opendp.extras.mbi``) with the schema's cells (no public row read):
  the library's algorithm beside the one written here; with ``--aim 2`` (or 3) also its AIM
  with that workload (every marginal of 2 or 3 columns). ``--association 0.15,0.2`` adds block
  resampling at those thresholds beside the default's 0.1.
- ``block resampling (the CLI default)``: ``attrpriv sanitize resample`` as the CLI runs it
  (:class:`~attrpriv.sanitize.BlockResampler`): the sensitive column and the proxies picked by
  their noisy association redrawn from discrete-Gaussian counts of the private rows, the
  publisher's public rows (where there are any) added to the counts as a prior; and ``drop
  sensitive + the columns block resampling redraws`` (the like-for-like simple alternative).
- ``proxy resampling, --method donor``: the proxy resampler fitted on the publisher's public
  rows (proxies redrawn until the rest predicts the sensitive column with AUC <= 0.55 there,
  copied from public donor rows); with ``--variants`` also ``draw="marginal"`` (each value from
  the noisy marginal alone) and ``conditional="hgb"`` (each proxy from gradient boosting given
  the ones before it). Skipped with no public rows.

Leakage, under two threat models (each scored on the private rows' true sensitive values, by
gradient-boosting adversaries):

- ``row leakage``: the attacker sees what the release says of each private row. The stronger of
  ``raw-aux`` (trained on the raw auxiliary data) and ``sanitized-aux`` (trained on the
  auxiliary rows passed through the same sanitizer, with their true sensitive values; for proxy
  resampling, by a twin fitted on the private rows, as in the sweep), both
  applied to the released rows: the sanitize sweep's leakage. For a release that hands over
  real columns unchanged the two are the same model. A synthetic row is nobody's row, so MST
  has no row leakage (AUC 0.5: nothing in it is about any one person).
- ``release-taught``: the attacker knows the private rows' real other columns and learns from
  the release how they predict the sensitive one (trained on the release, with its sensitive
  column, applied to the real rows; only for releases with a sensitive column). The reference
  is what the raw auxiliary data teach the same attacker (printed above each table): a release
  below it teaches nothing new.

Utility: gradient boosting trained on the release (all its columns but the task's target), AUC on
the real test rows; the same for a second task no release is tuned to (``SECOND``: Adult and
census_kdd ``age >= 40``, German credit ``housing == own``, anes96 ``educ >= 5``; "-" where the
release dropped its column). ``--datasets anes96`` adds a held-out table (sensitive ``pid``, task
``vote``) on which no setting was chosen. Every model is
:func:`attrpriv.sanitize.evaluate.strong_classifier`, scored by
:func:`~attrpriv.sanitize.evaluate.leakage` / :func:`~attrpriv.sanitize.evaluate.utility` with 3
seeds pooled. Time: CPU and wall seconds to produce the release (evaluation excluded). One native
thread (XLA, OpenMP, BLAS). docs/benchmarks.md quotes the output.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault(
    "XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
)
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import argparse  # noqa: E402
import functools  # noqa: E402
import importlib.util  # noqa: E402
import itertools  # noqa: E402
import math  # noqa: E402
import re  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from importlib.metadata import version  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from attrpriv import datasets  # noqa: E402
from attrpriv.data.schema import Role, Schema  # noqa: E402
from attrpriv.dp.noise import OpenDPNoise  # noqa: E402
from attrpriv.sanitize.baselines import DropProxies, DropSensitive, MarginalDraw  # noqa: E402
from attrpriv.sanitize.block import BlockResampler  # noqa: E402
from attrpriv.sanitize.evaluate import leakage, pareto_auc, utility  # noqa: E402
from attrpriv.sanitize.resample import ProxyResampler  # noqa: E402
from attrpriv.sanitize.synthesize import DPSynthesizer  # noqa: E402

# name -> (sensitive column, task target, rows kept (None: all))
TABLES: dict[str, tuple[str, str, int | None]] = {
    "adult": ("sex", "income", None),
    "german_credit": ("personal_status_sex", "credit_risk", None),
    "census_kdd": ("sex", "income", 20_000),
    "anes96": ("pid", "vote", None),  # held out: no setting was chosen on it
}
BINS = 10  # quantile bins per numeric column (fewer where quantiles coincide)
EXACT = 20  # a numeric column with at most this many auxiliary values keeps each value
DELTA = 1e-6
PUBLIC = "the public rows alone (no release)"  # the anchor of the retained private information
# name -> (column, value at or above which / equal to which the second task's label is 1): a
# task no release here is tuned to (chosen before any measurement)
SECOND: dict[str, tuple[str, float | str]] = {
    "adult": ("age", 40),
    "german_credit": ("housing", "own"),
    "census_kdd": ("age", 40),
    "anes96": ("educ", 5),
}


# -- data ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Parts:
    """A table split into disjoint auxiliary / private / test parts."""

    name: str
    aux: pd.DataFrame
    private: pd.DataFrame
    test: pd.DataFrame
    sensitive: str
    target: str
    rows: int
    schema: Schema
    public: pd.DataFrame  # the publisher's public rows: the first ones of ``aux``, or none


def load_parts(
    name: str,
    seed: int = 0,
    rows: int | None = None,
    sensitive: str | None = None,
    public_share: float | None = None,
    public_where: str | None = None,
) -> Parts:
    """The table less its ``ignore`` columns, (subsampled to ``rows``,) shuffled, split 40% /
    40% / 20%; ``rows`` and ``sensitive`` default to the table's own settings in ``TABLES``.
    ``public_share``: the publisher holds only that many of the auxiliary rows per private row
    (0.1: a public table a tenth the size of the private one; 0: none); the attacker keeps them
    all. ``public_where="COLUMN=VALUE"``: a shifted public
    population: the auxiliary part is drawn from the rows where the column holds the value, the
    private and test parts from the others (the column is then left out of every part)."""
    default, target, kept = TABLES[name]
    sensitive = default if sensitive is None else sensitive
    rows = kept if rows is None else rows
    dataset = datasets.load(name)
    frame = dataset.frame
    frame = frame[[c for c in frame.columns if c not in dataset.schema.with_role(Role.IGNORE)]]
    frame = frame.dropna(subset=[sensitive, target])
    if rows is not None and rows < len(frame):
        frame = frame.sample(rows, random_state=seed)
    frame = frame.sample(frac=1.0, random_state=seed).reset_index(drop=True)
    n = len(frame)
    a, b = int(0.4 * n), int(0.8 * n)
    part = [frame.iloc[i:j].reset_index(drop=True) for i, j in ((0, a), (a, b), (b, n))]
    if public_where is not None:
        column, _, value = public_where.partition("=")
        inside = frame[column].astype(str) == value
        public, rest = frame[inside].drop(columns=column), frame[~inside].drop(columns=column)
        a = min(a, len(public))
        b = min(b - int(0.4 * n), int(2 / 3 * len(rest)))
        part = [public.iloc[:a], rest.iloc[:b], rest.iloc[b : b + (n - int(0.8 * n))]]
        part = [p.reset_index(drop=True) for p in part]
    public = part[0]
    if public_share is not None:
        public = part[0].iloc[: round(public_share * len(part[1]))]
    return Parts(name, *part, sensitive, target, n, dataset.schema, public)


@dataclass
class Codebook:
    """A public discretisation, fitted on the auxiliary part only (and the schema's categories).

    Every column gets codes 0..size-1, the last one for a missing value (except the ``complete``
    columns, the sensitive one and the target, whose missing rows were dropped). A categorical
    column's codes are its categories; a numeric column's are bins between auxiliary quantiles
    (each auxiliary value its own bin when there are at most ``EXACT``), decoded to a value drawn
    from the auxiliary values in the bin (public data: no privacy cost).
    """

    categories: dict[str, pd.Index]
    edges: dict[str, np.ndarray]
    members: dict[str, list[np.ndarray]]
    dtypes: dict[str, Any]
    complete: frozenset[str]

    @classmethod
    def fit(cls, aux: pd.DataFrame, complete: tuple[str, ...] = ()) -> Codebook:
        categories, edges, members, dtypes = {}, {}, {}, {}
        for col in aux.columns:
            series = aux[col]
            dtypes[col] = series.dtype
            if isinstance(series.dtype, pd.CategoricalDtype):
                categories[col] = series.cat.categories
                continue
            values = series.dropna().to_numpy(dtype=float)
            distinct = np.unique(values)
            if distinct.size <= EXACT:
                inner = (distinct[1:] + distinct[:-1]) / 2
            else:
                cuts = np.unique(np.quantile(values, np.linspace(0, 1, BINS + 1)))
                inner = cuts[1:-1]  # bin i: inner[i-1] <= x < inner[i]
            edges[col] = inner
            bins = np.searchsorted(inner, values, side="right")
            members[col] = [values[bins == i] for i in range(inner.size + 1)]
        return cls(categories, edges, members, dtypes, frozenset(complete))

    def sizes(self, columns: list[str]) -> list[int]:
        """Codes per column: categories or bins, plus one for missing unless complete."""
        return [
            (len(self.categories[c]) if c in self.categories else self.edges[c].size + 1)
            + (c not in self.complete)
            for c in columns
        ]

    def encode(self, frame: pd.DataFrame) -> dict[str, np.ndarray]:
        out = {}
        for col in frame.columns:
            series = frame[col]
            if col in self.categories:
                codes = pd.Categorical(series, categories=self.categories[col]).codes.astype(int)
                codes[codes < 0] = len(self.categories[col])
            else:
                values = series.to_numpy(dtype=float)
                codes = np.searchsorted(self.edges[col], values, side="right")
                codes[np.isnan(values)] = self.edges[col].size + 1
            out[col] = codes.astype(np.int64)
        return out

    def decode(self, codes: dict[str, np.ndarray], rng: np.random.Generator) -> pd.DataFrame:
        out = {}
        for col, code in codes.items():
            code = np.asarray(code, dtype=np.int64)
            if col in self.categories:
                cats = self.categories[col]
                values = pd.Categorical.from_codes(np.where(code < len(cats), code, -1), cats)
                out[col] = pd.Series(values).astype(self.dtypes[col])
                continue
            values = np.full(code.size, np.nan)
            for i, pool in enumerate(self.members[col]):
                where = code == i
                if where.any() and pool.size:
                    values[where] = rng.choice(pool, where.sum())
            series = pd.Series(values)
            if not np.isnan(values).any() and pd.api.types.is_integer_dtype(self.dtypes[col]):
                series = series.astype(self.dtypes[col])
            out[col] = series
        return pd.DataFrame(out)


# -- MST on mbi ----------------------------------------------------------------------------------


def zcdp_rho(epsilon: float, delta: float) -> float:
    """The largest rho whose rho-zCDP converts (OpenDP, CKS20) to (epsilon, delta)-DP."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l2_distance(T=float)

    def delta_at(scale: float) -> float:
        gauss = dp.m.make_gaussian(*space, scale=scale)
        return float(dp.c.make_zCDP_to_approxDP(gauss).map(1.0).delta(epsilon))

    low, high = 1e-3, 1e4  # Gaussian scales: rho = 1 / (2 scale**2) at l2 sensitivity 1
    for _ in range(100):
        mid = math.sqrt(low * high)
        low, high = (low, mid) if delta_at(mid) <= delta else (mid, high)
    return 1.0 / (2.0 * high**2)


def select_index(scores: np.ndarray, rho: float) -> int:
    """Exponential mechanism (Gumbel noisy max, OpenDP) at rho-zCDP; scores of l_inf sens. 1."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.linf_distance(T=float)
    zcdp = dp.zero_concentrated_divergence()
    scale = dp.binary_search_param(
        lambda s: dp.m.make_noisy_max(*space, zcdp, scale=s), d_in=1.0, d_out=rho
    )
    return int(dp.m.make_noisy_max(*space, zcdp, scale=scale)(scores.astype(float).tolist()))


def _weighted(factor: Any, weights: Any) -> Any:
    """The query of a compressed 1-way measurement: the merged cell scaled down."""
    return factor.datavector() * weights


def _pair_counts(codes: dict[str, np.ndarray], sizes: dict[str, int], a: str, b: str) -> Any:
    """The 2-way marginal of (a, b), flattened row-major as mbi does."""
    return np.bincount(codes[a] * sizes[b] + codes[b], minlength=sizes[a] * sizes[b])


@dataclass
class MSTResult:
    codes: dict[str, np.ndarray]
    tree: list[tuple[str, str]]
    rho: float
    sigma: float


def mst(
    codes: dict[str, np.ndarray],
    sizes: dict[str, int],
    epsilon: float,
    delta: float,
    seed: int,
    iters: int = 2000,
) -> MSTResult:
    """MST (McKenna, Miklau & Sheldon 2021) at (epsilon, delta)-DP on mbi 1.1.0.

    rho/3 to the 1-way marginals, rho/3 to the r - 1 tree edges (rho/(3(r-1)) each), rho/3 to
    the 2-way marginals along the tree; each round of m marginals gets discrete Gaussian noise
    of sigma * sqrt(m) per cell, sigma = sqrt(3 / (2 rho)) (l2 sensitivity 1 per marginal).
    """
    import jax.numpy as jnp
    import mbi

    noise = OpenDPNoise()
    rng = np.random.default_rng(seed)  # post-processing only (decompression, sampling)
    np.random.seed(seed)  # noqa: NPY002 (mbi's synthetic_data samples with the global one)
    attrs = list(codes)
    rho = zcdp_rho(epsilon, delta)
    sigma = math.sqrt(3.0 / (2.0 * rho))

    def noisy(vectors: list[np.ndarray]) -> tuple[list[np.ndarray], float]:
        scale = sigma * math.sqrt(len(vectors))
        flat = noise.discrete_gaussian(np.concatenate(vectors).astype(np.int64), scale)
        return np.split(flat.astype(float), np.cumsum([v.size for v in vectors])[:-1]), scale

    # 1. noisy 1-way marginals, then drop cells under 3 standard deviations (post-processing)
    ones = [np.bincount(codes[a], minlength=sizes[a]) for a in attrs]
    y1, s1 = noisy(ones)
    keep = {a: y >= 3 * s1 for a, y in zip(attrs, y1, strict=True)}
    full = [y.sum() for a, y in zip(attrs, y1, strict=True) if keep[a].all()]
    total = float(np.mean(full)) if full else float(np.mean([y.sum() for y in y1]))
    new_code, new_size, measurements = {}, {}, []
    for a, y in zip(attrs, y1, strict=True):
        sup = keep[a]
        rank = np.cumsum(sup) - 1
        k = int(sup.sum())
        lookup = np.where(sup, rank, k)
        new_code[a] = lookup[codes[a]]
        if sup.all():
            new_size[a] = k
            measurements.append(mbi.LinearMeasurement(jnp.asarray(y), (a,), s1))
            continue
        new_size[a] = k + 1
        w = np.ones(k + 1)
        w[-1] = 1.0 / math.sqrt(sup.size - k)
        y2 = np.append(y[sup], y[~sup].sum()) * w
        query = functools.partial(_weighted, weights=jnp.asarray(w))
        measurements.append(mbi.LinearMeasurement(jnp.asarray(y2), (a,), s1, query=query))
    domain = mbi.Domain(attrs, [new_size[a] for a in attrs])

    # 2. the tree: exponential mechanism on || x_ab - xhat_ab ||_1, xhat from the 1-way model
    est = mbi.estimation.mirror_descent(domain, measurements, known_total=total, iters=500)
    p = {a: np.asarray(est.project((a,)).datavector()) for a in attrs}
    pairs = list(itertools.combinations(attrs, 2))
    error = {}
    for a, b in pairs:
        x = _pair_counts(new_code, new_size, a, b)
        error[a, b] = float(np.abs(x - np.outer(p[a], p[b]).ravel() / total).sum())
    parent = {a: a for a in attrs}

    def root(a: str) -> str:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    tree = []
    for _ in range(len(attrs) - 1):
        candidates = [e for e in pairs if root(e[0]) != root(e[1])]
        scores = np.array([error[e] for e in candidates])
        a, b = candidates[select_index(scores, rho / 3.0 / (len(attrs) - 1))]
        parent[root(a)] = root(b)
        tree.append((a, b))

    # 3. noisy 2-way marginals along the tree, the model, synthetic rows
    twos = [_pair_counts(new_code, new_size, a, b) for a, b in tree]
    y2s, s2 = noisy(twos)
    measurements += [
        mbi.LinearMeasurement(jnp.asarray(y), e, s2) for e, y in zip(tree, y2s, strict=True)
    ]
    model = mbi.estimation.mirror_descent(domain, measurements, known_total=total, iters=iters)
    synth = model.synthetic_data(rows=max(1, round(total))).to_dict()
    out = {}
    for a in attrs:  # undo the compression: the merged cell -> one of its codes at random
        sup = keep[a]
        kept, merged = np.flatnonzero(sup), np.flatnonzero(~sup)
        code = np.asarray(synth[a], dtype=np.int64)
        back = np.empty(code.size, dtype=np.int64)
        inside = code < kept.size
        back[inside] = kept[code[inside]]
        back[~inside] = rng.choice(merged, int((~inside).sum())) if merged.size else 0
        out[a] = back
    return MSTResult(out, tree, rho, sigma)


# -- evaluation ----------------------------------------------------------------------------------


Scored = tuple[float, float, float]  # AUC and its 95% interval (pooled over seeds)


@dataclass(frozen=True)
class Row:
    release: str
    cpu: float
    wall: float
    row_leakage: Scored
    taught: Scored | None
    utility: Scored
    rows: int
    note: str = ""
    second: Scored | None = None

    @property
    def area(self) -> float:
        """Pareto area of this (row leakage, utility) point; leakage AUC - 0.5 in [0, 0.5]."""
        return pareto_auc([(self.row_leakage[0] - 0.5, self.utility[0])], max_leakage=0.5)


def _cell(score: Scored | None) -> str:
    if score is None:
        return "-"
    return f"{score[0]:.3f} [{score[1]:.3f}, {score[2]:.3f}]"


def _labels(series: pd.Series) -> np.ndarray:
    return np.asarray(series.astype(str).to_numpy(), dtype=object)


def timed(make: Callable[[], pd.DataFrame]) -> tuple[pd.DataFrame, float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    out = make()
    return out, time.process_time() - cpu, time.perf_counter() - wall


def second_task(frame: pd.DataFrame, name: str) -> tuple[pd.DataFrame, np.ndarray] | None:
    """The second task's features and labels in ``frame`` (None when its column is gone)."""
    column, value = SECOND[name]
    if column not in frame.columns:
        return None
    series = frame[column]
    label = series.astype(str) == value if isinstance(value, str) else series.astype(float) >= value
    return frame.drop(columns=column), np.asarray(label.map({True: "yes", False: "no"}))


def evaluate(
    parts: Parts, epsilon: float, seeds: int, seed: int, n_proxies: int | str = "auto",
    variants: bool = False, aim: int = 0, associations: tuple[float, ...] = (),
    synthetic: bool = True,
) -> tuple[Scored, list[Row]]:  # fmt: skip
    s, t = parts.sensitive, parts.target
    aux, private, test, public = parts.aux, parts.private, parts.test, parts.public
    others = [c for c in private.columns if c != s]
    y_private = _labels(private[s])
    kw = {"seeds": seeds, "seed": seed}
    # the publisher's ranking data: the public rows, or (none held) the private rows themselves
    ranked_on = public if len(public) else private

    def raw_aux(release: pd.DataFrame) -> Scored:
        """The raw-aux adversary on the released columns of the private rows."""
        seen = [c for c in release.columns if c != s]
        scored = leakage(aux[seen], _labels(aux[s]), release[seen], y_private, **kw)
        return (scored.auc, *scored.auc_ci)

    def sanitized_aux(aux_release: pd.DataFrame, release: pd.DataFrame) -> Scored:
        """Trained on the sanitized auxiliary rows with their true values, on the release."""
        seen = [c for c in release.columns if c != s]
        scored = leakage(aux_release[seen], _labels(aux[s]), release[seen], y_private, **kw)
        return (scored.auc, *scored.auc_ci)

    def taught(release: pd.DataFrame) -> Scored:
        scored = leakage(release[others], _labels(release[s]), private[others], y_private, **kw)
        return (scored.auc, *scored.auc_ci)

    def use(release: pd.DataFrame) -> Scored:
        if len(release) == 0:
            return (0.5, 0.5, 0.5)  # no rows, no model: chance
        x = [c for c in release.columns if c != t]
        scored = utility(release[x], _labels(release[t]), test[x], _labels(test[t]), **kw)
        return (scored.auc.attack, *scored.auc_ci)

    def second(release: pd.DataFrame) -> Scored | None:
        task, real = second_task(release, parts.name), second_task(test, parts.name)
        if task is None or real is None:
            return None  # the release dropped the second task's column
        if len(release) == 0:
            return (0.5, 0.5, 0.5)
        x = [c for c in task[0].columns if c != s]
        scored = utility(task[0][x], task[1], real[0][x], real[1], **kw)
        return (scored.auc.attack, *scored.auc_ci)

    def row(name: str, out: pd.DataFrame, cpu: float, wall: float, leaked: Scored,
            teaches: Scored | None, note: str = "") -> Row:  # fmt: skip
        return Row(name, cpu, wall, leaked, teaches, use(out), len(out), note, second(out))

    rows = []
    background = raw_aux(private)  # the real other columns: what the attacker knows already
    rows.append(row("real private rows", private, 0.0, 0.0, (1.0, 1.0, 1.0), (1.0, 1.0, 1.0),
                    "sensitive column released: any adversary reads it"))  # fmt: skip
    rows.append(row(PUBLIC, public, 0.0, 0.0, (0.5, 0.5, 0.5), background,
                    f"no release: task models trained on the {len(public)} public rows alone "
                    "(none: chance); the row leakage of nothing released is chance"))  # fmt: skip
    out, cpu, wall = timed(lambda: DropSensitive().sanitize(private, s).data)
    rows.append(row("drop sensitive", out, cpu, wall, background, None))
    proxies = DropProxies(3, keep=[t], seed=seed)
    out, cpu, wall = timed(lambda: proxies.fit(ranked_on, s).sanitize(private, s).data)
    rows.append(
        row(
            f"drop sensitive + top 3 proxies ({', '.join(proxies.proxies_)})",
            out,
            cpu,
            wall,
            raw_aux(out),
            None,
            "" if len(public) else "ranked on the private rows: no public rows held",
        )
    )
    if len(public):  # fmt: skip
        draw = MarginalDraw(seed=seed)
        out, cpu, wall = timed(lambda: draw.fit(public, s).sanitize(private, s).data)
        rows.append(row("marginal draw", out, cpu, wall, background, taught(out)))

    # attrpriv's proxy resampler (sanitize resample --method donor), then with the sensitive
    # value drawn from the noisy marginal alone, and with the "hgb" chain
    def resampled(**options: Any) -> tuple[ProxyResampler, pd.DataFrame, float, float, Scored,
                                           Scored]:  # fmt: skip
        resampler = ProxyResampler(s, n_proxies=n_proxies, epsilon=epsilon, seed=seed, **options)
        out, cpu, wall = timed(lambda: resampler.fit(public, parts.schema).release(private).data)
        # the auxiliary rows released by a twin fitted on the private rows (as the sweep does:
        # a resampler refuses to release its own training rows)
        twin = ProxyResampler(s, n_proxies=n_proxies, epsilon=epsilon, seed=seed + 1, **options)
        aux_release = twin.fit(private, parts.schema).release(aux).data
        return resampler, out, cpu, wall, raw_aux(out), sanitized_aux(aux_release, out)

    label = "--method donor" if n_proxies == "auto" else f"{n_proxies} proxies"
    chosen = [(label, {})]
    if variants:
        chosen += [("draw='marginal'", {"draw": "marginal"}),
                   ("conditional='hgb'", {"conditional": "hgb"})]  # fmt: skip
    for name, options in chosen if len(public) >= 2 else ():
        resampler, out, cpu, wall, raw, trained = resampled(**options)
        rows.append(row(f"proxy resampling, {name}, epsilon {epsilon:g}", out, cpu, wall,
                        max(raw, trained), taught(out),
                        f"{len(resampler.proxies_)} proxies redrawn: "
                        f"{', '.join(resampler.proxies_)}; row leakage raw-aux {raw[0]:.3f}, "
                        f"sanitized-aux {trained[0]:.3f}"))  # fmt: skip

    # block resampling, the CLI default (sanitize resample): the block redrawn from DP counts of
    # the private rows; the public rows, where there are any, place the numeric bins
    schema = parts.schema.select(list(private.columns))
    given = public if len(public) else None

    def block_row(name: str, **options: Any) -> tuple[Row, tuple[str, ...]]:
        block = BlockResampler(s, epsilon=epsilon, delta=DELTA, seed=seed, **options)
        found: dict[str, Any] = {}

        def block_release() -> pd.DataFrame:
            found["out"] = block.fit(schema, given).release(private)
            return found["out"].values

        out, cpu, wall = timed(block_release)
        picked = tuple(found["out"].diagnostics.proxies)
        twin = BlockResampler(s, epsilon=epsilon, delta=DELTA, seed=seed + 1, **options)
        aux_release = twin.fit(schema, given).release(aux).values
        raw, trained = raw_aux(out), sanitized_aux(aux_release, out)
        return row(name, out, cpu, wall, max(raw, trained), taught(out),
                   f"{len(picked)} proxies redrawn: {', '.join(picked)}; row leakage raw-aux "
                   f"{raw[0]:.3f}, sanitized-aux {trained[0]:.3f}"), picked  # fmt: skip

    default, picked = block_row(
        f"block resampling (the CLI default), epsilon {epsilon:g}, delta {DELTA:g}"
    )
    rows.append(default)
    for threshold in associations:
        rows.append(block_row(f"block resampling, association={threshold:g}",
                              association=threshold)[0])  # fmt: skip
    out, cpu, wall = timed(lambda: private.drop(columns=[s, *picked]))
    rows.append(row(f"drop sensitive + the {len(picked)} columns block resampling redraws", out,
                    cpu, wall, raw_aux(out), None))  # fmt: skip

    book = Codebook.fit(aux, complete=(s, t))
    columns = list(private.columns)
    sizes = dict(zip(columns, book.sizes(columns), strict=True))
    found: dict[str, MSTResult] = {}

    def release() -> pd.DataFrame:
        found["mst"] = mst(book.encode(private), sizes, epsilon, DELTA, seed)
        return book.decode(found["mst"].codes, np.random.default_rng(seed))

    def mst_row() -> Row:
        out, cpu, wall = timed(release)
        result = found["mst"]
        at_target = ", ".join(a if b == t else b for a, b in result.tree if t in (a, b))
        at_sensitive = ", ".join(a if b == s else b for a, b in result.tree if s in (a, b))
        note = (f"rho {result.rho:.4f} zCDP, sigma {result.sigma:.2f}; domain "
                f"{int(np.prod([float(v) for v in sizes.values()])):.3g} cells, "
                f"{len(out)} rows; tree edges at the target: {at_target}; "
                f"at the sensitive column: {at_sensitive}")  # fmt: skip
        return row(f"MST, epsilon {epsilon:g}, delta {DELTA:g}", out, cpu, wall,
                   (0.5, 0.5, 0.5), taught(out), note)  # fmt: skip

    # attrpriv sanitize synthesize --method mst: OpenDP's own MST (opendp.extras.mbi), cells
    # from the schema only
    synthesizer = DPSynthesizer("mst", epsilon=epsilon, delta=DELTA, seed=seed)

    def synthesize_row() -> Row:
        out, cpu, wall = timed(lambda: synthesizer.fit(schema).release(private).data)
        return row(f"sanitize synthesize --method mst (OpenDP), epsilon {epsilon:g}", out,
                   cpu, wall, (0.5, 0.5, 0.5), taught(out),
                   f"{len(out)} synthetic rows; the schema's cells")  # fmt: skip

    if not synthetic:
        return background, rows
    rows.append(attempt(f"MST, epsilon {epsilon:g}, delta {DELTA:g}", mst_row))
    rows.append(attempt(f"sanitize synthesize --method mst (OpenDP), epsilon {epsilon:g}",
                        synthesize_row))  # fmt: skip
    if aim:
        name = f"sanitize synthesize --method aim --workload {aim} (OpenDP), epsilon {epsilon:g}"
        adaptive = DPSynthesizer("aim", epsilon=epsilon, delta=DELTA, workload=aim, seed=seed)

        def aim_row() -> Row:
            out, cpu, wall = timed(lambda: adaptive.fit(schema).release(private).data)
            return row(name, out, cpu, wall, (0.5, 0.5, 0.5), taught(out),
                       f"{len(out)} synthetic rows; the schema's cells")  # fmt: skip

        rows.append(attempt(name, aim_row))
    return background, rows


def attempt(name: str, make: Callable[[], Row]) -> Row:
    """``make()``, or a row that records why it failed (NaN scores): one release that fails
    (an anchor's release or scoring) does not end the run."""
    try:
        return make()
    except Exception as exc:  # any failure of that one release
        nan = (math.nan, math.nan, math.nan)
        why = (str(exc).strip().splitlines() or [""])[0]
        return Row(name, 0.0, 0.0, nan, None, nan, 0, f"failed: {type(exc).__name__}: {why}")


def print_table(parts: Parts, background: Scored, rows: list[Row]) -> None:
    s, t = parts.sensitive, parts.target
    column, value = SECOND[parts.name]
    print(f"\n### {parts.name} (sensitive {s}, task {t}, second task {column} "
          f"{'==' if isinstance(value, str) else '>='} {value}; {parts.rows} rows: attacker's "
          f"aux {len(parts.aux)}, publisher's public {len(parts.public)}, private "
          f"{len(parts.private)}, test {len(parts.test)})\n")  # fmt: skip
    print(f"An attacker who knows the private rows' real other columns, taught by the raw "
          f"auxiliary data: AUC {_cell(background)}\n")  # fmt: skip
    public = next(r for r in rows if r.release == PUBLIC)
    print("| release | CPU s | wall s | row leakage AUC | release-taught AUC | utility AUC "
          "| retained private information | second task AUC | retained, second task "
          "| Pareto area of the point |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        kept = "-" if r.second is None or public.second is None else (
            f"{r.second[0] - public.second[0]:+.3f}")  # fmt: skip
        print(f"| {r.release} | {r.cpu:.1f} | {r.wall:.1f} | {_cell(r.row_leakage)} "
              f"| {_cell(r.taught)} | {_cell(r.utility)} | {r.utility[0] - public.utility[0]:+.3f} "
              f"| {_cell(r.second)} | {kept} | {r.area:.3f} |")  # fmt: skip
    for r in rows:
        if r.note:
            print(f"- {r.release}: {r.note}")


def print_spread(name: str, runs: list[list[Row]]) -> None:
    """Each release's row leakage and utility over the splits: mean, min and max."""
    print(f"\n### {name}: over {len(runs)} splits (mean [min, max])\n")
    print("| release | row leakage AUC | utility AUC | retained private information "
          "| retained, second task | Pareto area of the point |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|")
    publics = [next(r for r in rows if r.release == PUBLIC) for rows in runs]
    for k, first in enumerate(runs[0]):
        same = [rows[k] for rows in runs]
        # the proxies named and counted may differ between splits
        label = re.sub(r"the \d+ (proxies|columns)", r"the N \1", first.release.split(" (")[0])
        seconds = [r.second[0] - p.second[0] for r, p in zip(same, publics, strict=True)
                   if r.second is not None and p.second is not None]  # fmt: skip
        cells = [[r.row_leakage[0] for r in same], [r.utility[0] for r in same],
                 [r.utility[0] - p.utility[0] for r, p in zip(same, publics, strict=True)],
                 seconds, [r.area for r in same]]  # fmt: skip
        print(f"| {label} | " + " | ".join(
            f"{np.mean(v):.3f} [{min(v):.3f}, {max(v):.3f}]" if v else "-" for v in cells)
            + " |")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="adult,german_credit,census_kdd")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--splits", type=int, default=1,
                        help="repeat over this many shuffles (seeds seed, seed+1, ...) and print "
                             "each release's mean and spread over them")  # fmt: skip
    parser.add_argument("--rows", type=int, default=None,
                        help="subsample each table to this many rows (default: census_kdd "
                             "20,000, the others whole)")  # fmt: skip
    parser.add_argument(
        "--sensitive",
        default=None,
        help="the sensitive column (default: each table's own, as above)",
    )
    parser.add_argument("--public-share", type=float, default=None,
                        help="public rows the publisher holds per private row, e.g. 0.1, or 0 "
                             "(default: as many as the private ones); the attacker keeps its "
                             "whole auxiliary part")  # fmt: skip
    parser.add_argument("--public-where", default=None,
                        help="COLUMN=VALUE: public rows from another population (those "
                             "rows), private and test rows from the rest")  # fmt: skip
    parser.add_argument("--proxies", default="auto",
                        help="proxies the donor resampler redraws: 'auto' or a count")  # fmt: skip
    parser.add_argument("--variants", action="store_true",
                        help="also the donor resampler with draw='marginal' and with "
                             "conditional='hgb' (minutes more)")  # fmt: skip
    parser.add_argument("--aim", type=int, default=0, choices=(0, 2, 3),
                        help="also 'sanitize synthesize --method aim' with this workload (2 or "
                             "3; 0: not run): minutes a split on a few hundred rows, an hour "
                             "on Adult")  # fmt: skip
    parser.add_argument("--association", default="",
                        help="also block resampling with these association thresholds, e.g. "
                             "0.15,0.2 (the default, 0.1, is always run)")  # fmt: skip
    parser.add_argument("--no-synthetic", action="store_true",
                        help="leave out the whole-table DP synthetic rows (MST, sanitize "
                             "synthesize; minutes a split on census_kdd)")  # fmt: skip
    args = parser.parse_args()
    thresholds = tuple(float(v) for v in args.association.split(",") if v)
    if importlib.util.find_spec("mbi") is None:
        print("mbi (private-pgm) is not installed: DP synthetic anchor skipped "
              "(pip install 'attrpriv[anchors]')")  # fmt: skip
        return
    print(f"mbi {version('mbi')}, jax {version('jax')}, opendp {version('opendp')}; "
          f"epsilon {args.epsilon:g}, delta {DELTA:g}; {args.seeds} seeds per model")  # fmt: skip
    start = time.perf_counter()
    with threadpool_limits(1):
        for name in args.datasets.split(","):
            runs = []
            for split in range(args.seed, args.seed + args.splits):
                parts = load_parts(name, split, args.rows, args.sensitive, args.public_share,
                                   args.public_where)  # fmt: skip
                count = args.proxies if args.proxies == "auto" else int(args.proxies)
                background, rows = evaluate(parts, args.epsilon, args.seeds, split, count,
                                            args.variants, args.aim, thresholds,
                                            not args.no_synthetic)  # fmt: skip
                print_table(parts, background, rows)
                runs.append(rows)
            if args.splits > 1:
                print_spread(name, runs)
    print(f"\ntotal wall {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
