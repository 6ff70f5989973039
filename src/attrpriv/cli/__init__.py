"""The ``attrpriv`` command: one sub-command group per job, thin over the library.

Exit codes: 0 success, 2 bad input (one line on stderr), 1 unexpected failure.

A group's modules are imported only when one of its commands runs or shows its help; the root
help lists the groups from :data:`~attrpriv.cli._common.GROUP_HELP`, so ``attrpriv --help`` and
``attrpriv --version`` load neither the library nor pandas, scikit-learn, DuckDB or torch.
"""

from __future__ import annotations

import inspect
import sys
from importlib import import_module
from typing import TYPE_CHECKING, Annotated

import typer
from typer.core import TyperGroup

from attrpriv import __version__
from attrpriv.cli._common import GROUP_HELP, err_console, examples
from attrpriv.errors import InputError, restore_private_values, show_private_values

if TYPE_CHECKING:
    from typer._click import Command, Context  # the click that typer vendors and builds on

# typer >= 0.2x vendors click (typer._click); older versions raise click's own classes. Both
# are found through the public typer.BadParameter, so click need not be installed.
CLICK_ERRORS: tuple[type[Exception], ...] = tuple(
    c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException"
)

# The modules of each group: the first defines the group's ``app``, the others add commands to it.
GROUP_MODULES: dict[str, tuple[str, ...]] = {
    "datasets": ("attrpriv.cli.datasets",),
    "schema": ("attrpriv.cli.schema",),
    "assess": ("attrpriv.cli.assess",),
    "release": (
        "attrpriv.cli.release",
        "attrpriv.cli.release_attribute",
        "attrpriv.cli.release_ddp",
        "attrpriv.cli.release_quilt",
    ),
    "sanitize": (
        "attrpriv.cli.sanitize",
        "attrpriv.cli.sanitize.fit",
        "attrpriv.cli.sanitize.apply",
        "attrpriv.cli.sanitize.evaluate",
        "attrpriv.cli.sanitize.resample",
        "attrpriv.cli.sanitize.synthesize",
    ),
    "budget": ("attrpriv.cli.budget",),
    "project": ("attrpriv.cli.project",),
}


def tidy_help(command: Command, ctx: Context) -> None:
    """Help as it is meant to read, for ``command`` and every sub-command.

    A flag shows as ``--debug``, not ``--debug <bool>`` (typer shows every option's type, flags
    and ``--help`` too; an empty metavar drops it), and a docstring's paragraphs are reflowed
    to the terminal (rich markup keeps the source's line breaks inside a paragraph).
    """
    for param in command.get_params(ctx):
        if getattr(param, "is_flag", False) and getattr(param, "metavar", "") is None:
            param.metavar = ""
    if command.help:
        paragraphs = inspect.cleandoc(command.help).split("\n\n")
        command.help = "\n\n".join(" ".join(p.split()) for p in paragraphs)
    for sub in getattr(command, "commands", {}).values():
        tidy_help(sub, ctx)


class LazyGroups(TyperGroup):
    """The root command: imports a sub-command group's modules when the group is first used."""

    listing = False  # True while the root help is written: groups are then only listed

    def list_commands(self, ctx: Context) -> list[str]:
        return list(dict.fromkeys([*GROUP_MODULES, *super().list_commands(ctx)]))

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is not None or cmd_name not in GROUP_MODULES:
            return command
        if self.listing:
            return TyperGroup(name=cmd_name, help=GROUP_HELP[cmd_name])
        modules = [import_module(name) for name in GROUP_MODULES[cmd_name]]
        command = typer.main.get_group(modules[0].app)  # a group even of one command
        tidy_help(command, ctx)
        self.add_command(command, cmd_name)
        return command

    def get_help(self, ctx: Context) -> str:
        """The help text; the groups in it are listed by their lines in GROUP_HELP alone."""
        tidy_help(self, ctx)
        self.listing = True
        try:
            return super().get_help(ctx)
        finally:
            self.listing = False


app = typer.Typer(
    name="attrpriv",
    cls=LazyGroups,
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

_state = {"debug": False}


def _version(value: bool) -> None:
    if value:
        typer.echo(f"attrpriv {__version__}")
        raise typer.Exit


@app.callback()
def _root(
    debug: Annotated[
        bool,
        typer.Option(
            "--debug",
            help="Show tracebacks of failures, and the data values that errors are about.",
        ),
    ] = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    _state["debug"] = debug


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return (and, as a script, exit with) its exit code.

    ``--debug`` shows tracebacks of unexpected failures and lets error messages name the data
    values they are about (hidden otherwise: they may be private, and stderr ends up in logs).
    """
    _state["debug"] = "--debug" in (argv if argv is not None else sys.argv[1:])
    token = show_private_values(_state["debug"])
    try:
        return _run(argv)
    finally:
        restore_private_values(token)


def _run(argv: list[str] | None) -> int:
    try:
        result = app(args=argv, prog_name="attrpriv", standalone_mode=False)
    except InputError as exc:
        _error(f"error: {exc}")
        return 2
    except CLICK_ERRORS as exc:
        _error(usage_line(exc))
        return int(exc.exit_code)  # type: ignore[attr-defined]
    except typer.Exit as exc:
        return int(exc.exit_code)
    except typer.Abort:
        err_console.print("aborted", markup=False)
        return 1
    except Exception as exc:
        if _state["debug"]:
            raise
        _error(
            f"error: unexpected failure: {type(exc).__name__}: {exc} "
            "(rerun with --debug for the traceback)"
        )
        return 1
    return result if isinstance(result, int) else 0


def usage_line(exc: Exception) -> str:
    """A usage error (bad option, missing argument) as one line naming the command's help."""
    message = " ".join(exc.format_message().split())  # type: ignore[attr-defined]
    ctx = getattr(exc, "ctx", None)
    where = f" (see '{ctx.command_path if ctx is not None else 'attrpriv'} --help')"
    return f"error: {message}{where}"


def _error(line: str) -> None:
    err_console.print(line, markup=False, highlight=False, soft_wrap=True)


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())
