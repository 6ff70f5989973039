"""CLI start-up cost: CPU and wall seconds of the quick ``attrpriv`` commands, fresh each time.

    python benchmarks/cli_startup.py              # each command 5 times
    python benchmarks/cli_startup.py --repeat 20

Each run is a fresh interpreter doing what the ``attrpriv`` console script does (import
``attrpriv.cli`` and run it); its CPU time (user + system) is the child's own resource usage,
so it counts every thread it started. Prints a Markdown table against the 0.5 s CPU target.
"""

from __future__ import annotations

import argparse
import platform
import resource
import statistics
import subprocess
import sys
import time

COMMANDS = (("--help",), ("--version",), ("datasets", "list"))
TARGET_CPU_S = 0.5
SCRIPT = "import sys; from attrpriv.cli import run; sys.argv[0] = 'attrpriv'; run()"


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(args: tuple[str, ...]) -> tuple[float, float]:
    """CPU and wall seconds of one fresh ``attrpriv ARGS`` (its output is discarded)."""
    cpu, start = _children_cpu(), time.perf_counter()
    subprocess.run([sys.executable, "-c", SCRIPT, *args], check=True, stdout=subprocess.DEVNULL)
    return _children_cpu() - cpu, time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs of each command")
    repeat = parser.parse_args(argv).repeat
    print(f"python {platform.python_version()}, {repeat} fresh runs per command\n")
    print("| command | CPU s min | CPU s median | wall s min | wall s median | target CPU s |")
    print("|---|---:|---:|---:|---:|---:|")
    for args in COMMANDS:
        cpu, wall = zip(*(measure(args) for _ in range(repeat)), strict=True)
        print(
            f"| attrpriv {' '.join(args)} | {min(cpu):.3f} | {statistics.median(cpu):.3f} "
            f"| {min(wall):.3f} | {statistics.median(wall):.3f} | {TARGET_CPU_S} |"
        )


if __name__ == "__main__":
    main()
