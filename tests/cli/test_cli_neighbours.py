"""Every release command gives two neighbouring inputs (under its own unit) the same decision.

A refusal, a warning or a printed line that one input gets and its neighbour does not is an
event with infinite privacy loss, outside any guarantee. For each release command, a private
input and a neighbour under the unit it protects (add/remove: one row more; substitution: one
row's protected columns changed; one answer; one record; one state) are run with the same
seed and file names; the exit code and every line on stderr (refusals, warnings) must be the
same. The neighbours are picked where earlier versions split them: a table at the overlap
limit, a private-only category with --infer-schema, an empty table, a training row told apart
only by its sensitive value.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from attrpriv import datasets
from attrpriv.cli import main

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = """\
columns:
  region: {role: feature, domain: {type: categorical, categories: [east, north, south, west]}}
  age_group: {role: feature, domain: {type: categorical, categories: [18-34, 35-54, 55+]}}
  answer: {role: sensitive, domain: {type: categorical, categories: ['no', 'yes']}}
"""


def _decision(capsys: pytest.CaptureFixture[str], args: list[str], out: Path | None) -> tuple:
    """The exit code, the stderr lines and, where the command wrote a ``--record``, what it
    decided beside the noise (unit, assumptions, what was redrawn and what passed through);
    its outputs are removed afterwards."""
    code = main(args)
    err = capsys.readouterr().err
    decided = None
    if "--record" in args:
        record = Path(args[args.index("--record") + 1])
        if record.exists():
            payload = json.loads(record.read_text())
            diagnostics = payload["diagnostics"]  # only the resample commands write one
            decided = (
                payload["record"]["unit"],
                payload["record"]["assumptions"],
                diagnostics["proxies"],
                diagnostics["passed_through"],
            )
            record.unlink()
    if out is not None and out.exists():
        shutil.rmtree(out) if out.is_dir() else out.unlink()
    progress = "release ddp: "  # the steps a long job reports: the same for both neighbours
    return (
        code,
        [line for line in err.strip().splitlines() if not line.startswith(progress)],
        decided,
    )


def _same_decision(
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    data: Path,
    write: Callable[[Path, bool], None],
    out: Path | None = None,
) -> tuple:
    """Run ``args`` on ``data`` written as the input (False) and as its neighbour (True)."""
    found = []
    for neighbour in (False, True):
        write(data, neighbour)
        found.append(_decision(capsys, args, out))
    assert found[0] == found[1], f"neighbours decided differently: {found[0]} vs {found[1]}"
    return found[0]


@pytest.fixture
def survey(tmp_path: Path) -> tuple[Path, Path]:
    schema = tmp_path / "survey.yaml"
    schema.write_text(SCHEMA)
    return tmp_path / "survey.csv", schema


def _survey(rows: int, change: str) -> Callable[[Path, bool], None]:
    frame = pd.read_csv(ROOT / "examples" / "survey.csv").iloc[:rows]

    def write(path: Path, neighbour: bool) -> None:
        table = frame.copy()
        if neighbour and change == "remove":
            table = table.iloc[1:]
        elif neighbour:
            table.loc[0, "answer"] = "no" if table.loc[0, "answer"] == "yes" else "yes"
        table.to_csv(path, index=False)

    return write


@pytest.mark.parametrize("rows", [1, 30])
def test_histograms_under_add_remove(capsys, survey, rows: int) -> None:
    """One row more or less, down to the empty table (which earlier versions refused)."""
    data, schema = survey
    args = ["release", "histograms", str(data), "--schema", str(schema), "--epsilon", "1"]
    code, _, _ = _same_decision(capsys, args, data, _survey(rows, "remove"))
    assert code == 0


def test_histograms_under_substitution(capsys, survey) -> None:
    data, schema = survey
    args = ["release", "histograms", str(data), "--schema", str(schema), "--epsilon", "1",
            "--neighbours", "substitute"]  # fmt: skip
    assert _same_decision(capsys, args, data, _survey(30, "answer"))[0] == 0


def test_tabular_ddp_under_one_answer(capsys, survey) -> None:
    data, schema = survey
    args = ["release", "ddp", str(data), "--schema", str(schema), "--epsilon", "1"]
    assert _same_decision(capsys, args, data, _survey(60, "answer"))[0] == 0


def test_quilt_under_one_state(capsys, tmp_path: Path) -> None:
    data = tmp_path / "walk.csv"
    states = pd.read_csv(ROOT / "examples" / "walk.csv")

    def write(path: Path, neighbour: bool) -> None:
        table = states.copy()
        if neighbour:
            table.loc[3, "state"] = 1 - table.loc[3, "state"]
        table.to_csv(path, index=False)

    args = ["release", "quilt", "--transition", "0.9,0.1;0.2,0.8", "--states", "0,1",
            "--sequence", str(data), "--epsilon", "1"]  # fmt: skip
    assert _same_decision(capsys, args, data, write)[0] == 0


def test_attribute_private_gaussian_under_one_record(capsys, tmp_path: Path) -> None:
    """Records that differ in one private record (and so in the protected share)."""
    for name in ("attribute.yaml", "adult-sample.schema.yaml"):
        shutil.copy(ROOT / "examples" / name, tmp_path / name)
    data = tmp_path / "adult-sample.csv"
    records = pd.read_csv(ROOT / "examples" / "adult-sample.csv")

    def write(path: Path, neighbour: bool) -> None:
        table = records.copy()
        if neighbour:
            table.loc[0, "income"] = ">50K" if table.loc[0, "income"] == "<=50K" else "<=50K"
        table.to_csv(path, index=False)

    args = ["release", "attribute", str(tmp_path / "attribute.yaml")]
    assert _same_decision(capsys, args, data, write)[0] == 0


@pytest.fixture(scope="module")
def adult_parts(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pd.DataFrame]:
    """Public auxiliary rows of Adult as a CSV, and private rows disjoint from them."""
    frame = datasets.load("adult").frame.drop(columns=["split"]).astype(str)
    folder = tmp_path_factory.mktemp("adult")
    aux = folder / "aux.csv"
    frame.iloc[:1500].to_csv(aux, index=False)
    return aux, frame.iloc[40000:40300].reset_index(drop=True)


def test_resample_under_one_rows_sensitive_value_and_proxies(
    capsys, tmp_path: Path, adult_parts: tuple[Path, pd.DataFrame]
) -> None:
    """With --infer-schema, a proxy category only the neighbour's row holds (the domains come
    from the auxiliary rows, so it decides nothing)."""
    aux, private = adult_parts
    data, out = tmp_path / "private.csv", tmp_path / "released.parquet"

    def write(path: Path, neighbour: bool) -> None:
        table = private.copy()
        if neighbour:
            table.loc[0, "sex"] = "Male" if table.loc[0, "sex"] == "Female" else "Female"
            table.loc[0, "occupation"] = "Astronaut"
            table.loc[0, "relationship"] = "Own-child"
        table.to_csv(path, index=False)

    for chosen in (["--proxy-columns", "occupation,relationship"], ["--proxies", "auto"]):
        args = ["sanitize", "resample", str(data), "--aux", str(aux), "--method", "donor",
                "--sensitive", "sex", "--epsilon", "1", "--infer-schema", *chosen,
                "--out", str(out), "--record", str(tmp_path / "record.json")]  # fmt: skip
        assert _same_decision(capsys, args, data, write, out)[0] == 0


def test_block_resample_under_one_rows_sensitive_value_and_named_proxy(
    capsys, tmp_path: Path, adult_parts: tuple[Path, pd.DataFrame]
) -> None:
    """The default method, no public rows: the neighbour changes one row's sex and its named
    proxy (the unit dp/substitute:sex,relationship)."""
    _, private = adult_parts
    data, out, schema = tmp_path / "private.csv", tmp_path / "released.csv", tmp_path / "s.yaml"
    full = datasets.load("adult").schema
    full.select([n for n in full.names if n != "split"]).save(schema)

    def write(path: Path, neighbour: bool) -> None:
        table = private.copy()
        if neighbour:
            table.loc[0, "sex"] = "Male" if table.loc[0, "sex"] == "Female" else "Female"
            table.loc[0, "relationship"] = "Other-relative"
        table.to_csv(path, index=False)

    args = ["sanitize", "resample", str(data), "--schema", str(schema), "--sensitive", "sex",
            "--epsilon", "1", "--proxy-columns", "relationship", "--out", str(out),
            "--record", str(tmp_path / "record.json")]  # fmt: skip
    code, _, decided = _same_decision(capsys, args, data, write, out)
    assert code == 0 and decided[0] == "dp/substitute:sex,relationship"


def test_resample_at_the_overlap_limit(
    capsys, tmp_path: Path, adult_parts: tuple[Path, pd.DataFrame]
) -> None:
    """Private rows that mostly repeat the auxiliary ones, and the neighbour that changes one
    repeated row's sensitive value and proxies: refused both (or released both)."""
    aux, private = adult_parts
    public = pd.read_csv(aux, dtype=str)
    data, out = tmp_path / "private.csv", tmp_path / "released.parquet"

    def write(path: Path, neighbour: bool) -> None:
        # 151 of 300 rows repeat auxiliary ones: just over the limit (half: no auxiliary row
        # repeats another); the neighbour, compared whole, would be 150, at it
        table = pd.concat([public.iloc[:151], private.iloc[:149]], ignore_index=True)
        if neighbour:
            table.loc[0, "sex"] = "Male" if table.loc[0, "sex"] == "Female" else "Female"
            table.loc[0, "relationship"] = "Other-relative"
        table.to_csv(path, index=False)

    args = ["sanitize", "resample", str(data), "--aux", str(aux), "--method", "donor",
            "--sensitive", "sex", "--epsilon", "1", "--infer-schema", "--proxy-columns",
            "relationship", "--out", str(out)]  # fmt: skip
    code, lines, _ = _same_decision(capsys, args, data, write, out)
    assert code == 2 and "repeat auxiliary rows" in lines[-1]


def test_apply_under_one_rows_sensitive_value(
    capsys, tmp_path: Path, adult_parts: tuple[Path, pd.DataFrame]
) -> None:
    """A private row equal to a training row but for its sensitive value, and its neighbour
    that changes that value back: the training-row check must not tell them apart."""
    pytest.importorskip("torch")
    aux, private = adult_parts
    public = pd.read_csv(aux, dtype=str).iloc[:200]
    train = tmp_path / "train.csv"
    public.to_csv(train, index=False)
    schema = tmp_path / "adult.yaml"
    full = datasets.load("adult").schema
    full.select([n for n in full.names if n != "split"]).save(schema)
    decoupler = tmp_path / "dec"
    fit = ["sanitize", "fit", str(train), "--schema", str(schema), "--sensitive", "sex",
           "--epochs", "1", "--hidden", "8", "--out", str(decoupler)]  # fmt: skip
    assert main(fit) == 0
    capsys.readouterr()
    data, out = tmp_path / "private.csv", tmp_path / "s.parquet"

    def write(path: Path, neighbour: bool) -> None:
        row = public.iloc[[0]].copy()
        flipped = "Male" if row["sex"].iloc[0] == "Female" else "Female"
        row["sex"] = row["sex"].iloc[0] if neighbour else flipped
        pd.concat([private.iloc[:50], row], ignore_index=True).to_csv(path, index=False)

    args = ["sanitize", "apply", str(data), "--schema", str(schema), "--decoupler",
            str(decoupler), "--epsilon", "1", "--out", str(out)]  # fmt: skip
    code, lines, _ = _same_decision(capsys, args, data, write, out)
    # 1 training row in 51: more than natural duplicates make, under the refusal limit
    assert code == 0 and any("trained on" in line and "warning" in line for line in lines)


def test_tabular_ddp_modules_under_one_answer(capsys, survey) -> None:
    """The structural tier reads nothing but counts from the private rows."""
    data, schema = survey
    args = ["release", "ddp", str(data), "--schema", str(schema), "--epsilon", "1",
            "--modules", "region,age_group;answer"]  # fmt: skip
    code, lines, _ = _same_decision(capsys, args, data, _survey(60, "answer"))
    assert code == 0 and lines == []
