"""The boundary rings of Tabular-DDP: the pair tests and the forward selection."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from attrpriv.release.ddp.boundary import Encoded, find_boundary, merge_ring, pair_tests


def _g_test(x: np.ndarray, y: np.ndarray) -> tuple[float, int]:
    table = np.zeros((x.max() + 1, y.max() + 1))
    np.add.at(table, (x, y), 1)
    table = table[table.sum(axis=1) > 0][:, table.sum(axis=0) > 0]
    if min(table.shape) < 2:
        return 0.0, 0
    g, _, dof, _ = stats.chi2_contingency(table, correction=False, lambda_="log-likelihood")
    return float(g), int(dof)


def test_pair_tests_are_g_tests_summed_over_the_rings_strata() -> None:
    """Each pair's statistic is the sum over the observed values of the ring of the G-test of
    that stratum (scipy's), with the degrees of freedom of the levels seen there."""
    rng = np.random.default_rng(0)
    n = 3_000
    z = rng.integers(0, 3, n)
    u = (z + rng.integers(0, 2, n)) % 3
    r = np.where(rng.random(n) < 0.7, u, rng.integers(0, 3, n)) % 3  # depends on u
    w = (z + rng.integers(0, 3, n)) % 4  # depends on z only
    codes = np.stack([u, r, w, z], axis=1)
    encoded = Encoded.of(codes, [3, 3, 4, 3])
    score = pair_tests(encoded, [0], [1, 2], [3])
    for column, got in zip((1, 2), score[0], strict=True):
        g = dof = 0
        for value in range(3):
            rows = z == value
            part = _g_test(u[rows], codes[rows, column])
            g, dof = g + part[0], dof + part[1]
        assert got == pytest.approx(-stats.chi2.logsf(g, dof), rel=1e-6)
    assert score[0, 0] > 50 and score[0, 1] < 10  # r depends on u, w does not given z


def test_pairs_too_sparse_to_test_are_nan() -> None:
    rng = np.random.default_rng(1)
    codes = rng.integers(0, 5, (200, 3))
    score = pair_tests(Encoded.of(codes, [5, 5, 5]), [0], [1], [2])
    assert np.isnan(score).all()  # 5 x 5 x 5 cells x 5 rows > 200 rows


def test_the_ring_is_the_link_and_a_parity_is_caught_jointly() -> None:
    """A chain x0 - x1 - x2 - x3 with the chunk {x0, x1}: the ring is {x2} (x3 depends on the
    chunk only through it). A parity x2 = x0 XOR x1 with the chunk {x0}: no pair shows it, the
    joint test does, and every other answer joins the ring."""
    rng = np.random.default_rng(2)
    n = 20_000
    x0 = rng.integers(0, 2, n)
    x1 = np.where(rng.random(n) < 0.9, x0, 1 - x0)
    x2 = np.where(rng.random(n) < 0.9, x1, 1 - x1)
    x3 = np.where(rng.random(n) < 0.9, x2, 1 - x2)
    names = ["x0", "x1", "x2", "x3"]
    chain = find_boundary(Encoded.of(np.stack([x0, x1, x2, x3], 1), [2] * 4), names, [0, 1])
    assert chain.ring == ("x2",) and chain.confirmed
    parity = np.stack([x0, rng.integers(0, 2, n), np.zeros(n, int)], 1)
    parity[:, 2] = parity[:, 0] ^ parity[:, 1]
    found = find_boundary(Encoded.of(parity, [2] * 3), names[:3], [0])
    assert not found.confirmed and set(found.ring) == {"x1", "x2"}
    assert "jointly" in found.reason


def test_merging_joins_the_chunks_of_the_ring_or_everything() -> None:
    chunks = [("a", "b"), ("c",), ("d", "e")]
    order = ["a", "b", "c", "d", "e"]
    assert merge_ring(chunks, ("a", "b"), ("d",), order) == [("a", "b", "d", "e"), ("c",)]
    assert merge_ring(chunks, ("c",), (), order) == [("a", "b", "c", "d", "e")]


def test_a_hub_with_many_neighbours_gets_smaller_quilts_not_an_error() -> None:
    """A merged chunk learned as a tree can have a hub: C(50, 3) subsets of its leaves exceed
    the candidate limit, so its quilts stop at two answers instead of aborting the fit."""
    from attrpriv.release.graph.network import DiscreteNetwork
    from attrpriv.release.graph.quilts import (
        MAX_CANDIDATES,
        affordable_quilt_size,
        candidate_quilts,
    )

    leaves = [f"l{k}" for k in range(50)]
    same = np.array([[0.8, 0.2], [0.2, 0.8]])
    star = DiscreteNetwork(
        {"hub": (0, 1), **dict.fromkeys(leaves, (0, 1))},
        {"hub": (), **dict.fromkeys(leaves, ("hub",))},
        {"hub": np.array([0.5, 0.5]), **dict.fromkeys(leaves, same)},
    )
    size = affordable_quilt_size(star, "hub", 3, 2)
    assert size == 2
    assert len(list(candidate_quilts(star, "hub", max_quilt_size=size, within=2))) <= (
        MAX_CANDIDATES + len(leaves)
    )
    assert affordable_quilt_size(star, "hub", 1, 2) == 1
