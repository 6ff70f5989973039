"""``attrpriv schema draft``: a schema drafted from a CSV, marked inferred, that releases accept."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from attrpriv.cli import main
from attrpriv.data.schema import Role, Schema


@pytest.fixture
def survey(tmp_path: Path) -> Path:
    rng = np.random.default_rng(0)
    n = 60
    path = tmp_path / "survey.csv"
    pd.DataFrame(
        {
            "id": [f"r{i:03d}" for i in rng.permutation(n)],
            "answer": rng.choice(["yes", "no", "maybe"], n),
            "vote": rng.choice(["A", "B"], n),
            "age": rng.integers(18, 90, n),
            "income": rng.uniform(0, 1e5, n),
            "religion": rng.choice(["x", "y", None], n),
        }
    ).to_csv(path, index=False)
    return path


def test_draft_guesses_roles_and_marks_every_domain_inferred(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, survey: Path
) -> None:
    out = tmp_path / "drafts" / "survey.yaml"
    code = main(["schema", "draft", str(survey), "--sensitive", "answer,religion",
                 "--target", "vote", "--out", str(out)])  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "warning: Schema.infer reads category lists and bounds from the data" in captured.err
    assert "2 sensitive, 1 target, 1 ignored" in " ".join(captured.out.split())
    schema = Schema.load(out)
    assert schema.sensitive == ("answer", "religion") and schema.target == "vote"
    assert schema["id"].role is Role.IGNORE and schema["id"].domain is None  # an identifier
    assert schema["age"].role is Role.FEATURE and schema["age"].domain.describe().startswith(
        "an integer in ["
    )
    assert schema["religion"].nullable and not schema["answer"].nullable
    assert set(schema.inferred) == {"answer", "vote", "age", "income", "religion"}
    assert "r000" not in out.read_text()  # the identifiers are not written down

    # the draft, not reviewed, is refused by a release unless accepted explicitly; the release
    # then says the domains were read off the data
    record = tmp_path / "hist.json"
    args = ["release", "histograms", str(survey), "--schema", str(out), "--epsilon", "1",
            "--out", str(record)]  # fmt: skip
    assert main(args) == 2 and "--accept-inferred" in capsys.readouterr().err
    assert not record.exists()
    code = main([*args, "--accept-inferred"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    released = json.loads(record.read_text())
    assert set(released["values"]) == {"answer", "vote", "religion"}  # the categorical ones
    assert "integer columns skipped: age (name them in --columns" in captured.out
    assert any("were read from the private data" in a for a in released["record"]["assumptions"])


def test_draft_prints_yaml_or_writes_json(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, survey: Path
) -> None:
    assert main(["schema", "draft", str(survey)]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("name: survey\ninferred:") and "columns:" in printed
    out = tmp_path / "s.json"
    assert main(["schema", "draft", str(survey), "--ignore", "income", "--out", str(out)]) == 0
    spec = json.loads(out.read_text())
    assert spec["columns"]["income"] == {"role": "ignore"} and "income" not in spec["inferred"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--sensitive", "colour"], "sensitive column 'colour' is not in the data"),
        (["--target", "vote", "--ignore", "vote"], "column 'vote' is given two roles"),
        (["--ignore", "id,answer,vote,age,income,religion"], "every column is ignored"),
    ],
)
def test_draft_refuses_bad_roles(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, survey: Path, args: list[str], message: str
) -> None:
    out = tmp_path / "s.yaml"
    code = main(["schema", "draft", str(survey), *args, "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.strip().count("\n") == 0
    assert not out.exists()
