"""``attrpriv sanitize resample``: the tabular sanitizer from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from attrpriv.cli import main

ADULT = ["adult", "--aux", "adult", "--method", "donor", "--sensitive", "sex", "--epsilon", "1"]
BLOCK = ["adult", "--sensitive", "sex", "--epsilon", "1"]


def test_resample_releases_every_private_row_and_its_record(capsys, tmp_path: Path) -> None:
    out, record = tmp_path / "released.parquet", tmp_path / "record.json"
    code = main(
        [
            "sanitize", "resample", *ADULT, "--aux-row-range", ":3000", "--row-range",
            "40000:41000", "--proxies", "2", "--out", str(out), "--record", str(record),
        ]
    )  # fmt: skip
    text = " ".join(capsys.readouterr().out.split())
    assert code == 0 and "released 1000 rows at epsilon=1" in text and "not hidden" in text
    post = json.loads(record.read_text())["record"]["noise"]["post_processing"]
    assert "copied together from one auxiliary (public) donor row" in post
    assert "proxies copied from donors among 3000 auxiliary rows" in text
    assert "where each column comes from: from the private rows, unchanged: " in text
    assert "came from the public rows or the noisy marginal" not in text  # 2 proxies only
    released = pd.read_parquet(out)
    assert len(released) == 1000 and "split" in released and "income" in released
    assert set(released["sex"]) <= {"Female", "Male"}
    payload = json.loads(record.read_text())
    assert payload["record"]["epsilon"] == 1.0
    assert payload["record"]["unit"].startswith("dp/substitute:sex,")
    proxies = payload["diagnostics"]["proxies"]
    assert len(proxies) == 2 and "income" not in proxies


def test_private_rows_that_repeat_the_auxiliary_rows_are_refused(capsys, tmp_path) -> None:
    """Compared on the columns passed through (two proxies redrawn: 11 columns left)."""
    out = tmp_path / "released.parquet"
    args = ["sanitize", "resample", *ADULT, "--rows", "2000", "--proxies", "2", "--out", str(out)]
    code = main(args)
    err = capsys.readouterr().err
    assert code == 2 and "repeat auxiliary rows" in err and err.strip().count("\n") == 0
    assert "%" not in err  # no exact share of the private rows
    assert not out.exists()


def test_infer_schema_reads_the_domains_off_the_auxiliary_rows_only(capsys, tmp_path) -> None:
    """A category only the private rows hold is not learnt: it cannot decide what is redrawn."""
    from attrpriv.datasets import load

    frame = load("adult").frame.drop(columns=["split"]).astype(str)
    aux, private = tmp_path / "aux.csv", tmp_path / "private.csv"
    frame.iloc[:1500].to_csv(aux, index=False)
    rare = frame.iloc[40000:40400].copy()
    rare.loc[rare.index[0], "occupation"] = "Astronaut"  # only in the private rows
    rare.to_csv(private, index=False)
    out, record = tmp_path / "r.parquet", tmp_path / "r.json"
    code = main(
        [
            "sanitize", "resample", str(private), "--aux", str(aux), "--method", "donor",
            "--sensitive", "sex", "--epsilon", "1", "--infer-schema", "--proxies", "2", "--out",
            str(out), "--record", str(record),
        ]
    )  # fmt: skip
    assert code == 0
    assumptions = " ".join(json.loads(record.read_text())["record"]["assumptions"])
    assert "read off the auxiliary data" in assumptions and "private data" not in assumptions


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--out", "released.txt"], "--out must end in"),
        (["--out", "r.csv", "--proxy-columns", "height"], "height"),
        (["--out", "r.csv", "--epsilon", "0"], "epsilon must be > 0"),
        (["--out", "r.csv", "--proxies", "some"], "--proxies must be a count or 'auto'"),
        (["--out", "r.csv", "--target-auc", "0.4"], "target_auc must be an AUC in (0.5, 1]"),
        (["--out", "r.csv", "--task-weight", "-1"], "task_weight must be"),
        (["--out", "r.csv", "--conditional", "forest"], "conditional must be one of"),
        (["--out", "r.csv", "--donors", "0"], "n_donors must be"),
    ],
)
def test_bad_input_is_one_line_exit_2(capsys, tmp_path, monkeypatch, extra, message) -> None:
    monkeypatch.chdir(tmp_path)
    base = ["sanitize", "resample", *ADULT, "--aux-row-range", ":2000", "--row-range", "40000:"]
    code = main([*base, *extra])
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.strip().count("\n") == 0
    assert not list(tmp_path.iterdir())


def test_auto_proxies_redraw_until_the_floor_is_reached(capsys, tmp_path: Path) -> None:
    """The default redraws proxies until the rest predicts sex with AUC at most 0.55 on the
    auxiliary rows (or every candidate is redrawn): more than three on Adult."""
    out, record = tmp_path / "released.parquet", tmp_path / "record.json"
    code = main(
        [
            "sanitize", "resample", *ADULT, "--aux-row-range", ":3000", "--row-range",
            "40000:41000", "--out", str(out), "--record", str(record),
        ]
    )  # fmt: skip
    assert code == 0
    proxies = json.loads(record.read_text())["diagnostics"]["proxies"]
    assert len(proxies) > 3 and "income" not in proxies


def test_the_hgb_chain_is_a_choice(capsys, tmp_path: Path) -> None:
    out = tmp_path / "released.csv"
    code = main(
        [
            "sanitize", "resample", *ADULT, "--aux-row-range", ":2000", "--row-range",
            "40000:40500", "--proxies", "2", "--conditional", "hgb", "--out", str(out),
        ]
    )  # fmt: skip
    text = " ".join(capsys.readouterr().out.split())
    assert code == 0 and "proxies redrawn from models fitted on 2000 auxiliary rows" in text
    assert len(pd.read_csv(out)) == 500


def test_two_resamples_of_sex_with_different_proxies_share_one_budget_on_sex(
    capsys, tmp_path: Path
) -> None:
    """The budget on sex is set before the first run (the proxies are chosen at run time);
    the second resample with other proxies is refused: 0.6 + 0.6 would exceed 1 on sex."""
    ledger = tmp_path / "adult.ledger"
    assert (
        main(["budget", "set", "--ledger", str(ledger), "--protect", "sex", "--epsilon", "1"]) == 0
    )
    base = [
        "sanitize", "resample", "adult", "--aux", "adult", "--method", "donor", "--sensitive",
        "sex", "--epsilon", "0.6", "--aux-row-range", ":2000", "--row-range", "40000:40500",
        "--ledger", str(ledger),
    ]  # fmt: skip
    first, second = tmp_path / "first.parquet", tmp_path / "second.parquet"
    assert main([*base, "--proxy-columns", "relationship", "--out", str(first)]) == 0
    capsys.readouterr()
    code = main([*base, "--proxy-columns", "occupation,marital_status", "--out", str(second)])
    err = capsys.readouterr().err
    assert code == 2 and "would exceed the budget of unit 'dp/substitute:sex'" in err
    assert first.exists() and not second.exists()
    assert main(["budget", "show", "--ledger", str(ledger), "--out", str(tmp_path / "b.json")]) == 0
    columns = {c["unit"]: c for c in json.loads((tmp_path / "b.json").read_text())["columns"]}
    assert columns["dp/substitute:sex"]["spent"]["epsilon"] == 0.6
    assert columns["dp/substitute:relationship"]["n_converted"] == 1


def test_the_summary_says_when_every_column_came_from_the_public_rows() -> None:
    import dataclasses

    from attrpriv.sanitize.resample import ResampleDiagnostics

    marginal = pd.Series({"Female": 0.3, "Male": 0.7})
    diagnostics = ResampleDiagnostics(
        rows=100, noisy_counts={"sex": marginal * 100}, sensitive="sex",
        proxies=("age", "relationship"), passed_through=("income",), epsilon=1.0,
        marginal=marginal, leakage_floor_aux=0.5, draw="conditional", conditional="donor",
        aux_rows=300, keep=("income",),
    )  # fmt: skip
    lines = diagnostics.summary_lines()
    assert any("came from the public rows or the noisy marginal" in line for line in lines)
    assert "from the public (auxiliary) rows: age, relationship" in lines[1]
    assert "proxies copied from donors among 300 auxiliary rows" in lines[0]
    more = dataclasses.replace(diagnostics, passed_through=("income", "hours_per_week"))
    assert not any("came from the public rows" in line for line in more.summary_lines())


def test_the_default_block_method_needs_no_public_rows(capsys, tmp_path: Path) -> None:
    """No --aux: the sensitive column and its proxies are redrawn from noisy counts of the
    private rows; the summary says where every column came from."""
    out, record = tmp_path / "released.parquet", tmp_path / "record.json"
    args = ["sanitize", "resample", *BLOCK, "--row-range", "40000:42000", "--out", str(out),
            "--record", str(record)]  # fmt: skip
    assert main(args) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "released 2000 rows at epsilon=1, delta=1e-06" in text
    assert "no public row read" in text and "redrawn from the noisy counts of the private" in text
    payload = json.loads(record.read_text())
    assert payload["record"]["unit"] == "dp/substitute:sex"
    assert payload["record"]["mechanism"] == "block-resampling"
    proxies = payload["diagnostics"]["proxies"]
    assert "relationship" in proxies and "income" not in proxies
    released = pd.read_parquet(out)
    original = load_adult().iloc[40000:42000]
    assert len(released) == 2000 and set(released["sex"]) <= {"Female", "Male"}
    unchanged = [c for c in released.columns if c not in {"sex", *proxies}]
    pd.testing.assert_frame_equal(
        released[unchanged].reset_index(drop=True),
        original[unchanged].reset_index(drop=True),
        check_dtype=False,
    )


def test_named_block_proxies_join_the_unit(capsys, tmp_path: Path) -> None:
    out, record = tmp_path / "released.csv", tmp_path / "record.json"
    args = ["sanitize", "resample", *BLOCK, "--row-range", "40000:41000", "--proxy-columns",
            "relationship", "--out", str(out), "--record", str(record)]  # fmt: skip
    assert main(args) == 0
    payload = json.loads(record.read_text())
    assert payload["record"]["unit"] == "dp/substitute:sex,relationship"
    assert payload["diagnostics"]["proxies"] == ["relationship"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--donors", "3"], "--donors is an option of --method donor, not block"),
        (["--method", "block", "--target-auc", "0.6"], "--target-auc is an option of --method"),
        (["--method", "donor"], "--method donor needs --aux"),
        (["--method", "forest"], "--method must be one of block, donor"),
        (["--proxies", "3"], "--proxies takes a count with --method donor only"),
        (["--association", "1.5"], "association"),
        (["--delta", "0"], "delta"),
        (["--bins", "1"], "bins"),
        (["--aux-where", "split=train"], "--aux-* options need --aux"),
    ],
)
def test_block_bad_input_is_one_line_exit_2(capsys, tmp_path, monkeypatch, extra, message) -> None:
    monkeypatch.chdir(tmp_path)
    code = main(["sanitize", "resample", *BLOCK, "--row-range", "40000:", "--out", "r.csv", *extra])
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.strip().count("\n") == 0
    assert not list(tmp_path.iterdir())


def load_adult() -> pd.DataFrame:
    from attrpriv.datasets import load

    return load("adult").frame
