"""``attrpriv project``: one project file from assessment to mitigation to releases, one budget."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from attrpriv.cli._common import (
    DataArgument,
    console,
    examples,
    group,
    html_option,
    json_writer,
    split_names,
    text_writer,
    write_outputs,
)
from attrpriv.cli._outputs import Outputs, Writer
from attrpriv.errors import InputError

if TYPE_CHECKING:
    from attrpriv.project import Project

app = group("project")

ProjectFile = Annotated[Path, typer.Argument(help="The project file (attrpriv.yaml).")]
PageOption = Annotated[
    Path | None,
    html_option("Write the dossier: every step, release and the budget on one page (.html)."),
]
PROJECT_SUFFIXES = (".yaml", ".yml")


@app.command(
    epilog=examples(
        "attrpriv project init adult --out attrpriv.yaml",
        "attrpriv project init survey.csv --target vote --sensitive race,sex --out survey.yaml",
    )
)
def init(
    data: DataArgument,
    out: Annotated[Path, typer.Option(help="The project file to write (.yaml).")] = Path(
        "attrpriv.yaml"
    ),
    target: Annotated[
        str | None, typer.Option(help="The column the model predicts (default: the schema's).")
    ] = None,
    sensitive: Annotated[
        str | None,
        typer.Option(help="Comma-separated columns to protect (default: the schema's)."),
    ] = None,
) -> None:
    """Draft a project file for a dataset: assess, mitigate, release, sanitize, with budgets.

    For a CSV/Parquet file a schema draft is written beside it (<out stem>.schema.yaml, its
    domains read off the data and marked 'inferred'): review both before 'project run'.
    """
    from attrpriv.data.draft import draft_schema
    from attrpriv.data.read import read_data
    from attrpriv.datasets import load, names
    from attrpriv.project.init import draft_project
    from attrpriv.project.spec import parse_project

    if out.suffix.lower() not in PROJECT_SUFFIXES:
        raise InputError(f"--out {str(out)!r} must end in .yaml or .yml")
    outputs = Outputs()
    outputs.add("--out", out)
    chosen = split_names(sensitive)
    schema_file = None
    if data in names():
        schema, source = load(data).schema, data
    else:
        frame = read_data(data, require_schema=False, load=True).frame
        schema = draft_schema(frame, target=target, sensitive=chosen or (), name=Path(data).stem)
        schema_path = out.with_name(out.stem + ".schema.yaml")
        outputs.add("--out (its schema draft)", schema_path)
        schema_file = schema_path.name
        source = str(Path(data).resolve())
    text = draft_project(out.stem, source, schema, target=target, sensitive=chosen or (),
                         schema_file=schema_file, file=out.name)  # fmt: skip
    import attrpriv._yaml as yaml_text

    parse_project(yaml_text.load_yaml(text), base=out.resolve().parent)  # the draft is valid
    writers: dict[str, Writer | None] = {"--out": text_writer(text)}
    if schema_file is not None:
        writers["--out (its schema draft)"] = text_writer(schema.to_yaml())
    write_outputs(outputs, writers)
    draft = "" if schema_file is None else (
        f" and {schema_file} (its domains were read off the data: replace them with public "
        "ones, then delete 'inferred')")  # fmt: skip
    console.print(f"review {out}{draft}, then: attrpriv project run {out}", markup=False,
                  highlight=False)  # fmt: skip


@app.command(
    epilog=examples(
        "attrpriv project run attrpriv.yaml --html dossier.html",
        "attrpriv project run attrpriv.yaml --rerun release:histograms",
    )
)
def run(
    project: ProjectFile,
    rerun: Annotated[
        list[str] | None,
        typer.Option(
            metavar="STEP",
            help="Run this finished step again (repeatable; a release is charged anew).",
        ),
    ] = None,
    html: PageOption = None,
) -> None:
    """Run the project's steps in order; finished ones are kept, a killed one runs again.

    Before any step runs, every release still to make is checked against the budgets: a plan
    that would overspend is refused and nothing is run. A step that fails is reported and the
    others go on; the exit code is then 1.
    """
    from attrpriv.project import Project

    outputs = Outputs()
    outputs.add("--html", html)
    found = Project.from_yaml(project)
    result = found.run(rerun=tuple(rerun or ()))
    for step, outcome in result.outcomes.items():
        console.print(f"{step}: {outcome}", markup=False, highlight=False, soft_wrap=True)
    _print_budget(found)
    if html is not None:
        write_outputs(outputs, {"--html": text_writer(_dossier(found))})
    if result.failed:
        raise typer.Exit(1)


@app.command(epilog=examples("attrpriv project status attrpriv.yaml"))
def status(
    project: ProjectFile,
    out: Annotated[Path | None, typer.Option(help="Write the status as JSON to this file.")] = None,
) -> None:
    """What ran, what it spent and what is left; no private row is read."""
    from attrpriv.project import Project

    outputs = Outputs()
    outputs.add("--out", out)
    found = Project.from_yaml(project)
    rows = []
    for s in found.status():
        planned = "nothing up front" if s.record is None else (
            f"epsilon={s.record.epsilon:g} on {s.record.unit.key}")  # fmt: skip
        if s.local_dp:
            planned = "local DP, charged draw by draw"
        when = "" if s.done is None else f", finished {s.done.finished}"
        charges = [] if s.done is None else list(s.done.charges)
        console.print(
            f"{s.step}: {s.status}{when}; planned charge: {planned}; ledger entries: "
            f"{', '.join(map(str, charges)) or 'none'}",
            markup=False, highlight=False, soft_wrap=True,
        )  # fmt: skip
        rows.append({"step": s.step, "status": s.status, "charges": charges,
                     "finished": None if s.done is None else s.done.finished})  # fmt: skip
    _print_budget(found)
    orphans = found.orphans()
    for entry in orphans:
        console.print(
            f"charged with no finished step (its output was lost; the charge stands): entry "
            f"{entry.id} {entry.label!r}, epsilon={entry.record.epsilon:g}",
            markup=False, highlight=False,
        )  # fmt: skip
    if out is not None:
        payload = {"steps": rows, "orphans": [e.id for e in orphans]}
        write_outputs(outputs, {"--out": json_writer(payload)})


@app.command(epilog=examples("attrpriv project report attrpriv.yaml --html dossier.html"))
def report(project: ProjectFile, html: PageOption = None) -> None:
    """Write the dossier page of the finished steps (from their stored outputs only)."""
    from attrpriv.project import Project

    if html is None:
        raise InputError("--html is needed: the page to write")
    outputs = Outputs()
    outputs.add("--html", html)
    write_outputs(outputs, {"--html": text_writer(_dossier(Project.from_yaml(project)))})


def _dossier(project: Project) -> str:
    from attrpriv.report.dossier import render_dossier_html

    page: str = render_dossier_html(project)
    return page


def _print_budget(project: Project) -> None:
    """Each unit's budget, what is used and what is left."""
    summary = project.result().ledger
    if summary is None:
        return
    shown = {u.unit: u for u in (*summary.units, *summary.columns) if u.budget is not None}
    for unit in shown.values():
        assert unit.budget is not None
        left = "-" if unit.remaining is None else f"{unit.remaining.epsilon:.4g}"
        console.print(
            f"budget of {unit.unit}: epsilon={unit.budget.epsilon:g}, used {unit.used.epsilon:.4g}"
            f", left {left} (ledger {summary.path})",
            markup=False, highlight=False, soft_wrap=True,
        )  # fmt: skip
