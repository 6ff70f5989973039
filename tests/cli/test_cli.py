"""The attrpriv command: help with examples, exit codes, atomic JSON output."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from attrpriv import datasets
from attrpriv.cli import main
from attrpriv.data import read as data_read

COMMANDS = [
    [],
    ["datasets"],
    ["datasets", "list"],
    ["datasets", "show"],
    ["datasets", "export"],
    ["release"],
    ["release", "histograms"],
    ["release", "quilt"],
    ["release", "ddp"],
    ["release", "attribute"],
    ["assess"],
    ["assess", "run"],
    ["sanitize"],
    ["sanitize", "fit"],
    ["sanitize", "apply"],
    ["sanitize", "evaluate"],
    ["budget"],
    ["budget", "set"],
    ["budget", "show"],
    ["schema"],
    ["schema", "draft"],
]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "root")
def test_every_command_and_group_has_help_with_an_example(capsys, command: list[str]) -> None:
    code, out, _ = run(capsys, *command, "--help")
    assert code == 0
    assert "Usage" in out
    assert "Examples" in out and "$ attrpriv" in out
    assert "<bool>" not in out  # flags show as flags: --debug, not --debug <bool>
    assert "--help " in out


def _help_examples() -> list[str]:
    """Every example line of every help page: the root's, each group's and each command's."""
    import re
    from importlib import import_module

    import typer

    from attrpriv.cli import GROUP_MODULES, app
    from attrpriv.cli._common import GROUP_EXAMPLES

    epilogs = [app.info.epilog or "", *("\n".join(v) for v in GROUP_EXAMPLES.values())]
    for modules in GROUP_MODULES.values():
        for name in modules[1:]:  # they add their commands to the first one's group
            import_module(name)
        group = typer.main.get_group(import_module(modules[0]).app)
        epilogs += [command.epilog or "" for command in group.commands.values()]
    return [m.group(1) for text in epilogs for m in re.finditer(r"(attrpriv [^\n$]+)", text)]


@pytest.mark.parametrize("example", _help_examples())
def test_every_help_example_uses_options_its_command_has(capsys, example: str) -> None:
    """An example names only options and commands that exist (``--help`` after them parses
    the line, then stops: nothing runs)."""
    import shlex

    code, _, err = run(capsys, *shlex.split(example)[1:], "--help")
    assert code == 0, err


def test_flags_show_as_flags(capsys) -> None:
    _, out, _ = run(capsys, "release", "ddp", "--help")
    line = next(line for line in out.splitlines() if "--accept-inferred" in line)
    assert "<" not in line.split("--accept-inferred", 1)[1].split("Release")[0]


def test_datasets_show_writes_json(capsys, tmp_path: Path) -> None:
    out = tmp_path / "anes.json"
    code, text, _ = run(capsys, "datasets", "show", "anes96", "--out", str(out))
    assert code == 0 and "944 rows" in text
    payload = json.loads(out.read_text())
    assert payload["rows"] == 944 and payload["schema"]["columns"]["pid"]["role"] == "sensitive"


def test_unknown_dataset_is_one_line_exit_2(capsys) -> None:
    code, _, err = run(capsys, "datasets", "show", "adlut")
    assert code == 2
    assert err.strip().count("\n") == 0 and "unknown dataset 'adlut'" in err


def test_export_round_trips_and_refuses_bad_suffix(capsys, tmp_path: Path) -> None:
    code, _, _ = run(
        capsys,
        "datasets",
        "export",
        "anes96",
        str(tmp_path / "a.csv"),
        "--schema-out",
        str(tmp_path / "a.yaml"),
    )
    assert code == 0
    assert pd.read_csv(tmp_path / "a.csv").shape == (944, 11)
    bad = tmp_path / "a.xlsx"
    code, _, err = run(capsys, "datasets", "export", "anes96", str(bad))
    assert code == 2 and ".csv, .csv.gz or .parquet" in err and not bad.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv", "a.yaml"]  # no temp files


def test_budget_and_release_with_overspend(capsys, tmp_path: Path) -> None:
    ledger, out = tmp_path / "adult.ledger", tmp_path / "hist.json"
    assert run(capsys, "budget", "set", "--ledger", str(ledger), "--epsilon", "1.5")[0] == 0
    code, text, _ = run(
        capsys,
        "release",
        "histograms",
        "adult",
        "--columns",
        "race,sex",
        "--epsilon",
        "1",
        "--ledger",
        str(ledger),
        "--out",
        str(out),
    )
    assert code == 0 and "sensitivity=2" in text
    values = json.loads(out.read_text())["values"]
    assert set(values) == {"race", "sex"} and set(values["sex"]) == {"Female", "Male"}
    out.unlink()
    code, _, err = run(
        capsys,
        "release",
        "histograms",
        "adult",
        "--epsilon",
        "1",
        "--ledger",
        str(ledger),
        "--out",
        str(out),
    )
    assert code == 2 and "would exceed the budget" in err and not out.exists()
    code, _, _ = run(capsys, "budget", "show", "--ledger", str(ledger), "--out", str(out))
    summary = json.loads(out.read_text())
    spent = {u["unit"]: u["spent"]["epsilon"] for u in summary["units"]}
    assert code == 0 and spent == {"dp/add-remove": 1.0} and len(summary["releases"]) == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["budget", "set", "--ledger", "{tmp}/l", "--epsilon", "0"], "epsilon must be > 0"),
        (
            ["budget", "set", "--ledger", "{tmp}/l", "--epsilon", "1", "--delta", "1"],
            "delta must be in [0, 1)",
        ),
        (["budget", "show", "--ledger", "{tmp}/missing"], "does not exist"),
        (["budget", "show", "--ledger", "{tmp}/garbage"], "unusable"),
        (["release", "histograms", "{tmp}/nope.csv", "--epsilon", "1"], "neither a bundled"),
        (["release", "histograms", "{tmp}/data.csv", "--epsilon", "1"], "needs a schema"),
        (["release", "histograms", "adult", "--epsilon", "nan"], "epsilon must be a finite"),
        (
            ["release", "histograms", "adult", "--epsilon", "1", "--columns", "colour"],
            "'colour' is not in the schema",
        ),
    ],
)
def test_bad_input_exits_2_with_one_line(capsys, tmp_path: Path, args, message: str) -> None:
    (tmp_path / "garbage").write_bytes(b"not a database at all" * 50)
    pd.DataFrame({"a": [1, 2]}).to_csv(tmp_path / "data.csv", index=False)
    code, _, err = run(capsys, *[a.format(tmp=tmp_path) for a in args])
    assert code == 2
    assert message in err and err.strip().count("\n") == 0


def test_file_input_with_schema_and_inferred_schema(capsys, tmp_path: Path) -> None:
    data = tmp_path / "survey.csv"
    pd.DataFrame({"answer": ["yes", "no", "yes"], "age": [30, 41, 52]}).to_csv(data, index=False)
    schema = tmp_path / "survey.yaml"
    schema.write_text(
        "columns:\n"
        "  answer: {role: sensitive, domain: {type: categorical, categories: [yes, no, maybe]}}\n"
        "  age: {role: ignore}\n"
    )
    code, text, _ = run(
        capsys, "release", "histograms", str(data), "--schema", str(schema), "--epsilon", "1"
    )
    assert code == 0 and "maybe" in text
    code, _, err = run(
        capsys, "release", "histograms", str(data), "--infer-schema", "--epsilon", "1"
    )
    assert code == 0 and "warning: Schema.infer reads" in err


def test_unexpected_failure_exits_1_with_debug_hint(capsys, monkeypatch) -> None:
    def boom(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(data_read, "read_data", boom)
    code, _, err = run(capsys, "release", "histograms", "adult", "--epsilon", "1")
    assert code == 1 and "disk on fire" in err and "--debug" in err
    with pytest.raises(RuntimeError):
        main(["--debug", "release", "histograms", "adult", "--epsilon", "1"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["assess", "run"], "Missing argument"),
        (["assess", "run", "adult", "--target", "income", "--bogus", "x"], "No such option"),
        (["release", "histograms", "adult", "--epsilon", "one"], "Invalid value"),
    ],
)
def test_usage_errors_exit_2_without_a_traceback(capsys, args: list[str], message: str) -> None:
    code, _, err = run(capsys, *args)
    assert code == 2
    assert message in err and "unexpected failure" not in err and "Traceback" not in err


@pytest.mark.parametrize(
    "args",
    [
        ["datasets", "show", "adult", "--out", "{dir}"],
        ["release", "histograms", "adult", "--columns", "sex", "--epsilon", "1", "--out", "{dir}"],
        ["sanitize", "evaluate", "adult", "adult", "--decoupler", "nowhere", "--target", "income",
         "--html", "{dir}"],
        ["budget", "show", "--ledger", "{dir}/none.ledger", "--out", "{file}/report.json"],
    ],
)  # fmt: skip
def test_output_paths_are_refused_while_parsing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str]
) -> None:
    """A directory, or a path under a file, is refused before the command does anything."""
    (tmp_path / "file").write_text("x")
    filled = [a.format(dir=tmp_path, file=tmp_path / "file") for a in args]
    code, _, err = run(capsys, *filled)
    assert code == 2 and err.strip().count("\n") == 0
    assert "is a directory" in err or "is a file, not a directory" in err
    assert not (tmp_path / "none.ledger").exists()


def test_a_missing_ledger_is_refused_and_not_created(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    ledger = tmp_path / "typo.ledger"
    code, _, err = run(
        capsys, "release", "histograms", "adult", "--columns", "sex", "--epsilon", "1",
        "--ledger", str(ledger),
    )  # fmt: skip
    assert code == 2 and "does not exist; set its budget first" in err
    assert not ledger.exists()


def test_budget_set_keeps_what_was_not_given_and_protects_columns(capsys, tmp_path: Path) -> None:
    ledger = tmp_path / "b.ledger"
    assert (
        main(["budget", "set", "--ledger", str(ledger), "--epsilon", "3", "--delta", "1e-5"]) == 0
    )
    assert main(["budget", "set", "--ledger", str(ledger), "--epsilon", "2"]) == 0
    out = capsys.readouterr().out
    assert "epsilon=2, delta=1e-05 (lowered)" in out  # the delta was not passed: kept
    args = ["budget", "set", "--ledger", str(ledger), "--protect", "sex,race", "--epsilon", "1"]
    assert main(args) == 0
    from attrpriv.dp import BudgetLedger

    budgets = BudgetLedger(ledger).budgets()
    assert budgets["dp/add-remove"].delta == 1e-5 and budgets["dp/add-remove"].epsilon == 2
    assert budgets["dp/substitute:sex"].epsilon == 1 and "dp/substitute:race" in budgets


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--epsilon", "1e308"], "--epsilon must be at most 700"),
        (["--epsilon", "inf"], "--epsilon must be a finite number"),
        (["--epsilon", "1", "--delta", "nan"], "--delta must be a finite number"),
        (["--epsilon", "1", "--protect", "sex", "--unit", "dp/substitute"], "not both"),
        (["--epsilon", "1", "--protect", "sex,sex"], "names a column twice"),
    ],
)
def test_bad_budget_input_is_refused_before_any_file(capsys, tmp_path, args, message) -> None:
    ledger = tmp_path / "b.ledger"
    code = main(["budget", "set", "--ledger", str(ledger), *args])
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.strip().count("\n") == 0
    assert not ledger.exists()


def test_a_huge_epsilon_with_a_ledger_is_refused_with_exit_2(capsys, tmp_path: Path) -> None:
    ledger = tmp_path / "b.ledger"
    assert main(["budget", "set", "--ledger", str(ledger), "--epsilon", "3"]) == 0
    capsys.readouterr()
    args = ["release", "histograms", "adult", "--columns", "sex", "--ledger", str(ledger)]
    code = main([*args, "--epsilon", "1e308"])
    err = capsys.readouterr().err
    assert code == 2 and "epsilon must be at most" in err and err.strip().count("\n") == 0


def test_release_ddp_without_structure_is_row_level_and_says_how_to_gain(capsys) -> None:
    assert main(["release", "ddp", "anes96", "--epsilon", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "guarantee: epsilon 1 for any law of the data" in lines
    assert any(line.startswith("no structure given") and "--modules" in line and "--aux" in line
               for line in lines)  # fmt: skip
    assert "one module (no assumption)" in lines[0] and "1.00x" in lines[0]


def test_release_ddp_model_tier_learns_saves_and_reuses_a_tree(capsys, tmp_path: Path) -> None:
    frame, _ = datasets.load("anes96")
    public, private = tmp_path / "public.csv", tmp_path / "private.csv"
    frame.iloc[:300].to_csv(public, index=False)
    frame.iloc[300:].to_csv(private, index=False)
    schema = tmp_path / "anes.yaml"
    assert main(["datasets", "export", "anes96", str(tmp_path / "x.csv"),
                 "--schema-out", str(schema)]) == 0  # fmt: skip
    model, out = tmp_path / "model.json", tmp_path / "ddp.json"
    args = ["release", "ddp", str(private), "--schema", str(schema), "--epsilon", "1"]
    capsys.readouterr()
    assert main([*args, "--aux", str(public), "--save-model", str(model), "--out", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    guarantees = [line for line in lines if line.startswith("guarantee: ")]
    assert len(guarantees) == 2 and "Markov on the tree of model" in guarantees[0]
    assert guarantees[1].endswith("for any law of the data")
    record = json.loads(out.read_text())["record"]
    saved = json.loads(model.read_text())
    assert record["mechanism"] == "tabular-ddp-model" and saved["fingerprint"] in record["unit"]
    assert main([*args, "--model", str(model), "--out", str(out)]) == 0
    again = json.loads(out.read_text())["record"]
    assert again["noise"]["scale"] == record["noise"]["scale"]
    assert "model file model.json" in capsys.readouterr().out
    for bad, message in (
        (["--model", "aux"], "learns the model from --aux"),
        (["--model", str(model), "--modules", "pid"], "not both"),
        (["--modules", "pid", "--save-model", str(model)], "needs --model"),
    ):
        assert main([*args, *bad]) == 2
        assert message in capsys.readouterr().err


def test_release_ddp_learns_its_model_from_the_private_rows_by_a_charged_dp_step(
    capsys, tmp_path: Path
) -> None:
    ledger = tmp_path / "a.ledger"
    for unit in ("dp/substitute", "dependent-dp/answer"):
        assert main(["budget", "set", "--ledger", str(ledger), "--unit", unit, "--epsilon", "5",
                     "--delta", "1e-5"]) == 0  # fmt: skip
    args = ["release", "ddp", "anes96", "--epsilon", "1", "--ledger", str(ledger)]
    capsys.readouterr()
    assert main([*args, "--model", "private", "--learn-epsilon", "1", "--learn-delta",
                 "1e-6"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "DP release of the private rows' links (epsilon 1, delta 1e-06" in out
    assert main(["budget", "show", "--ledger", str(ledger), "--out", str(tmp_path / "b.json")]) == 0
    assert main([*args, "--learn-epsilon", "1"]) == 2
    assert "go with --model private" in capsys.readouterr().err


def test_release_ddp_with_modules_prints_both_guarantees(capsys, tmp_path: Path) -> None:
    out = tmp_path / "ddp.json"
    args = ["release", "ddp", "anes96", "--epsilon", "1", "--out", str(out)]
    assert main([*args, "--modules", "popul,tv_news;self_lr,clin_lr,dole_lr"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "3 modules (declared)" in text
    assert "guarantee: epsilon 1 if the modules {popul, tv_news}" in text
    assert "guarantee: epsilon 3 for any law of the data" in text
    record = json.loads(out.read_text())["record"]
    assert [g["laws"] for g in record["guarantees"]][1] == "any"
    assert record["mechanism"] == "tabular-ddp-modules"
    for bad, message in ((["--modules", "aux"], "learns the modules from --aux"),
                         (["--modules", "popul,zz"], "'zz', which is not a released column"),
                         (["--modules", ";"], "--modules must be")):  # fmt: skip
        assert main([*args[:-2], *bad]) == 2
        assert message in capsys.readouterr().err


def test_budget_show_keeps_times_and_numbers_whole_at_80_columns(
    capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At 80 columns the release and history tables fold text, never a time stamp or a number,
    and show no rho column when no release has one."""
    monkeypatch.setenv("COLUMNS", "80")
    ledger = tmp_path / "b.ledger"
    assert run(capsys, "budget", "set", "--ledger", str(ledger), "--protect", "sex",
               "--epsilon", "3")[0] == 0  # fmt: skip
    args = ("release", "histograms", "adult", "--columns", "sex", "--epsilon", "1",
            "--neighbours", "substitute", "--ledger", str(ledger))  # fmt: skip
    assert run(capsys, *args)[0] == 0
    code, text, _ = run(capsys, "budget", "show", "--ledger", str(ledger))
    assert code == 0 and max(len(line) for line in text.splitlines()) <= 80
    stamps = re.findall(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}", text)
    assert len(stamps) == 2 and "T" not in "".join(stamps)  # one release, one budget set
    assert "┃ rho" not in text
