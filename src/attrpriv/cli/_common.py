"""Shared CLI plumbing: one-line errors with exit codes, JSON output, rich console, and the
options more than one command takes (declared once here, as ``Annotated`` aliases).

Everything at module level is light (typer, rich): the library, pandas and numpy are imported
inside the functions that use them, so that ``attrpriv --help`` starts fast.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from attrpriv.cli._outputs import Outputs, Writer, check_out_path, check_writable_folder
from attrpriv.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

    from attrpriv.data.schema import Schema

console = Console()
err_console = Console(stderr=True)

# The sub-command groups, in the order `attrpriv --help` lists them, with their one-line help.
GROUP_HELP = {
    "datasets": "The bundled datasets (offline): list them, show one, export one.",
    "schema": "Draft a schema file (roles and domains) for your own data, to edit and use.",
    "assess": "Which features of a model leak, and what to do about them.",
    "release": "Publish statistics under formal privacy guarantees.",
    "sanitize": "Share data with its sensitive attribute replaced by private synthetic values.",
    "budget": "The privacy-budget ledger (a SQLite file): set a budget per privacy unit, show "
    "the spend.",
    "project": "One project file from assessment to mitigation to releases, with one budget "
    "and one dossier page.",
}
# What each group's --help shows under its commands.
GROUP_EXAMPLES = {
    "datasets": ("attrpriv datasets list", "attrpriv datasets export anes96 anes.csv "
                 "--schema-out anes.yaml"),
    "schema": ("attrpriv schema draft survey.csv --sensitive answer --target vote "
               "--out survey.yaml",),
    "assess": ("attrpriv assess run german_credit --target credit_risk --model logreg "
               "--html report.html",),
    "release": ("attrpriv release histograms adult --columns race,sex --epsilon 1 "
                "--html hist.html",
                "attrpriv release ddp anes96 --epsilon 1 "
                "--modules 'popul,tv_news;self_lr,clin_lr'"),
    "sanitize": ("attrpriv sanitize resample adult --where split=test --sensitive sex "
                 "--epsilon 1 --out s.parquet",
                 "attrpriv sanitize fit mnist_5k --sensitive thickness --row-range ::2 "
                 "--out dec", "attrpriv sanitize apply mnist_5k --decoupler dec "
                 "--row-range 1::2 --epsilon 1 --out s.npz"),
    "budget": ("attrpriv budget set --ledger survey.ledger --epsilon 3 --delta 1e-6",
               "attrpriv budget show --ledger survey.ledger --html budget.html"),
    "project": ("attrpriv project init adult --out attrpriv.yaml",
                "attrpriv project run attrpriv.yaml --html dossier.html",
                "attrpriv project status attrpriv.yaml"),
}  # fmt: skip

OUT_HELP = "Write the machine-readable result as JSON to this file (written atomically)."
TABLE_SUFFIXES = (".parquet", ".pq", ".csv")
HTML_SUFFIXES = (".html", ".htm")


def out_path_callback(param: typer.CallbackParam, value: Path | None) -> Path | None:
    """Typer callback: check an output file option while the command line is parsed."""
    check_out_path(value, max(param.opts, key=len))
    return value


def check_suffix(path: Path | None, option: str, suffixes: tuple[str, ...]) -> None:
    """Refuse an output file whose name does not end in one of ``suffixes`` (any case): a
    page written into ``b.csv`` would be opened as a table."""
    if path is not None and path.suffix.lower() not in suffixes:
        raise InputError(f"{option} {str(path)!r} must end in {' or '.join(suffixes)}")


def html_path_callback(param: typer.CallbackParam, value: Path | None) -> Path | None:
    """Typer callback: check an HTML page option (a writable path ending in .html or .htm)
    while the command line is parsed."""
    option = max(param.opts, key=len)
    check_out_path(value, option)
    check_suffix(value, option, HTML_SUFFIXES)
    return value


def check_ledger(path: Path | None, option: str = "--ledger") -> None:
    """Refuse a ledger that cannot be written (a folder; no room for SQLite's journal beside
    it), before any work is done. A missing one is the ledger's own error (set a budget)."""
    if path is None or not path.exists():
        return
    if path.is_dir():
        raise InputError(f"{option} {str(path)!r} is a directory; expected a ledger file")
    if not os.access(path, os.W_OK):
        raise InputError(f"{option} {str(path)!r} is read-only: the release cannot be charged")
    check_writable_folder(path, option)


def ledger_callback(param: typer.CallbackParam, value: Path | None) -> Path | None:
    """Typer callback: check a ledger option while the command line is parsed."""
    check_ledger(value, max(param.opts, key=len))
    return value


def epsilon_callback(param: typer.CallbackParam, value: float | None) -> float | None:
    """Typer callback: the mechanisms' own ``EPSILON`` rule, applied while the command line is
    parsed so that a bad value is refused before any data is read or any schema inferred."""
    from attrpriv._checks import EPSILON

    return None if value is None else float(EPSILON(value, max(param.opts, key=len)))


def output_option(help_text: str) -> Any:
    """A ``typer.Option`` for an output file, checked while the command line is parsed."""
    return typer.Option(help=help_text, callback=out_path_callback)


def html_option(help_text: str) -> Any:
    """A ``typer.Option`` for an HTML page (.html or .htm), checked while the command line is
    parsed."""
    return typer.Option(help=help_text, callback=html_path_callback)


# -- options of several commands -----------------------------------------------------------------

OutFile = Annotated[Path | None, output_option(OUT_HELP)]
HtmlFile = Annotated[
    Path | None, html_option("Write the HTML report to this file (.html or .htm).")
]
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
AcceptInferredOption = Annotated[
    bool,
    typer.Option(
        "--accept-inferred",
        help="Release with a schema file that still marks domains as read off the data (a "
        "draft's 'inferred:' list): which values occur there, and their range, are not "
        "protected; the record lists those columns. By default such a schema is refused.",
    ),
]
LedgerOption = Annotated[
    Path | None,
    typer.Option(
        "--ledger", help="Charge the release to this budget ledger.", callback=ledger_callback
    ),
]
HistogramsEpsilon = Annotated[
    float,
    typer.Option(
        "--epsilon", help="Privacy loss of all histograms together.", callback=epsilon_callback
    ),
]
# sanitize
DecouplerOption = Annotated[
    Path, typer.Option("--decoupler", help="Directory written by 'sanitize fit'.")
]
BoundOption = Annotated[
    float | None,
    typer.Option(
        "--bound",
        help="Public clipping bound of the latents (default: the decoupler's latent bound, "
        "the 95th percentile of |z_S| on its auxiliary data).",
    ),
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


def table_writer(frame: pd.DataFrame, path: Path) -> Writer:
    """Write ``frame`` as CSV (``path`` ends in ``.csv``) or Parquet (any other table suffix)."""
    if path.suffix.lower() == ".csv":
        return lambda tmp: frame.to_csv(tmp, index=False)
    return lambda tmp: frame.to_parquet(tmp)


def text_writer(text: str) -> Writer:
    """Write ``text`` as UTF-8, flushed to disk."""

    def write(tmp: Path) -> None:
        with tmp.open("w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())

    return write


def json_writer(payload: Any) -> Writer:
    """Write ``payload`` as indented JSON."""
    import json

    from attrpriv._io import to_jsonable

    return text_writer(json.dumps(to_jsonable(payload), indent=2) + "\n")


def write_outputs(outputs: Outputs, writers: dict[str, Writer | None]) -> None:
    """Write the outputs that were asked for (``None`` writers are skipped), all or none, and
    say where each went, and which missing folders were made for them."""
    wanted = {option: w for option, w in writers.items() if w is not None}
    written = outputs.write(wanted)
    for option, folder in outputs.made.items():
        console.print(
            f"made folder {folder} for {option} (it did not exist)",
            style="dim",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    for path in written:
        console.print(f"wrote {path}", style="dim", markup=False, highlight=False, soft_wrap=True)


def write_json(out: Path | None, payload: Any, option: str = "--out") -> None:
    """Write ``payload`` to ``out`` as JSON when ``out`` is given (atomically), and say where."""
    if out is None:
        return
    outputs = Outputs()
    outputs.add(option, out)
    write_outputs(outputs, {option: json_writer(payload)})


def examples(*lines: str) -> str:
    """Format command examples for a ``--help`` epilog (rich markup keeps the line breaks)."""
    body = "\n\n".join(f"  $ {line}" for line in lines)
    return f"[bold]Examples[/bold]\n\n{body}"


def group(name: str, help_text: str | None = None) -> typer.Typer:
    """A sub-command group with the project's conventions.

    Its help is its line in :data:`GROUP_HELP` (what ``attrpriv --help`` lists) unless given,
    with the examples of :data:`GROUP_EXAMPLES` under its commands.
    """
    return typer.Typer(
        name=name,
        help=GROUP_HELP[name] if help_text is None else help_text,
        epilog=examples(*GROUP_EXAMPLES[name]),
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


def check_reviewed(schema: Schema | None, path: Path | None, accept: bool) -> None:
    """Refuse a schema file whose domains are still marked as read off the data (a draft not
    reviewed), unless ``--accept-inferred``: its categories and ranges would be private facts
    released outside any guarantee, decided by the rows the draft was read from."""
    if schema is None or path is None or not schema.inferred or accept:
        return
    names = list(schema.inferred)
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    raise InputError(
        f"schema file {str(path)!r} still marks the domains of {shown} as read off the data "
        "('inferred:'): replace them with public domains and delete that list, or pass "
        "--accept-inferred to release with them (the record lists them)"
    )


def split_names(text: str | None) -> list[str] | None:
    """``"a,b , c"`` -> ``["a", "b", "c"]``; ``None`` stays ``None``."""
    if text is None:
        return None
    names = [part.strip() for part in text.split(",") if part.strip()]
    if not names:
        raise InputError(f"expected a comma-separated list of column names, got {text!r}")
    return names
