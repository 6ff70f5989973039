"""The README's quick start runs as written, line by line, from a copy of the repository root.

The lines are read from the README itself (its first ``bash`` block after "## Quick start"), so
the test follows the document. Training the decoupler and the assessment take minutes: the
default run covers every other line, ``pytest -m slow`` runs them all.
"""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from attrpriv.cli import main

ROOT = Path(__file__).resolve().parents[2]
SLOW = ("attrpriv assess ", "attrpriv sanitize ")


def quick_start() -> list[str]:
    """The command lines of the README's quick start, in order, comments stripped."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("## Quick start", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    lines = [line.split("  #", 1)[0].strip() for line in block.splitlines()]
    return [line for line in lines if line.startswith("attrpriv ")]


@pytest.fixture
def repository_copy(tmp_path: Path) -> Iterator[Path]:
    """A scratch folder holding the README's example files, as the root of a fresh clone."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    here = Path.cwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(here)


def _run(lines: list[str]) -> None:
    for line in lines:
        assert main(shlex.split(line)[1:]) == 0, line


def test_the_quick_start_lists_every_job() -> None:
    lines = quick_start()
    for group in ("datasets", "schema", "budget", "release", "assess", "sanitize"):
        assert any(line.startswith(f"attrpriv {group} ") for line in lines), group


def test_the_quick_start_runs_as_written(repository_copy: Path) -> None:
    fast = [line for line in quick_start() if not line.startswith(SLOW)]
    _run(fast)
    assert (repository_copy / "hist.html").stat().st_size > 0
    assert (repository_copy / "budget.html").stat().st_size > 0


@pytest.mark.slow
def test_every_quick_start_line_runs_as_written(repository_copy: Path) -> None:
    _run(quick_start())
    assert (repository_copy / "sanitized.parquet").exists()


def one_project() -> list[str]:
    """The command lines of the README's "One project" block."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("## One project", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    lines = [line.split("  #", 1)[0].strip() for line in block.splitlines()]
    return [line for line in lines if line]


def test_the_project_workflow_is_five_lines_or_fewer_and_its_draft_reads_back(
    repository_copy: Path,
) -> None:
    """The README shows the workflow in at most five lines; init and status run as written
    (the run itself, minutes of assessment, is the slow test below)."""
    lines = one_project()
    assert 2 <= len(lines) <= 5 and all(line.startswith("attrpriv project ") for line in lines)
    _run([line for line in lines if not line.startswith("attrpriv project run ")])
    assert (repository_copy / "german.yaml").exists()


@pytest.mark.slow
def test_the_project_workflow_runs_as_written(repository_copy: Path) -> None:
    _run(one_project())
    assert (repository_copy / "dossier.html").stat().st_size > 0
