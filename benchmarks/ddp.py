"""Benchmark Tabular-DDP: accuracy against the row-level Laplace baseline, and run time.

Tables printed:

1. Accuracy. Expected absolute error per histogram bin of Tabular-DDP (pairwise coefficients and
   the sound Markov-quilt bound) and of the Laplace mechanism on whole rows (LaplaceHistograms,
   substitute neighbours: the row-level version of "one respondent's answers change"), and the
   gain = Laplace error / Tabular-DDP error, for k in {1, 2, 4, 6, 8, 10, 12} and epsilon in
   {0.1, 0.5, 1, 2}, on (a) anes96 (11 questions, 944 rows), (b) Census-Income KDD (all 41
   questions; integer/numeric ones binned to 10 levels over their public domain; 299,285 rows),
   (c) a synthetic survey of 60 questions, 20,000 rows, sampled from a known random Bayesian
   network. Networks: hill climbing + BIC on (at most 100,000 sampled rows of) the data itself.
   The error is analytic: E|Z| of discrete Laplace noise of the chunk's scale (no sampling).
2. Sampled check: mean |noisy - true| per bin over 50 releases with OpenDP noise, vs the analytic
   value, for k = 10 and epsilon = 1.
3. Speed: fit (binning, chunking, structure learning, noise calibration) + release time and peak
   resident memory (each configuration in a fresh process), vs k, vs number of columns, vs rows, on
   synthetic surveys; structures hc and chow-liu.
4. Audits: the numbers of docs/mechanisms/tabular-ddp.md (``--part audit``).

7. Per-histogram scales: what optimising each chunk's scales one by one would gain
   (``--part per-histogram``).

6. Empirical law: every calibration's loss on anes96 when the adversary's belief is the rows'
   own empirical law (``--part empirical``).

8. Modules: the structural tier (``ModularDDP``), modules declared or learned from 2,000
   public rows, on independent and on linked block surveys (``--part modules``).

5. Blocks: the sound default (whole-survey calibration) against the paper's pairwise method
   and the checked bound under the paper's split, on generated block surveys (120 questions
   in blocks of 8-12, links across blocks; six seeds, five of them held out of tuning) and the
   bundled surveys, and the speed of a 200-question survey (``--part blocks``).

Run:  /tmp/venv/bin/python benchmarks/ddp.py                 (everything: ~25 min on 2 cores)
      /tmp/venv/bin/python benchmarks/ddp.py --part speed    (or accuracy, check, audit)
      /tmp/venv/bin/python benchmarks/ddp.py --quick         (small grid)
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from attrpriv import Column, Integer, Schema
from attrpriv.data import datasets
from attrpriv.data.aggregate import aggregator_for
from attrpriv.release.ddp.answers import SurveyFacts, any_law_epsilon
from attrpriv.release.ddp.chunking import mutual_information
from attrpriv.release.ddp.dependence import discrete_laplace_mae
from attrpriv.release.ddp.empirical import empirical_loss, histogram_codes
from attrpriv.release.ddp.mechanism import TabularDDP
from attrpriv.release.ddp.modules import ModularDDP
from attrpriv.release.graph.learning import count_levels, encode, learning_rows
from attrpriv.release.graph.network import DiscreteNetwork

KS = (1, 2, 4, 6, 8, 10, 12)
EPSILONS = (0.1, 0.5, 1.0, 2.0)
METHODS = ("pairwise", "quilt")
RELEASES = 50


# -- synthetic surveys ---------------------------------------------------------------------------


def synthetic_network(n_columns: int, seed: int = 0, window: int = 6) -> DiscreteNetwork:
    """A random survey network: each question has 2-5 answers and up to 2 parents among the
    ``window`` questions before it; CPD rows Dirichlet(0.5) (fairly strong dependence)."""
    rng = np.random.default_rng(seed)
    names = [f"q{t:03d}" for t in range(n_columns)]
    states = {n: tuple(range(int(rng.integers(2, 6)))) for n in names}
    parents: dict[str, tuple[str, ...]] = {}
    cpds = {}
    for t, name in enumerate(names):
        pool = names[max(0, t - window) : t]
        count = min(len(pool), int(rng.integers(0, 3)))
        parents[name] = tuple(sorted(rng.choice(pool, size=count, replace=False))) if count else ()
        shape = (*(len(states[p]) for p in parents[name]), len(states[name]))
        cpds[name] = rng.dirichlet(np.full(shape[-1], 0.5), size=shape[:-1])
    return DiscreteNetwork(states, parents, cpds)


def block_names(n_columns: int, seed: int = 0) -> list[list[str]]:
    """The blocks :func:`block_network` draws for ``n_columns`` and ``seed`` (the same RNG
    calls, in the same order): the survey's true modules."""
    rng = np.random.default_rng(seed)
    names = [f"q{t:03d}" for t in range(n_columns)]
    for _ in names:
        rng.integers(2, 6)
    blocks, start = [], 0
    while start < n_columns:
        size = int(rng.integers(8, 13))
        blocks.append(names[start : start + size])
        start += size
    return blocks


def block_network(n_columns: int, seed: int = 0, cross: float = 0.1) -> DiscreteNetwork:
    """A survey of blocks of 8-12 dependent questions (2-5 answers each, up to 2 parents in
    the block), each block's CPD rows Dirichlet(0.3), (1) or (5) (strong, medium, weak
    dependence), and with probability ``cross`` a question also has a parent in the block
    before: the links between blocks."""
    rng = np.random.default_rng(seed)
    names = [f"q{t:03d}" for t in range(n_columns)]
    states = {n: tuple(range(int(rng.integers(2, 6)))) for n in names}
    blocks, start = [], 0
    while start < n_columns:
        size = int(rng.integers(8, 13))
        blocks.append(names[start : start + size])
        start += size
    parents: dict[str, tuple[str, ...]] = {}
    cpds = {}
    for number, block in enumerate(blocks):
        strength = float(rng.choice([0.3, 1.0, 5.0]))
        for position, name in enumerate(block):
            pool = block[:position]
            count = min(len(pool), int(rng.integers(0, 3)))
            chosen = [str(p) for p in rng.choice(pool, size=count, replace=False)] if count else []
            if number > 0 and rng.random() < cross:
                chosen.append(str(rng.choice(blocks[number - 1])))
            parents[name] = tuple(sorted(chosen))
            shape = (*(len(states[p]) for p in parents[name]), len(states[name]))
            cpds[name] = rng.dirichlet(np.full(shape[-1], strength), size=shape[:-1])
    return DiscreteNetwork(states, parents, cpds)


def survey_of(network: DiscreteNetwork, n_rows: int, seed: int) -> tuple[pd.DataFrame, Schema]:
    frame = network.sample(n_rows, np.random.default_rng(seed)).astype(np.int64)
    schema = Schema(
        tuple(Column(n, "feature", Integer(0, network.card(n) - 1)) for n in network.nodes)
    )
    return frame, schema


def synthetic_survey(n_columns: int, n_rows: int, seed: int = 0) -> tuple[pd.DataFrame, Schema]:
    network = synthetic_network(n_columns, seed)
    frame = network.sample(n_rows, np.random.default_rng(seed + 1)).astype(np.int64)
    schema = Schema(
        tuple(Column(n, "feature", Integer(0, network.card(n) - 1)) for n in network.nodes)
    )
    return frame, schema


def load(name: str, quick: bool) -> tuple[pd.DataFrame, Schema]:
    if name == "synthetic":
        return synthetic_survey(30 if quick else 60, 5_000 if quick else 20_000)
    frame, schema = datasets.load(name)
    return (
        frame.sample(20_000, random_state=0) if quick and len(frame) > 20_000 else frame
    ), schema


# -- measuring -----------------------------------------------------------------------------------


def _status_mib(key: str) -> float:
    """A memory figure of this process from /proc (VmRSS: now, VmHWM: peak since exec)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{key}:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def table(title: str, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    print(f"\n### {title}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---:" for _ in header) + "|")
    for row in rows:
        print("| " + " | ".join(_cell(v) for v in row) + " |")


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return str(value)


# -- 1. accuracy ---------------------------------------------------------------------------------


def accuracy(name: str, quick: bool) -> None:
    frame, schema = load(name, quick)
    ks = (1, 4, 10) if quick else KS
    epsilons = (0.5, 1.0) if quick else EPSILONS
    rows, errors = [], []
    for k in ks:
        start = time.perf_counter()
        mechanism = TabularDDP(
            1.0, k, method="pairwise", composition="chunks", grouping="order"
        ).fit(frame, schema)
        learn = time.perf_counter() - start
        for epsilon in epsilons:
            gains: list[Any] = [k, epsilon]
            for method in METHODS:
                mechanism.epsilon, mechanism.method = epsilon, method
                error = mechanism.expected_error()
                ds = np.mean(
                    [
                        p.dependent_sensitivity / p.row_sensitivity
                        for p in mechanism.calibrate().chunks
                    ]
                )
                gains += [error.mae, error.gain, float(ds)]
            rows.append([*gains, error.laplace_mae])
        errors.append([k, len(mechanism.chunks_), learn])
    m = len(mechanism.levels_)
    table(
        f"Accuracy on {name} ({len(frame):,} rows, {m} questions), the paper's composition "
        "(epsilon * k / m per chunk, chunks in order): expected |error| per bin",
        [
            "k",
            "epsilon",
            "pairwise MAE",
            "pairwise gain",
            "pairwise DS/row",
            "quilt MAE",
            "quilt gain",
            "quilt DS/row",
            "Laplace MAE",
        ],
        rows,
    )
    table(f"Learning time on {name}", ["k", "chunks", "fit seconds"], errors)


def grouping(names: Sequence[str], quick: bool) -> None:
    """Order vs dependence chunking at k = 10, epsilon = 1: accuracy, and the share of all
    pairwise mutual information that crosses chunks (what the guarantee assumes away)."""
    rows = []
    for name in names:
        frame, schema = load(name, quick)
        for how in ("order", "dependence"):
            mechanism = TabularDDP(1.0, 10, grouping=how, composition="chunks").fit(frame, schema)
            columns = list(mechanism.levels_)
            rows_ = learning_rows(frame, schema, columns, 100_000, 0)
            info = mutual_information(
                encode(rows_, mechanism.levels_),
                {c: lv.n_states for c, lv in mechanism.levels_.items()},
            )
            chunk_of = {c: t for t, chunk in enumerate(mechanism.chunks_) for c in chunk}
            ids = np.array([chunk_of[c] for c in columns])
            crossing = info[ids[:, None] != ids[None, :]].sum() / info.sum()
            gains = []
            for method in METHODS:
                mechanism.method = method
                gains.append(mechanism.expected_error().gain)
            rows.append(
                [name, how, *gains, float(crossing), mechanism.epsilon_if_chunks_dependent()]
            )
    table(
        "Chunking by order vs by dependence (k=10, epsilon=1, the paper's composition)",
        [
            "data",
            "grouping",
            "pairwise gain",
            "quilt gain",
            "MI across chunks",
            "eps if chunks dependent (quilt)",
        ],
        rows,
    )


# -- 2. sampled check ----------------------------------------------------------------------------


def sampled_check(names: Sequence[str], quick: bool) -> None:
    rows = []
    for name in names:
        frame, schema = load(name, quick)
        for method in METHODS:
            mechanism = TabularDDP(1.0, 10, method=method).fit(frame, schema)
            with aggregator_for(frame, schema) as aggregator:
                true = count_levels(aggregator, mechanism.levels_)
            measured = []
            for _ in range(RELEASES):
                values = mechanism.release(frame, schema).values
                measured += [np.abs(values[c].to_numpy() - true[c]) for c in values]
            rows.append(
                [
                    name,
                    method,
                    mechanism.expected_error().mae,
                    float(np.concatenate(measured).mean()),
                ]
            )
    table(
        f"Sampled check (k=10, epsilon=1, {RELEASES} releases with OpenDP noise)",
        ["data", "method", "analytic MAE", "measured MAE"],
        rows,
    )


# -- 3. speed ------------------------------------------------------------------------------------


def _timed_child(columns: int, n_rows: int, k: int, structure: str) -> list[float]:
    """In a fresh process: seconds to fit, to release, resident MiB before fitting, peak MiB."""
    tiny, tiny_schema = synthetic_survey(3, 200, seed=9)  # warm up: imports, first calls
    TabularDDP(1.0, 3, structure=structure).release(tiny, tiny_schema)
    frame, schema = synthetic_survey(columns, n_rows)
    before = _status_mib("VmRSS")
    start = time.perf_counter()
    mechanism = TabularDDP(1.0, k, structure=structure).fit(frame, schema)
    fitted = time.perf_counter()
    mechanism.release(frame, schema)
    done = time.perf_counter()
    peak = _status_mib("VmHWM")  # ru_maxrss would keep the parent's peak across exec
    return [fitted - start, done - fitted, before, peak]


def timed_release(columns: int, n_rows: int, k: int, structure: str) -> list[float]:
    """:func:`_timed_child` in a spawned process, so that its peak memory is its own."""
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(_timed_child, columns, n_rows, k, structure).result()


def speed(quick: bool) -> None:
    columns = 20 if quick else 60
    rows = []
    for k in (2, 4, 10) if quick else KS:
        for structure in ("hc", "chow-liu", "exact"):
            if structure == "exact" and k > 4:
                continue
            rows.append([k, structure, *timed_release(columns, 10_000, k, structure)])
    header = ["fit s", "release s", "MiB before fit", "peak MiB"]
    table(f"Time vs k ({columns} columns, 10,000 rows)", ["k", "structure", *header], rows)
    grid = [(10, 1_000), (20, 10_000)] if quick else SPEED_GRID
    rows = []
    for n_columns, n_rows in grid:
        for structure in ("hc", "chow-liu"):
            rows.append(
                [n_columns, n_rows, structure, *timed_release(n_columns, n_rows, 10, structure)]
            )
    table(
        "Time vs columns and rows (k = 10; at most 100,000 rows sampled for learning)",
        ["columns", "rows", "structure", *header],
        rows,
    )


SPEED_GRID = [
    (10, 10_000),
    (50, 10_000),
    (100, 10_000),
    (200, 10_000),
    (50, 1_000),
    (50, 100_000),
    (50, 300_000),
    (200, 300_000),
]


def audits(quick: bool) -> None:
    """The audit numbers of docs/mechanisms/tabular-ddp.md, with the tests' own helpers."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "release"))
    import test_ddp_dependence as t

    xor, star = t.xor_network(pairs=1), t.star_network(leaves=3, keep=0.95)
    cases = [
        ("XOR, exact structure", xor, 2.0, "quilt", t.TabularDDP(2.0, 3, structure="exact")),
        (
            "XOR, exact structure",
            xor,
            2.0,
            "pairwise",
            t.TabularDDP(2.0, 3, structure="exact", method="pairwise"),
        ),
        ("star, hc", star, 1.0, "pairwise", t.TabularDDP(1.0, 4, method="pairwise")),
        ("star, hc", star, 1.0, "quilt", t.TabularDDP(1.0, 4)),
        (
            "star, hc",
            star,
            1.0,
            "rho forced to 0",
            t._IndependentTabularDDP(1.0, 4, method="pairwise"),
        ),
    ]
    rows = []
    for name, network, epsilon, variant, mechanism in cases:
        scale = t.fitted_scale(mechanism, network)
        rows.append([name, variant, epsilon, scale, t.audited_epsilon(network, scale)])
    table(
        "Audits (100,000 outputs per secret, confidence 0.99; "
        "tests/release/test_ddp_dependence.py)",
        ["network", "variant", "claimed epsilon", "noise scale", "audited lower bound"],
        rows,
    )


DATA = ("anes96", "census_kdd", "synthetic")


def blocks(quick: bool) -> None:
    """The error ratio (substitution Laplace / Tabular-DDP) at epsilon = 1 of the sound
    default (whole-survey calibration), of the paper's pairwise method and of the checked
    bound under the paper's composition, on generated block surveys (seed 0 is the one the
    defaults were tuned on; seeds 1-5 were not looked at before this table) and on the bundled
    surveys; then the speed of a 200-question survey."""
    surveys = {
        f"blocks seed {seed}": survey_of(block_network(120, seed=seed), 10_000, 1 + 10 * seed)
        for seed in (range(2) if quick else range(6))
    }
    surveys["anes96"] = load("anes96", quick)
    if not quick:
        surveys["census_kdd"] = load("census_kdd", quick)
    rows = []
    for name, (frame, schema) in surveys.items():
        for k in (4, 10) if name.startswith("blocks") else (4, 6, 8, 10):
            cpu = time.process_time()
            sound = TabularDDP(1.0, k).fit(frame, schema)
            fit = time.process_time() - cpu
            plan = sound.calibrate()
            paper = TabularDDP(1.0, k, method="pairwise", grouping="order").fit(frame, schema)
            chunked = TabularDDP(1.0, k, composition="chunks", grouping="order")
            rows.append(
                [
                    name,
                    k,
                    sound.expected_error(plan).gain,
                    paper.expected_error().gain,
                    chunked.fit(frame, schema).expected_error().gain,
                    fit,
                    len(sound.chunks_),
                    max(len(c) for c in sound.chunks_),
                    sum(bool(b.ring) for b in sound.boundaries_),
                    plan.fallback or "-",
                ]
            )
    table(
        "Error ratio Laplace / Tabular-DDP at epsilon = 1 (expected |error| per bin)",
        [
            "survey",
            "k",
            "sound default",
            "pairwise (paper)",
            "checked, paper's split",
            "fit CPU s",
            "chunks",
            "largest",
            "with a ring",
            "fallback",
        ],
        rows,
    )
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        timing = pool.submit(_timed_blocks, 200, 10_000).result()
    table(
        "Default fit + release of a 200-question block survey, 10,000 rows (fresh process)",
        ["CPU s", "wall s", "peak MiB", "error ratio"],
        [timing],
    )


def _timed_blocks(columns: int, n_rows: int) -> list[float]:
    """CPU and wall seconds, peak memory and gain of one default release, in this process."""
    frame, schema = survey_of(block_network(columns, seed=3), n_rows, 2)
    cpu, wall = time.process_time(), time.perf_counter()
    result = TabularDDP(1.0, 10).release(frame, schema)
    elapsed = [time.process_time() - cpu, time.perf_counter() - wall]
    return [*elapsed, _status_mib("VmHWM"), result.diagnostics.expected_error.gain]


def empirical(quick: bool) -> None:
    """Every calibration against the empirical-law adversary (its belief: the respondent is one
    of the rows, drawn at random) on anes96 at epsilon = 1, and the same check on the table with
    every column shuffled apart (independent answers: what sampling noise alone gives)."""
    frame, schema = load("anes96", quick)
    default = TabularDDP(1.0, 10).fit(frame, schema)
    codes = histogram_codes(default, frame)
    rng = np.random.default_rng(0)
    shuffled = codes.apply(lambda column: rng.permutation(column.to_numpy()))
    error = default.expected_error()
    laplace = error.laplace_scale
    calibrations: dict[str, tuple[dict[str, float], float]] = {
        "sound default": (default.calibrate().scales(), error.gain)
    }
    for k in (4, 10):
        paper = TabularDDP(1.0, k, method="pairwise", grouping="order").fit(frame, schema)
        calibrations[f"pairwise (paper), k = {k}"] = (
            paper.calibrate().scales(),
            paper.expected_error().gain,
        )
    for scale in (11.0, 12.5, 15.0, laplace):
        ratio = discrete_laplace_mae(laplace) / discrete_laplace_mae(scale)
        calibrations[f"uniform scale {scale:g}"] = (dict.fromkeys(codes.columns, scale), ratio)
    rows = []
    for name, (scales, ratio) in calibrations.items():
        cpu = time.process_time()
        found = empirical_loss(codes, scales, min_rows=30)
        small = empirical_loss(codes, scales, min_rows=20)
        noise = empirical_loss(shuffled, scales, min_rows=30)
        rows.append([name, ratio, min(scales.values()), max(scales.values()), found.value,
                     f"{found.column} ({found.rows[0]} vs {found.rows[1]} rows)", small.value,
                     f"{small.column} ({small.rows[0]} vs {small.rows[1]} rows)", noise.value,
                     time.process_time() - cpu])  # fmt: skip
    table(
        "anes96, epsilon 1: loss under the rows' empirical law (a found output corner: a lower "
        "bound on the exact worst case for that belief)",
        ["calibration", "error ratio", "min scale", "max scale", "loss, secrets >= 30 rows",
         "where", "loss, >= 20 rows", "where", "shuffled table, >= 30 rows", "CPU s"],
        rows,
    )  # fmt: skip


def per_histogram(quick: bool) -> None:
    """What per-histogram scales inside a chunk would gain over the default's one scale per
    chunk: each chunk's scales optimised (SLSQP on log scales, the bins' mean error as the
    objective) under the same bound of every answer <= epsilon; epsilon = 1, k = 10."""
    seeds = (0,) if quick else (0, 3)
    surveys = {
        f"blocks seed {seed}": survey_of(block_network(120, seed=seed), 10_000, 1 + 10 * seed)
        for seed in seeds
    }
    surveys["anes96"] = load("anes96", quick)
    rows = []
    for name, (frame, schema) in surveys.items():
        mechanism = TabularDDP(1.0, 10).fit(frame, schema)
        plan = mechanism.calibrate()
        bins = {c: float(lv.size) for c, lv in mechanism.levels_.items()}
        uniform = optimised = 0.0
        for chunk, evidence in zip(plan.chunks, mechanism.evidence_, strict=True):
            scales = _optimised_scales(evidence, chunk.scale, bins)
            for column in chunk.columns:
                uniform += bins[column] * discrete_laplace_mae(chunk.scale)
                optimised += bins[column] * discrete_laplace_mae(scales[column])
        laplace = discrete_laplace_mae(mechanism.expected_error(plan).laplace_scale)
        total = sum(bins.values())
        rows.append([name, laplace * total / uniform, laplace * total / optimised])
    table(
        "Error ratio at epsilon 1, k = 10: one scale per chunk (default) vs per-histogram "
        "scales optimised under the same bounds",
        ["survey", "one scale per chunk", "per-histogram scales"],
        rows,
    )


def _optimised_scales(evidence: Any, start: float, bins: dict[str, float]) -> dict[str, float]:
    """The chunk's scales minimising its bins' mean error with every bound <= 1 (SLSQP from
    the uniform scale; the uniform scale if the optimiser ends infeasible)."""
    from scipy.optimize import minimize

    columns = list(evidence.columns)
    sensitivity = dict.fromkeys(columns, 2.0)
    weights = np.array([bins[c] for c in columns])

    def slack(x: np.ndarray) -> np.ndarray:
        scales = dict(zip(columns, np.exp(x), strict=True))
        return np.array([1.0 - evidence.loss(c, scales, sensitivity)[0] for c in columns])

    x0 = np.full(len(columns), np.log(start))
    if len(columns) == 1:
        return {columns[0]: start}
    found = minimize(lambda x: float(weights @ np.exp(x)), x0, method="SLSQP",
                     constraints=[{"type": "ineq", "fun": slack}],
                     bounds=[(np.log(2.0), np.log(20 * start))] * len(columns),
                     options={"maxiter": 200})  # fmt: skip
    x = found.x if slack(found.x).min() >= -1e-9 else x0
    return dict(zip(columns, np.exp(x), strict=True))


def accuracy_all(quick: bool) -> None:
    for name in DATA:
        accuracy(name, quick)
    grouping(DATA, quick)


def _bin_mae(frame: pd.DataFrame, schema: Schema, scales: dict[str, float]) -> float:
    """Expected |error| per bin, over every bin of every released histogram."""
    bins = {c.name: len(c.domain.categories) for c in schema.columns}  # type: ignore[union-attr]
    total = sum(bins[c] for c in scales)
    return sum(bins[c] * discrete_laplace_mae(scales[c]) for c in scales) / total


def modules(quick: bool) -> None:
    """The structural tier (ModularDDP) at epsilon = 1 on 120-question block surveys: modules
    declared (the true blocks) or learned from 2,000 public rows of the same law, on surveys
    whose blocks are independent (cross = 0: the class holds) and linked (cross = 0.1: it does
    not, for the declared blocks); against substitution Laplace (scale 2m/epsilon) and the
    sound default (whole-survey calibration) in the same run, with the unconditional epsilon
    each release also guarantees. Seeds 1-5 were not looked at before this table."""
    rows = []
    for cross in (0.0, 0.1):
        for seed in range(2) if quick else range(6):
            network = block_network(120, seed=seed, cross=cross)
            frame, schema = survey_of(network, 10_000, 1 + 10 * seed)
            aux, _ = survey_of(network, 2_000, 7 + 10 * seed)
            m = len(frame.columns)
            laplace = _bin_mae(frame, schema, dict.fromkeys(frame.columns, 2.0 * m))
            for name, tier in (
                ("declared", ModularDDP(1.0, block_names(120, seed))),
                ("from 2,000 aux rows", ModularDDP(1.0, "aux", aux=aux)),
            ):
                cpu = time.process_time()
                plan = tier.calibrate(SurveyFacts(schema))
                seconds = time.process_time() - cpu
                scales = plan.scales()
                rows.append([f"seed {seed}, cross {cross:g}", name, len(plan.modules),
                             max(len(x) for x in plan.modules),
                             laplace / _bin_mae(frame, schema, scales),
                             any_law_epsilon(scales), seconds])  # fmt: skip
            cpu = time.process_time()
            sound = TabularDDP(1.0).fit(frame, schema)
            plan = sound.calibrate()
            rows.append([f"seed {seed}, cross {cross:g}", "sound default (tests)",
                         len(plan.chunks), max(len(c.columns) for c in plan.chunks),
                         sound.expected_error(plan).gain, any_law_epsilon(plan.scales()),
                         time.process_time() - cpu])  # fmt: skip
    table(
        "Structural tier at epsilon = 1: error ratio Laplace / release (expected |error| per "
        "bin), 120 questions, 10,000 rows",
        ["survey", "modules", "count", "largest", "gain", "epsilon, any law", "CPU s"],
        rows,
    )


PARTS: dict[str, Callable[[bool], None]] = {
    "accuracy": accuracy_all,
    "check": lambda quick: sampled_check(DATA, quick),
    "speed": speed,
    "audit": audits,
    "blocks": blocks,
    "empirical": empirical,
    "per-histogram": per_histogram,
    "modules": modules,
}


def run_parts(
    parts: dict[str, Callable[[bool], None]], description: str, default: Sequence[str]
) -> None:
    """The command line of a benchmark in parts: ``--part`` (repeatable) and ``--quick``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help="small grid")
    parser.add_argument("--part", choices=sorted(parts), action="append", help="default: all")
    args = parser.parse_args()
    for part in args.part or default:
        parts[part](args.quick)


def main() -> None:
    run_parts(PARTS, __doc__.splitlines()[0], ("blocks", "accuracy", "check", "speed", "audit"))


if __name__ == "__main__":
    main()
