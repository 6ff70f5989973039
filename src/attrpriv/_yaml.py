"""YAML as users expect it (1.2 scalars): `yes`/`no`/`on` stay text, `1e-3` is a number.

PyYAML implements YAML 1.1, where ``no`` is false (so a category list ``[yes, no]`` becomes
booleans) and ``1e-3`` is a string. Every YAML file attrpriv reads goes through this loader.
It parses with libyaml where PyYAML was built with it (several times faster on the bundled
schemas, which ``attrpriv datasets list`` reads on every run).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import yaml

if TYPE_CHECKING or not hasattr(yaml, "CSafeLoader"):
    _SafeLoader = yaml.SafeLoader
else:
    _SafeLoader = yaml.CSafeLoader


class Yaml12Loader(_SafeLoader):
    """Safe YAML with YAML 1.2 booleans (true/false only) and exponent floats without a dot."""


Yaml12Loader.yaml_implicit_resolvers = {
    key: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
    for key, resolvers in _SafeLoader.yaml_implicit_resolvers.items()
}
Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)[eE][-+]?[0-9]+$"),
    list("-+0123456789."),
)


def load_yaml(text: str) -> Any:
    """Parse YAML text with :class:`Yaml12Loader` (raises ``yaml.YAMLError`` on bad syntax)."""
    return yaml.load(text, Loader=Yaml12Loader)
