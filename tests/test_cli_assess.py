"""``attrpriv assess run``: JSON and HTML out, exit codes, one-line errors."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from threadpoolctl import threadpool_limits

from attrpriv.assess.models import make_model, save_model
from attrpriv.cli import app, main
from attrpriv.cli import assess as assess_cli

FAST = ["--model", "logreg", "--repeats", "1", "--n-boot", "100", "--backend", "sequential"]


@pytest.fixture(autouse=True, scope="module")
def registered() -> Iterator[None]:
    """The lead wires the group into ``attrpriv.cli``; until then the tests do."""
    if not any(info.typer_instance is assess_cli.app for info in app.registered_groups):
        app.add_typer(assess_cli.app)
    with threadpool_limits(1):
        yield


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("command", [["assess"], ["assess", "run"]])
def test_help_has_an_example(capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    code, out, _ = run(capsys, *command, "--help")
    assert code == 0 and "Usage" in out
    if command[-1] == "run":
        assert "Examples" in out and "$ attrpriv assess run" in out


def test_run_writes_json_and_html(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out, html = tmp_path / "report.json", tmp_path / "report.html"
    code, text, _ = run(
        capsys,
        "assess", "run", "german_credit", "--target", "credit_risk", *FAST,
        "--feature-sets", "age;purpose,savings", "--attacks", "membership",
        "--threshold", "0.0", "--mitigate", "generalize,drop", "--max-steps", "1",
        "--out", str(out), "--html", str(html),
    )  # fmt: skip
    assert code == 0, text
    assert "feature set" in text and "mitigation stopped" in text
    payload = json.loads(out.read_text())
    assert payload["format"] == "attrpriv.assess.RiskReport/1"
    assert {tuple(r["features"]) for r in payload["feature_sets"]} == {
        ("age",),
        ("purpose", "savings"),
    }
    assert payload["mitigation"]["steps"][0]["strategy"] is None
    assert "data:image/png;base64," in html.read_text()


def test_a_skops_model_file_is_cloned_and_retrained(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = save_model(make_model("logreg"), tmp_path / "model.skops")
    code, text, err = run(
        capsys,
        "assess", "run", "german_credit", "--target", "credit_risk", *FAST,
        "--model-file", str(path), "--feature-sets", "age", "--attacks", "membership",
    )  # fmt: skip
    assert code == 0, err
    assert "age" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--target", "salary"], "--target column 'salary' is not in the data"),
        (["--target", "credit_risk", "--threshold", "1.5"], "threshold must be in [0, 1]"),
        (["--target", "credit_risk", "--mitigate", "shred"], "unknown strategy 'shred'"),
        (["--target", "credit_risk", "--feature-sets", "height"], "unknown column 'height'"),
        (["--target", "credit_risk", "--sets", "age,height"], "unknown column 'height'"),
        (["--target", "credit_risk", "--model", "svm"], "model must be one of"),
        (["--target", "credit_risk", "--task", "ranking"], "--task must be one of"),
        (["--target", "credit_risk", "--flag-on", "upper"], "--flag-on must be one of"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, _, err = run(capsys, "assess", "run", "german_credit", *args)
    assert code == 2
    assert err.strip().count("\n") == 0 and message in err


def test_a_pickle_model_file_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "model.pkl"
    path.write_bytes(b"\x80\x04K\x01.")
    code, _, err = run(
        capsys, "assess", "run", "german_credit", "--target", "credit_risk",
        "--model-file", str(path),
    )  # fmt: skip
    assert code == 2 and "pickle" in err


def test_a_missing_data_file_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "assess", "run", str(tmp_path / "nope.csv"), "--target", "y")
    assert code == 2 and "neither a bundled dataset" in err


@pytest.mark.parametrize("option", ["--out", "--html"])
def test_output_paths_are_checked_before_any_work(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    option: str,
) -> None:
    def no_work(*_: object) -> None:
        raise AssertionError("the data was loaded before the output paths were checked")

    monkeypatch.setattr(assess_cli, "load_frame", no_work)
    (tmp_path / "outdir").mkdir()
    (tmp_path / "file").write_text("x")
    cases = [
        (tmp_path / "outdir", "is a directory"),
        (tmp_path / "file" / "report.json", "is a file, not a directory"),
    ]
    for path, message in cases:
        code, _, err = run(
            capsys, "assess", "run", "german_credit", "--target", "credit_risk", *FAST,
            option, str(path),
        )  # fmt: skip
        assert code == 2 and err.strip().count("\n") == 0
        assert err.startswith(f"error: {option} ") and message in err
    same = str(tmp_path / "r.json")
    code, _, err = run(
        capsys, "assess", "run", "german_credit", "--target", "credit_risk",
        "--out", same, "--html", same,
    )  # fmt: skip
    assert code == 2 and "--out and --html are the same file" in err


def test_a_failing_html_render_writes_neither_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: object, **__: object) -> str:
        raise RuntimeError("template broke")

    monkeypatch.setattr(assess_cli, "render_html", broken)
    out, html = tmp_path / "report.json", tmp_path / "report.html"
    code, _, err = run(
        capsys, "assess", "run", "german_credit", "--target", "credit_risk", *FAST,
        "--sets", "age", "--attacks", "membership", "--out", str(out), "--html", str(html),
    )  # fmt: skip
    assert code == 1 and "template broke" in err
    assert list(tmp_path.iterdir()) == []


def test_a_regression_on_a_text_target_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = run(
        capsys, "assess", "run", "german_credit", "--target", "credit_risk", *FAST,
        "--task", "regression", "--sets", "age",
    )  # fmt: skip
    assert code == 2 and err.strip().count("\n") == 0
    assert "target 'credit_risk' must be numeric for a regressor" in err
