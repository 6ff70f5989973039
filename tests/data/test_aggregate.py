"""Aggregation engines: pandas, DuckDB (Parquet and CSV) and Dask give the same statistics.

Each engine is checked against an independent oracle (Counter, numpy.histogram, DataFrame.cov),
so agreement between engines is not agreement on a shared bug.
"""

from __future__ import annotations

import importlib.util
import math
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import attrpriv.data
from attrpriv.data.aggregate import (
    Aggregator,
    DaskAggregator,
    DuckDBAggregator,
    PandasAggregator,
    aggregator_for,
)
from attrpriv.data.aggregate import duckdb as duck
from attrpriv.data.schema import Categorical, Column, Integer, Numeric, Role, Schema
from attrpriv.errors import InputError, SchemaError, showing_private_values

ODD = 'odd "name", col'  # needs quoting in SQL and in CSV
COLORS = ("red", "green", "blue", "violet")  # violet is never observed
DISCRETE = ("color", "level", "visits", ODD)
NUMERIC = ("level", "visits", "x", "y", "z")
HAS_DASK = importlib.util.find_spec("dask") is not None  # the [distributed] extra
if HAS_DASK:
    import dask
    import dask.dataframe as dd
ENGINES = ("pandas", "duckdb-parquet", "duckdb-csv", *(("dask",) if HAS_DASK else ()))
needs_dask = pytest.mark.skipif(not HAS_DASK, reason="dask (attrpriv[distributed]) not installed")


@pytest.fixture(scope="module", autouse=True)
def synchronous_dask() -> Iterator[None]:
    if not HAS_DASK:
        yield
        return
    with dask.config.set(scheduler="synchronous"):
        yield


def make_frame(n: int = 4000, seed: int = 7) -> pd.DataFrame:
    """Mixed, deterministic data: strings with gaps, integers, floats with NaN, edge values."""
    rng = np.random.default_rng(seed)
    color = rng.choice(np.array(COLORS[:3], dtype=object), n, p=[0.5, 0.3, 0.2])
    color[rng.random(n) < 0.05] = None
    visits = rng.poisson(4.0, n).clip(0, 15).astype(float)
    visits[rng.random(n) < 0.08] = np.nan
    x = (rng.normal(size=n) * 1.6).clip(-4.0, 4.0)  # clipping puts values exactly on the bounds
    y = (50.0 + 10.0 * x + rng.normal(scale=5.0, size=n)).clip(0.0, 100.0)
    x[rng.random(n) < 0.10] = np.nan
    y[rng.random(n) < 0.05] = np.nan
    return pd.DataFrame(
        {
            "id": [f"row{i}" for i in range(n)],
            "color": color,
            "level": rng.integers(1, 6, n),
            "visits": visits,
            ODD: rng.choice(np.array(["yes", "no"], dtype=object), n),
            "x": x,
            "y": y,
            "z": rng.random(n),
        }
    )


SCHEMA = Schema(
    (
        Column("id", Role.IGNORE),
        Column("color", Role.SENSITIVE, Categorical(COLORS), nullable=True),
        Column("level", Role.FEATURE, Integer(1, 7)),
        Column("visits", Role.FEATURE, Integer(0, 20), nullable=True),
        Column(ODD, Role.FEATURE, Categorical(("yes", "no"))),
        Column("x", Role.FEATURE, Numeric(-4.0, 4.0), nullable=True),
        Column("y", Role.TARGET, Numeric(0.0, 100.0), nullable=True),
        Column("z", Role.FEATURE, Numeric(0.0, 1.0)),
    )
)


def write_files(frame: pd.DataFrame, folder: Path, stem: str = "data") -> dict[str, Path]:
    parquet, csv = folder / f"{stem}.parquet", folder / f"{stem}.csv"
    frame.to_parquet(parquet, index=False)
    frame.to_csv(csv, index=False)
    return {"duckdb-parquet": parquet, "duckdb-csv": csv}


def make_aggregator(
    engine: str, frame: pd.DataFrame, files: dict[str, Path], schema: Schema
) -> Aggregator:
    if engine == "pandas":
        return PandasAggregator(frame, schema)
    if engine == "dask":
        return DaskAggregator(dd.from_pandas(frame, npartitions=3), schema)
    return DuckDBAggregator(files[engine], schema)


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return make_frame()


@pytest.fixture(scope="module")
def files(frame: pd.DataFrame, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_files(frame, tmp_path_factory.mktemp("aggregate"))


@pytest.fixture(scope="module", params=ENGINES)
def agg(
    request: pytest.FixtureRequest, frame: pd.DataFrame, files: dict[str, Path]
) -> Iterator[Aggregator]:
    with make_aggregator(request.param, frame, files, SCHEMA) as aggregator:
        yield aggregator


@pytest.fixture(scope="module")
def reference(frame: pd.DataFrame) -> PandasAggregator:
    return PandasAggregator(frame, SCHEMA)


# -- oracles -------------------------------------------------------------------------------------
def oracle_counts(values: pd.Series, domain: Sequence[Any]) -> list[int]:
    seen = Counter(v for v in values.tolist() if not pd.isna(v))
    assert set(seen) <= set(domain)
    return [seen.get(v, 0) for v in domain]


def oracle_table(frame: pd.DataFrame, columns: Sequence[str]) -> np.ndarray:
    domains = [SCHEMA.domain(c).categories for c in columns]  # type: ignore[union-attr]
    table = np.zeros([len(d) for d in domains], dtype=np.int64)
    for row in frame[list(columns)].itertuples(index=False):
        if not any(pd.isna(v) for v in row):
            table[tuple(d.index(v) for d, v in zip(domains, row, strict=True))] += 1
    return table


# -- agreement with the oracles (hence with each other) ------------------------------------------
def test_n_rows(agg: Aggregator, frame: pd.DataFrame) -> None:
    assert agg.n_rows() == len(frame)


@pytest.mark.parametrize("column", DISCRETE)
def test_counts_over_declared_domain(agg: Aggregator, frame: pd.DataFrame, column: str) -> None:
    domain = SCHEMA.domain(column).categories  # type: ignore[union-attr]
    result = agg.counts(column)
    assert result.dtype == np.int64
    assert result.name == column
    assert result.index.tolist() == list(domain)
    assert result.tolist() == oracle_counts(frame[column], domain)


def test_unseen_values_count_zero(agg: Aggregator) -> None:
    assert agg.counts("color")["violet"] == 0
    assert agg.counts("level").loc[[6, 7]].tolist() == [0, 0]
    assert agg.counts("visits").loc[16:20].tolist() == [0] * 5


def test_missing_values_are_not_counted(agg: Aggregator, frame: pd.DataFrame) -> None:
    assert agg.counts("color").sum() == frame["color"].notna().sum() < len(frame)
    assert agg.counts("visits").sum() == frame["visits"].notna().sum() < len(frame)


def test_all_counts_match_counts(agg: Aggregator, reference: PandasAggregator) -> None:
    result = agg.all_counts()
    assert list(result) == list(DISCRETE)  # schema order, numeric and ignored columns skipped
    for column, series in result.items():
        pd.testing.assert_series_equal(series, reference.counts(column))
    assert list(agg.all_counts(["level", "color"])) == ["level", "color"]


@pytest.mark.parametrize(
    ("column", "edges"),
    [
        ("x", [-4.0, -1.0, 0.0, 0.5, 4.0]),
        ("x", [-10.0, 4.0, 10.0]),
        ("y", list(np.linspace(0.0, 100.0, 41))),
        ("level", [0.5, 2.5, 7.5]),
    ],
)
def test_histogram_matches_numpy(
    agg: Aggregator, frame: pd.DataFrame, column: str, edges: list[float]
) -> None:
    values = frame[column].dropna().to_numpy(dtype=float)
    expected, _ = np.histogram(values, bins=edges)  # numpy also closes the last bin
    result = agg.histogram(column, edges)
    assert result.dtype == np.int64
    assert result.tolist() == expected.tolist()
    assert isinstance(result.index, pd.IntervalIndex)
    assert result.index.left.tolist() == edges[:-1]
    assert result.sum() == len(values)


def test_histogram_last_bin_is_closed(agg: Aggregator, frame: pd.DataFrame) -> None:
    at_top = int((frame["x"] == 4.0).sum())
    assert at_top > 0
    just_below = float(np.nextafter(4.0, 0.0))
    assert agg.histogram("x", [-4.0, just_below, 4.0]).iloc[-1] == at_top


@pytest.mark.parametrize(
    "columns", [["color"], ["color", "level"], [ODD, "visits", "color"], ["level", "color"]]
)
def test_contingency(agg: Aggregator, frame: pd.DataFrame, columns: list[str]) -> None:
    result = agg.contingency(columns)
    assert result.dtype == np.int64
    np.testing.assert_array_equal(result, oracle_table(frame, columns))


def test_mean_matches_pandas(agg: Aggregator, frame: pd.DataFrame) -> None:
    result = agg.mean(list(NUMERIC))
    assert result.dtype == np.float64
    assert result.index.tolist() == list(NUMERIC)
    np.testing.assert_allclose(result, frame[list(NUMERIC)].mean(), rtol=1e-9)


def test_covariance_is_pairwise_complete(agg: Aggregator, frame: pd.DataFrame) -> None:
    result = agg.covariance(list(NUMERIC))
    expected = frame[list(NUMERIC)].cov()
    pd.testing.assert_index_equal(result.columns, expected.columns)
    np.testing.assert_allclose(result, expected, rtol=1e-9)


def test_covariance_ddof(agg: Aggregator, frame: pd.DataFrame) -> None:
    complete = ["level", "z"]  # no missing values, where pandas honours ddof
    np.testing.assert_allclose(
        agg.covariance(complete, ddof=0), frame[complete].cov(ddof=0), rtol=1e-9
    )
    x = frame["x"].dropna()
    assert agg.covariance(["x"], ddof=3).iloc[0, 0] == pytest.approx(
        ((x - x.mean()) ** 2).sum() / (len(x) - 3), rel=1e-9
    )


@pytest.mark.parametrize("engine", ENGINES)
def test_covariance_accurate_far_from_zero(tmp_path: Path, engine: str) -> None:
    rng = np.random.default_rng(3)
    x = 1e7 + rng.normal(size=2000)
    y = x - 1e7 + rng.normal(size=2000)
    x[:1500] = np.nan  # far from zero: unshifted one-pass sums would lose all precision
    frame = pd.DataFrame({"x": x, "y": 5e6 + y})
    schema = Schema(
        (
            Column("x", Role.FEATURE, Numeric(0, 2e7), nullable=True),
            Column("y", Role.FEATURE, Numeric(0, 2e7)),
        )
    )
    with make_aggregator(engine, frame, write_files(frame, tmp_path), schema) as agg:
        np.testing.assert_allclose(agg.covariance(["x", "y"]), frame.cov(), rtol=1e-9)


def test_covariance_of_many_columns(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    values = rng.normal(size=(300, 70))
    values[rng.random(values.shape) < 0.02] = np.nan
    names = [f"v{i}" for i in range(70)]
    frame = pd.DataFrame(values, columns=names)
    schema = Schema(tuple(Column(c, Role.FEATURE, Numeric(-9, 9), nullable=True) for c in names))
    path = tmp_path / "wide.parquet"
    frame.to_parquet(path)
    with DuckDBAggregator(path, schema) as agg:  # more than 62 columns: a list pattern key
        np.testing.assert_allclose(agg.covariance(names), frame.cov(), rtol=1e-9)


def test_engines_agree_with_each_other(agg: Aggregator, reference: PandasAggregator) -> None:
    for column, series in reference.all_counts().items():
        pd.testing.assert_series_equal(agg.counts(column), series)
    pd.testing.assert_series_equal(
        agg.histogram("y", [0, 10, 50, 100]), reference.histogram("y", [0, 10, 50, 100])
    )
    np.testing.assert_array_equal(
        agg.contingency(list(DISCRETE)), reference.contingency(list(DISCRETE))
    )
    pd.testing.assert_series_equal(agg.mean(["x", "y"]), reference.mean(["x", "y"]), rtol=1e-9)
    pd.testing.assert_frame_equal(
        agg.covariance(["x", "y"]), reference.covariance(["x", "y"]), rtol=1e-9
    )


def test_inputs_are_not_modified(files: dict[str, Path]) -> None:
    original = make_frame(500)
    frame = original.copy(deep=True)
    before = {path: path.read_bytes() for path in files.values()}
    for engine in ENGINES:
        with make_aggregator(engine, frame, files, SCHEMA) as agg:
            agg.all_counts()
            agg.histogram("x", [-4, 0, 4])
            agg.contingency(["color", "level"])
            agg.mean(list(NUMERIC))
            agg.covariance(list(NUMERIC))
    pd.testing.assert_frame_equal(frame, original)
    assert {path: path.read_bytes() for path in files.values()} == before


# -- values outside the declared domain ------------------------------------------------------
@pytest.mark.parametrize(
    ("column", "value", "shown"),
    [("color", "orange", "'orange'"), ("level", 9, r"9(\.0)?"), ("visits", 2.5, r"2\.5")],
)
@pytest.mark.parametrize("engine", ENGINES)
def test_value_outside_domain_is_an_error(
    tmp_path: Path, engine: str, column: str, value: Any, shown: str
) -> None:
    frame = make_frame(300)
    if column == "level":
        frame[column] = frame[column].astype(float)  # so that pandas accepts 9 as well as 2.5
    frame.loc[17, column] = value
    files = write_files(frame, tmp_path)
    with make_aggregator(engine, frame, files, SCHEMA) as agg:
        for action in (
            lambda: agg.counts(column),
            lambda: agg.all_counts(),
            lambda: agg.contingency([ODD, column]),
        ):
            with pytest.raises(SchemaError, match=rf"column '{column}' has a value \(value hidden"):
                action()  # the value may be private: not in the message by default
            with (
                showing_private_values(),
                pytest.raises(SchemaError, match=rf"column '{column}' has a value {shown} outside"),
            ):
                action()


@pytest.mark.parametrize("engine", ENGINES)
def test_numeric_value_outside_domain_is_an_error(tmp_path: Path, engine: str) -> None:
    frame = make_frame(300)
    frame.loc[5, "x"] = 4.5
    files = write_files(frame, tmp_path)
    with (
        make_aggregator(engine, frame, files, SCHEMA) as agg,
        showing_private_values(),
        pytest.raises(SchemaError, match=r"column 'x' has a value 4\.5 outside its domain"),
    ):
        agg.histogram("x", [-10.0, 0.0, 10.0])  # even when the edges hold the value


def test_nan_in_a_parquet_file_is_missing(tmp_path: Path) -> None:
    path = tmp_path / "nan.parquet"
    pq.write_table(
        pa.table({"x": pa.array([1.0, math.nan, -2.0, math.nan])}), path
    )  # NaN, not null
    schema = Schema((Column("x", Role.FEATURE, Numeric(-4, 4), nullable=True),))
    with DuckDBAggregator(path, schema) as agg:
        assert agg.histogram("x", [-4, 0, 4]).tolist() == [1, 1]
        assert agg.mean(["x"]).iloc[0] == pytest.approx(-0.5)


def test_empty_and_all_missing_columns(tmp_path: Path) -> None:
    frame = pd.DataFrame(
        {"color": pd.Series([None, None], dtype=object), "x": [math.nan, math.nan]}
    )
    schema = Schema(
        (
            Column("color", Role.FEATURE, Categorical(("a", "b")), nullable=True),
            Column("x", Role.FEATURE, Numeric(0, 1), nullable=True),
        )
    )
    files = write_files(frame, tmp_path)
    for engine in ENGINES:
        with make_aggregator(engine, frame, files, schema) as agg:
            assert agg.counts("color").tolist() == [0, 0], engine
            assert agg.contingency(["color"]).tolist() == [0, 0], engine
            assert agg.histogram("x", [0, 1]).tolist() == [0], engine
            assert np.isnan(agg.mean(["x"]).to_numpy()).all(), engine
            assert np.isnan(agg.covariance(["x"]).to_numpy()).all(), engine


# -- bad arguments ---------------------------------------------------------------------------
def test_unknown_column_names_the_available_ones(agg: Aggregator) -> None:
    calls: list[Callable[[], object]] = [
        lambda: agg.counts("colour"),
        lambda: agg.all_counts(["color", "colour"]),
        lambda: agg.histogram("colour", [0, 1]),
        lambda: agg.contingency(["color", "colour"]),
        lambda: agg.mean(["colour"]),
        lambda: agg.covariance(["x", "colour"]),
    ]
    for call in calls:
        with pytest.raises(
            SchemaError, match=r"column 'colour' is not in the schema; columns are \[.*'color'"
        ):
            call()


def test_wrong_kind_of_column(agg: Aggregator) -> None:
    with pytest.raises(InputError, match=r"column 'x' is continuous.*use histogram"):
        agg.counts("x")
    with pytest.raises(InputError, match=r"column 'color' is categorical; mean needs"):
        agg.mean(["x", "color"])
    with pytest.raises(InputError, match=r"column 'color' is categorical; covariance needs"):
        agg.covariance(["color"])
    with pytest.raises(InputError, match=r"column 'color' is categorical; histogram needs"):
        agg.histogram("color", [0, 1])
    with pytest.raises(SchemaError, match=r"column 'id' has no domain"):
        agg.counts("id")


@pytest.mark.parametrize(
    ("columns", "message"),
    [("x", "list of column names"), ([], "at least one column"), (["x", "x"], r"distinct.*'x'")],
)
@pytest.mark.parametrize("method", ["mean", "covariance", "contingency", "all_counts"])
def test_bad_column_lists(agg: Aggregator, method: str, columns: Any, message: str) -> None:
    with pytest.raises(InputError, match=message):
        getattr(agg, method)(columns)


@pytest.mark.parametrize(
    ("edges", "message"),
    [
        ([0.0], "at least 2"),
        ([-4.0, 1.0, 1.0, 4.0], "strictly increasing"),
        ([-4.0, 2.0, 1.0, 4.0], "strictly increasing"),
        ([-4.0, math.inf], "finite"),
        ([-3.0, 4.0], r"cover its domain \[-4, 4\]"),
        ([-4.0, 3.5], "cover its domain"),
        (["a", "b"], "must be numbers"),
    ],
)
def test_bad_edges(agg: Aggregator, edges: list[Any], message: str) -> None:
    with pytest.raises(InputError, match=rf"edges for 'x' .*{message}"):
        agg.histogram("x", edges)


def test_bad_ddof(reference: PandasAggregator) -> None:
    for ddof in (-1, 1.5, True):
        with pytest.raises(InputError, match="ddof must be an integer >= 0"):
            reference.covariance(["x"], ddof=ddof)  # type: ignore[arg-type]


def test_contingency_size_limit() -> None:
    schema = Schema(tuple(Column(c, Role.FEATURE, Integer(0, 999)) for c in "abc"))
    agg = PandasAggregator(pd.DataFrame({c: [1, 2] for c in "abc"}), schema)
    with pytest.raises(InputError, match="would have 1000000000 cells"):
        agg.contingency(["a", "b", "c"])


# -- construction and the factory ------------------------------------------------------------
def test_factory_picks_the_engine(frame: pd.DataFrame, files: dict[str, Path]) -> None:
    assert type(aggregator_for(frame, SCHEMA)) is PandasAggregator
    for path in (files["duckdb-csv"], str(files["duckdb-parquet"])):
        with aggregator_for(path, SCHEMA) as agg:
            assert type(agg) is DuckDBAggregator
    if HAS_DASK:
        assert type(aggregator_for(dd.from_pandas(frame, npartitions=2), SCHEMA)) is DaskAggregator
    with pytest.raises(InputError, match="got list"):
        aggregator_for([1, 2], SCHEMA)


def test_gzipped_csv_and_pq_suffixes(
    frame: pd.DataFrame, tmp_path: Path, reference: PandasAggregator
) -> None:
    frame.to_csv(tmp_path / "data.csv.gz", index=False)
    frame.to_parquet(tmp_path / "data.pq", index=False)
    for name in ("data.csv.gz", "data.pq"):
        with aggregator_for(tmp_path / name, SCHEMA) as agg:
            pd.testing.assert_series_equal(agg.counts("visits"), reference.counts("visits"))


def test_bad_sources(tmp_path: Path, frame: pd.DataFrame) -> None:
    with pytest.raises(InputError, match=r"must end in one of \['.parquet'"):
        DuckDBAggregator(tmp_path / "data.txt", SCHEMA)
    with pytest.raises(InputError, match="does not exist"):
        DuckDBAggregator(tmp_path / "nothing.parquet", SCHEMA)
    (tmp_path / "broken.parquet").write_text("not parquet")
    with pytest.raises(InputError, match=r"DuckDB could not read .*broken\.parquet"):
        DuckDBAggregator(tmp_path / "broken.parquet", SCHEMA)
    with pytest.raises(InputError, match="must be a pandas DataFrame"):
        PandasAggregator(frame.to_numpy(), SCHEMA)  # type: ignore[arg-type]
    if HAS_DASK:
        with pytest.raises(InputError, match="must be a dask DataFrame"):
            DaskAggregator(frame, SCHEMA)
    with pytest.raises(InputError, match="schema must be an attrpriv Schema"):
        PandasAggregator(frame, {"columns": {}})  # type: ignore[arg-type]


def test_csv_text_that_is_not_a_number_names_its_column_and_line_not_the_value(
    tmp_path: Path,
) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("visits,color\n3,red\n4,blue\nfour,green\n")
    schema = Schema((Column("visits", "feature", Integer(0, 9)), SCHEMA["color"]))
    with aggregator_for(path, schema) as agg:
        assert agg.counts("color").sum() == 3  # the column is never converted
        for count in (lambda: agg.counts("visits"), lambda: agg.all_counts()):
            with pytest.raises(SchemaError) as info:
                count()
            where = f"line 4 of {str(path)!r}"
            assert str(info.value) == f"column 'visits' has a value that is not a number ({where})"
            assert "four" not in str(info.value) and "green" not in str(info.value)


def test_schema_column_missing_from_data(frame: pd.DataFrame, tmp_path: Path) -> None:
    partial = frame.drop(columns=["y"])
    files = write_files(partial, tmp_path)
    for engine in ENGINES:
        with pytest.raises(SchemaError, match="column 'y' is in the schema but not in the data"):
            make_aggregator(engine, partial, files, SCHEMA)
    PandasAggregator(frame.drop(columns=["id"]), SCHEMA).counts("color")  # ignored: may be absent


def test_non_numeric_data_in_numeric_column(tmp_path: Path) -> None:
    frame = pd.DataFrame({"x": ["1", "2"]})
    schema = Schema((Column("x", Role.FEATURE, Numeric(0, 5)),))
    files = write_files(frame, tmp_path)
    for engine in ("pandas", "duckdb-parquet", *ENGINES[3:]):
        with (
            make_aggregator(engine, frame, files, schema) as agg,
            pytest.raises(SchemaError, match="column 'x' must be numeric"),
        ):
            agg.mean(["x"])


def test_csv_string_categories_stay_strings(tmp_path: Path) -> None:
    path = tmp_path / "codes.csv"
    path.write_text("code\n01\n02\n01\n\n")
    schema = Schema((Column("code", Role.FEATURE, Categorical(("01", "02", "03")), nullable=True),))
    with DuckDBAggregator(path, schema) as agg:
        assert agg.counts("code").tolist() == [2, 1, 0]


def test_duckdb_close(files: dict[str, Path]) -> None:
    with DuckDBAggregator(files["duckdb-parquet"], SCHEMA) as agg:
        assert agg.n_rows() > 0
    agg.close()  # idempotent
    with pytest.raises(InputError, match="closed"):
        agg.n_rows()


@pytest.mark.parametrize("strategy", ["grouping_sets", "union_all", "per_column"])
def test_duckdb_all_counts_strategies_agree(
    files: dict[str, Path],
    reference: PandasAggregator,
    strategy: duck.Strategy,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(duck, "ALL_COUNTS_STRATEGY", strategy)
    for path in (files["duckdb-parquet"], files["duckdb-csv"]):
        with DuckDBAggregator(path, SCHEMA) as agg:
            for column, series in agg.all_counts().items():
                pd.testing.assert_series_equal(series, reference.counts(column))


def test_missing_dask_is_a_clear_error(
    frame: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "dask", None)
    monkeypatch.setitem(sys.modules, "dask.dataframe", None)
    with pytest.raises(InputError, match=r"pip install 'attrpriv\[distributed\]'"):
        DaskAggregator(frame, SCHEMA)


# -- a real dataset ------------------------------------------------------------------------------
ADULT = Path(attrpriv.data.__file__).parent / "files" / "adult.data.gz"  # the bundled raw file
ADULT_COLUMNS = ["age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
                 "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
                 "hours-per-week", "native-country", "income"]  # fmt: skip
ADULT_SCHEMA = Schema(
    (
        Column("age", Role.FEATURE, Integer(17, 90)),
        Column(
            "workclass",
            Role.FEATURE,
            Categorical(
                (
                    "Private",
                    "Self-emp-not-inc",
                    "Self-emp-inc",
                    "Federal-gov",
                    "Local-gov",
                    "State-gov",
                    "Without-pay",
                    "Never-worked",
                )
            ),
            nullable=True,
        ),
        Column(
            "race",
            Role.SENSITIVE,
            Categorical(("White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black")),
        ),
        Column("sex", Role.SENSITIVE, Categorical(("Female", "Male"))),
        Column("hours-per-week", Role.FEATURE, Integer(1, 99)),
    )
)


def test_adult_duckdb_agrees_with_pandas(tmp_path: Path) -> None:
    frame = pd.read_csv(
        ADULT, header=None, names=ADULT_COLUMNS, skipinitialspace=True, na_values="?"
    )
    files = write_files(frame, tmp_path, "adult")
    pandas_agg = PandasAggregator(frame, ADULT_SCHEMA)
    assert pandas_agg.n_rows() == 32561
    assert pandas_agg.counts("sex").to_dict() == {"Female": 10771, "Male": 21790}  # UCI's numbers
    numeric = ["age", "hours-per-week"]
    for engine in ("duckdb-parquet", "duckdb-csv"):
        with make_aggregator(engine, frame, files, ADULT_SCHEMA) as agg:
            assert agg.n_rows() == 32561
            for column, series in pandas_agg.all_counts().items():
                pd.testing.assert_series_equal(agg.counts(column), series)
            np.testing.assert_array_equal(
                agg.contingency(["sex", "race", "workclass"]),
                pandas_agg.contingency(["sex", "race", "workclass"]),
            )
            pd.testing.assert_series_equal(
                agg.histogram("age", [17, 30, 50, 90]),
                pandas_agg.histogram("age", [17, 30, 50, 90]),
            )
            pd.testing.assert_frame_equal(
                agg.covariance(numeric), pandas_agg.covariance(numeric), rtol=1e-9
            )
    np.testing.assert_allclose(pandas_agg.covariance(numeric), frame[numeric].cov(), rtol=1e-12)


# -- properties on random small frames -------------------------------------------------------
SMALL_SCHEMA = Schema(
    (
        Column("c", Role.FEATURE, Categorical(("a", "b", "c")), nullable=True),
        Column("k", Role.FEATURE, Integer(-2, 2), nullable=True),
    )
)
rows = st.lists(
    st.tuples(st.sampled_from(["a", "b", "c", None]), st.sampled_from([-2, -1, 0, 1, 2, None])),
    max_size=40,
)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows)
def test_engines_agree_on_random_frames(data: list[tuple[str | None, int | None]]) -> None:
    frame = pd.DataFrame(data, columns=["c", "k"]).astype({"c": object, "k": float})
    with tempfile.TemporaryDirectory() as folder:
        files = write_files(frame, Path(folder))
        results = []
        for engine in ENGINES:
            with make_aggregator(engine, frame, files, SMALL_SCHEMA) as agg:
                counts = agg.all_counts()
                table = agg.contingency(["c", "k"])
            for column in ("c", "k"):
                assert counts[column].sum() == frame[column].notna().sum()
            assert table.sum() == frame.notna().all(axis=1).sum()
            np.testing.assert_array_equal(table.sum(axis=1), oracle_counts_small(frame, "c"))
            results.append((counts["c"].tolist(), counts["k"].tolist(), table.tolist()))
    assert all(result == results[0] for result in results)


def oracle_counts_small(frame: pd.DataFrame, column: str) -> list[int]:
    complete = frame.dropna()
    return [int((complete[column] == v).sum()) for v in ("a", "b", "c")]


@pytest.mark.slow
@needs_dask
def test_dask_on_a_local_cluster(frame: pd.DataFrame, reference: PandasAggregator) -> None:
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True) as cluster,
        distributed.Client(cluster),
    ):
        agg = DaskAggregator(dd.from_pandas(frame, npartitions=4), SCHEMA)
        for column, series in agg.all_counts().items():
            pd.testing.assert_series_equal(series, reference.counts(column))
        pd.testing.assert_frame_equal(
            agg.covariance(list(NUMERIC)), reference.covariance(list(NUMERIC)), rtol=1e-9
        )
