"""``attrpriv release attribute SPEC.yaml``: output, JSON, help, one-line errors, and the
documented examples (``--help``'s minimal spec, the README's quick start, the docs' spec) run
as written."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

import attrpriv.cli.release_attribute  # noqa: F401  (registers `release attribute`)
from attrpriv.cli import main
from attrpriv.cli.release_attribute import MINIMAL_SPEC

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "mechanisms" / "attribute-private-gaussian.md"

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
    code, text, err = _run(capsys, "release", "attribute", str(spec), "--out", str(out))
    assert code == 0, text + err
    assert "count(sex=Female)" in text and "attribute-privacy" in text and "noise std" in text
    assert "(1, 0.001)-attribute-privacy [exact privacy loss" in " ".join(text.split())
    payload = json.loads(out.read_text())
    assert payload["record"]["mechanism"] == "attribute-private-gaussian"
    assert (payload["record"]["epsilon"], payload["record"]["delta"]) == (1.0, 1e-3)
    assert payload["record"]["noise"]["accounting"] == "exact"
    assert (
        payload["record"]["noise"]["certified_delta"] <= 1e-3 and payload["diagnostics"]["n"] == 100
    )


def test_cli_algorithm_2_states_the_pair_asked_for(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    spec, out = tmp_path / "spec.yaml", tmp_path / "release.json"
    spec.write_text(SPEC.replace("delta: 1e-3", "delta: 1e-3\napproximation: bound"))
    code, text, err = _run(capsys, "release", "attribute", str(spec), "--out", str(out))
    assert code == 0, text + err
    noise = json.loads(out.read_text())["record"]["noise"]
    assert noise["algorithm"] == 2 and noise["nominal_epsilon"] < 1.0
    assert noise["certified_epsilon"] <= 1.0 + 1e-12 and noise["certified_delta"] <= 1e-3
    assert "Algorithm 2: nominal" in " ".join(text.split())
    tried = [line for line in err.splitlines() if line.startswith("Algorithm 2: noise levels")]
    assert tried and all("lambda_eta" in line for line in tried), err  # one line per level


def test_cli_warns_on_stderr(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A forced Gaussian model on indicators: the warnings go to stderr, one line each."""
    spec = tmp_path / "spec.yaml"
    model = (
        "model: {type: gaussian, reference: adult, n: 100, force: true, "
        "variables: [sex=Female, income=>50K]}"
    )
    spec.write_text(
        SPEC.replace("model: {type: resampling, reference: adult, n: 100, draws: 500}", model)
    )
    code, _, err = _run(capsys, "release", "attribute", str(spec))
    assert code == 0, err
    lines = err.strip().splitlines()
    assert any(line.startswith("warning: Gaussian model forced on discrete") for line in lines)
    assert any("warning: model check" in line for line in lines)
    spec.write_text(spec.read_text().replace(" force: true,", ""))
    code, _, err = _run(capsys, "release", "attribute", str(spec))
    assert code == 2 and "GaussianModel on discrete variables" in err


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("delta: 1e-3", "delta: 0"), "delta must be > 0"),
        (("epsilon: 1", "epsilon: 1\ncolour: red"), r"unknown keys \['colour'\]"),
        (("count(sex=Female)", "count(hair=red)"), "'hair' is not in the schema"),
        (("values: [0.45, 0.55]", "values: [0.455, 0.55]"), "multiple of 1/n"),
        (("type: resampling", "type: magic"), "type one of"),
        (("delta: 1e-3", "delta: 1e-3\nn_eval: 10"), "n_eval must be an integer >= 100"),
        (("delta: 1e-3", "delta: 1e-3\nepsilon: 50"), r"repeated key 'epsilon' \(line \d+ and"),
        (("epsilon: 1", "epsilon: 1e308"), "epsilon must be at most 700"),
        (("rows: 100", "rows: 0"), r"spec data rows must be an integer >= 1, got 0"),
        (("rows: 100", "rows: 99999"), r"spec data rows must be an integer in \[1, 48842\]"),
        (("seed: 3", "seed: -1"), "spec data seed must be an integer >= 0"),
    ],
)
def test_cli_bad_specs_are_one_line_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, change: tuple[str, str], message: str
) -> None:
    spec, out = tmp_path / "spec.yaml", tmp_path / "release.json"
    spec.write_text(SPEC.replace(*change))
    code, _, err = _run(capsys, "release", "attribute", str(spec), "--out", str(out))
    assert code == 2
    assert err.strip().count("\n") == 0
    assert re.search(message, err), err
    assert not out.exists()  # nothing written half-way


def test_cli_help_shows_a_complete_minimal_spec(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = _run(capsys, "release", "attribute", "--help")
    assert code == 0 and "Examples" in out and "$ attrpriv release attribute" in out
    for line in MINIMAL_SPEC.splitlines():  # every line, unwrapped at 80 columns
        assert line in out, line
    spec = tmp_path / "spec.yaml"
    spec.write_text(MINIMAL_SPEC)
    code, text, err = _run(capsys, "release", "attribute", str(spec))
    assert code == 0, text + err


def test_the_readme_quick_start_runs_as_written(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The README's line, from the repository root (its --out redirected to a scratch file)."""
    readme = (ROOT / "README.md").read_text()
    (line,) = [row for row in readme.splitlines() if row.startswith("attrpriv release attribute")]
    args = shlex.split(line.split("#")[0])[1:]
    out = args.index("--out") + 1
    target = tmp_path / args[out]
    args[out] = str(target)
    monkeypatch.chdir(ROOT)
    code, text, err = _run(capsys, *args)
    assert code == 0, text + err
    assert json.loads(target.read_text())["record"]["delta"] == 1e-3
    flat = " ".join(text.split())
    assert "sensitivity share(income=>50K) 4.736;" in flat and "{'" not in flat


def test_the_release_page_shows_the_guarantee_and_the_interval(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    page = tmp_path / "release.html"
    monkeypatch.chdir(ROOT)
    code, text, err = _run(
        capsys, "release", "attribute", "examples/attribute.yaml", "--html", str(page)
    )
    assert code == 0, text + err
    html = page.read_text()
    assert "What is protected" in html and "95% noise interval" in html
    assert (
        "attribute-privacy/share(income=&gt;50K)" in html
        or "attribute-privacy/share(income=>50K)" in html
    )
    assert "data:image/png;base64," in html


def _docs_specs() -> list[str]:
    text = DOCS.read_text()
    return re.findall(r"```yaml\n(# spec[^\n]*\n.*?)```", text, flags=re.DOTALL)


@pytest.mark.parametrize("index", range(len(_docs_specs())))
def test_the_docs_specs_run_as_written(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, index: int
) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(_docs_specs()[index])
    code, text, err = _run(
        capsys, "release", "attribute", str(spec), "--out", str(tmp_path / "r.json")
    )
    assert code == 0, text + err
    record = json.loads((tmp_path / "r.json").read_text())["record"]
    assert record["delta"] <= 1e-3 and record["noise"]["certified_delta"] <= record["delta"]
