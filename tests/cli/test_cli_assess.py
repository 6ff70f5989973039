"""``attrpriv assess run``: JSON and HTML out, exit codes, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attrpriv import datasets
from attrpriv.assess.mitigation import Encrypt
from attrpriv.assess.models import make_model, save_model
from attrpriv.assess.scoring import parse_weights
from attrpriv.cli import main
from attrpriv.errors import InputError

FAST = ["--model", "logreg", "--repeats", "1", "--references", "1", "--backend", "sequential"]


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


def test_best_mitigation_with_a_model_strategy_and_a_utility_budget(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """--choose best probes drop on each flagged set and regularize on the model; each step
    in the JSON lists the candidates with their measured reduction, cost and verdict."""
    out = tmp_path / "report.json"
    code, text, _ = run(
        capsys,
        "assess", "run", "german_credit", "--target", "credit_risk", *FAST,
        "--feature-sets", "age;purpose,savings", "--attacks", "membership",
        "--threshold", "0.0", "--mitigate", "drop,regularize", "--choose", "best",
        "--max-utility-loss", "0.5", "--max-steps", "1", "--out", str(out),
    )  # fmt: skip
    assert code == 0, text
    path = json.loads(out.read_text())["mitigation"]
    start, step = path["steps"]
    assert start["candidates"] == [] and (step["strategy"], step["feature_set"]) == (
        "drop",
        ["age"],
    )
    probed = {c["strategy"]: c for c in step["candidates"]}
    assert set(probed) == {"drop", "regularize"} and probed["drop"]["verdict"] == "chosen"
    assert probed["regularize"]["feature_set"] is None  # the model
    assert step["total_excess"] < start["total_excess"]
    assert "step 1: drop age" in text


def test_mitigated_data_and_the_encryption_key_are_written(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The encrypted column of the written data decrypts with the written key."""
    data, key = tmp_path / "mitigated.parquet", tmp_path / "key.hex"
    code, text, err = run(
        capsys,
        "assess", "run", "german_credit", "--target", "credit_risk", *FAST,
        "--feature-sets", "purpose", "--attacks", "membership,attribute", "--attack-model",
        "logreg", "--weights", "attribute=2,utility=0", "--threshold", "0.0", "--mitigate",
        "encrypt", "--max-steps", "1", "--mitigated-out", str(data), "--key-out", str(key),
    )  # fmt: skip
    assert code == 0, err
    assert "step 1: encrypt purpose" in text
    frame = pd.read_parquet(data)
    original = datasets.load("german_credit").frame
    assert not frame["purpose"].isin(original["purpose"]).any()  # tokens, not values
    plain = Encrypt(bytes.fromhex(key.read_text().strip())).decrypt(frame, ["purpose"])
    assert (plain["purpose"] == original["purpose"].astype(str)).all()
    assert key.stat().st_mode & 0o077 == 0  # owner-only


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--mitigated-out", "m.parquet"], "--mitigated-out needs --mitigate"),
        (["--mitigate", "drop", "--mitigated-out", "m.txt"], "--mitigated-out must end in"),
        (["--mitigate", "encrypt", "--mitigated-out", "m.csv"], "give --key-out"),
        (["--mitigate", "drop", "--key-out", "k.hex"], "--key-out is for the key"),
        (["--mitigate", "ldp:1,drop"], "--mitigate ldp draws local-DP noise: give --ledger"),
        (["--mitigate", "drop", "--choose", "greedy"], "--choose must be one of"),
        (["--out", "r.html", "--html", "r.html"], "--out and --html are the same file"),
        (["--html", "r.json"], "--html '{tmp}/r.json' must end in .html or .htm"),
        (["--weights", "membership=1,privacy=2"], "unknown score weights ['privacy']"),
        (["--weights", "property=-1"], "weights.property must be >= 0"),
        (["--attack-model", "svm"], "attack_model must be one of"),
    ],
)
def test_output_and_score_options_are_checked_before_any_work(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str], message: str
) -> None:
    placed = [str(tmp_path / a) if "." in a and "=" not in a else a for a in args]
    code, _, err = run(capsys, "assess", "run", "german_credit", "--target", "credit_risk", *placed)
    line = message.format(tmp=tmp_path)
    assert code == 2 and err.strip().count("\n") == 0 and line in err, err
    assert list(tmp_path.iterdir()) == []


@settings(max_examples=50)
@given(
    st.dictionaries(
        st.sampled_from(["membership", "attribute", "property", "overfitting", "utility"]),
        st.floats(min_value=0, max_value=1e6, allow_nan=False),
        min_size=1,
    )
)
def test_weights_text_round_trips(weights: dict[str, float]) -> None:
    text = ",".join(f"{k}={v!r}" for k, v in weights.items())
    parsed = parse_weights(text)
    for name, value in weights.items():
        assert getattr(parsed, name) == value


@pytest.mark.parametrize("text", ["membership", "=1", "membership=x", "membership=1,membership=2"])
def test_malformed_weights_are_refused(text: str) -> None:
    with pytest.raises(InputError, match="weights"):
        parse_weights(text)


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
        (["--target", "salary"], "target column 'salary' is not in the data"),
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

    monkeypatch.setattr("attrpriv.assess.data.load_task", no_work)
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
    same = str(tmp_path / "r.html")
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

    monkeypatch.setattr("attrpriv.report.render_html", broken)
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
