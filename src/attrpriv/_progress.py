"""Progress of long work, on stderr: a live bar on a terminal, a plain line per step elsewhere.

In a log file, with a known total, only about a dozen lines are written (first, each tenth, last,
and after 30 s of silence).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

__all__ = ["Advance", "progress"]

QUIET_SECONDS = 30.0  # a log gets a line at least this often while steps are done

Advance = Callable[..., None]
"""``advance(done=None, total=None, detail="")``: one more step (or ``done`` steps in all)."""


@contextmanager
def progress(
    description: str,
    total: int | None = None,
    *,
    enabled: bool = True,
    stream: TextIO | None = None,
) -> Iterator[Advance]:
    """Report the steps of ``description`` on ``stream`` (default stderr).

    Yields ``advance(done=None, total=None, detail="")``, to call after each step.
    """
    if not enabled:
        yield _ignore
        return
    out = sys.stderr if stream is None else stream
    if out.isatty():
        with _bar(description, total, out) as advance:
            yield advance
        return
    yield _lines(description, total, out)


def _ignore(done: int | None = None, total: int | None = None, detail: str = "") -> None:
    """Progress switched off."""


def _lines(description: str, total: int | None, out: TextIO) -> Advance:
    state: dict[str, float | None] = {"done": 0, "total": total, "tenth": -1, "at": None}

    def advance(done: int | None = None, total: int | None = None, detail: str = "") -> None:
        state["done"] = (state["done"] or 0) + 1 if done is None else done
        if total is not None:
            state["total"] = total
        count, steps, now, last = (
            int(state["done"] or 0),
            state["total"],
            time.monotonic(),
            state["at"],
        )
        tenth = int(10 * count / steps) if steps else -1
        due = (
            not steps
            or last is None
            or count >= steps
            or tenth > (state["tenth"] or 0)
            or now - last >= QUIET_SECONDS
        )
        if not due:
            return
        state["tenth"], state["at"] = tenth, now
        shown = f"{count}/{int(steps)}" if steps else str(count)
        out.write(f"{description}: {shown}{' ' + detail if detail else ''}\n")
        out.flush()

    return advance


@contextmanager
def _bar(description: str, total: int | None, out: TextIO) -> Iterator[Advance]:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())  # fmt: skip
    with Progress(*columns, console=Console(file=out), transient=True) as bar:
        task = bar.add_task(description, total=total)

        def advance(done: int | None = None, total: int | None = None, detail: str = "") -> None:
            shown = f"{description} {detail}" if detail else description
            if done is None:
                bar.update(task, advance=1, total=total, description=shown)
            else:
                bar.update(task, completed=done, total=total, description=shown)

        yield advance
