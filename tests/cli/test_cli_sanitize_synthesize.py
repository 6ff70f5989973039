"""``attrpriv sanitize synthesize``: whole-table DP synthetic data from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from attrpriv.cli import main

pytest.importorskip("polars")
pytest.importorskip("mbi")

SMALL = ["adult", "--row-range", "40000:41500", "--columns", "sex,relationship,income"]


def test_synthesize_writes_the_table_and_its_record(capsys, tmp_path: Path) -> None:
    out, record = tmp_path / "synthetic.parquet", tmp_path / "record.json"
    args = ["sanitize", "synthesize", *SMALL, "--method", "mst", "--epsilon", "8", "--out",
            str(out), "--record", str(record), "--seed", "3"]  # fmt: skip
    assert main(args) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "synthetic rows of 3 columns at epsilon=8, delta=1e-06" in text
    assert "MST (OpenDP) measured the one-way marginals of every column and 2 more" in text
    assert "no released row is a private row" in text and "sanitize resample" in text
    assert "left out (not synthesized): age, workclass, fnlwgt" in text
    table = pd.read_parquet(out)
    assert list(table.columns) == ["sex", "relationship", "income"]
    assert 1300 < len(table) < 1700  # the model's noisy count of the 1500 private rows
    assert set(table["sex"]) <= {"Female", "Male"}
    husbands = table[table["relationship"] == "Husband"]
    assert (husbands["sex"] == "Male").mean() > 0.9  # a dependence the tree keeps
    payload = json.loads(record.read_text())
    assert set(payload) == {"record", "diagnostics", "accuracy"}  # the table is --out only
    assert payload["record"]["unit"] == "dp/add-remove"
    assert payload["record"]["mechanism"] == "dp-synthetic-data-mst"
    assert payload["record"]["epsilon"] == 8.0
    assert len(payload["diagnostics"]["marginals"]) == 5


def test_the_help_says_which_of_synthesize_and_resample_to_choose(capsys) -> None:
    assert main(["sanitize", "synthesize", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "'sanitize synthesize' for analysis-only sharing: every column is private" in text
    assert "nobody's row is released" in text
    assert "'sanitize resample' for a row-aligned release" in text
    assert main(["sanitize", "--help"]) == 0
    assert "synthesize" in capsys.readouterr().out


def test_an_overspend_is_refused_and_writes_nothing(capsys, tmp_path: Path) -> None:
    ledger, out = tmp_path / "budget.ledger", tmp_path / "synthetic.csv"
    assert main(["budget", "set", "--ledger", str(ledger), "--epsilon", "0.5", "--delta",
                 "1e-5"]) == 0  # fmt: skip
    capsys.readouterr()
    args = ["sanitize", "synthesize", *SMALL, "--method", "mst", "--epsilon", "1", "--ledger",
            str(ledger), "--out", str(out)]  # fmt: skip
    code = main(args)
    err = capsys.readouterr().err
    assert code == 2 and err.strip().count("\n") == 0 and "budget" in err
    assert not out.exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--method", "gan"], "--method must be one of aim, mst"),
        (["--epsilon", "-1"], "epsilon must be > 0"),
        (["--delta", "0"], "delta must be in (0, 1)"),
        (["--bins", "1"], "bins must be an integer >= 2"),
        (["--rows", "0"], "rows must be an integer >= 1"),
        (["--columns", "sex"], "a synthetic table needs at least two columns"),
        (["--columns", "sex,nope"], "columns names 'nope', which is not in the schema"),
        (["--out", "synthetic.txt"], "--out must end in .parquet, .pq, .csv"),
    ],
)
def test_bad_input_is_one_line_exit_2(capsys, tmp_path, monkeypatch, extra, message) -> None:
    monkeypatch.chdir(tmp_path)
    base = {"--method": "mst", "--epsilon": "1", "--out": "synthetic.csv"}
    for option, value in zip(extra[::2], extra[1::2], strict=True):
        base[option] = value
    args = ["sanitize", "synthesize", "adult", "--row-range", "40000:",
            *[part for pair in base.items() for part in pair]]  # fmt: skip
    code = main(args)
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.strip().count("\n") == 0
    assert not list(tmp_path.iterdir())
