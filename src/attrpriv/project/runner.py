"""``Project``: a project file's steps run in order against one ledger, resumable, never
overspending. See docs/project.md.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attrpriv.dp.ledger import BudgetLedger
from attrpriv.errors import BudgetExceededError, InputError
from attrpriv.project import steps
from attrpriv.project.spec import ProjectSpec, load_project
from attrpriv.project.state import Done, ProjectState

if TYPE_CHECKING:
    import pandas as pd

    from attrpriv.assess.report import RiskReport
    from attrpriv.data.schema import Schema
    from attrpriv.dp.ledger import LedgerEntry, LedgerSummary
    from attrpriv.dp.record import PrivacyRecord

STATUSES = ("done", "changed", "pending")
"""A step is ``done`` (its outputs are as its DONE.json lists them and its spec has not changed),
``changed`` (done from another spec) or ``pending``."""


@dataclass(frozen=True)
class StepStatus:
    """Where one step stands: its ``status``, its planned ``record`` (None: it charges nothing
    up front), and when it finished."""

    step: str
    status: str
    record: PrivacyRecord | None
    done: Done | None
    local_dp: bool = False

    @property
    def spends(self) -> bool:
        """True for a step that charges the ledger (a release, a sanitized table, local DP)."""
        return self.record is not None or self.local_dp


@dataclass(frozen=True, eq=False)  # holds frames
class StoredRelease:
    """A release step's output as written: its ``record`` and the JSON ``payload`` (values,
    diagnostics, accuracy, summary lines); ``data``: the sanitized table (None for statistics)."""

    step: str
    record: PrivacyRecord
    payload: dict[str, Any]
    data: pd.DataFrame | None = None


@dataclass(frozen=True, eq=False)  # holds frames
class ProjectResult:
    """What a run leaves: each step's outcome (``ran``, ``kept`` or ``failed: why``), the
    assessment, the mitigation (its report, the mitigated rows), the releases and sanitized
    tables by name, and the ledger's summary."""

    outcomes: dict[str, str]
    assessment: RiskReport | None = None
    mitigation: RiskReport | None = None
    mitigated: pd.DataFrame | None = None
    releases: dict[str, StoredRelease] = field(default_factory=dict)
    sanitized: dict[str, StoredRelease] = field(default_factory=dict)
    ledger: LedgerSummary | None = None

    @property
    def failed(self) -> dict[str, str]:
        """The steps that failed, with why."""
        return {s: o[len("failed: ") :] for s, o in self.outcomes.items() if o.startswith("failed")}


class StepLedger(BudgetLedger):
    """The project's ledger as one step charges it: every label starts with the step's name."""

    def __init__(self, path: Path, prefix: str) -> None:
        super().__init__(path, create=False)
        self.prefix = prefix

    def charge(
        self, record: PrivacyRecord, label: str = "", *, allow_unbudgeted: bool = False
    ) -> LedgerEntry:
        """:meth:`BudgetLedger.charge`, the label prefixed with the step's name."""
        named = f"{self.prefix}: {label}" if label else self.prefix
        return super().charge(record, named, allow_unbudgeted=allow_unbudgeted)


class Project:
    """A project: the steps of one file, run in order against one budget ledger.

    Parameters
    ----------
    spec : ProjectSpec
        The checked project file (:meth:`from_yaml` reads one).
    """

    def __init__(self, spec: ProjectSpec) -> None:
        if not isinstance(spec, ProjectSpec):
            raise InputError(f"spec must be a ProjectSpec, got {type(spec).__name__}")
        self.spec = spec
        self.state = ProjectState(spec.state_folder)

    @classmethod
    def from_yaml(cls, path: str | Path) -> Project:
        """The project of a YAML file (``attrpriv.yaml``); see :func:`load_project`."""
        return cls(load_project(path))

    # -- what is planned, what is done ------------------------------------------------------
    def schema(self) -> Schema:
        """The data's public schema (its file, or the bundled dataset's), no private row read."""
        data = self.spec.data
        if data.schema is not None:
            from attrpriv.data.schema import Schema

            path = Path(data.schema)
            return Schema.load(path if path.is_absolute() else self.spec.base / path)
        from attrpriv.datasets import load, names

        if data.source not in names():
            raise InputError(
                "data.schema is missing: a CSV/Parquet file needs its schema file (draft one "
                "with 'attrpriv schema draft', then review it)"
            )
        return load(data.source).schema

    def status(self) -> list[StepStatus]:
        """Every step, in order, with its status and planned record (no private row read)."""
        schema, out = self.schema(), []
        for step in self.spec.step_ids():
            done = self.state.done(step)
            status = "pending" if done is None else "done"
            if done is not None and done.digest != self.spec.digest(step):
                status = "changed"
            record = steps.planned_record(self.spec, step, schema)
            local = (
                step == "mitigate"
                and self.spec.mitigate is not None
                and (self.spec.mitigate.draws_noise)
            )
            out.append(StepStatus(step, status, record, done, local))
        return out

    def ledger(self) -> BudgetLedger:
        """The project's ledger, created when absent, with the budgets of ``protect`` set
        where they differ (a budget below what is spent is refused by the ledger)."""
        from attrpriv.dp.units import PART, PrivacyUnit

        path = self.spec.ledger_path
        path.parent.mkdir(parents=True, exist_ok=True)
        book = BudgetLedger(path)
        protect, current = self.spec.protect, book.budgets()
        wanted = [(PrivacyUnit("dp", "add-remove"), protect.row)] if protect.row else []
        wanted += [(PrivacyUnit("dp", PART + c), b) for c, b in protect.columns.items()]
        for unit, budget in wanted:
            now = current.get(unit.key)
            if now is None or (now.epsilon, now.delta) != (budget.epsilon, budget.delta or 0.0):
                book.set_budget(budget.epsilon, budget.delta, unit=unit)
        return book

    # -- running ----------------------------------------------------------------------------
    def run(self, *, rerun: tuple[str, ...] | list[str] = ()) -> ProjectResult:
        """Run every step not done, in order; keep the done ones.

        Parameters
        ----------
        rerun : sequence of str, default ()
            Steps to run again though done (a release is charged anew).

        Returns
        -------
        ProjectResult
            Each step's outcome and output (a failed step is recorded and the others go on).

        Raises
        ------
        InputError
            Before any step runs: a bad ``rerun``, a finished spending step whose spec changed
            (not in ``rerun``), or a plan the ledger's budgets cannot pay for (the message names
            the step); or another process runs the project.
        """
        ids = self.spec.step_ids()
        for step in rerun:
            if step not in ids:
                raise InputError(f"rerun names {step!r}, which is not a step; steps: {ids}")
        steps.check_reviewed(self.schema(), self.spec.data)
        with self.state.locked():
            plan = self.status()
            for s in plan:
                if s.status == "changed" and s.spends and s.step not in rerun:
                    raise InputError(
                        f"{s.step} finished with another spec; its charge stands: pass rerun "
                        f"{s.step!r} (--rerun) to run it again, charged anew"
                    )
            todo = [s for s in plan if s.status != "done" or s.step in rerun]
            book = self.ledger()
            self._preflight(book, todo)
            return self._run(book, plan, {s.step for s in todo})

    def _preflight(self, book: BudgetLedger, todo: list[StepStatus]) -> None:
        """Refuse, before any work, a plan whose releases the budgets cannot pay for."""
        planned = [s for s in todo if s.record is not None]
        try:
            book.check([s.record for s in planned if s.record is not None])
        except BudgetExceededError as exc:
            text = str(exc)
            index = int(text[len("records[") : text.index("]")]) if text.startswith("rec") else 0
            reason = text.split(": ", 1)[1] if text.startswith("records[") else text
            step, unit = planned[index].step, planned[index].record
            if "has no budget" in reason and unit is not None:
                part = unit.unit.scope.partition(":")[2]
                where = f"protect.columns.{part}" if part else "protect.row"
                reason = (
                    f"its unit {unit.unit.key} has no budget in the project's ledger: add "
                    f"{where} to the project file"
                )
            message = f"{step} would overspend; nothing was run: {reason}"
            raise BudgetExceededError(message) from None

    def _run(self, book: BudgetLedger, plan: list[StepStatus], todo: set[str]) -> ProjectResult:
        outcomes: dict[str, str] = {}
        rows: steps.Rows | None = None
        for s in plan:
            if s.step not in todo:
                outcomes[s.step] = "kept"
                continue
            if s.step == "mitigate" and outcomes.get("assess", "").startswith("failed"):
                outcomes[s.step] = "failed: the assessment failed"
                continue
            self.state.forget(s.step)
            count = len(book.entries())
            labelled = StepLedger(book.path, self._prefix() + s.step)
            try:
                if s.step in ("assess", "mitigate"):
                    outputs = self._assess(s.step, labelled)
                else:
                    rows = rows or steps.read_rows(self.spec)
                    run = steps.run_release if s.step.startswith("release") else steps.run_sanitize
                    outputs = run(self.spec, s.step, rows, labelled)
            except InputError as exc:
                outcomes[s.step] = f"failed: {exc}"
                continue
            charged = [e.id for e in book.entries()[count:]]
            self.state.finish(s.step, self.spec.digest(s.step), outputs, charged)
            outcomes[s.step] = "ran"
        return self.result(outcomes)

    def _assess(self, step: str, book: BudgetLedger) -> list[str]:
        """The assessment, or the mitigation loop; the reports written to the step's folder."""
        folder = self.state.step_folder(step)
        folder.mkdir(parents=True, exist_ok=True)
        found = steps.assessment_data(self.spec)
        assessor = steps.assessor(self.spec, found, self.state.folder / "checkpoint")
        if step == "assess":
            found.report_on_data(assessor.assess(found.X, found.y)).save(folder / "report.json")
            return ["report.json"]
        return steps.run_mitigate(self.spec, found, assessor, book, folder)

    def _prefix(self) -> str:
        return f"project {self.spec.name} "

    # -- reading back -----------------------------------------------------------------------
    def result(self, outcomes: dict[str, str] | None = None) -> ProjectResult:
        """The outputs of every finished step, read from the state folder."""
        import pandas as pd

        from attrpriv.assess.report import RiskReport
        from attrpriv.dp.record import PrivacyRecord

        found: dict[str, Any] = {"releases": {}, "sanitized": {}}
        for step in self.spec.step_ids():
            if self.state.done(step) is None:
                continue
            folder = self.state.step_folder(step)
            if step == "assess":
                found["assessment"] = RiskReport.load(folder / "report.json")
            elif step == "mitigate":
                found["mitigation"] = RiskReport.load(folder / "report.json")
                found["mitigated"] = pd.read_parquet(folder / "mitigated.parquet")
            else:
                kind, name = step.split(":", 1)
                payload = json.loads((folder / "release.json").read_text(encoding="utf-8"))
                table = pd.read_parquet(folder / "table.parquet") if kind == "sanitize" else None
                stored = StoredRelease(step, PrivacyRecord.from_dict(payload["record"]), payload,
                                       table)  # fmt: skip
                found["releases" if kind == "release" else "sanitized"][name] = stored
        summary = None
        if self.spec.ledger_path.exists():
            summary = BudgetLedger(self.spec.ledger_path, create=False).summary()
        done = {s: "kept" for s in self.spec.step_ids() if self.state.done(s) is not None}
        return ProjectResult(outcomes if outcomes is not None else done, ledger=summary, **found)

    def orphans(self) -> list[LedgerEntry]:
        """Ledger entries charged by this project's steps that no finished step lists: noise
        drawn and charged, its output lost to a kill (the charge stands)."""
        if not self.spec.ledger_path.exists():
            return []
        listed = {i for s in self.spec.step_ids() if (d := self.state.done(s)) for i in d.charges}
        prefix = self._prefix()
        entries = BudgetLedger(self.spec.ledger_path, create=False).entries()
        return [e for e in entries if e.label.startswith(prefix) and e.id not in listed]
