"""A project file end to end on German credit: run, resume, never overspend, survive a SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from attrpriv.errors import BudgetExceededError, InputError
from attrpriv.project import Project, load_project
from attrpriv.project.state import sha256_of

PROJECT = """\
name: german
data:
  source: german_credit
protect:
  row: {epsilon: 3.0, delta: 1.0e-5}
  columns:
    personal_status_sex: {epsilon: 2.5, delta: 1.0e-5}
steps:
  assess:
    model: logreg
    target: credit_risk
    feature_sets: "age;purpose"
    attacks: [membership]
    threshold: 0.0
    repeats: 1
  mitigate:
    strategies: [drop, regularize]
    choose: best
    max_utility_loss: 0.05
    max_steps: 1
  release:
    - name: hist
      columns: [personal_status_sex, foreign_worker]
      epsilon: 0.5
  sanitize:
    - name: block
      method: block
      sensitive: personal_status_sex
      epsilon: 1.0
"""


def write(folder: Path, text: str = PROJECT) -> Path:
    folder.mkdir(exist_ok=True)
    path = folder / "attrpriv.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def fingerprint(project: Project) -> dict[str, str]:
    """Every DONE.json's sha256 (a finished step redone would change its time and hashes)."""
    done = {s: project.state.step_folder(s) / "DONE.json" for s in project.spec.step_ids()}
    return {s: sha256_of(p) for s, p in done.items() if p.exists()}


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Project:
    project = Project.from_yaml(write(tmp_path_factory.mktemp("german")))
    result = project.run()
    assert result.outcomes == dict.fromkeys(project.spec.step_ids(), "ran")
    return project


def test_one_file_drives_every_step_and_charges_each_release_once(finished: Project) -> None:
    result = finished.result()
    assert result.assessment is not None and result.mitigation is not None
    assert result.mitigation.mitigation is not None  # the loop's path, with its candidates
    assert result.mitigated is not None and len(result.mitigated) == 1000
    hist, block = result.releases["hist"], result.sanitized["block"]
    assert hist.record.epsilon == 0.5 and hist.record.unit.key == "dp/add-remove"
    assert block.record.unit.key == "dp/substitute:personal_status_sex"
    assert block.data is not None and block.data.shape == (1000, 21)
    entries = finished.ledger().entries()
    assert [e.label for e in entries] == ["project german release:hist: histograms",
                                          "project german sanitize:block: block"]  # fmt: skip
    done = {s.step: s.done for s in finished.status()}
    assert done["release:hist"].charges == (entries[0].id,)
    assert done["sanitize:block"].charges == (entries[1].id,)
    assert done["assess"].charges == () and not finished.orphans()


def test_a_second_run_redoes_nothing_and_spends_nothing(finished: Project) -> None:
    before, count = fingerprint(finished), len(finished.ledger().entries())
    result = Project(finished.spec).run()
    assert set(result.outcomes.values()) == {"kept"}
    assert fingerprint(finished) == before and len(finished.ledger().entries()) == count


def test_a_changed_release_is_refused_unless_rerun_and_then_charged_anew(
    finished: Project,
) -> None:
    text = PROJECT.replace("      epsilon: 0.5", "      epsilon: 0.25")
    folder = finished.spec.base
    changed = Project.from_yaml(write(folder, text))
    statuses = {s.step: s.status for s in changed.status()}
    assert statuses == {"assess": "done", "mitigate": "done", "release:hist": "changed",
                        "sanitize:block": "done"}  # fmt: skip
    count = len(changed.ledger().entries())
    with pytest.raises(InputError, match=r"release:hist finished with another spec; its charge"):
        changed.run()
    assert len(changed.ledger().entries()) == count
    result = changed.run(rerun=["release:hist"])
    assert result.outcomes["release:hist"] == "ran"
    assert [e.record.epsilon for e in changed.ledger().entries()[count:]] == [0.25]
    write(folder)  # back to the file the other tests read


def test_a_plan_over_budget_is_refused_before_any_work(tmp_path: Path) -> None:
    """The sanitized table would push the column's budget over: nothing is read, trained or
    charged, and the message names the step."""
    text = PROJECT.replace(
        "    personal_status_sex: {epsilon: 2.5", "    personal_status_sex: {epsilon: 1.5"
    )
    project = Project.from_yaml(write(tmp_path, text))
    with pytest.raises(BudgetExceededError, match=r"^sanitize:block would overspend; nothing"):
        project.run()
    assert not project.ledger().entries()
    assert not project.state.step_folder("assess").exists()  # nothing assessed
    no_budget = PROJECT.replace(
        "  columns:\n    personal_status_sex: {epsilon: 2.5, delta: 1.0e-5}\n", ""
    )
    with pytest.raises(BudgetExceededError, match=r"add protect.columns.personal_status_sex"):
        Project.from_yaml(write(tmp_path / "other", no_budget)).run()


KILL = """\
import os, signal, sys
import attrpriv.project.steps as steps
from attrpriv.assess.report import RiskReport
where = sys.argv[2]
def killing(real):
    def write(self_or_path, *args):
        path = args[0] if isinstance(self_or_path, RiskReport) else self_or_path
        if f"steps/{where}/" in str(path):  # the step's work done (and charged), not written
            os.kill(os.getpid(), signal.SIGKILL)
        return real(self_or_path, *args)
    return write
steps.atomic_write_json = killing(steps.atomic_write_json)
RiskReport.save = killing(RiskReport.save)
from attrpriv.project import Project
Project.from_yaml(sys.argv[1]).run()
"""


@pytest.mark.parametrize("killed", ["assess", "mitigate", "release:hist", "sanitize:block"])
def test_a_sigkill_in_any_step_keeps_the_finished_ones_and_never_overspends(
    tmp_path: Path, killed: str
) -> None:
    """Killed as the step writes its first output (its work done, a release's noise drawn and
    charged): the next run redoes only that step and the ones after it; a lost release's
    charge stays in the ledger, listed, and no budget is exceeded."""
    # room for the lost draw and its rerun: the orphan charge stands
    path = write(tmp_path, PROJECT.replace("sex: {epsilon: 2.5", "sex: {epsilon: 4.0"))
    folder = killed.replace(":", "-")
    code = subprocess.run([sys.executable, "-c", KILL, str(path), folder], capture_output=True,
                          check=False).returncode  # fmt: skip
    assert code == -signal.SIGKILL
    project = Project.from_yaml(path)
    order = project.spec.step_ids()
    before = order[: order.index(killed)]
    statuses = {s.step: s.status for s in project.status()}
    assert statuses == {s: "done" if s in before else "pending" for s in order}
    labels = {"release:hist": "project german release:hist: histograms",
              "sanitize:block": "project german sanitize:block: block"}  # fmt: skip
    lost = [labels[killed]] if killed in labels else []
    assert [e.label for e in project.orphans()] == lost
    kept = fingerprint(project)
    assert set(kept) == set(before)
    result = project.run()
    assert result.outcomes == {s: "kept" if s in before else "ran" for s in order}
    assert {s: fingerprint(project)[s] for s in kept} == kept  # not redone
    summary = project.ledger().summary()
    for unit in (*summary.units, *summary.columns):
        assert unit.budget is None or unit.used.epsilon <= unit.budget.epsilon + 1e-9


def test_a_killed_runner_frees_its_lock_and_a_running_one_holds_it(tmp_path: Path) -> None:
    path = write(tmp_path)
    project = Project.from_yaml(path)
    with (
        project.state.locked(),
        pytest.raises(InputError, match=r"being run by another process \(pid "),
    ):
        Project.from_yaml(path).run()
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import time
        from attrpriv.project import Project
        with Project.from_yaml({str(path)!r}).state.locked():
            print("locked", flush=True)
            time.sleep(60)
        """)], stdout=subprocess.PIPE)  # fmt: skip
    assert holder.stdout is not None and holder.stdout.readline().strip() == b"locked"
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    with project.state.locked():  # the kernel released the dead holder's lock
        pass


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            ("  source: german_credit", "  sorce: german_credit"),
            "data.sorce is not a key of data (did you mean 'source'?)",
        ),
        (("      epsilon: 0.5", "      epsilon: ten"), "steps.release[0].epsilon must be a finite"),
        (("    threshold: 0.0", "    threshold: 2"), "steps.assess.threshold must be in [0, 1]"),
        (("    choose: best", "    choose: greedy"), "steps.mitigate.choose must be one of"),
        (
            (
                "      epsilon: 1.0\n",
                "      epsilon: 1.0\n    - {name: block, method: mst, epsilon: 1}\n",
            ),
            "steps.sanitize[1].name 'block' is used twice",
        ),
        (("      sensitive: personal_status_sex\n", ""), "steps.sanitize[0].sensitive is missing"),
        (("  row: {epsilon: 3.0", "  row: {epsilon: -3.0"), "protect.row.epsilon must be > 0"),
        (("steps:", "stages:"), "stages is not a key of the project file"),
        (("  assess:", "  asess:"), "steps.asess is not a key of steps (did you mean 'assess'?)"),
        (("name: german", "name: german\nname: again"), "repeated key 'name'"),
    ],
)
def test_a_bad_project_file_names_the_key(
    tmp_path: Path, edit: tuple[str, str], message: str
) -> None:
    old, new = edit
    assert old in PROJECT
    with pytest.raises(InputError) as caught:
        load_project(write(tmp_path, PROJECT.replace(old, new, 1)))
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_mitigate_needs_assess_and_ldp_needs_a_budget(tmp_path: Path) -> None:
    lone = "name: x\ndata: german_credit\nsteps:\n  mitigate: {strategies: [drop]}\n"
    with pytest.raises(InputError, match=r"steps\.mitigate needs steps\.assess"):
        load_project(write(tmp_path, lone))
    ldp = ("name: x\ndata: german_credit\nsteps:\n  assess: {target: credit_risk}\n"
           "  mitigate: {strategies: ['ldp:1']}\n")  # fmt: skip
    with pytest.raises(InputError, match="protect has no budget"):
        load_project(write(tmp_path, ldp))


def test_init_drafts_a_project_that_reads_back_and_fits_its_own_budget(tmp_path: Path) -> None:
    from attrpriv import datasets
    from attrpriv.project.init import draft_project

    schema = datasets.load("german_credit").schema
    path = tmp_path / "g.yaml"
    path.write_text(draft_project("g", "german_credit", schema, file="g.yaml"), encoding="utf-8")
    project = Project.from_yaml(path)
    assert project.spec.step_ids() == ["assess", "mitigate", "release:histograms",
                                       "sanitize:personal_status_sex-block"]  # fmt: skip
    plan = [s.record for s in project.status() if s.record is not None]
    project.ledger().check(plan)  # the drafted budgets pay for the drafted plan
    assert json.loads(json.dumps(project.spec.digest("assess")))  # a stable text digest


def test_a_csv_file_with_its_schema_file_runs_from_paths_relative_to_the_project(
    tmp_path: Path,
) -> None:
    """Paths in the file are relative to it, wherever the process runs; a reviewed schema is
    read from its file, not from the data."""
    import shutil

    examples = Path(__file__).resolve().parents[2] / "examples"
    (tmp_path / "data").mkdir()
    for name in ("adult-sample.csv", "adult-sample.schema.yaml"):
        shutil.copy(examples / name, tmp_path / "data" / name)
    text = textwrap.dedent("""\
        name: sample
        data: {source: data/adult-sample.csv, schema: data/adult-sample.schema.yaml}
        protect: {row: {epsilon: 1.0}}
        steps:
          release:
            - {name: hist, columns: [sex, income], epsilon: 1.0}
        """)
    project = Project.from_yaml(write(tmp_path, text))
    result = project.run()
    assert result.outcomes == {"release:hist": "ran"}
    values = result.releases["hist"].payload["values"]
    assert set(values) == {"sex", "income"}
    assert (tmp_path / "sample.state" / "steps" / "release-hist" / "DONE.json").exists()
