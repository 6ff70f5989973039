"""Binning over public domains, counting per level, learning rows, and network learning."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attrpriv import Categorical, Column, InputError, Integer, Numeric, Schema, SchemaError
from attrpriv.data.aggregate import aggregator_for
from attrpriv.release.graph import learning as bayesnet
from attrpriv.release.graph.learning import (
    column_levels,
    count_levels,
    encode,
    learn_network,
    learning_rows,
    levels_for,
)

SCHEMA = Schema(
    (
        Column("colour", "feature", Categorical(("red", "green", "blue"))),
        Column("code", "feature", Categorical(("01", "02", "03", "04", "05")), nullable=True),
        Column("age", "feature", Integer(0, 99)),
        Column("score", "feature", Numeric(0.0, 1.0)),
    )
)


@pytest.fixture
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = 400
    colour = rng.choice(["red", "green", "blue"], n)
    code = np.where(colour == "red", "01", rng.choice(["02", "03", "04", "05"], n)).astype(object)
    code[:7] = None
    return pd.DataFrame(
        {
            "colour": colour,
            "code": code,
            "age": rng.integers(0, 100, n),
            "score": np.round(rng.random(n), 3),
        }
    )


def test_levels_come_from_the_public_domain() -> None:
    levels = column_levels(SCHEMA, ["colour", "code", "age", "score"], max_levels=3)
    assert levels["colour"].labels == ("red", "green", "blue") and not levels["colour"].binned
    assert levels["code"].labels == ("01", "02|03", "04|05")
    assert levels["code"].n_states == 4  # a nullable column gets a "missing" state
    assert levels["age"].labels == ("0..32", "33..65", "66..99")
    assert levels["score"].labels == ("[0, 0.333333)", "[0.333333, 0.666667)", "[0.666667, 1]")
    assert all(lv.binned for name, lv in levels.items() if name != "colour")


def test_codes_follow_the_levels_and_reject_values_outside() -> None:
    levels = column_levels(SCHEMA, ["code", "age", "score"], max_levels=3)
    assert levels["code"].codes(pd.Series(["01", None, "03", "05"])).tolist() == [0, 3, 1, 2]
    assert levels["age"].codes(pd.Series([0, 32, 33, 99])).tolist() == [0, 0, 1, 2]
    assert levels["score"].codes(pd.Series([0.0, 0.34, 1.0])).tolist() == [0, 1, 2]
    with pytest.raises(SchemaError, match=r"column 'code' has a value at row 1"):
        levels["code"].codes(pd.Series(["01", "07"]))
    with pytest.raises(SchemaError, match=r"column 'age' has .*outside its domain"):
        levels["age"].codes(pd.Series([5, 120]))
    with pytest.raises(SchemaError, match=r"'score' has missing"):
        levels["score"].codes(pd.Series([0.5, None]))


@pytest.mark.parametrize(
    ("domain", "message"),
    [
        (Categorical(("only",)), "single level"),
        (Integer(3, 3), "single level"),
        (Numeric(1.0, 1.0), "single level"),
    ],
)
def test_a_single_level_column_is_refused(domain, message: str) -> None:
    with pytest.raises(InputError, match=f"column 'x' has a {message}"):
        levels_for(Column("x", "feature", domain))


def test_max_levels_below_two_is_refused() -> None:
    with pytest.raises(InputError, match="max_levels must be an integer >= 2"):
        levels_for(SCHEMA["age"], 1)


@settings(max_examples=60, deadline=None)
@given(
    lower=st.integers(-50, 50),
    width=st.integers(1, 300),
    max_levels=st.integers(2, 40),
)
def test_integer_binning_covers_the_domain_in_order(lower: int, width: int, max_levels: int):
    column = Column("x", "feature", Integer(lower, lower + width))
    levels = levels_for(column, max_levels)
    assert levels.size == min(width + 1, max_levels)
    values = pd.Series(np.arange(lower, lower + width + 1))
    codes = levels.codes(values)
    assert codes.min() == 0 and codes.max() == levels.size - 1
    assert (np.diff(codes) >= 0).all()  # consecutive values, consecutive levels
    assert np.bincount(codes).min() >= 1  # no empty level
    assert levels.count(np.ones(width + 1)).tolist() == np.bincount(codes).tolist()


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_counts_per_level_agree_across_engines(frame: pd.DataFrame, tmp_path, suffix) -> None:
    levels = column_levels(SCHEMA, list(SCHEMA.names), max_levels=4)
    codes = encode(frame, levels)
    path = tmp_path / f"survey{suffix}"
    frame.to_parquet(path) if suffix == ".parquet" else frame.to_csv(path, index=False)
    for data in (frame, path):
        with aggregator_for(data, SCHEMA) as aggregator:
            counts = count_levels(aggregator, levels)
        for name, lv in levels.items():
            expected = np.bincount(codes[name], minlength=lv.n_states)[: lv.size]
            assert counts[name].tolist() == expected.tolist(), (name, data)


def test_learning_rows_sample_frames_and_files(frame: pd.DataFrame, tmp_path: Path) -> None:
    rows = learning_rows(frame, SCHEMA, ["colour", "code"], max_rows=50, seed=1)
    assert rows.shape == (50, 2) and rows.index.isin(frame.index).all()
    path = tmp_path / "survey.csv"
    frame.to_csv(path, index=False)
    sampled = learning_rows(path, SCHEMA, ["code", "age"], max_rows=120, seed=1)
    assert sampled.shape == (120, 2)
    assert set(sampled["code"].dropna()) <= {"01", "02", "03", "04", "05"}  # "01" stays text
    levels = column_levels(SCHEMA, ["code", "age"])
    encode(sampled, levels)  # the sampled values fit the schema
    assert len(learning_rows(path, SCHEMA, ["age"], max_rows=10_000, seed=1)) == len(frame)
    with pytest.raises(InputError, match="data must be a pandas DataFrame, a CSV/Parquet file"):
        learning_rows([1, 2], SCHEMA, ["age"], max_rows=10, seed=0)
    with pytest.raises(InputError, match="does not exist"):
        learning_rows(tmp_path / "missing.csv", SCHEMA, ["age"], max_rows=10, seed=0)


def test_csv_text_that_is_not_a_number_names_its_column_and_line_not_the_value(
    tmp_path: Path,
) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("age,colour\n12,red\ntwelve,blue\n")
    schema = Schema((SCHEMA["age"], SCHEMA["colour"]))
    with pytest.raises(SchemaError) as info:
        learning_rows(path, schema, ["age"], max_rows=10, seed=0)
    where = f"line 3 of {str(path)!r}"  # the file's third line: the header is line 1
    assert str(info.value) == f"column 'age' has a value that is not a number ({where})"
    assert "twelve" not in str(info.value) and "blue" not in str(info.value)


def dependent_codes(n: int = 3000, seed: int = 0) -> pd.DataFrame:
    """a -> b (b = a 90% of the time), c independent of both."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, n)
    b = np.where(rng.random(n) < 0.9, a, rng.integers(0, 3, n))
    return pd.DataFrame({"a": a, "b": b, "c": rng.integers(0, 2, n)})


@pytest.mark.parametrize("structure", ["hc", "chow-liu", "exact"])
def test_learning_finds_the_dependence(structure: str) -> None:
    codes = dependent_codes()
    network = learn_network(codes, {"a": 3, "b": 3, "c": 2}, structure=structure)
    assert set(network.nodes) == {"a", "b", "c"}
    linked = set(network.parents["a"]) | set(network.parents["b"])
    assert linked & {"a", "b"}
    conditional = network.conditional(["b"], given="a")
    assert np.diag(conditional).min() > 0.85
    if structure != "chow-liu":  # a Chow-Liu tree always spans every node
        assert network.parents["c"] == () and "c" not in linked


def test_the_prior_keeps_every_probability_positive() -> None:
    codes = pd.DataFrame({"a": [0, 0, 1, 1] * 50, "b": [0, 0, 1, 1] * 50})
    network = learn_network(codes, {"a": 4, "b": 3}, prior=0.5)
    for node in network.nodes:
        assert network.cpds[node].min() > 0
    assert network.states["a"] == (0, 1, 2, 3)  # unseen levels are still states


def test_learning_errors_are_clear(monkeypatch) -> None:
    codes = dependent_codes(200)
    states = {"a": 3, "b": 3, "c": 2}
    with pytest.raises(InputError, match="structure must be one of"):
        learn_network(codes, states, structure="pc")
    with pytest.raises(InputError, match="at most 4 columns per chunk"):
        wide = pd.concat([codes, codes.add_suffix("2")], axis=1)
        learn_network(
            wide, {**states, **{f"{k}2": v for k, v in states.items()}}, structure="exact"
        )
    with pytest.raises(InputError, match="no rows to learn"):
        learn_network(codes.iloc[:0], states)
    with pytest.raises(InputError, match=r"'a' has level codes outside 0\.\.1"):
        learn_network(codes, {**states, "a": 2})
    with pytest.raises(InputError, match="prior must be > 0"):
        learn_network(codes, states, prior=0)

    def broken(*args, **kwargs):
        raise ValueError("score is NaN")

    monkeypatch.setattr(bayesnet, "_structure", broken)
    with pytest.raises(InputError, match=r"could not learn a Bayesian network over .*score is NaN"):
        learn_network(codes, states)


NOTEBOOK = """
import sys, types, warnings
caught = warnings.catch_warnings(record=True)
shown = caught.__enter__()  # every warning recorded (an "error" filter would be swallowed)
warnings.simplefilter("always")
sys.modules["ipykernel.zmqshell"] = types.ModuleType("ipykernel.zmqshell")  # a Jupyter kernel
ipython = types.ModuleType("IPython")
ipython.get_ipython = lambda: object()
sys.modules["IPython"] = ipython  # without ipywidgets: tqdm.auto warns "IProgress not found"
import pandas as pd
from attrpriv.release.graph.learning import learn_network
codes = pd.DataFrame({"a": [0, 1, 0, 1] * 5, "b": [0, 1, 1, 1] * 5})
for structure in ("hc", "chow-liu"):
    learn_network(codes, {"a": 2, "b": 2}, structure=structure)
sys.exit("; ".join(str(w.message) for w in shown) or None)
"""


@pytest.mark.parametrize("quiet", [True, False])
def test_learning_in_a_notebook_without_ipywidgets_prints_no_tqdm_warning(quiet: bool) -> None:
    import subprocess
    import sys

    script = (
        NOTEBOOK
        if quiet
        else NOTEBOOK.replace("from attrpriv", "import pgmpy.models\nfrom attrpriv")
    )
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    if quiet:
        assert run.returncode == 0, run.stderr
    else:  # the same notebook importing pgmpy itself gets the warning: the check can fail
        assert run.returncode != 0 and "IProgress not found" in run.stderr
