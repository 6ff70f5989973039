"""Every name a package advertises in ``__all__`` is the object it names, never a submodule.

A lazy ``__getattr__`` is asked only for names the package lacks; importing a submodule of the
same name sets that name on the package, which would then shadow the advertised object. So the
submodules are imported first, the worst order.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

import pytest

PACKAGES = [
    "attrpriv",
    "attrpriv.assess",
    "attrpriv.data",
    "attrpriv.data.aggregate",
    "attrpriv.dp",
    "attrpriv.release",
    "attrpriv.report",
    "attrpriv.sanitize",
]
NEEDS_TORCH = {"attrpriv", "attrpriv.sanitize"}  # walking them imports the torch modules


def _import_everything(package: ModuleType) -> None:
    for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
        importlib.import_module(info.name)


@pytest.mark.parametrize("name", PACKAGES)
def test_every_exported_name_is_the_advertised_object(name: str) -> None:
    if name in NEEDS_TORCH:
        pytest.importorskip("torch")
    package = importlib.import_module(name)
    _import_everything(package)
    exported = {attr: getattr(package, attr) for attr in package.__all__}
    modules = sorted(attr for attr, value in exported.items() if isinstance(value, ModuleType))
    assert not modules, f"{name} exports submodules instead of objects: {modules}"


def test_sweep_is_the_function_after_its_module_is_imported() -> None:
    pytest.importorskip("torch")
    importlib.import_module("attrpriv.sanitize.tradeoff")
    from attrpriv.sanitize import sweep

    assert callable(sweep) and not isinstance(sweep, ModuleType)
    assert sweep.__module__ == "attrpriv.sanitize.tradeoff"
