"""Aggregation engines on a large Parquet file: wall time and peak memory, pandas vs DuckDB.

Generates (once, cached under benchmarks/_work/) a Parquet file with 20 categorical columns
(cardinality 2..50) and 10 float columns (1% missing), then runs the statistics a release needs,
``all_counts()`` and ``covariance()`` of the float columns, with each engine in its own fresh
subprocess:

* pandas: ``pd.read_parquet`` + :class:`PandasAggregator` (the whole file in memory);
* DuckDB: :class:`DuckDBAggregator` directly on the file (nothing loaded into pandas);
* Dask (``--engines`` ... ``dask``): ``dd.read_parquet`` + :class:`DaskAggregator`, local threads.

Peak memory is the child's maximum resident set size as the kernel reports it to the parent
(``os.wait4``), so it includes interpreter, imports and native allocations (Arrow, DuckDB); a
``baseline`` child that only imports everything shows that fixed part. Linux counts the RSS a
child had before ``exec`` (a copy of its parent's) in that maximum, so the driver imports
nothing heavy (data generation runs in a child too) and prints its own RSS, the floor of the
measurement; each child also reports ``VmHWM`` of its own address space as a cross-check.
Time is the work in the child (reading + aggregating), interpreter start-up and imports
excluded; with ``--repeat`` the median is shown. The page cache is warmed first so that no
engine pays for the disk. Results of every engine are checked against pandas: counts exactly,
covariances to 1e-9 relative.

    python benchmarks/aggregate.py            # 10 million rows
    python benchmarks/aggregate.py --quick    # 200 thousand rows
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the driver imports nothing heavy: see the module docstring
    import numpy as np
    import pyarrow as pa

    from attrpriv.data.schema import Schema

WORK = Path(__file__).resolve().parent / "_work"
N_CATEGORICAL, N_NUMERIC = 20, 10
CARDINALITIES = [round(2 + 48 * i / (N_CATEGORICAL - 1)) for i in range(N_CATEGORICAL)]
BOUND = 1000.0
CHUNK = 1_000_000
FORMAT_VERSION = 1  # bump when the generated data changes
STRATEGIES = ("grouping_sets", "union_all", "per_column")
VARIANTS = (*STRATEGIES, "stats_propagation")  # the last: DuckDB's optimizer left on (see worker)


# -- data --------------------------------------------------------------------------------------
def categorical_names() -> list[str]:
    return [f"c{i:02d}" for i in range(N_CATEGORICAL)]


def numeric_names() -> list[str]:
    return [f"x{i}" for i in range(N_NUMERIC)]


def categories(cardinality: int) -> list[str]:
    return [f"v{j:02d}" for j in range(cardinality)]


def schema() -> Schema:
    """Public domains: each categorical column has one category that never occurs."""
    from attrpriv.data.schema import Categorical, Column, Numeric, Role, Schema

    cats = [
        Column(name, Role.FEATURE, Categorical(tuple(categories(k))))
        for name, k in zip(categorical_names(), CARDINALITIES, strict=True)
    ]
    nums = [Column(n, Role.FEATURE, Numeric(-BOUND, BOUND), nullable=True) for n in numeric_names()]
    return Schema((*cats, *nums), name="aggregate-benchmark")


def make_chunk(rng: np.random.Generator, rows: int, mixing: np.ndarray) -> pa.Table:
    """One chunk: Zipf-like categoricals (dictionary-encoded) and correlated floats."""
    import numpy as np
    import pyarrow as pa

    columns: dict[str, pa.Array] = {}
    for name, k in zip(categorical_names(), CARDINALITIES, strict=True):
        weights = 1.0 / np.arange(1, k + 1)
        weights[-1] = 0.0  # the last category is declared but never observed
        codes = rng.choice(k, size=rows, p=weights / weights.sum()).astype(np.int8)
        columns[name] = pa.DictionaryArray.from_arrays(codes, pa.array(categories(k)))
    centre = 100.0 + 25.0 * np.arange(N_NUMERIC)
    values = (rng.standard_normal((rows, N_NUMERIC)) @ mixing + centre).clip(-BOUND, BOUND)
    values[rng.random(values.shape) < 0.01] = np.nan
    for j, name in enumerate(numeric_names()):
        columns[name] = pa.array(values[:, j], from_pandas=True)  # NaN -> null, as pandas does
    return pa.table(columns)


def dataset(rows: int, fmt: str) -> Path:
    """The cached data file of ``rows`` rows, generated in a child process if missing."""
    path = WORK / f"aggregate_{rows}_v{FORMAT_VERSION}.{fmt}"
    if not path.exists():
        WORK.mkdir(parents=True, exist_ok=True)
        command = [sys.executable, __file__, "--generate", str(rows), "--out", str(path)]
        subprocess.run(command, check=True)
    return path


def generate(rows: int, path: Path) -> None:
    """Write the data chunk by chunk (bounded memory), then rename into place.

    A CSV file is converted from the Parquet one by DuckDB (streaming, bounded memory).
    """
    import numpy as np
    import pyarrow.parquet as pq

    if path.suffix == ".csv":
        import duckdb

        source, partial = dataset(rows, "parquet"), path.with_suffix(".partial")
        duckdb.execute("COPY (SELECT * FROM read_parquet($src)) TO $dst (HEADER)",
                       {"src": str(source), "dst": str(partial)})  # fmt: skip
        partial.rename(path)
        return

    rng = np.random.default_rng(20240617)
    mixing = rng.normal(scale=30.0, size=(N_NUMERIC, N_NUMERIC))
    partial = path.with_suffix(".partial")
    started = time.perf_counter()
    writer = None
    try:
        for start in range(0, rows, CHUNK):
            table = make_chunk(rng, min(CHUNK, rows - start), mixing)
            writer = writer or pq.ParquetWriter(partial, table.schema)
            writer.write_table(table)
    finally:
        if writer is not None:
            writer.close()
    partial.rename(path)
    print(f"generated {path.name} ({path.stat().st_size / 2**20:.0f} MiB) in "
          f"{time.perf_counter() - started:.0f} s", file=sys.stderr)  # fmt: skip


# -- workers (each runs in its own subprocess) ---------------------------------------------------
def run_pandas(path: Path, clock: Clock) -> tuple[Any, Any]:
    import pandas as pd

    from attrpriv.data.aggregate import PandasAggregator

    if path.suffix == ".csv":  # pyarrow's reader: multi-threaded, pandas' fastest
        frame = clock.time("read", lambda: pd.read_csv(path, engine="pyarrow"))
    else:
        frame = clock.time("read", lambda: pd.read_parquet(path))
    agg = PandasAggregator(frame, schema())
    return aggregate(agg, clock)


def run_duckdb(path: Path, clock: Clock, variant: str = "") -> tuple[Any, Any]:
    """DuckDB on the file; ``variant`` is an all_counts strategy or ``stats_propagation``."""
    from attrpriv.data.aggregate import DuckDBAggregator
    from attrpriv.data.aggregate import duckdb as duck

    if variant in STRATEGIES:
        duck.ALL_COUNTS_STRATEGY = variant  # type: ignore[assignment]
    with DuckDBAggregator(path, schema()) as agg:
        if variant == "stats_propagation":  # what the NaN workaround costs (no NaN in this file)
            agg._con.execute("SET disabled_optimizers = ''")  # type: ignore[union-attr]
        return aggregate(agg, clock)


def run_dask(path: Path, clock: Clock) -> tuple[Any, Any]:
    import dask.dataframe as dd

    from attrpriv.data.aggregate import DaskAggregator

    reader = dd.read_csv if path.suffix == ".csv" else dd.read_parquet
    agg = DaskAggregator(reader(path), schema())
    return aggregate(agg, clock)


def aggregate(agg: Any, clock: Clock) -> tuple[Any, Any]:
    counts = clock.time("all_counts", agg.all_counts)
    cov = clock.time("covariance", lambda: agg.covariance(numeric_names()))
    return {name: series.tolist() for name, series in counts.items()}, cov.to_numpy().tolist()


class Clock:
    """Wall-clock and CPU seconds (all threads of this process) per phase."""

    def __init__(self) -> None:
        self.wall: dict[str, float] = {}
        self.cpu: dict[str, float] = {}

    def time(self, name: str, action: Callable[[], Any]) -> Any:
        wall, cpu = time.perf_counter(), time.process_time()
        result = action()
        self.wall[name] = time.perf_counter() - wall
        self.cpu[name] = time.process_time() - cpu
        return result


def worker(engine: str, path: Path, out: Path) -> None:
    """Run one engine and write its results and phase times to ``out`` (JSON)."""
    import dask  # noqa: F401 - import everything first, so that every child pays the same
    import duckdb  # noqa: F401
    import pandas  # noqa: F401

    import attrpriv.data.aggregate  # noqa: F401

    clock = Clock()
    counts: Any = None
    cov: Any = None
    if engine == "pandas":
        counts, cov = run_pandas(path, clock)
    elif engine == "duckdb":
        counts, cov = run_duckdb(path, clock)
    elif engine.startswith("duckdb:"):
        counts, cov = run_duckdb(path, clock, engine.split(":", 1)[1])
    elif engine == "dask":
        counts, cov = run_dask(path, clock)
    elif engine != "baseline":
        raise SystemExit(f"unknown engine {engine!r}")
    result = {"phases": clock.wall, "cpu": clock.cpu, "counts": counts, "cov": cov}
    result["hwm_mib"] = own_peak_mib()
    out.write_text(json.dumps(result))


def own_peak_mib() -> float:
    """VmHWM: the peak RSS of this process's own address space (not counting before exec)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


# -- driver ------------------------------------------------------------------------------------
def run_once(engine: str, path: Path) -> dict[str, Any]:
    """Run ``engine`` in a fresh child; its peak RSS comes from ``os.wait4``."""
    out = WORK / f"result_{engine.replace(':', '_')}.json"
    command = [sys.executable, __file__, "--worker", engine, "--file", str(path), "--out", str(out)]
    child = subprocess.Popen(command)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{engine} worker failed with exit code {child.returncode}")
    run: dict[str, Any] = json.loads(out.read_text())
    run["peak_mib"] = usage.ru_maxrss / 1024  # Linux reports KiB
    return run


def measure(engines: list[str], path: Path, repeat: int) -> dict[str, dict[str, Any]]:
    """Every engine ``repeat`` times, round robin (so that load on the machine hits all alike).

    Per engine: median time per phase and in total, largest peak RSS.
    """
    runs: dict[str, list[dict[str, Any]]] = {engine: [] for engine in engines}
    for _ in range(repeat):
        for engine in engines:
            runs[engine].append(run_once(engine, path))
    return {engine: summarise(done) for engine, done in runs.items()}


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Median times (per phase and total), largest peaks, results of the first run."""
    result = dict(runs[0])
    phases = runs[0]["phases"]
    result["phases"] = {k: statistics.median(r["phases"][k] for r in runs) for k in phases}
    result["time_s"] = statistics.median(sum(r["phases"].values()) for r in runs)
    result["cpu_s"] = statistics.median(sum(r["cpu"].values()) for r in runs)
    result["peak_mib"] = max(r["peak_mib"] for r in runs)
    result["hwm_mib"] = max(r["hwm_mib"] for r in runs)
    return result


def check_same(engine: str, result: dict[str, Any], reference: dict[str, Any]) -> str:
    """Counts identical, covariances equal to 1e-9 relative (or a SystemExit)."""
    if result["counts"] != reference["counts"]:
        raise SystemExit(f"{engine}: counts differ from pandas")
    ours = [v for row in result["cov"] for v in row]
    theirs = [v for row in reference["cov"] for v in row]
    error = max(abs(a - b) / abs(b) for a, b in zip(ours, theirs, strict=True))
    if error > 1e-9:
        raise SystemExit(f"{engine}: covariance differs from pandas (max rel. error {error:.2e})")
    return f"identical counts, covariance max rel. diff {error:.1e}"


def warm_page_cache(path: Path) -> None:
    with path.open("rb") as handle:
        while handle.read(1 << 24):
            pass


def print_table(rows: list[tuple[str, dict[str, Any]]], reference: dict[str, Any]) -> None:
    print("| engine | time_s | cpu_s | peak_mem_MiB | time vs pandas | memory vs pandas | "
          "VmHWM_MiB | wall time per phase (s) |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for engine, res in rows:
        timed = bool(res["phases"])
        phases = ", ".join(f"{k} {v:.2f}" for k, v in res["phases"].items()) if timed else "-"
        seconds = f"{res['time_s']:.2f} | {res['cpu_s']:.2f}" if timed else "- | -"
        time_ratio = f"{res['time_s'] / reference['time_s']:.2f}" if timed else "-"
        print(
            f"| {engine} | {seconds} | {res['peak_mib']:.0f} | {time_ratio} | "
            f"{res['peak_mib'] / reference['peak_mib']:.2f} | {res['hwm_mib']:.0f} | {phases} |"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000, help="rows in the data file")
    parser.add_argument("--format", choices=["parquet", "csv"], default="parquet", help="file type")
    parser.add_argument("--quick", action="store_true", help="200k rows, for a smoke test")
    parser.add_argument("--engines", default="pandas,duckdb", help="pandas,duckdb,dask (any of)")
    parser.add_argument(
        "--variants", action="store_true", help=f"also time DuckDB variants: {', '.join(VARIANTS)}"
    )
    parser.add_argument("--repeat", type=int, default=1, help="runs per engine (median time)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--generate", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--file", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.worker, args.file, args.out)
        return
    if args.generate:
        generate(args.generate, args.out)
        return
    rows = 200_000 if args.quick else args.rows
    path = dataset(rows, args.format)
    warm_page_cache(path)
    engines = ["baseline", "pandas", *[e for e in args.engines.split(",") if e != "pandas"]]
    if args.variants:
        engines += [f"duckdb:{v}" for v in VARIANTS]
    load_before = os.getloadavg()[0]
    measured = measure(engines, path, max(args.repeat, 1))
    results, reference = list(measured.items()), measured["pandas"]
    print(f"\n{rows:,} rows x ({N_CATEGORICAL} categorical + {N_NUMERIC} float) columns, "
          f"{path.stat().st_size / 2**20:.0f} MiB {args.format}, {os.cpu_count()} CPUs, "
          f"{args.repeat} run(s) per engine; driver RSS (floor of peak_mem) "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB; load average "
          f"{load_before:.1f} before, {os.getloadavg()[0]:.1f} after\n")  # fmt: skip
    print_table(results, reference)
    print()
    for engine, res in results:
        if res["phases"] and engine != "pandas":
            print(f"{engine}: {check_same(engine, res, reference)}")


if __name__ == "__main__":
    main()
