"""YAML as users expect it (1.2 scalars): `yes`/`no`/`on` stay text, `1e-3` is a number, and a
key given twice in one mapping is an error.

PyYAML keeps the last of repeated keys, so ``epsilon: 1`` then ``epsilon: 50`` would release at
50; every YAML file attrpriv reads goes through this loader (libyaml where available).
"""

from __future__ import annotations

import re
from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

import yaml

if TYPE_CHECKING or not hasattr(yaml, "CSafeLoader"):
    _SafeLoader = yaml.SafeLoader
else:
    _SafeLoader = yaml.CSafeLoader


class Yaml12Loader(_SafeLoader):
    """Safe YAML with YAML 1.2 booleans, exponent floats without a dot, and unique keys."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        """The mapping of ``node``; a key that appears twice raises ``ConstructorError``."""
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                line = key_node.start_mark.line + 1
                if isinstance(key, Hashable) and key in seen:
                    raise yaml.constructor.ConstructorError(
                        None,
                        None,
                        f"repeated key {key!r} (line {seen[key]} and line {line}): "
                        "each key may appear once",
                        key_node.start_mark,
                    )
                if isinstance(key, Hashable):
                    seen[key] = line
        return super().construct_mapping(node, deep=deep)


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
