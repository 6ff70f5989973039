"""Bad input exits 2 with one line on stderr, naming what was wrong, and leaves nothing behind.

One parametrized test per family: output locations that cannot be written, empty data, columns
with no values that the schema says may not be missing, malformed parameters, usage errors,
values outside their domain (named only with --debug), outputs written all or nothing; data
the reader refuses (an infinite number, a column named twice), checkpoint folders, page
suffixes, epsilons refused while parsing; and the notes where a default or a guess is used.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from attrpriv import datasets
from attrpriv.cli import main

SCHEMA = """\
columns:
  sex: {role: feature, domain: {type: categorical, categories: [Female, Male]}}
  race: {role: sensitive, domain: {type: categorical, categories: [White, Black, Other]}}
  age: {role: feature, domain: {type: integer, lower: 17, upper: 90}}
"""
SPEC = {
    "data": {"dataset": "adult", "rows": 100, "seed": 3},
    "statistics": ["count(sex=Female)"],
    "protect": [{"statistic": "share(income=>50K)", "values": [0.45, 0.55]}],
    "model": {"type": "resampling", "reference": "adult", "n": 100, "draws": 200},
    "epsilon": 1.0,
    "delta": 1e-3,
}
HISTOGRAMS = ["release", "histograms", "{data}", "--schema", "{schema}", "--epsilon", "1"]
DDP = ["release", "ddp", "{data}", "--schema", "{schema}", "--epsilon", "1"]
APPLY_ADULT = ["sanitize", "apply", "{adult}", "--schema", "{work}/adult.yaml", "--decoupler",
               "{dec}", "--epsilon", "1", "--strict-domain",
               "--out", "{work}/s.parquet"]  # fmt: skip
RESAMPLE = ["sanitize", "resample", "{data}", "--schema", "{schema}", "--sensitive", "race",
            "--epsilon", "1", "--out", "{work}/r.csv"]  # fmt: skip
QUILT = ["release", "quilt", "--transition", "0.9,0.1;0.2,0.8", "--epsilon", "1"]


def run(capsys: pytest.CaptureFixture[str], args: list[str]) -> tuple[int, str, str]:
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_line(err: str) -> str:
    """The single stderr line of a refused command (asserted to be exactly one, beside the
    progress lines a long job prints on a non-terminal)."""
    lines = [line for line in err.strip().splitlines() if not line.startswith("release ddp: ")]
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ") and "unexpected failure" not in lines[0], lines[0]
    return lines[0]


def files_under(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A folder with a CSV, its schema, a spec, a ledger, a file and a folder to misuse."""
    pd.DataFrame(
        {"sex": ["Male", "Female"] * 20, "race": ["White", "Black", "Other", "White"] * 10,
         "age": list(range(20, 60))}
    ).to_csv(tmp_path / "data.csv", index=False)  # fmt: skip
    (tmp_path / "data.yaml").write_text(SCHEMA)
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(SPEC))
    pd.DataFrame({"s": [0, 1, 1, 0, 1]}).to_csv(tmp_path / "seq.csv", index=False)
    (tmp_path / "a-file").write_text("x")
    (tmp_path / "a-dir").mkdir()
    assert main(["budget", "set", "--ledger", str(tmp_path / "ok.ledger"), "--epsilon", "9"]) == 0
    return tmp_path


@pytest.fixture
def unwritable(tmp_path: Path) -> Iterator[Path]:
    """A folder in which no file can be made: read-only for a normal user; for root, who
    writes anywhere, a folder under /proc (no files can be made there)."""
    if os.geteuid() != 0:
        folder = tmp_path / "read-only"
        folder.mkdir()
        folder.chmod(0o555)
        yield folder
        folder.chmod(0o755)
    elif Path("/proc/self").is_dir():
        yield Path("/proc/attrpriv-test")
    else:  # pragma: no cover - root without /proc
        pytest.skip("no folder is unwritable for root here")


@pytest.fixture(scope="module")
def decoupler(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny tabular decoupler (Adult, sex as y_S), fitted by the CLI (needs torch)."""
    pytest.importorskip("torch")
    out = tmp_path_factory.mktemp("fit") / "dec"
    code = main(["sanitize", "fit", "adult", "--sensitive", "sex", "--rows", "200",
                 "--epochs", "1", "--hidden", "8", "--out", str(out)])  # fmt: skip
    assert code == 0
    return out


# -- output locations that cannot be written --------------------------------------------------
UNWRITABLE = [
    ["datasets", "show", "adult", "--out", "{bad}/x.json"],
    ["datasets", "export", "anes96", "{bad}/x.csv"],
    ["datasets", "export", "anes96", "{work}/x.csv", "--schema-out", "{bad}/x.yaml"],
    ["release", "histograms", "adult", "--columns", "sex", "--epsilon", "1", "--out",
     "{bad}/x.json"],
    ["release", "histograms", "adult", "--columns", "sex", "--epsilon", "1", "--out",
     "{work}/x.json", "--html", "{bad}/x.html"],
    ["release", "ddp", "anes96", "--epsilon", "1", "--columns", "pid,vote",
     "--out", "{work}/x.json", "--html", "{bad}/x.html"],
    [*QUILT, "--sequence", "{work}/seq.csv", "--out", "{bad}/x.json"],
    ["release", "attribute", "{work}/spec.yaml", "--out", "{bad}/x.json"],
    ["assess", "run", "german_credit", "--target", "credit_risk", "--out", "{work}/r.json",
     "--html", "{bad}/r.html"],
    ["sanitize", "fit", "adult", "--sensitive", "sex", "--out", "{bad}/dec"],
    ["sanitize", "apply", "adult", "--decoupler", "{work}/no-dec", "--epsilon", "1", "--out",
     "{work}/s.parquet", "--record", "{bad}/r.json"],
    ["sanitize", "evaluate", "adult", "adult", "--decoupler", "{work}/no-dec", "--target",
     "income", "--out", "{work}/s.json", "--html", "{bad}/s.html"],
    ["budget", "set", "--ledger", "{bad}/new.ledger", "--epsilon", "1"],
    ["budget", "show", "--ledger", "{work}/ok.ledger", "--out", "{work}/b.json", "--html",
     "{bad}/b.html"],
    ["budget", "set", "--ledger", "{work}/a-file/new.ledger", "--epsilon", "1"],
    ["budget", "set", "--ledger", "{work}/a-dir", "--epsilon", "1"],
    ["release", "histograms", "adult", "--columns", "sex", "--epsilon", "1", "--ledger",
     "{work}/a-dir"],
]  # fmt: skip


@pytest.mark.parametrize("args", UNWRITABLE, ids=lambda a: " ".join(a[:2]) + " " + a[-2])
def test_outputs_that_cannot_be_written_are_refused_before_any_work(
    capsys: pytest.CaptureFixture[str], work: Path, unwritable: Path, args: list[str]
) -> None:
    before = files_under(work)
    code, out, err = run(capsys, [a.format(work=work, bad=unwritable) for a in args])
    line = one_line(err)
    assert code == 2
    assert any(option in line for option in ("--out", "--html", "--schema-out", "--record",
                                             "--ledger", "PATH"))  # fmt: skip
    assert files_under(work) == before  # nothing written, nothing half-written
    assert "noisy" not in out and "trained" not in out  # refused before the work


# -- empty data ---------------------------------------------------------------------------------
EMPTY = {"0-byte": "", "header only": "sex,race,age\n", "blank lines": "sex,race,age\n\n\n"}
EMPTY_DATA = [  # (release histograms with a schema releases an empty table: tested below)
    ["release", "histograms", "{data}", "--infer-schema", "--epsilon", "1"],
    ["release", "ddp", "{data}", "--schema", "{work}/data.yaml", "--epsilon", "1"],
    [*QUILT, "--sequence", "{data}", "--column", "sex"],
    ["assess", "run", "{data}", "--target", "sex"],
    ["sanitize", "fit", "{data}", "--schema", "{work}/data.yaml", "--sensitive", "sex",
     "--out", "{work}/dec"],
    ["sanitize", "apply", "{data}", "--decoupler", "{dec}", "--epsilon", "1", "--out",
     "{work}/s.parquet"],
    ["sanitize", "evaluate", "{data}", "adult", "--decoupler", "{dec}", "--target", "income"],
    ["schema", "draft", "{data}", "--out", "{work}/draft.yaml"],
]  # fmt: skip


def test_add_remove_histograms_release_a_table_without_rows(
    capsys: pytest.CaptureFixture[str], work: Path
) -> None:
    """The number of rows is private under add/remove neighbours: the empty table gets the
    same decision (a release) as a table of one row; only a file that is no table is refused."""
    data = work / "empty.csv"
    args = ["release", "histograms", str(data), "--schema", f"{work}/data.yaml", "--epsilon", "1"]
    for content in ("sex,race,age\n", "sex,race,age\n\n\n"):
        data.write_text(content)
        code, out, _ = run(capsys, args)
        assert code == 0 and "noisy count" in out
    data.write_text("")
    code, _, err = run(capsys, args)
    assert code == 2 and "empty (0 bytes)" in one_line(err)


@pytest.mark.parametrize("content", EMPTY.values(), ids=EMPTY.keys())
@pytest.mark.parametrize("args", EMPTY_DATA, ids=lambda a: " ".join(a[:2]))
def test_empty_data_is_refused_everywhere(
    capsys: pytest.CaptureFixture[str], work: Path, decoupler: Path, args: list[str], content: str
) -> None:
    data = work / "empty.csv"
    data.write_text(content)
    before = files_under(work)
    filled = [a.format(work=work, data=data, dec=decoupler) for a in args]
    code, _, err = run(capsys, filled)
    line = one_line(err)
    assert code == 2 and "empty.csv" in line
    assert "no rows" in line or "empty (0 bytes)" in line
    assert files_under(work) == before


# -- a column the schema says may not be missing, with no values at all ------------------------
@pytest.mark.parametrize(
    "args",
    [HISTOGRAMS, [*HISTOGRAMS, "--columns", "race"], DDP],
    ids=["histograms", "histograms --columns", "ddp"],
)
def test_an_all_missing_column_that_may_not_be_missing_is_refused(
    capsys: pytest.CaptureFixture[str], work: Path, args: list[str]
) -> None:
    data = work / "missing.csv"
    frame = pd.read_csv(work / "data.csv").assign(race=None)
    frame.to_csv(data, index=False)
    filled = [a.format(data=data, schema=work / "data.yaml") for a in args]
    code, out, err = run(capsys, filled)
    assert code == 2 and "noisy count" not in out
    line = one_line(err)
    assert "column 'race' has" in line and "the schema does not allow missing values" in line


# -- parameters -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            [*QUILT[:3], "0.9,0.1", *QUILT[4:], "--sequence", "{work}/seq.csv"],
            "--transition must be a square matrix",
        ),
        (
            [*QUILT[:3], "0.9,0.1;0.2", *QUILT[4:], "--sequence", "{work}/seq.csv"],
            "--transition must have rows of equal length",
        ),
        (
            [*QUILT, "--sequence", "{work}/seq.csv", "--initial", "0.5,0.2,0.3"],
            "initial has 3 states but transition has 2",
        ),
        (
            ["sanitize", "fit", "adult", "--sensitive", "sex", "--out", "{work}/a-file"],
            "--out '{work}/a-file' is an existing file; expected a directory",
        ),
        (
            ["schema", "draft", "{work}/data.csv", "--out", "{work}/draft.txt"],
            "must end in .yaml, .yml or .json",
        ),
        (
            ["schema", "draft", "{work}/data.csv", "--sensitive", "race", "--target", "race"],
            "column 'race' is given two roles",
        ),
        (
            [
                "release",
                "histograms",
                "adult",
                "--columns",
                "sex",
                "--epsilon",
                "1",
                "--out",
                "{work}/same.html",
                "--html",
                "{work}/same.html",
            ],
            "are the same file",
        ),
    ],
    ids=[
        "not square",
        "ragged",
        "initial",
        "fit --out a file",
        "schema suffix",
        "two roles",
        "same file",
    ],
)
def test_bad_parameters_exit_2_with_one_line(
    capsys: pytest.CaptureFixture[str], work: Path, args: list[str], message: str
) -> None:
    before = files_under(work)
    code, out, err = run(capsys, [a.format(work=work) for a in args])
    assert code == 2 and message.format(work=work) in one_line(err)
    assert "trained" not in out  # sanitize fit refuses its --out before training
    assert files_under(work) == before


def test_a_huge_epsilon_in_a_spec_is_bad_input(
    capsys: pytest.CaptureFixture[str], work: Path
) -> None:
    (work / "huge.yaml").write_text(yaml.safe_dump(SPEC | {"epsilon": 1e308}))
    code, _, err = run(capsys, ["release", "attribute", str(work / "huge.yaml")])
    assert code == 2 and "epsilon" in one_line(err)


@pytest.mark.parametrize("epsilon", ["1e308", "1e-300"])
@pytest.mark.parametrize(
    "args",
    [["release", "histograms", "adult", "--columns", "sex"], [*QUILT[:4], "--sequence", "SEQ"]],
    ids=["histograms", "quilt"],
)
def test_extreme_epsilons_release_or_exit_2(
    capsys: pytest.CaptureFixture[str], work: Path, args: list[str], epsilon: str
) -> None:
    """A vanishing or astronomical epsilon is a valid (if useless) guarantee or a one-line
    refusal, never an unexpected failure."""
    filled = [a.replace("SEQ", str(work / "seq.csv")) for a in args]
    code, _, err = run(capsys, [*filled, "--epsilon", epsilon])
    assert code in (0, 2), err
    if code == 2:
        one_line(err)


# -- usage errors -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["release", "histograms", "adult", "--epsilon", "one"], "Invalid value for '--epsilon'"),
        (["release", "histograms"], "Missing argument"),
        (["assess", "run", "adult", "--target", "income", "--bogus", "x"], "No such option"),
        (["budget", "nope"], "No such command"),
        (["--debug=3", "datasets", "list"], "does not take a value"),
    ],
)
def test_usage_errors_are_one_line_naming_the_help(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, _, err = run(capsys, args)
    line = one_line(err)
    assert code == 2 and message in line and "--help" in line


# -- values outside their domain: not echoed unless asked -------------------------------------
@pytest.mark.parametrize(
    ("args", "secret"),
    [
        (HISTOGRAMS, "Martian"),
        (DDP, "Martian"),
        ([*HISTOGRAMS, "--columns", "age"], "123"),
        (APPLY_ADULT, "Martian"),
        (RESAMPLE, "Martian"),
        ([*RESAMPLE, "--method", "donor", "--aux", "{work}/data.csv"], "Martian"),
        (["sanitize", "synthesize", "{data}", "--schema", "{schema}", "--method", "mst",
          "--epsilon", "1", "--out", "{work}/syn.csv"], "Martian"),
        (["assess", "run", "{data}", "--schema", "{schema}", "--target", "sex"], "Martian"),
    ],
    ids=["histograms category", "ddp category", "histograms integer", "sanitize apply",
         "resample block", "resample donor", "synthesize", "assess run"],
)  # fmt: skip
def test_values_outside_their_domain_are_named_only_with_debug(
    capsys: pytest.CaptureFixture[str], work: Path, decoupler: Path, args: list[str], secret: str
) -> None:
    data = work / "odd.csv"
    frame = pd.read_csv(work / "data.csv")
    frame.loc[7, "race"], frame.loc[5, "age"] = "Martian", 123
    frame.to_csv(data, index=False)
    adult = work / "adult.csv"
    bundled = datasets.load("adult")
    rows = bundled.frame.head(20).astype({"workclass": object})
    rows.loc[3, "workclass"] = "Martian"
    rows.to_csv(adult, index=False)
    bundled.schema.save(work / "adult.yaml")
    filled = [a.format(data=data, schema=work / "data.yaml", adult=adult, dec=decoupler,
                       work=work) for a in args]  # fmt: skip
    code, _, err = run(capsys, filled)
    line = one_line(err)
    assert code == 2 and "outside its domain" in line
    assert secret not in line and "value hidden: --debug shows it" in line
    assert "np." not in line  # row numbers are plain integers
    code, _, err = run(capsys, ["--debug", *filled])
    assert code == 2 and secret in one_line(err)


# -- outputs: all or nothing ------------------------------------------------------------------
def test_when_the_page_cannot_be_written_the_json_is_not_left_behind(
    capsys: pytest.CaptureFixture[str], work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page fails while it is written (after the release): the JSON written before it
    is taken back, an older JSON at that path is put back as it was."""
    from attrpriv.cli import release as release_cli

    out, page = work / "hist.json", work / "pages" / "hist.html"
    out.write_text('{"old": true}')

    def broken(text: str) -> Callable[[Path], None]:
        def write(tmp: Path) -> None:
            tmp.write_text(text[:10])
            raise OSError(28, "No space left on device")

        return write

    monkeypatch.setattr(release_cli, "text_writer", broken)
    before = files_under(work)
    args = ["release", "histograms", "adult", "--columns", "sex", "--epsilon", "1"]
    code, _, err = run(capsys, [*args, "--out", str(out), "--html", str(page)])
    line = one_line(err)
    assert code == 2 and "cannot write --html" in line and "No space left" in line
    assert files_under(work) == before and json.loads(out.read_text()) == {"old": True}


# -- data the reader refuses: an infinite number, a column named twice ------------------------
REFUSED_DATA = [
    ["assess", "run", "{data}", "--target", "sex"],
    ["schema", "draft", "{data}", "--out", "{work}/draft.yaml"],
    ["release", "histograms", "{data}", "--schema", "{work}/data.yaml", "--epsilon", "1"],
    ["release", "ddp", "{data}", "--schema", "{work}/data.yaml", "--epsilon", "1"],
    ["release", "histograms", "{data}", "--infer-schema", "--epsilon", "1"],
]  # fmt: skip
REFUSED_IDS = ["assess run", "schema draft", "histograms", "ddp", "histograms --infer-schema"]


@pytest.mark.parametrize(
    "args", REFUSED_DATA[:2] + REFUSED_DATA[4:], ids=REFUSED_IDS[:2] + REFUSED_IDS[4:]
)
def test_an_infinite_number_is_refused_before_any_work_naming_column_and_row(
    capsys: pytest.CaptureFixture[str], work: Path, args: list[str]
) -> None:
    """sklearn would fail mid-assessment ("Input X contains infinity"); the reader refuses the
    file at once, naming the column and the row, not the value."""
    data = work / "infinite.csv"
    frame = pd.read_csv(work / "data.csv").astype({"age": float})
    frame.loc[6, "age"] = -np.inf
    frame.to_csv(data, index=False)
    before = files_under(work)
    code, out, err = run(capsys, [a.format(work=work, data=data) for a in args])
    line = one_line(err)  # no progress line: refused before the assessment planned anything
    assert code == 2 and "infinite.csv" in line
    assert "column 'age' has an infinite number (first at row 6)" in line
    assert "inf" not in line.replace("infinite", "")  # the value itself is not shown
    assert files_under(work) == before and "noisy count" not in out


@pytest.mark.parametrize("args", REFUSED_DATA, ids=REFUSED_IDS)
def test_a_column_named_twice_in_the_header_is_refused_naming_it(
    capsys: pytest.CaptureFixture[str], work: Path, args: list[str]
) -> None:
    """pandas would rename the second ``age`` to ``age.1``, and later errors would blame a
    column that is not in the file."""
    data = work / "twice.csv"
    lines = (work / "data.csv").read_text().splitlines()
    data.write_text("\n".join([lines[0] + ",age"] + [f"{row},{i}" for i, row in
                                                     enumerate(lines[1:])]) + "\n")  # fmt: skip
    before = files_under(work)
    code, out, err = run(capsys, [a.format(work=work, data=data) for a in args])
    line = one_line(err)
    assert code == 2 and "names column 'age' twice in its header" in line and "age.1" not in line
    assert files_under(work) == before and "noisy count" not in out


# -- checkpoint folders: checked with the outputs, before any work -----------------------------
@pytest.mark.parametrize(
    ("where", "message"),
    [
        ("{work}/a-file", "is an existing file; expected a directory"),
        ("{work}/a-file/below", "'{work}/a-file' is a file, not a directory"),
        ("{work}/loop", "is a symbolic link that leads nowhere"),
        ("{work}/loop/below", "'{work}/loop' is a symbolic link that leads nowhere"),
        ("{bad}", "cannot be written: no file can be made in"),
        ("{bad}/below", "cannot be written: no file can be made in"),
    ],
    ids=["a file", "under a file", "symlink loop", "under a loop", "unwritable", "under it"],
)
def test_a_checkpoint_that_cannot_be_written_is_refused_before_any_work(
    capsys: pytest.CaptureFixture[str],
    work: Path,
    unwritable: Path,
    monkeypatch: pytest.MonkeyPatch,
    where: str,
    message: str,
) -> None:
    def no_work(*_: object) -> None:
        raise AssertionError("the data was loaded before --checkpoint was checked")

    monkeypatch.setattr("attrpriv.assess.data.load_task", no_work)
    (work / "loop").symlink_to(work / "loop")
    before = files_under(work)
    folder = where.format(work=work, bad=unwritable)
    code, _, err = run(capsys, ["assess", "run", "german_credit", "--target", "credit_risk",
                                "--checkpoint", folder])  # fmt: skip
    line = one_line(err)
    assert code == 2 and line.startswith(f"error: --checkpoint {folder!r}")
    assert message.format(work=work) in line
    assert files_under(work) == before


def test_an_output_under_a_symlink_loop_is_refused_before_any_work(
    capsys: pytest.CaptureFixture[str], work: Path
) -> None:
    (work / "loop").symlink_to(work / "loop")
    code, out, err = run(capsys, ["release", "histograms", "adult", "--columns", "sex",
                                  "--epsilon", "1", "--out", f"{work}/loop/h.json"])  # fmt: skip
    assert code == 2 and "is a symbolic link that leads nowhere" in one_line(err)
    assert "noisy count" not in out


# -- pages: an --html path must end in .html or .htm -------------------------------------------
HTML_PAGES = [
    ["budget", "show", "--ledger", "{work}/ok.ledger", "--html", "{work}/b.csv"],
    ["release", "histograms", "adult", "--columns", "sex", "--epsilon", "1", "--html",
     "{work}/h.json"],
    ["release", "ddp", "anes96", "--epsilon", "1", "--columns", "pid,vote", "--html",
     "{work}/h.txt"],
    [*QUILT, "--sequence", "{work}/seq.csv", "--html", "{work}/page"],
    ["release", "attribute", "{work}/spec.yaml", "--html", "{work}/a.csv"],
    ["assess", "run", "german_credit", "--target", "credit_risk", "--html", "{work}/r.json"],
    ["sanitize", "evaluate", "adult", "adult", "--decoupler", "{work}/no-dec", "--target",
     "income", "--html", "{work}/s.parquet"],
]  # fmt: skip


@pytest.mark.parametrize("args", HTML_PAGES, ids=lambda a: " ".join(a[:2]))
def test_a_page_whose_name_does_not_end_in_html_is_refused(
    capsys: pytest.CaptureFixture[str], work: Path, args: list[str]
) -> None:
    before = files_under(work)
    filled = [a.format(work=work) for a in args]
    code, out, err = run(capsys, filled)
    line = one_line(err)
    assert code == 2 and f"--html {filled[-1]!r} must end in .html or .htm" in line
    assert files_under(work) == before and "noisy" not in out


def test_a_page_may_end_in_htm_in_any_case(capsys: pytest.CaptureFixture[str], work: Path) -> None:
    page = work / "budget.HTM"
    code, _, err = run(capsys, ["budget", "show", "--ledger", str(work / "ok.ledger"),
                                "--html", str(page)])  # fmt: skip
    assert code == 0, err
    assert page.read_text().lstrip().lower().startswith("<!doctype html")


# -- epsilon: refused while the command line is parsed, before any data is read ------------------
@pytest.mark.parametrize("epsilon", ["1e308", "inf", "0"])
@pytest.mark.parametrize(
    "args",
    [
        ["release", "histograms", "{work}/data.csv", "--infer-schema"],
        ["release", "ddp", "{work}/data.csv", "--infer-schema"],
        [*QUILT[:4], "--sequence", "{work}/seq.csv"],
    ],
    ids=["histograms", "ddp", "quilt"],
)
def test_a_bad_epsilon_is_refused_before_the_data_is_read(
    capsys: pytest.CaptureFixture[str],
    work: Path,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    epsilon: str,
) -> None:
    """Without the check at the boundary, --infer-schema read the file (and warned, on three
    more lines of stderr) before epsilon was refused."""
    import attrpriv.data.read

    def no_read(*_: object, **__: object) -> None:
        raise AssertionError("the data was read before --epsilon was checked")

    monkeypatch.setattr(attrpriv.data.read, "read_data", no_read)
    code, _, err = run(capsys, [*(a.format(work=work) for a in args), "--epsilon", epsilon])
    line = one_line(err)
    assert code == 2 and line.startswith("error: --epsilon must be")


# -- notes: a missing folder made, integer columns skipped -----------------------------------------
def test_an_output_in_a_missing_folder_says_that_the_folder_was_made(
    capsys: pytest.CaptureFixture[str], work: Path
) -> None:
    """Missing folders are made for an output (as documented in cli/_outputs.py), not
    silently: one line names the folder."""
    out = work / "new" / "deeper" / "h.json"
    code, text, err = run(capsys, ["release", "histograms", "adult", "--columns", "sex",
                                   "--epsilon", "1", "--out", str(out)])  # fmt: skip
    assert code == 0, err
    shown = " ".join(text.split())
    assert f"made folder {out.parent} for --out (it did not exist)" in shown
    assert f"wrote {out}" in shown and out.is_file()


def test_histograms_without_columns_count_the_categorical_ones_and_name_the_others(
    capsys: pytest.CaptureFixture[str], work: Path
) -> None:
    out = work / "h.json"
    args = ["release", "histograms", str(work / "data.csv"), "--schema", str(work / "data.yaml"),
            "--epsilon", "1"]  # fmt: skip
    code, text, err = run(capsys, [*args, "--out", str(out)])
    assert code == 0, err
    assert set(json.loads(out.read_text())["values"]) == {"sex", "race"}
    notes = [line for line in text.splitlines() if line.startswith("note: ")]
    assert notes == [
        "note: counting the categorical columns only; integer columns skipped: age (name them "
        "in --columns to count them)"
    ]
    code, text, err = run(capsys, [*args, "--columns", "age,sex", "--out", str(out)])
    assert code == 0 and set(json.loads(out.read_text())["values"]) == {"age", "sex"}
    assert "note: " not in text
    (work / "ages.yaml").write_text("columns:\n  age: {role: feature, domain: {type: integer, "
                                    "lower: 17, upper: 90}}\n")  # fmt: skip
    ages = work / "ages.csv"
    pd.read_csv(work / "data.csv")[["age"]].to_csv(ages, index=False)
    code, _, err = run(capsys, ["release", "histograms", str(ages), "--schema",
                                str(work / "ages.yaml"), "--epsilon", "1"])  # fmt: skip
    assert code == 2
    assert "no categorical column to count: name integer ones with --columns (age)" in one_line(err)
