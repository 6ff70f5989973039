"""Hypothesis profiles: reproducible by default, exploratory on request.

The default run (the README's ``pytest``, and CI) is derandomized: every run draws the same
examples, so a result does not depend on luck. ``HYPOTHESIS_PROFILE=explore pytest`` draws new
random examples each run, to look for edge cases (a failure prints the example to reproduce).
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("default", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
