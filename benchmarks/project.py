"""One project file end to end: what each step did, what the mitigation bought, what was spent.

    python benchmarks/project.py adult-rf.yaml      # runs it (finished steps kept), then prints
    python benchmarks/project.py --write adult --model rf --out adult-rf.yaml   # the file used

``--write`` writes the project measured in docs/benchmarks.md: the table's training rows
(Adult: ``split=train``), the built-in ``--model`` on ``--max-rows`` of them, every single
feature, membership and attribute attacks, ``--repeats`` splits, threshold 0.02, the loop
``choose: best`` over regularize / generalize / drop within 0.02 of test accuracy; Laplace
histograms of the sensitive column, another and the target, and the sensitive column
block-resampled. Tables: Adult (tuned on) and German credit (not).

The run prints, as Markdown: each step's outcome with the wall and CPU seconds of the whole run
(the machine is shared: CPU beside wall), the flagged sets before mitigation (modified score and
CI), each mitigation step (set or model, strategy, total excess over the threshold, largest
score, utility paid, candidates probed), why the loop stopped, the sets still flagged after it
with their CIs, and each ledger unit's budget and use.
"""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

from attrpriv.project import Project

PROJECT = """\
name: {name}
data: {{source: {dataset}{where}}}
protect:
  row: {{epsilon: 3.0, delta: 1.0e-5}}
  columns: {{{sensitive}: {{epsilon: 3.0, delta: 1.0e-5}}}}
steps:
  assess: {{model: {model}, target: {target}, feature_sets: singles,
           attacks: [membership, attribute], threshold: 0.02, repeats: {repeats},
           max_rows: {max_rows}, sensitive: [{sensitive}]}}
  mitigate: {{strategies: [regularize, "generalize:5", drop], choose: best,
             max_utility_loss: 0.02, max_steps: {max_steps}}}
  release:
    - {{name: hist, columns: [{sensitive}, {other}, {target}], epsilon: 0.5}}
  sanitize:
    - {{name: {sensitive}-block, method: block, sensitive: {sensitive}, epsilon: 1.0}}
"""

TABLES = {
    "adult": ("split=train", "income", "sex", "race"),
    "german_credit": (None, "credit_risk", "personal_status_sex", "foreign_worker"),
}
"""Each table's rows (a ``where``), target, sensitive column and another released column."""


def cpu_seconds() -> float:
    """User + system CPU of this process and its finished children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def ci(low: float, high: float) -> str:
    return f"[{low:+.3f}, {high:+.3f}]"


def report(project: Project, outcomes: dict[str, str], wall: float, cpu: float) -> None:
    result = project.result()
    print(f"## {project.spec.name}: {wall:.0f} s wall, {cpu:.0f} s CPU\n")
    print("| step | outcome |\n|---|---|")
    for step, outcome in outcomes.items():
        print(f"| {step} | {outcome} |")
    first = result.assessment
    if first is not None:
        print(f"\nassessment: {first.settings.get('estimator', '')}, test {first.model.metric} "
              f"{first.model.utility_test:.3f}; flagged at {first.threshold:g}:")  # fmt: skip
        for risk in first.flagged:
            print(f"- {risk.label}: {risk.why}")
    mitigation = None if result.mitigation is None else result.mitigation.mitigation
    if mitigation is not None:
        print("\n| step | on | strategy | total excess | largest score | utility paid | "
              "candidates |\n|---|---|---|---|---|---|---|")  # fmt: skip
        for s in mitigation.steps:
            on = "-" if s.strategy is None else ("+".join(s.feature_set or ()) or "the model")
            excess = "-" if s.total_excess is None else f"{s.total_excess:.4f}"
            print(f"| {s.step} | {on} | {s.strategy or '-'} | {excess} | {s.max_score:+.4f} | "
                  f"{s.utility_paid:+.4f} | {len(s.candidates)} |")  # fmt: skip
        print(f"\nstopped: {mitigation.stopped}")
        final = project.state.step_folder("mitigate") / "final.json"
        from attrpriv.assess.report import RiskReport

        last = RiskReport.load(final)
        print(f"after: test {last.model.metric} {last.model.utility_test:.3f}; still flagged:")
        for risk in last.flagged or ():
            print(f"- {risk.label}: modified {risk.modified:+.3f} {ci(*risk.modified_ci)}")
        if not last.flagged:
            print("- none")
    if result.ledger is not None:
        print("\n| unit | budget epsilon | used epsilon |\n|---|---|---|")
        shown = {u.unit: u for u in (*result.ledger.units, *result.ledger.columns)}
        for unit in shown.values():
            if unit.budget is not None:
                print(f"| {unit.unit} | {unit.budget.epsilon:g} | {unit.used.epsilon:.4g} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("project", nargs="?", help="The project file to run and report.")
    parser.add_argument(
        "--write", choices=sorted(TABLES), help="Write the project file of a table."
    )
    parser.add_argument("--model", default="rf")
    parser.add_argument("--max-rows", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--max-steps", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    if args.write:
        where, target, sensitive, other = TABLES[args.write]
        out = args.out or Path(f"{args.write}-{args.model}.yaml")
        rows = "" if where is None else f', where: "{where}"'
        out.write_text(PROJECT.format(name=out.stem, dataset=args.write, where=rows,
                                      model=args.model, target=target, sensitive=sensitive,
                                      other=other,
                                      repeats=args.repeats, max_rows=args.max_rows,
                                      max_steps=args.max_steps))  # fmt: skip
        print(f"wrote {out}")
        return
    if args.project is None:
        parser.error("give a project file (or --write TABLE)")
    project = Project.from_yaml(args.project)
    started, cpu = time.perf_counter(), cpu_seconds()
    outcomes = project.run().outcomes
    report(project, outcomes, time.perf_counter() - started, cpu_seconds() - cpu)


if __name__ == "__main__":
    main()
