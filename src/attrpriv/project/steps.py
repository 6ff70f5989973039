"""What each step of a project does, with the library's own objects: its planned privacy record
(public inputs only), and its run (outputs written into the step's folder).

Steps: ``assess`` (:class:`~attrpriv.assess.FeatureRiskAssessor`), ``mitigate`` (its loop),
``release:NAME`` (:class:`~attrpriv.release.laplace.LaplaceHistograms`), ``sanitize:NAME``
(:class:`~attrpriv.sanitize.BlockResampler` or :class:`~attrpriv.sanitize.DPSynthesizer`).
See docs/project.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attrpriv._io import atomic_path, atomic_write_json
from attrpriv.errors import InputError
from attrpriv.project.spec import DataSpec, ProjectSpec, ReleaseSpec, SanitizeSpec

if TYPE_CHECKING:
    import pandas as pd

    from attrpriv.assess.assessor import FeatureRiskAssessor
    from attrpriv.assess.data import AssessmentData
    from attrpriv.data.schema import Schema
    from attrpriv.dp.ledger import BudgetLedger
    from attrpriv.dp.record import PrivacyRecord


@dataclass(frozen=True, eq=False)  # holds a frame
class Rows:
    """The project's rows as read: the frame and its schema."""

    frame: pd.DataFrame
    schema: Schema


def _path(data: DataSpec, base: Path, value: str | None) -> str | None:
    """A path of the project file, relative to its folder; a bundled name as it is."""
    if value is None:
        return None
    from attrpriv.datasets import names

    if value in names():
        return value
    path = Path(value)
    return str(path if path.is_absolute() else base / path)


def _selection(data: DataSpec) -> Any:
    from attrpriv.data.select import RowSelection

    return RowSelection(data.row_range, data.where, data.rows, data.seed)


def check_reviewed(schema: Schema | None, data: DataSpec) -> None:
    """Refuse a schema still marked as read off the data, unless ``data.accept_inferred``."""
    if schema is None or not schema.inferred or data.accept_inferred or data.schema is None:
        return
    shown = ", ".join(list(schema.inferred)[:5])
    raise InputError(
        f"data.schema {data.schema!r} still marks the domains of {shown} as read off the data "
        "('inferred:'): replace them with public domains and delete that list, or set "
        "data.accept_inferred: true (the records list them)"
    )


def read_rows(spec: ProjectSpec) -> Rows:
    """The rows every release and sanitize step reads (the schema checked as reviewed)."""
    from attrpriv.data.read import read_data

    data = spec.data
    found = read_data(_path(data, spec.base, data.source) or data.source,
                      _path(data, spec.base, data.schema), select=_selection(data))  # fmt: skip
    check_reviewed(found.schema, data)
    return Rows(found.frame, found.schema)


def assessment_data(spec: ProjectSpec) -> AssessmentData:
    """The features, target and schema the assessment and the mitigation use."""
    from attrpriv.assess.data import load_task

    data, assess = spec.data, spec.assess
    assert assess is not None
    found = load_task(_path(data, spec.base, data.source) or data.source, assess.target,
                      schema=_path(data, spec.base, data.schema), max_rows=assess.max_rows,
                      seed=assess.seed, select=_selection(data))  # fmt: skip
    check_reviewed(found.schema, data)
    return found


def assessor(spec: ProjectSpec, found: AssessmentData, checkpoint: Path) -> FeatureRiskAssessor:
    """The assessor of the ``assess`` step (the mitigation uses the same)."""
    from attrpriv.assess.assessor import FeatureRiskAssessor
    from attrpriv.assess.models import make_model

    assess = spec.assess
    assert assess is not None
    return FeatureRiskAssessor(
        make_model(assess.model, task=found.task, seed=assess.seed),
        feature_sets=assess.feature_sets,
        attacks=assess.attacks,
        threshold=assess.threshold,
        flag_on=assess.flag_on,
        n_repeats=assess.repeats,
        sensitive=found.sensitive_columns(list(assess.sensitive) or None),
        checkpoint=checkpoint,
        backend="sequential",
        progress=True,
        seed=assess.seed,
    )


def run_mitigate(
    spec: ProjectSpec,
    found: AssessmentData,
    assessor: FeatureRiskAssessor,
    ledger: BudgetLedger,
    folder: Path,
) -> list[str]:
    """The mitigation loop (each local-DP draw charged to ``ledger``); its outputs: the first
    report with the path, the last step's report, the mitigated rows and the model it used."""
    from attrpriv.assess.mitigation import parse_strategy

    mitigate = spec.mitigate
    assert mitigate is not None
    strategies = [parse_strategy(s, schema=found.schema) for s in mitigate.strategies]
    report = assessor.mitigate(found.X, found.y, strategies, max_steps=mitigate.max_steps,
                               ledger=ledger, choose=mitigate.choose,
                               max_utility_loss=mitigate.max_utility_loss)  # fmt: skip
    found.report_on_data(report).save(folder / "report.json")
    found.report_on_data(assessor.final_report_).save(folder / "final.json")
    with atomic_path(folder / "mitigated.parquet") as tmp:
        assessor.mitigated_.to_parquet(tmp, index=False)
    model = assessor.mitigated_estimator_
    params = {k: v for k, v in model.get_params(deep=True).items()
              if isinstance(v, (str, int, float, bool, type(None)))}  # fmt: skip
    atomic_write_json(folder / "model.json", {"model": type(model).__name__, "params": params})
    return ["report.json", "final.json", "mitigated.parquet", "model.json"]


# -- the DP steps: a mechanism, its planned record, its release -------------------------------


def release_mechanism(release: ReleaseSpec) -> Any:
    """The unfitted mechanism of a ``release`` step."""
    from attrpriv.release.laplace import LaplaceHistograms

    return LaplaceHistograms(release.epsilon, list(release.columns), neighbours=release.neighbours)


def sanitizer(sanitize: SanitizeSpec, schema: Schema) -> Any:
    """The fitted table sanitizer of a ``sanitize`` step (public facts only)."""
    if sanitize.method == "block":
        from attrpriv.sanitize import BlockResampler

        assert sanitize.sensitive is not None
        proxies = "auto" if sanitize.proxies is None else list(sanitize.proxies)
        return BlockResampler(sanitize.sensitive, proxies=proxies, keep=list(sanitize.keep),
                              epsilon=sanitize.epsilon, delta=sanitize.delta,
                              seed=sanitize.seed).fit(schema)  # fmt: skip
    from attrpriv.sanitize import DPSynthesizer

    return DPSynthesizer(sanitize.method, epsilon=sanitize.epsilon, delta=sanitize.delta,
                         workload=sanitize.workload, seed=sanitize.seed).fit(schema)  # fmt: skip


def planned_record(spec: ProjectSpec, step: str, schema: Schema) -> PrivacyRecord | None:
    """The guarantee step ``step`` will be charged, from public inputs only (None: a step that
    charges nothing before it runs)."""
    kind = step.partition(":")[0]
    if kind == "release":
        release = spec.step(step)
        for column in release.columns:
            if column not in schema:
                raise InputError(
                    f"{step}: column {column!r} is not in the data's schema (steps.release "
                    f"{release.name!r} columns)"
                )
        mechanism = release_mechanism(release)
    elif kind == "sanitize":
        mechanism = sanitizer(spec.step(step), schema)
    else:
        return None
    record: PrivacyRecord = mechanism.record(mechanism.calibrate())
    return record


def run_release(spec: ProjectSpec, step: str, rows: Rows, ledger: BudgetLedger) -> list[str]:
    """Release the step's statistics, charged to ``ledger``; its outputs (file names)."""
    from attrpriv.release.nonnegative import non_negative_to_dict

    folder = _folder(spec, step)
    release = spec.step(step)
    result = release_mechanism(release).release(
        rows.frame, rows.schema, ledger=ledger, label=release.mechanism
    )
    payload = result.to_dict()
    payload["non_negative"] = non_negative_to_dict(result)
    payload["summary"] = result.diagnostics.summary_lines()
    atomic_write_json(folder / "release.json", payload)
    return ["release.json"]


def run_sanitize(spec: ProjectSpec, step: str, rows: Rows, ledger: BudgetLedger) -> list[str]:
    """Release the step's sanitized table, charged to ``ledger``; its outputs (file names)."""
    folder = _folder(spec, step)
    sanitize = spec.step(step)
    result = sanitizer(sanitize, rows.schema).release(
        rows.frame, ledger=ledger, label=sanitize.method
    )
    with atomic_path(folder / "table.parquet") as tmp:
        result.data.to_parquet(tmp, index=False)
    payload = {
        "record": result.record.to_dict(),
        "diagnostics": result.diagnostics.to_dict(),
        "accuracy": None if result.accuracy is None else result.accuracy.to_dict(),
        "summary": result.diagnostics.summary_lines(),
    }
    atomic_write_json(folder / "release.json", payload)
    return ["table.parquet", "release.json"]


def _folder(spec: ProjectSpec, step: str) -> Path:
    from attrpriv.project.state import ProjectState

    folder = ProjectState(spec.state_folder).step_folder(step)
    folder.mkdir(parents=True, exist_ok=True)
    return folder
