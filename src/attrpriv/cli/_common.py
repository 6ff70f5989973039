"""Shared CLI plumbing: one-line errors with exit codes, JSON output, rich console, and the
options more than one command takes (declared once here, as ``Annotated`` aliases).

Everything at module level is light (typer, rich): the library, pandas and numpy are imported
inside the functions that use them, so that ``attrpriv --help`` starts fast.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from attrpriv.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

console = Console()
err_console = Console(stderr=True)

# The sub-command groups, in the order `attrpriv --help` lists them, with their one-line help.
GROUP_HELP = {
    "datasets": "The bundled datasets (offline): list them, show one, export one.",
    "assess": "Which features of a model leak, and what to do about them.",
    "release": "Publish statistics under formal privacy guarantees.",
    "sanitize": "Share data with its sensitive attribute replaced by private synthetic values.",
    "budget": "The privacy-budget ledger (a SQLite file): set a budget per privacy unit, show "
    "the spend.",
}

OUT_HELP = "Write the machine-readable result as JSON to this file (written atomically)."
TABLE_SUFFIXES = (".parquet", ".pq", ".csv")


def check_out_path(path: Path | None, option: str) -> None:
    """Refuse an output path that cannot be written, before any work is done.

    The atomic writers create missing parent folders, so the nearest existing one must be a
    folder; the path itself must not be one.
    """
    if path is None:
        return
    if path.is_dir():
        raise InputError(f"{option} {str(path)!r} is a directory; expected a file path")
    parent = next((p for p in path.parents if p.exists()), Path())
    if not parent.is_dir():
        raise InputError(f"{option} {str(path)!r}: {str(parent)!r} is a file, not a directory")


def out_path_callback(param: typer.CallbackParam, value: Path | None) -> Path | None:
    """Typer callback: check an output file option while the command line is parsed."""
    check_out_path(value, max(param.opts, key=len))
    return value


def output_option(help_text: str) -> Any:
    """A ``typer.Option`` for an output file, checked while the command line is parsed."""
    return typer.Option(help=help_text, callback=out_path_callback)


# -- options of several commands -----------------------------------------------------------------

OutFile = Annotated[Path | None, output_option(OUT_HELP)]
HtmlFile = Annotated[Path | None, output_option("Write the HTML report to this file.")]
DataArgument = Annotated[str, typer.Argument(help="Bundled dataset name, or a CSV/Parquet file.")]
DatasetArgument = Annotated[
    str, typer.Argument(help="Bundled dataset name (see `attrpriv datasets list`).")
]
SchemaOption = Annotated[
    Path | None, typer.Option("--schema", help="Schema file (.yaml/.json) for a data file.")
]
InferOption = Annotated[
    bool,
    typer.Option("--infer-schema", help="Read domains from the data (leaks them; warned)."),
]
LedgerOption = Annotated[
    Path | None, typer.Option("--ledger", help="Charge the release to this budget ledger.")
]
HistogramsEpsilon = Annotated[
    float, typer.Option("--epsilon", help="Privacy loss of all histograms together.")
]
# sanitize
DecouplerOption = Annotated[
    Path, typer.Option("--decoupler", help="Directory written by 'sanitize fit'.")
]
BoundOption = Annotated[
    float, typer.Option("--bound", help="Public clipping bound of the latents.")
]
RowsOption = Annotated[
    int | None,
    typer.Option(
        "--rows",
        min=1,
        help="Use a seeded sample of this many rows (or images) of each data set given.",
    ),
]
SeedOption = Annotated[int, typer.Option("--seed", help="Seed of training / sampling.")]


def write_table(frame: pd.DataFrame, path: Path) -> None:
    """Write ``frame`` atomically as CSV (``.csv``) or Parquet (any other table suffix)."""
    from attrpriv._io import atomic_path

    with atomic_path(path) as tmp:
        if path.suffix.lower() == ".csv":
            frame.to_csv(tmp, index=False)
        else:
            frame.to_parquet(tmp)


def write_json(out: Path | None, payload: Any) -> None:
    """Write ``payload`` to ``out`` atomically when ``out`` is given, and say where."""
    if out is None:
        return
    from attrpriv._io import atomic_write_json

    atomic_write_json(out, payload)
    console.print(f"[dim]wrote {out}[/dim]")


def examples(*lines: str) -> str:
    """Format command examples for a ``--help`` epilog (rich markup keeps the line breaks)."""
    body = "\n\n".join(f"  $ {line}" for line in lines)
    return f"[bold]Examples[/bold]\n\n{body}"


def group(name: str, help_text: str | None = None) -> typer.Typer:
    """A sub-command group with the project's conventions.

    Its help is its line in :data:`GROUP_HELP` (what ``attrpriv --help`` lists) unless given.
    """
    return typer.Typer(
        name=name,
        help=GROUP_HELP[name] if help_text is None else help_text,
        no_args_is_help=True,
        rich_markup_mode="rich",
        pretty_exceptions_enable=False,
    )


@contextlib.contextmanager
def warnings_printed() -> Iterator[None]:
    """Print the warnings raised inside as one line each on stderr (``warning: ...``).

    Around reading data: ``--infer-schema`` warns that the domains were read off the data.
    """
    from attrpriv.data.schema import PrivateDomainWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PrivateDomainWarning)
        yield
    for warning in caught:
        err_console.print(f"warning: {warning.message}", markup=False, highlight=False)


def split_names(text: str | None) -> list[str] | None:
    """``"a,b , c"`` -> ``["a", "b", "c"]``; ``None`` stays ``None``."""
    if text is None:
        return None
    names = [part.strip() for part in text.split(",") if part.strip()]
    if not names:
        raise InputError(f"expected a comma-separated list of column names, got {text!r}")
    return names
