"""The quick commands start without the heavy libraries; the root help lists every group."""

from __future__ import annotations

import subprocess
import sys
from importlib import import_module

import pytest

from attrpriv.cli import GROUP_MODULES
from attrpriv.cli._common import GROUP_HELP

HEAVY = ("duckdb", "jinja2", "matplotlib", "pandas", "scipy", "sklearn", "torch")


def _loaded_after(code: str) -> set[str]:
    """Top-level packages among HEAVY that a fresh interpreter holds after running ``code``."""
    probe = f"{code}\nimport sys\nprint(' '.join(sorted({{m.split('.')[0] for m in sys.modules}})))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return set(out.stdout.split()) & set(HEAVY)


@pytest.mark.parametrize("args", [["--help"], ["--version"], []])
def test_root_help_and_version_load_no_heavy_library(args: list[str]) -> None:
    code = f"from attrpriv.cli import main\nmain({args!r})"
    assert _loaded_after(code) == set()


def test_import_attrpriv_loads_neither_duckdb_nor_pandas() -> None:
    assert _loaded_after("import attrpriv") == set()
    assert "duckdb" not in _loaded_after("import attrpriv.data")


def test_every_group_is_listed_with_its_own_help() -> None:
    assert list(GROUP_MODULES) == list(GROUP_HELP)
    for name, modules in GROUP_MODULES.items():
        app = import_module(modules[0]).app
        assert (app.info.name, app.info.help) == (name, GROUP_HELP[name])


@pytest.mark.parametrize("args", [["assess", "--help"], ["assess", "run", "--help"]])
def test_the_assess_help_loads_no_heavy_library(args: list[str]) -> None:
    code = f"from attrpriv.cli import main\nmain({args!r})"
    assert _loaded_after(code) == set()
