"""Benchmark Tabular-DDP's tiers: each class of laws against substitution Laplace, side by side.

Every row is one survey; every column one release of it at epsilon = 1, with its gain (expected
|error| per histogram bin of row-level substitution Laplace, scale 2m/epsilon, over the
release's) and the epsilon the same noise guarantees for any law. Tiers:

- structural, declared: ``ModularDDP`` with the survey's true blocks;
- structural, from aux: ``ModularDDP(modules="aux")`` learned from 2,000 public rows of the same
  law (fewer for the small real surveys: a third of the rows, held out of the private ones);
- model, from aux: ``ModelDDP(model="aux")``, a Chow-Liu tree on the same public rows;
- model, from the private rows (block surveys only): the tree learned by the DP step
  ``PrivateTree(epsilon 1, delta 1e-6)`` (row-level, charged on its own), its CPU seconds the
  step's plus the calibration's;
- test-confirmed (``TabularDDP()``, the earlier default: a comparison only, its first guarantee
  rests on tests of the private rows, not on a proof).

Tables:

1. ``blocks``: 120 questions in blocks of 8-12, 10,000 rows; links between blocks with
   probability 0 (the structural class holds), 0.1 and 0.3; seeds 0-5 (1-5 not looked at
   while the model tier was built).
2. ``components``: one dependent component, where modules cannot gain: a chain of 60
   questions and a hub driving 49, at three strengths.
3. ``real``: anes96, census_kdd, german_credit and adult (german_credit and adult were not
   looked at while the model tier was built); public rows are a random third (at most 2,000)
   held out of the private rows.
4. ``scale``: 500 questions x 100,000 rows from Parquet (a hub driving 49 answers, a chain of
   200, then blocks), through the CLI in a fresh process per tier: CPU seconds (user + system
   of the child), wall seconds and peak resident memory.

Run:  python benchmarks/ddp_tiers.py               (all parts: ~4 min on 2 cores)
      python benchmarks/ddp_tiers.py --part blocks  (or components, real, scale)
"""

from __future__ import annotations

import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from ddp import block_names, block_network, run_parts, survey_of, table

from attrpriv import Schema
from attrpriv.data import datasets
from attrpriv.release.ddp.answers import AnswerHistograms, SurveyFacts, any_law_epsilon
from attrpriv.release.ddp.dependence import discrete_laplace_mae
from attrpriv.release.ddp.mechanism import TabularDDP
from attrpriv.release.ddp.model import ModelDDP
from attrpriv.release.ddp.modules import ModularDDP
from attrpriv.release.ddp.private_tree import PrivateTree
from attrpriv.release.graph.learning import Levels
from attrpriv.release.graph.network import DiscreteNetwork

EPSILON = 1.0


def _mae(levels: Mapping[str, Levels], scales: Mapping[str, float]) -> float:
    """Expected |error| per bin over every bin of every released histogram."""
    bins = sum(levels[c].size for c in scales)
    return sum(levels[c].size * discrete_laplace_mae(scales[c]) for c in scales) / bins


def _tier(tier: AnswerHistograms[Any, Any], schema: Schema) -> tuple[float, float, float]:
    """Gain over substitution Laplace, epsilon for any law, CPU seconds of the calibration."""
    cpu = time.process_time()
    scales = tier.calibrate(SurveyFacts(schema)).scales()
    seconds = time.process_time() - cpu
    levels = tier._levels(schema)
    laplace = dict.fromkeys(scales, 2.0 * len(scales) / EPSILON)
    return _mae(levels, laplace) / _mae(levels, scales), any_law_epsilon(scales), seconds


def _cells(result: tuple[float, float, float]) -> list[str]:
    gain, unconditional, seconds = result
    return [f"{gain:.2f}x", f"{unconditional:.3g}", f"{seconds:.2f}"]


def _private(frame: pd.DataFrame, schema: Schema) -> list[str]:
    cpu = time.process_time()
    model = PrivateTree(1.0, 1e-6).release(frame, schema).diagnostics.model
    seconds = time.process_time() - cpu
    gain, unconditional, calibration = _tier(ModelDDP(EPSILON, model), schema)
    return _cells((gain, unconditional, seconds + calibration))


def _tested(frame: pd.DataFrame, schema: Schema) -> list[str]:
    cpu = time.process_time()
    mechanism = TabularDDP(EPSILON).fit(frame, schema)
    plan = mechanism.calibrate()
    seconds = time.process_time() - cpu
    return [f"{mechanism.expected_error(plan).gain:.2f}x", f"{seconds:.1f}"]


HEADER = ["survey", "declared", "any eps", "CPU s", "modules from aux", "any eps", "CPU s",
          "model from aux", "any eps", "CPU s", "test-confirmed", "CPU s"]  # fmt: skip
PRIVATE = ["model from private (DP 1)", "any eps", "CPU s"]


def blocks(quick: bool) -> None:
    rows = []
    for cross in (0.0, 0.1, 0.3):
        for seed in range(2) if quick else range(6):
            network = block_network(120, seed=seed, cross=cross)
            frame, schema = survey_of(network, 10_000, 1 + 10 * seed)
            aux, _ = survey_of(network, 2_000, 7 + 10 * seed)
            rows.append([
                f"seed {seed}, links {cross:g}",
                *_cells(_tier(ModularDDP(EPSILON, block_names(120, seed)), schema)),
                *_cells(_tier(ModularDDP(EPSILON, "aux", aux=aux), schema)),
                *_cells(_tier(ModelDDP(EPSILON, "aux", aux=aux), schema)),
                *(_tested(frame, schema) if cross == 0.1 else ["", ""]),
                *_private(frame, schema),
            ])  # fmt: skip
    table("Block surveys, 120 questions, 10,000 rows, 2,000 public rows: gain over "
          "substitution Laplace at epsilon 1", HEADER + PRIVATE, rows)  # fmt: skip


def _tree_law(m: int, keep: float, hub: bool, k: int = 3) -> DiscreteNetwork:
    names = [f"q{t:03d}" for t in range(m)]
    same = np.full((k, k), (1 - keep) / (k - 1))
    np.fill_diagonal(same, keep)
    parents = {n: (() if t == 0 else ((names[0],) if hub else (names[t - 1],)))
               for t, n in enumerate(names)}  # fmt: skip
    cpds = {n: (np.full(k, 1 / k) if t == 0 else same) for t, n in enumerate(names)}
    return DiscreteNetwork(dict.fromkeys(names, tuple(range(k))), parents, cpds)


def components(quick: bool) -> None:
    rows = []
    for shape, m, keeps in (("chain", 60, (0.5, 0.7, 0.9)), ("hub", 50, (0.4, 0.6, 0.9))):
        for keep in keeps[:1] if quick else keeps:
            network = _tree_law(m, keep, hub=shape == "hub")
            _, schema = survey_of(network, 10_000, 1)
            aux, _ = survey_of(network, 2_000, 2)
            rows.append([
                f"{shape} of {m}, P(copy) {keep:g}",
                *_cells(_tier(ModularDDP(EPSILON, "aux", aux=aux), schema)),
                *_cells(_tier(ModelDDP(EPSILON, "aux", aux=aux), schema)),
            ])  # fmt: skip
    table("One dependent component, 10,000 rows, 2,000 public rows (3 answers per question): "
          "gain over substitution Laplace at epsilon 1",
          ["survey", *HEADER[4:10]], rows)  # fmt: skip


def real(quick: bool) -> None:
    rows = []
    for name in ("anes96", "census_kdd", "german_credit", "adult"):
        frame, schema = datasets.load(name)
        order = np.random.default_rng(0).permutation(len(frame))
        n_aux = min(2_000, len(frame) // 3)
        aux, private = frame.iloc[order[:n_aux]], frame.iloc[order[n_aux:]]
        if quick and len(private) > 20_000:
            private = private.iloc[:20_000]
        m = len(ModularDDP(EPSILON, [])._levels(schema))
        rows.append([
            f"{name} ({m} questions, {len(private):,} rows, {n_aux:,} public)",
            *_cells(_tier(ModularDDP(EPSILON, "aux", aux=aux), schema)),
            *_cells(_tier(ModelDDP(EPSILON, "aux", aux=aux), schema)),
            *(_tested(private, schema) if name in ("anes96", "german_credit") else ["", ""]),
        ])  # fmt: skip
    table("Real surveys, public rows held out of the private ones: gain over substitution "
          "Laplace at epsilon 1", ["survey", *HEADER[4:]], rows)  # fmt: skip


def big_survey(m: int = 500, seed: int = 0) -> DiscreteNetwork:
    """q000 drives q001-q049 (a hub), q050-q249 is a chain, then blocks of up to 8 (2 parents
    among the 8 before); 2-5 answers per question, CPD rows Dirichlet(1)."""
    rng = np.random.default_rng(seed)
    names = [f"q{t:03d}" for t in range(m)]
    states = {n: tuple(range(int(rng.integers(2, 6)))) for n in names}
    parents: dict[str, tuple[str, ...]] = {}
    cpds = {}
    for t, name in enumerate(names):
        if t == 0:
            chosen: tuple[str, ...] = ()
        elif t < 50:
            chosen = (names[0],)
        elif t < 250:
            chosen = (names[t - 1],)
        else:
            pool = names[max(250, t - 8) : t]
            count = min(len(pool), int(rng.integers(0, 3)))
            chosen = tuple(sorted(rng.choice(pool, size=count, replace=False))) if count else ()
        parents[name] = chosen
        shape = (*(len(states[p]) for p in chosen), len(states[name]))
        cpds[name] = rng.dirichlet(np.full(shape[-1], 1.0), size=shape[:-1])
    return DiscreteNetwork(states, parents, cpds)


CHILD = """
import sys
from attrpriv.cli import main
code = main(sys.argv[1:])
with open("/proc/self/status") as status:  # VmHWM: this process's own peak (ru_maxrss keeps
    peak = next(line for line in status if line.startswith("VmHWM"))  # the parent's across exec)
print(f"peak {peak.split()[1]}", file=sys.stderr)
sys.exit(code)
"""


def _child(args: Sequence[str]) -> tuple[float, float, float, str]:
    """Run the CLI in a fresh process: CPU seconds, wall seconds, its own peak MiB, its
    summary line."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", CHILD, *args], capture_output=True,
                          text=True, check=True)  # fmt: skip
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    peak = int(done.stderr.strip().splitlines()[-1].split()[-1]) / 1024
    summary = done.stdout.splitlines()[0]
    return cpu, wall, peak, summary[: summary.find(";")]


def scale(quick: bool) -> None:
    m, n = (100, 20_000) if quick else (500, 100_000)
    network = big_survey(m)
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        frame, schema = survey_of(network, n, 1)
        aux, _ = survey_of(network, 2_000, 2)
        frame.to_parquet(work / "survey.parquet")
        aux.to_csv(work / "public.csv", index=False)
        (work / "survey.yaml").write_text(schema.to_yaml())
        base = [
            "release",
            "ddp",
            str(work / "survey.parquet"),
            "--schema",
            str(work / "survey.yaml"),
            "--epsilon",
            "1",
            "--out",
            str(work / "out.json"),
        ]
        rows = []
        for label, extra in (("no assumption", []),
                             ("modules from aux", ["--modules", "aux", "--aux",
                                                   str(work / "public.csv")]),
                             ("model from aux", ["--aux", str(work / "public.csv")])):  # fmt: skip
            cpu, wall, peak, summary = _child([*base, *extra])
            rows.append([label, f"{cpu:.1f}", f"{wall:.1f}", f"{peak:,.0f}", summary])
    table(f"{m} questions x {n:,} rows from Parquet (hub of 49, chain of 200, blocks), CLI in a "
          "fresh process", ["tier", "CPU s", "wall s", "peak MiB", "structure"], rows)  # fmt: skip


PARTS: dict[str, Callable[[bool], None]] = {
    "blocks": blocks,
    "components": components,
    "real": real,
    "scale": scale,
}


def main() -> None:
    run_parts(PARTS, __doc__.splitlines()[0], list(PARTS))


if __name__ == "__main__":
    main()
