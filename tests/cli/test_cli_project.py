"""``attrpriv project``: init drafts a file that runs, run and status print what ran and spent,
bad files and plans over budget exit 2 before any work."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attrpriv.cli import main

SMALL = """\
name: small
data: german_credit
protect:
  row: {epsilon: 2.0, delta: 1.0e-5}
  columns: {personal_status_sex: {epsilon: 2.5, delta: 1.0e-5}}
steps:
  release:
    - {name: hist, columns: [personal_status_sex, foreign_worker], epsilon: 0.5}
  sanitize:
    - {name: block, method: block, sensitive: personal_status_sex, epsilon: 1.0}
"""


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_help_has_examples(capsys: pytest.CaptureFixture[str]) -> None:
    for command in (["project"], ["project", "run"], ["project", "init"]):
        code, out, _ = run(capsys, *command, "--help")
        assert code == 0 and "$ attrpriv project" in out


def test_init_on_a_bundled_dataset_writes_a_valid_draft(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "german.yaml"
    code, text, err = run(capsys, "project", "init", "german_credit", "--out", str(out),
                          "--sensitive", "personal_status_sex")  # fmt: skip
    assert code == 0, err
    assert "then: attrpriv project run" in text
    draft = out.read_text()
    assert 'sensitive: ["personal_status_sex"]' in draft and "max_utility_loss: 0.02" in draft
    code, text, err = run(capsys, "project", "status", str(out))
    assert code == 0, err
    assert "sanitize:personal_status_sex-block" in text and "pending" in text


def test_init_on_a_file_drafts_its_schema_and_run_refuses_it_until_reviewed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from attrpriv import datasets

    data = tmp_path / "credit.csv"
    datasets.load("german_credit").frame.to_csv(data, index=False)
    out = tmp_path / "credit.yaml"
    code, text, err = run(capsys, "project", "init", str(data), "--out", str(out), "--target",
                          "credit_risk", "--sensitive", "personal_status_sex")  # fmt: skip
    assert code == 0, err
    assert (tmp_path / "credit.schema.yaml").exists() and "inferred" in text
    code, _, err = run(capsys, "project", "run", str(out))
    assert code == 2 and "still marks the domains" in err and "data.accept_inferred" in err
    assert err.strip().count("\n") == 0


def test_run_then_status_then_a_second_run_keeps_everything(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    spec = tmp_path / "small.yaml"
    spec.write_text(SMALL)
    page = tmp_path / "dossier.html"
    code, text, err = run(capsys, "project", "run", str(spec), "--html", str(page))
    assert code == 0, err
    assert 'id="contents"' in page.read_text() and "data-json=" in page.read_text()
    assert "release:hist: ran" in text and "sanitize:block: ran" in text
    assert "budget of dp/add-remove: epsilon=2, used 1.5, left 0.5" in text
    code, text, _ = run(capsys, "project", "run", str(spec))
    assert code == 0 and "release:hist: kept" in text and "sanitize:block: kept" in text
    status = tmp_path / "status.json"
    code, text, _ = run(capsys, "project", "status", str(spec), "--out", str(status))
    assert code == 0 and "done" in text
    payload = json.loads(status.read_text())
    assert [s["status"] for s in payload["steps"]] == ["done", "done"]
    assert [len(s["charges"]) for s in payload["steps"]] == [1, 1] and payload["orphans"] == []


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("epsilon: 0.5", "epsilom: 0.5"), "steps.release[0].epsilom is not a key"),
        (("sex: {epsilon: 2.5", "sex: {epsilon: 1.5"), "sanitize:block would overspend"),
        (("data: german_credit", "data: missing.csv"), "data.schema is missing"),
    ],
)
def test_a_bad_file_or_an_overspending_plan_exits_2_before_any_work(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, edit: tuple[str, str], message: str
) -> None:
    spec = tmp_path / "small.yaml"
    spec.write_text(SMALL.replace(*edit))
    code, _, err = run(capsys, "project", "run", str(spec))
    assert code == 2 and message in err and err.strip().count("\n") == 0, err
    assert not (tmp_path / "small.state" / "steps").exists()
