"""Modules moved by the foundation v2 redesign still import from their documented old paths.

Each old path re-exports the public names it had (its ``__all__`` at fe9e5d5) from their new
home, and warns, once, with a DeprecationWarning that names the new path.
"""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

import pytest

import attrpriv

MOVED: dict[str, tuple[str, tuple[str, ...]]] = {
    "attrpriv.release.models": (
        "attrpriv.release.gaussian.theta",
        ("Conditional", "GaussianModel", "ThetaModel"),
    ),
    "attrpriv.release.resampling": ("attrpriv.release.gaussian.resampling", ("ResamplingModel",)),
    "attrpriv.release.network": (
        "attrpriv.release.graph.network",
        ("MAX_CELLS", "DiscreteNetwork"),
    ),
    "attrpriv.release.quilt": (
        "attrpriv.release.graph.quilts",
        (
            "MAX_CANDIDATES",
            "MAX_QUILT_CELLS",
            "Quilt",
            "best_quilt",
            "candidate_quilts",
            "check_sensitivity",
            "influence_of",
            "max_influence",
            "max_log_ratio",
            "moral_distances",
            "quilt_scale",
        ),
    ),
    "attrpriv.release.markov_chain": (
        "attrpriv.release.markov_quilt.chain_model",
        (
            "ApproxInfluences",
            "ExactInfluences",
            "Influences",
            "MarkovChainModel",
            "approx_influence",
            "as_chains",
            "is_irreducible",
            "mixing_constants",
            "stationary_distribution",
        ),
    ),
    "attrpriv.release.chain_quilt": (
        "attrpriv.release.markov_quilt.chain_calibration",
        ("METHODS", "ChainCalibration", "ChainQuilt", "calibrate_chain"),
    ),
    "attrpriv.release.bayesnet": (
        "attrpriv.release.graph.learning",
        (
            "EXACT_MAX_COLUMNS",
            "STRUCTURES",
            "Levels",
            "column_levels",
            "count_levels",
            "encode",
            "learn_network",
            "learning_rows",
            "levels_for",
        ),
    ),
    "attrpriv.release.dependence": (
        "attrpriv.release.ddp.dependence",
        (
            "METHODS",
            "SUBSTITUTION_SENSITIVITY",
            "ChunkNoise",
            "ExpectedError",
            "PairwiseDependence",
            "calibrate",
            "chunk_noise",
            "dependent_sensitivity",
            "discrete_laplace_mae",
            "pairwise_dependence",
        ),
    ),
    "attrpriv.assess.stats": (
        "attrpriv.stats",
        (
            "Score",
            "binomial_ci",
            "bootstrap_difference",
            "pool_scores",
            "rate_difference",
            "rate_vs_chance",
            "wilson_ci",
        ),
    ),
}
RENAMED = {
    # old path, old name -> the new name, where two things had that name
    ("attrpriv.release.network", "MAX_CELLS"): "MAX_INFERENCE_CELLS",
    ("attrpriv.release.chain_quilt", "METHODS"): "INFLUENCE_METHODS",
}


@pytest.mark.parametrize("old", MOVED)
def test_an_old_path_imports_its_old_names_and_names_the_new_one(old: str) -> None:
    new, names = MOVED[old]
    sys.modules.pop(old, None)  # imported before: import it afresh, so that it warns again
    message = rf"^{re.escape(old)} is deprecated: it moved to {re.escape(new)};"
    with pytest.warns(DeprecationWarning, match=message):
        module = importlib.import_module(old)
    assert sorted(module.__all__) == sorted(names)
    home = importlib.import_module(new)
    for name in names:
        assert getattr(module, name) is getattr(home, RENAMED.get((old, name), name))
    namespace: dict[str, object] = {}
    exec(f"from {old} import *", namespace)  # the names a star import gave
    assert set(names) <= set(namespace)


def test_the_warning_points_at_the_import_statement() -> None:
    sys.modules.pop("attrpriv.assess.stats", None)
    with pytest.warns(DeprecationWarning) as caught:
        from attrpriv.assess.stats import Score  # noqa: F401
    assert [w.filename for w in caught] == [__file__]


def test_the_new_packages_export_what_the_old_modules_did() -> None:
    from attrpriv.release import ddp, markov_quilt
    from attrpriv.release.ddp.dependence import ExpectedError, discrete_laplace_mae
    from attrpriv.release.markov_quilt.chain_mechanism import PROTECTS_CHAIN, QUERIES

    assert ddp.ExpectedError is ExpectedError and "ExpectedError" in ddp.__all__
    assert ddp.discrete_laplace_mae is discrete_laplace_mae
    assert "discrete_laplace_mae" in ddp.__all__
    assert markov_quilt.PROTECTS_CHAIN is PROTECTS_CHAIN and markov_quilt.QUERIES is QUERIES
    assert {"PROTECTS_CHAIN", "QUERIES"} <= set(markov_quilt.__all__)


def test_library_code_never_imports_an_old_path() -> None:
    package = Path(attrpriv.__file__).parent
    old_files = {package.parent / (name.replace(".", "/") + ".py") for name in MOVED}
    names = "|".join(re.escape(name) for name in MOVED)
    importing = re.compile(rf"^\s*(from|import)\s+({names})\b", re.MULTILINE)
    offenders = [
        str(path.relative_to(package))
        for path in sorted(package.rglob("*.py"))
        if path not in old_files and importing.search(path.read_text(encoding="utf-8"))
    ]
    assert not offenders


def test_sweep_is_not_a_module_again() -> None:
    """``attrpriv.sanitize.sweep`` is the function (its module was renamed ``tradeoff``)."""
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("attrpriv.sanitize.sweep")
