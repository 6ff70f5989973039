"""Modules that moved in the foundation v2 redesign keep working from their old import paths.

Each old module (``attrpriv.release.models``, ``attrpriv.assess.stats``, ...) is a thin file
that re-exports its old public names from their new home and calls :func:`warn_moved`.
"""

from __future__ import annotations

import warnings

# warn_moved -> the old module's body -> (import machinery, skipped by warnings) -> importer
_IMPORTER = 3


def warn_moved(old: str, new: str) -> None:
    """Warn, with a :class:`DeprecationWarning` pointing at the importer, that ``old`` moved.

    Called once, from the body of the old module, when it is first imported.
    """
    warnings.warn(
        f"{old} is deprecated: it moved to {new}; import from there instead",
        DeprecationWarning,
        stacklevel=_IMPORTER,
    )
