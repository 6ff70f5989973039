"""Shared CLI plumbing: one-line errors with exit codes, JSON output, rich console."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from attrpriv._io import atomic_write_json

console = Console()
err_console = Console(stderr=True)

OUT_HELP = "Write the machine-readable result as JSON to this file (written atomically)."


def write_json(out: Path | None, payload: Any) -> None:
    """Write ``payload`` to ``out`` atomically when ``out`` is given, and say where."""
    if out is None:
        return
    atomic_write_json(out, payload)
    console.print(f"[dim]wrote {out}[/dim]")


def examples(*lines: str) -> str:
    """Format command examples for a ``--help`` epilog (rich markup keeps the line breaks)."""
    body = "\n\n".join(f"  $ {line}" for line in lines)
    return f"[bold]Examples[/bold]\n\n{body}"


def group(name: str, help_text: str) -> typer.Typer:
    """A sub-command group with the project's conventions."""
    return typer.Typer(
        name=name,
        help=help_text,
        no_args_is_help=True,
        rich_markup_mode="rich",
        pretty_exceptions_enable=False,
    )
