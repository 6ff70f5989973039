"""A checkpointed assessment resumes: finished tasks are read back, not run again."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from attrpriv import InputError, datasets
from attrpriv.assess import _grid
from attrpriv.assess.assessor import FeatureRiskAssessor
from attrpriv.assess.models import make_model


@pytest.fixture(scope="module")
def credit() -> tuple[pd.DataFrame, pd.Series]:
    frame = datasets.load("german_credit").frame
    return frame[["age", "credit_amount", "purpose", "savings", "housing"]], frame["credit_risk"]


def assessor(folder: Path | None, **kwargs: object) -> FeatureRiskAssessor:
    return FeatureRiskAssessor(
        make_model("logreg"),
        attack_model="logreg",
        n_repeats=2,
        n_references=1,
        sensitive=("housing",),
        backend="sequential",
        checkpoint=folder,
        **kwargs,  # type: ignore[arg-type]
    )


def results(report: object) -> dict[str, object]:
    out = report.to_dict()  # type: ignore[attr-defined]
    return {k: v for k, v in out.items() if k not in ("run", "settings")}


def test_a_rerun_reads_the_finished_tasks_back(
    credit: tuple[pd.DataFrame, pd.Series], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    X, y = credit
    plain = assessor(None).assess(X, y)
    first = assessor(tmp_path).assess(X, y)
    assert results(first) == results(plain)  # checkpointing changes nothing
    (folder,) = tmp_path.iterdir()
    files = sorted(folder.iterdir())
    # without + attribute, per set and repeat; credit_amount (85% of its values unique) is
    # identifier-like: its set gets 2 more repeats of the membership differential
    assert len(files) == 5 * 2 + 5 * 2 + 2
    assert all(json.loads(f.read_text())["format"] == "attrpriv.assess.checkpoint/1" for f in files)
    ran: list[str] = []
    guarded = _grid._guarded

    def counting(data: _grid.GridData, task: _grid.Task) -> object:
        ran.append(task.kind)
        return guarded(data, task)

    monkeypatch.setattr(_grid, "_guarded", counting)
    files[0].write_text("not json")  # an unreadable result is run again
    again = assessor(tmp_path).assess(X, y)
    assert results(again) == results(plain) and len(ran) == 1
    other = assessor(tmp_path, seed=1).assess(X, y)  # other settings: a new folder, all run
    assert len(list(tmp_path.iterdir())) == 2 and len(ran) == 1 + 22
    assert results(other) != results(plain)


def test_a_bad_checkpoint_is_refused(credit: tuple[pd.DataFrame, pd.Series]) -> None:
    X, y = credit
    with pytest.raises(InputError, match="checkpoint must be a folder path or None"):
        assessor(3).assess(X, y)  # type: ignore[arg-type]


def test_adaptive_repeats_go_to_the_undecided_sets_only(
    credit: tuple[pd.DataFrame, pd.Series],
) -> None:
    X, y = credit
    report = FeatureRiskAssessor(
        make_model("logreg"),
        attacks=("membership",),
        threshold=0.0,
        n_repeats=2,
        max_repeats=4,
        n_references=1,
        backend="sequential",
    ).assess(X, y)
    counts = {r.label: r.attacks["membership"].n for r in report.feature_sets}
    rows = report.run["rows"]
    per_repeat = rows["attacked_members"] + rows["attacked_non_members"]
    for risk in report.feature_sets:  # a set still undecided got every repeat allowed
        low, high = risk.modified_ci
        doubled = 2 if risk.label == "credit_amount" else 0  # identifier-like: 2 more
        if low <= 0.0 <= high:
            assert counts[risk.label] == (4 + doubled) * per_repeat
        else:
            assert counts[risk.label] >= (2 + doubled) * per_repeat
    assert any("adaptive repeats" in note for note in report.notes)
    with pytest.raises(InputError, match="max_repeats must be an integer >= 2"):
        FeatureRiskAssessor(make_model("logreg"), n_repeats=2, max_repeats=1).assess(X, y)
