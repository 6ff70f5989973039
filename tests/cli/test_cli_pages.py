"""``--html`` pages of the releases and of the ledger: they parse, their figures are PNGs, they
show the guarantee and the noise intervals, and no data row reaches them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from attrpriv.cli import main

SCHEMA = """\
columns:
  answer: {role: sensitive, domain: {type: categorical, categories: [yes, no, maybe]}}
  vote: {role: target, domain: {type: categorical, categories: [A, B]}}
  age: {role: feature, domain: {type: integer, lower: 18, upper: 99}}
  income: {role: feature, domain: {type: numeric, lower: 0, upper: 1000000}}
  person: {role: ignore}
"""
N = 120


def write_survey(folder: Path) -> tuple[Path, Path, Path, list[str]]:
    """A survey CSV in ``folder`` whose rows carry values that must never reach a page (the
    identifiers and the incomes), its schema and a ledger with budgets for row DP, one answer
    and a Pufferfish unit; and those values."""
    rng = np.random.default_rng(3)
    frame = pd.DataFrame(
        {
            "answer": rng.choice(["yes", "no", "maybe"], N),
            "vote": rng.choice(["A", "B"], N),
            "age": rng.integers(18, 99, N),
            "income": np.round(rng.uniform(0, 1e6, N), 3) + 0.123,
            "person": [f"ROW-SECRET-{i:04d}" for i in range(N)],
        }
    )
    data, schema, ledger = folder / "survey.csv", folder / "survey.yaml", folder / "s.ledger"
    frame.to_csv(data, index=False)
    schema.write_text(SCHEMA)
    for unit in ("dp/add-remove", "dependent-dp/answer", "pufferfish/chain"):
        assert main(["budget", "set", "--ledger", str(ledger), "--unit", unit,
                     "--epsilon", "10"]) == 0  # fmt: skip
    forbidden = [*frame["person"].head(5), *(f"{v:.3f}" for v in frame["income"].head(5))]
    forbidden += [",".join(map(str, row)) for row in frame.head(5).itertuples(index=False)]
    return data, schema, ledger, forbidden


@pytest.fixture
def survey(tmp_path: Path) -> tuple[Path, Path, Path, list[str]]:
    """:func:`write_survey` in the test's folder."""
    return write_survey(tmp_path)


def write_public(folder: Path) -> Path:
    """Public rows of the survey's population (not the private ones), as a CSV in ``folder``."""
    rng = np.random.default_rng(11)
    public = folder / "public.csv"
    pd.DataFrame(
        {
            "answer": rng.choice(["yes", "no", "maybe"], 300),
            "vote": rng.choice(["A", "B"], 300),
            "age": rng.integers(18, 99, 300),
            "income": rng.uniform(0, 1e6, 300),
            "person": "x",
        }
    ).to_csv(public, index=False)
    return public


def write_walk(folder: Path) -> Path:
    """A chain of two states, as a CSV in ``folder``."""
    sequence = folder / "walk.csv"
    pd.DataFrame({"state": [0, 1, 1, 0, 1, 1, 1, 0] * 4}).to_csv(sequence, index=False)
    return sequence


def html_of(capsys: pytest.CaptureFixture[str], args: list[str], page: Path) -> str:
    code = main(args)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert f"wrote {page}" in " ".join(captured.out.split())
    return page.read_text(encoding="utf-8")


def test_histograms_page(capsys, tmp_path: Path, survey, check_page) -> None:
    data, schema, ledger, forbidden = survey
    page = tmp_path / "pages" / "hist.html"
    html = html_of(capsys, ["release", "histograms", str(data), "--schema", str(schema),
                            "--columns", "answer,vote,age", "--epsilon", "1",
                            "--ledger", str(ledger), "--html", str(page)], page)  # fmt: skip
    pngs = check_page(html, forbidden, min_figures=3)  # answer, vote, age
    assert len(pngs) == 3
    assert "What is protected." in html and "Whether any one respondent is in the data" in html
    assert "dp/add-remove: one person&#39;s whole row" in html
    assert "&plusmn; half-width" in html and "[" in html
    assert "Budget ledger after this release" in html and "s.ledger: 1 release(s)" in html


def test_ddp_page_and_progress_lines(capsys, tmp_path: Path, survey, check_page) -> None:
    data, schema, ledger, forbidden = survey
    page = tmp_path / "ddp.html"
    code = main(["release", "ddp", str(data), "--schema", str(schema), "--epsilon", "1",
                 "--modules", "answer,vote;age,income", "--ledger", str(ledger),
                 "--html", str(page)])  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0, captured.err
    # stderr is not a terminal here: one plain line per step, not a redrawn bar
    steps = [line for line in captured.err.splitlines() if line.startswith("release ddp:")]
    assert steps == ["release ddp: 1/2 calibrated the noise (public inputs only)",
                     "release ddp: 2/2 counted the histograms"]  # fmt: skip
    html = page.read_text(encoding="utf-8")
    check_page(html, forbidden, min_figures=4)  # answer, vote, age, income (binned)
    assert "dependent-dp/answer" in html and "any one answer of any one respondent" in html
    assert "<h2>Assumptions</h2>" in html and "respondents are independent" in html
    assert "Counts shown non-negative and rounded." in html  # the default


@pytest.mark.parametrize("chosen", [None, "non-negative", "raw"])
def test_counts_are_shown_non_negative_by_default_and_the_json_holds_both(
    capsys, tmp_path: Path, survey, chosen: str | None
) -> None:
    data, schema, _, _ = survey
    out, page = tmp_path / "hist.json", tmp_path / "hist.html"
    flag = [] if chosen is None else ["--counts", chosen]
    code = main(["release", "histograms", str(data), "--schema", str(schema), "--columns",
                 "age", "--epsilon", "0.2", *flag, "--out", str(out),
                 "--html", str(page)])  # fmt: skip
    text = " ".join(capsys.readouterr().out.split())
    assert code == 0
    counts = chosen or "non-negative"
    payload = json.loads(out.read_text())
    raw = pd.Series(payload["values"]["age"], dtype=float)
    assert (raw < 0).sum() > 5  # 81 levels, 120 rows: many noisy counts below 0
    assert payload["non_negative"]["values"]["age"] == {k: max(0, round(v)) for k, v in raw.items()}
    assert payload["non_negative"]["clipped"]["age"] == pytest.approx(-raw[raw < 0].sum())
    html = page.read_text(encoding="utf-8")
    assert f"noisy count ({counts})" in text
    if counts == "non-negative":
        assert f"totals raised by the amount clipped: age +{-raw[raw < 0].sum():g}" in text
        assert "Counts shown non-negative and rounded." in html
    else:
        assert f"{(raw < 0).sum()} noisy counts are below 0" in html


def test_a_bad_counts_value_is_one_line_and_exit_2(capsys, survey) -> None:
    data, schema, _, _ = survey
    code = main(["release", "histograms", str(data), "--schema", str(schema), "--epsilon", "1",
                 "--counts", "clipped"])  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    assert "--counts must be one of non-negative, raw, got 'clipped'" in err[0]


def test_ddp_model_page_shows_the_tree_the_guarantees_and_the_gain(
    capsys, tmp_path: Path, survey, check_page
) -> None:
    data, schema, _, forbidden = survey
    public, page = write_public(tmp_path), tmp_path / "model.html"
    html = html_of(capsys, ["release", "ddp", str(data), "--schema", str(schema), "--epsilon",
                            "1", "--aux", str(public), "--html", str(page)], page)  # fmt: skip
    check_page(html, forbidden, min_figures=4)
    assert "Where the noise comes from" in html and "tree links" in html
    assert "from auxiliary rows (300)" in html and "gain over Laplace" in html
    assert html.count('<th class="name">guarantee</th>') == 2 and "for any law" in html


@pytest.mark.parametrize("query", ["histogram", "sum"])
def test_quilt_page(capsys, tmp_path: Path, check_page, query: str) -> None:
    page = tmp_path / "quilt.html"
    html = html_of(capsys, ["release", "quilt", "--transition", "0.8,0.2;0.3,0.7",
                            "--sequence", str(write_walk(tmp_path)), "--epsilon", "1",
                            "--query", query, "--html", str(page)], page)  # fmt: skip
    check_page(html, min_figures=1)
    assert "pufferfish" in html and "X_i" in html
    assert ("Counts shown non-negative" in html) == (query == "histogram")  # a sum is no count


def test_ledger_page(capsys, tmp_path: Path, survey, check_page) -> None:
    data, schema, ledger, forbidden = survey
    for epsilon in ("0.5", "1"):
        assert main(["release", "histograms", str(data), "--schema", str(schema),
                     "--epsilon", epsilon, "--ledger", str(ledger)]) == 0  # fmt: skip
    capsys.readouterr()
    page, out = tmp_path / "budget.html", tmp_path / "budget.json"
    code = main(["budget", "show", "--ledger", str(ledger), "--html", str(page), "--out",
                 str(out)])  # fmt: skip
    assert code == 0 and out.is_file()
    html = page.read_text(encoding="utf-8")
    pngs = check_page(html, forbidden, min_figures=2)  # spend per unit, spend over time
    assert len(pngs) == 2
    assert "Spend per privacy unit" in html and "Spend over time" in html
    assert html.count("histograms of") == 2 and "pufferfish/chain" in html
    assert "<td>1.5</td>" in html  # 0.5 + 1 used in dp/add-remove, by basic composition


def test_an_empty_ledger_has_a_page(capsys, tmp_path: Path, check_page) -> None:
    ledger, page = tmp_path / "e.ledger", tmp_path / "e.html"
    assert main(["budget", "set", "--ledger", str(ledger), "--epsilon", "1"]) == 0
    assert main(["budget", "show", "--ledger", str(ledger), "--html", str(page)]) == 0
    html = page.read_text(encoding="utf-8")
    check_page(html, min_figures=2)
    assert "No releases yet." in html
