"""``project init``: a commented project file drafted for a dataset, for the user to review.

The draft assesses the model, mitigates with the loop's best step within a utility budget,
releases histograms of the sensitive columns and a block-resampled table, with budgets that
cover that plan. See docs/project.md.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from attrpriv.data.schema import Categorical, Role, Schema
from attrpriv.errors import InputError

TEMPLATE = """\
# A project drafted by 'attrpriv project init': review every line, then run
#   attrpriv project run {file}
# Paths are relative to this file. Keys: docs/project.md.
name: {name}
data:
  source: {source}{schema}
protect:                 # one budget ledger for every step that spends privacy budget
  row: {{epsilon: 3.0, delta: 1.0e-5}}      # each row (dp/add-remove)
  columns:               # each protected column's values (dp/substitute:<column>)
{columns}
steps:
  assess:                # which features make the model leak
    model: hgb
    target: {target}
    sensitive: {sensitive}
    threshold: 0.05
    max_rows: 5000
  mitigate:              # the step removing the most risk per utility lost, until none is flagged
    strategies: [regularize, "generalize:5", drop]
    choose: best
    max_utility_loss: 0.02   # test accuracy given up, at most, in all
    max_steps: 5
  release:               # statistics under row-level DP
    - name: histograms
      columns: {released}
      epsilon: 0.5
  sanitize:              # the table, with the sensitive column and its proxies redrawn under DP
    - name: {block}
      method: block
      sensitive: {first}
      epsilon: 1.0
"""


def draft_project(
    name: str,
    source: str,
    schema: Schema,
    *,
    target: str | None = None,
    sensitive: Sequence[str] = (),
    schema_file: str | None = None,
    file: str,
) -> str:
    """The YAML text of a drafted project for ``source``: ``target`` and ``sensitive`` (default
    the schema's roles), ``schema_file`` where its schema is kept (None: a bundled dataset)."""
    target = target or schema.target
    sensitive = list(sensitive) or list(schema.with_role(Role.SENSITIVE))
    for column in [*([target] if target else []), *sensitive]:
        if column not in schema:
            raise InputError(f"column {column!r} is not in the schema of {source!r}")
    if target is None:
        raise InputError(f"the schema of {source!r} has no target: name one with --target")
    if not sensitive:
        raise InputError(
            f"the schema of {source!r} has no sensitive column: name them with --sensitive"
        )
    categorical = [c for c in sensitive if isinstance(schema.domain(c), Categorical)]
    if not categorical:
        raise InputError(
            f"none of the sensitive columns {sensitive} is categorical: the drafted histogram "
            "and block steps need one"
        )
    columns = "\n".join(f"    {c}: {{epsilon: 2.0, delta: 1.0e-5}}" for c in sensitive)
    released = list(categorical)
    if isinstance(schema.domain(target), Categorical):
        released.append(target)
    return TEMPLATE.format(
        file=file,
        name=json.dumps(name),
        source=json.dumps(source),
        schema="" if schema_file is None else f"\n  schema: {json.dumps(schema_file)}",
        columns=columns,
        target=json.dumps(target),
        sensitive=_flow(sensitive),
        released=_flow(released),
        first=json.dumps(categorical[0]),
        block=json.dumps(f"{categorical[0]}-block"),
    )


def _flow(names: Sequence[str]) -> str:
    return "[" + ", ".join(json.dumps(n) for n in names) + "]"
