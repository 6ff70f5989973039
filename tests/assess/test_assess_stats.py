"""attrpriv.assess exports the scores of its attacks: the very objects of attrpriv.stats."""

from __future__ import annotations

import pytest

import attrpriv.assess
import attrpriv.stats


@pytest.mark.parametrize("name", ["Score", "binomial_ci", "pool_scores", "rate_difference"])
def test_assess_re_exports_the_foundation_statistics(name: str) -> None:
    assert name in attrpriv.assess.__all__
    assert getattr(attrpriv.assess, name) is getattr(attrpriv.stats, name)
