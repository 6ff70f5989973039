"""``attrpriv sanitize``: the command group; each command is a module of this package.

Importing it loads nothing heavy: the library, pandas and torch load when a command runs.
"""

from __future__ import annotations

from attrpriv.cli._common import group

app = group("sanitize")
