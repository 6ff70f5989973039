"""Mitigation strategies (drop, generalize, ldp, synthetic, encrypt): ``apply`` returns a new frame
and sets ``applied_``; ``Regularize.apply_model`` returns a more regularized model instead. See
docs/assess/mitigation.md.
"""

from __future__ import annotations

from attrpriv.assess.mitigation.base import Applied, Drop, Mitigation, ModelMitigation, Strategy
from attrpriv.assess.mitigation.encrypt import Encrypt
from attrpriv.assess.mitigation.generalize import Generalize
from attrpriv.assess.mitigation.ldp import LocalDPNoise
from attrpriv.assess.mitigation.regularize import Regularize
from attrpriv.assess.mitigation.spec import parse_strategy
from attrpriv.assess.mitigation.synthetic import SyntheticReplacement

__all__ = [
    "Applied",
    "Drop",
    "Encrypt",
    "Generalize",
    "LocalDPNoise",
    "Mitigation",
    "ModelMitigation",
    "Regularize",
    "Strategy",
    "SyntheticReplacement",
    "parse_strategy",
]
