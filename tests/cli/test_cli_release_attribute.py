"""``attrpriv release attribute SPEC.yaml``: output, JSON, help, one-line errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import attrpriv.cli.release_attribute  # noqa: F401  (registers `release attribute`)
from attrpriv.cli import main

SPEC = """\
data: {dataset: adult, rows: 100, seed: 3}
statistics: [count(sex=Female)]
protect:
  - statistic: share(income=>50K)
    values: [0.45, 0.55]
model: {type: resampling, reference: adult, n: 100, draws: 500}
epsilon: 1
delta: 1e-3
"""


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_release_attribute(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    spec, out = tmp_path / "spec.yaml", tmp_path / "release.json"
    spec.write_text(SPEC)
    code, text, _ = _run(capsys, "release", "attribute", str(spec), "--out", str(out))
    assert code == 0, text
    assert "count(sex=Female)" in text and "attribute-privacy" in text and "noise std" in text
    payload = json.loads(out.read_text())
    assert payload["record"]["mechanism"] == "attribute-private-gaussian"
    assert payload["record"]["noise"]["algorithm"] == 2
    assert payload["record"]["epsilon"] > 1.0 and payload["parts"]["n"] == 100


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("delta: 1e-3", "delta: 0"), "delta must be > 0"),
        (("epsilon: 1", "epsilon: 1\ncolour: red"), r"unknown keys \['colour'\]"),
        (("count(sex=Female)", "count(hair=red)"), "'hair' is not in the schema"),
        (("values: [0.45, 0.55]", "values: [0.455, 0.55]"), "multiple of 1/n"),
        (("type: resampling", "type: magic"), "type one of"),
    ],
)
def test_cli_bad_specs_are_one_line_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, change: tuple[str, str], message: str
) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.replace(*change))
    code, _, err = _run(capsys, "release", "attribute", str(spec))
    assert code == 2
    assert err.strip().count("\n") == 0
    assert re.search(message, err), err


def test_cli_help_has_an_example(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "release", "attribute", "--help")
    assert code == 0 and "Examples" in out and "$ attrpriv release attribute" in out
