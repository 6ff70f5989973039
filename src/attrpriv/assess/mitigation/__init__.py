"""Mitigation strategies (step 210): drop, generalize, local DP noise, synthetic, encrypt.

Each strategy's ``apply(X, features, *, seed=0, y=None)`` returns a NEW frame (the input is never
modified) and leaves an :class:`Applied` record in ``strategy.applied_``. :func:`parse_strategy`
reads the CLI forms::

    drop | generalize[:BINS[:quantile|tree]] | ldp:EPSILON | synthetic | encrypt
"""

from __future__ import annotations

from attrpriv.assess.mitigation.base import Applied, Drop, Mitigation, Strategy
from attrpriv.assess.mitigation.encrypt import Encrypt
from attrpriv.assess.mitigation.generalize import Generalize
from attrpriv.assess.mitigation.ldp import LocalDPNoise
from attrpriv.assess.mitigation.spec import parse_strategy
from attrpriv.assess.mitigation.synthetic import SyntheticReplacement

__all__ = [
    "Applied",
    "Drop",
    "Encrypt",
    "Generalize",
    "LocalDPNoise",
    "Mitigation",
    "Strategy",
    "SyntheticReplacement",
    "parse_strategy",
]
