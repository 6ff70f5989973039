"""``attrpriv release quilt``: the Markov quilt mechanism on state sequences from a CSV file."""

from __future__ import annotations

from collections.abc import Hashable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from attrpriv.cli._common import LedgerOption, OutFile, console, epsilon_callback, examples
from attrpriv.cli.release import (
    CountsOption,
    ReleaseHtml,
    app,
    open_ledger,
    print_counts,
    print_summary,
    release_outputs,
    write_release,
)
from attrpriv.errors import InputError

if TYPE_CHECKING:
    import numpy as np


@app.command(
    "quilt",
    epilog=examples(
        'attrpriv release quilt --transition "0.9,0.1;0.2,0.8" --states 0,1 '
        "--sequence activity.csv --epsilon 1",
        'attrpriv release quilt --transition "0.8,0.2;0.3,0.7" --states rest,active '
        "--sequence log.csv --column state --by person --method approx --epsilon 2 --out q.json "
        "--html q.html",
    ),
)
def quilt(
    transition: Annotated[
        str, typer.Option(help="Transition matrix: rows separated by ';', entries by ','.")
    ],
    sequence: Annotated[Path, typer.Option(help="CSV file holding the chain(s) of states.")],
    epsilon: Annotated[
        float,
        typer.Option(help="Pufferfish privacy parameter (> 0).", callback=epsilon_callback),
    ],
    states: Annotated[
        str | None,
        typer.Option(help="Comma-separated state labels in matrix order; default 0..k-1."),
    ] = None,
    initial: Annotated[
        str | None, typer.Option(help="Initial distribution; default the stationary one.")
    ] = None,
    column: Annotated[
        str | None, typer.Option(help="Column of the states; default the file's only column.")
    ] = None,
    by: Annotated[
        str | None, typer.Option(help="Split rows into independent chains by this column.")
    ] = None,
    method: Annotated[str, typer.Option(help="'exact' or 'approx' max-influence.")] = "exact",
    query: Annotated[
        str, typer.Option(help="'histogram' of states or 'sum' of them.")
    ] = "histogram",
    ledger: LedgerOption = None,
    out: OutFile = None,
    html: ReleaseHtml = None,
    counts: CountsOption = "non-negative",
) -> None:
    """Release a chain's state histogram (or sum) hiding any single state (Markov quilts)."""
    from attrpriv.release.markov_quilt.chain_mechanism import MarkovQuiltMechanism
    from attrpriv.release.markov_quilt.chain_model import MarkovChainModel

    outputs = release_outputs(out, html)
    matrix = parse_matrix(transition, "--transition", square=True)
    start = parse_matrix(initial, "--initial")[0] if initial is not None else None
    model = (
        MarkovChainModel.stationary(matrix) if start is None else MarkovChainModel(start, matrix)
    )
    labels = _labels(states, model.n_states)
    chains = _read_chains(sequence, column, by, labels)
    mechanism = MarkovQuiltMechanism(model, epsilon, states=labels, query=query, method=method)
    book = open_ledger(ledger)
    result = mechanism.release(chains, ledger=book, label=f"quilt of {sequence.name}")
    histogram = query == "histogram"  # counts; a sum is shown as released
    if histogram:
        print_counts(result, counts, title="state")
    else:
        console.print(f"noisy sum: {result.values:.6g}")
    print_summary(f"epsilon={epsilon:g} (pufferfish, {method}); {len(chains)} chain(s)", result)
    write_release(outputs, result, book, title=f"Markov quilt release of {sequence.name}",
                  counts=counts if histogram else None)  # fmt: skip


def parse_matrix(text: str, name: str, *, square: bool = False) -> np.ndarray:
    """``"0.9,0.1;0.2,0.8"`` -> a 2-d float array (one row per ';'); ``square``: k x k."""
    import numpy as np

    try:
        rows = [[float(x) for x in row.split(",")] for row in text.split(";") if row.strip()]
    except ValueError:
        raise InputError(
            f"{name} must be numbers separated by ',' with rows separated by ';', got {text!r}"
        ) from None
    if not rows or len({len(r) for r in rows}) != 1:
        raise InputError(f"{name} must have rows of equal length, got {text!r}")
    if square and len(rows) != len(rows[0]):
        raise InputError(
            f"{name} must be a square matrix (one row per state, each with one probability per "
            f"state, rows separated by ';'), got {len(rows)} row(s) of {len(rows[0])}: {text!r}"
        )
    return np.array(rows)


def _labels(text: str | None, k: int) -> tuple[Hashable, ...]:
    if text is None:
        return tuple(range(k))
    return tuple(_parse_value(part.strip()) for part in text.split(","))


def _parse_value(text: str) -> Hashable:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    return text


def _read_chains(
    path: Path, column: str | None, by: str | None, labels: tuple[Hashable, ...]
) -> list[list[Hashable]]:
    """The chains in a CSV/Parquet file: a column of state labels, optionally split by ``by``."""
    import numpy as np

    from attrpriv.data.read import read_data

    frame = read_data(path, as_text=True, require_schema=False, what="sequence file").frame
    names = [c for c in frame.columns if c != by]
    if column is None and len(names) != 1:
        raise InputError(f"sequence file has columns {list(frame.columns)}; pass --column")
    column = column if column is not None else names[0]
    for needed in (column, by):
        if needed is not None and needed not in frame.columns:
            raise InputError(f"column {needed!r} is not in {str(path)!r}: {list(frame.columns)}")
    label_of = {str(label): label for label in labels}
    values = [label_of.get(str(v).strip(), v) for v in frame[column]]
    if by is None:
        return [values]
    keys = frame[by].to_numpy()
    return [[values[i] for i in np.flatnonzero(keys == key)] for key in dict.fromkeys(keys)]


__all__ = ["parse_matrix", "quilt"]
