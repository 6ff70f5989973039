"""Progress: a plain line per step when stderr is a log, a redrawn bar on a terminal."""

from __future__ import annotations

import io

from attrpriv._progress import progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_log_gets_one_line_per_step() -> None:
    log = io.StringIO()
    with progress("training", 3, stream=log) as advance:
        advance(detail="loss=1.5")
        advance()
        advance(done=3)
    assert log.getvalue().splitlines() == [
        "training: 1/3 loss=1.5",
        "training: 2/3",
        "training: 3/3",
    ]


def test_an_unknown_total_and_a_total_learned_later() -> None:
    log = io.StringIO()
    with progress("chunks", stream=log) as advance:
        advance()
        advance(done=2, total=4)
    assert log.getvalue().splitlines() == ["chunks: 1", "chunks: 2/4"]


def test_disabled_progress_writes_nothing_and_a_terminal_gets_no_lines() -> None:
    log = io.StringIO()
    with progress("quiet", 2, enabled=False, stream=log) as advance:
        advance()
    assert log.getvalue() == ""
    screen = Terminal()
    with progress("bar", 2, stream=screen) as advance:
        advance()
        advance()
    assert "bar: 1/2\n" not in screen.getvalue()  # a bar, redrawn in place, not log lines


def test_a_log_of_a_long_job_gets_a_line_per_tenth_and_one_every_30_seconds(monkeypatch) -> None:
    clock = iter(float(t) for t in range(1000))
    monkeypatch.setattr("attrpriv._progress.time.monotonic", lambda: next(clock))
    log = io.StringIO()
    with progress("tasks", 100, stream=log) as advance:
        for _ in range(100):
            advance()
    lines = log.getvalue().splitlines()
    assert lines[0] == "tasks: 1/100" and lines[-1] == "tasks: 100/100"
    assert [f"tasks: {n}/100" for n in range(10, 101, 10)] == lines[1:]  # one tick a step
    slow = iter(float(40 * t) for t in range(1000))
    monkeypatch.setattr("attrpriv._progress.time.monotonic", lambda: next(slow))
    log = io.StringIO()
    with progress("slow", 100, stream=log) as advance:
        for _ in range(5):
            advance()
    assert len(log.getvalue().splitlines()) == 5  # 40 s apart: every step is due
