"""The ``attrpriv`` command: one sub-command group per job, thin over the library.

Exit codes: 0 success, 2 bad input (one line on stderr), 1 unexpected failure.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from attrpriv import __version__
from attrpriv.cli import (  # noqa: F401 (release_* register their commands on release.app)
    assess,
    budget,
    datasets,
    release,
    release_attribute,
    release_ddp,
    release_quilt,
    sanitize,
)
from attrpriv.cli._common import err_console, examples
from attrpriv.errors import InputError

# typer >= 0.2x vendors click (typer._click); older versions raise click's own classes. Both
# are found through the public typer.BadParameter, so click need not be installed.
CLICK_ERRORS: tuple[type[Exception], ...] = tuple(
    c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException"
)

app = typer.Typer(
    name="attrpriv",
    help="Attribute privacy: assess which features leak, release statistics, sanitize data.",
    epilog=examples(
        "attrpriv datasets list",
        "attrpriv datasets show adult",
        "attrpriv budget show --ledger project.ledger",
    ),
    no_args_is_help=True,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(datasets.app)
app.add_typer(assess.app)
app.add_typer(release.app)
app.add_typer(sanitize.app)
app.add_typer(budget.app)

_state = {"debug": False}


def _version(value: bool) -> None:
    if value:
        typer.echo(f"attrpriv {__version__}")
        raise typer.Exit


@app.callback()
def _root(
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks of failures.")] = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    _state["debug"] = debug


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return (and, as a script, exit with) its exit code."""
    _state["debug"] = "--debug" in (argv if argv is not None else sys.argv[1:])
    try:
        result = app(args=argv, prog_name="attrpriv", standalone_mode=False)
    except InputError as exc:
        err_console.print(f"error: {exc}", markup=False, highlight=False, soft_wrap=True)
        return 2
    except CLICK_ERRORS as exc:
        exc.show()  # type: ignore[attr-defined]
        return int(exc.exit_code)  # type: ignore[attr-defined]
    except typer.Exit as exc:
        return int(exc.exit_code)
    except typer.Abort:
        err_console.print("aborted", markup=False)
        return 1
    except Exception as exc:
        if _state["debug"]:
            raise
        err_console.print(
            f"error: unexpected failure: {type(exc).__name__}: {exc} "
            "(rerun with --debug for the traceback)",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        return 1
    return result if isinstance(result, int) else 0


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())
