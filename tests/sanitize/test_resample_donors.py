"""Donor redraws: a donor shares the drawn value and the task level, is near on the context,
donors are spread (broken variants caught), fallbacks and odd values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from attrpriv.data.schema import Column, Integer, Schema
from attrpriv.dp import SeededNumpyNoise
from attrpriv.sanitize import ProxyResampler
from attrpriv.sanitize.resample import donors as donors_module
from attrpriv.sanitize.resample.donors import NO_TASK, Coordinates, Donors, TaskLevels


def _aux(n: int = 600, seed: int = 0) -> pd.DataFrame:
    """``s`` (3 values), a task ``y``, a numeric context ``c`` and a categorical one ``k``,
    and two proxies, ``row`` (which auxiliary row it is) and ``p``."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "s": rng.integers(0, 3, n),
        "y": rng.integers(0, 2, n),
        "c": rng.permutation(n).astype(float),
        "k": rng.choice(["u", "v"], n),
        "row": np.arange(n),
        "p": rng.normal(size=n),
    })  # fmt: skip


def _fit(aux: pd.DataFrame, k: int, task: str | None = "y") -> Donors:
    codes = aux["s"].to_numpy()
    return Donors.fit(aux, codes, ["row", "p"], ["y", "c", "k"], task, k)


def test_a_donor_has_the_drawn_value_and_the_task_level_and_its_proxies_come_together() -> None:
    aux = _aux()
    given = _aux(300, seed=1)[["y", "c", "k"]]
    drawn = np.random.default_rng(2).integers(0, 3, len(given))
    out = _fit(aux, k=20).draw(given, drawn, np.random.default_rng(0))
    assert list(out.columns) == ["row", "p"] and out.index.equals(given.index)
    donor = aux.loc[out["row"].to_numpy()]
    assert (donor["s"].to_numpy() == drawn).all()
    assert (donor["y"].to_numpy() == given["y"].to_numpy()).all()
    assert np.array_equal(donor["p"].to_numpy(), out["p"].to_numpy())  # copied with its row


def test_a_donor_is_among_the_k_nearest_on_the_context() -> None:
    aux = _aux()
    given = pd.DataFrame({"y": [0] * 5, "c": [300.0] * 5, "k": ["u"] * 5})
    drawn = np.zeros(5, dtype=np.int64)
    out = _fit(aux, k=10).draw(given, drawn, np.random.default_rng(0))
    pool = aux[(aux["s"] == 0) & (aux["y"] == 0)]
    points = Coordinates.learn(aux, ["c", "k"])
    distance = ((points.points(pool) - points.points(given.iloc[:1])) ** 2).sum(axis=1)
    nearest = set(pool["row"].to_numpy()[np.argsort(distance, kind="stable")[:10]])
    assert set(out["row"]) <= nearest
    assert (aux.loc[out["row"], "k"] == "u").all()


def test_the_least_used_donor_is_taken_so_donors_spread(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every row asks for the same neighbourhood; the donors are distinct while there are
    enough. A broken variant that takes a neighbour at random repeats some."""
    aux = _aux(3000)
    given = pd.DataFrame({"y": [1] * 40, "c": [1500.0] * 40, "k": ["v"] * 40})
    drawn = np.ones(40, dtype=np.int64)
    donors = _fit(aux, k=60)
    out = donors.draw(given, drawn, np.random.default_rng(0))
    assert out["row"].nunique() == 40
    monkeypatch.setattr(
        donors_module, "least_used", lambda options, used, rng: int(rng.choice(options))
    )
    broken = donors.draw(given, drawn, np.random.default_rng(0))
    assert broken["row"].nunique() < 40


def test_without_context_the_pool_is_used_in_turn() -> None:
    aux = _aux(90)
    donors = Donors.fit(aux, aux["s"].to_numpy(), ["row"], ["y"], "y", k=5)
    given = pd.DataFrame({"y": np.zeros(100, dtype=np.int64)})
    out = donors.draw(given, np.zeros(100, dtype=np.int64), np.random.default_rng(3))
    pool = aux.index[(aux["s"] == 0) & (aux["y"] == 0)]
    counts = out["row"].value_counts()
    assert set(counts.index) == set(pool)  # every donor of the pool is used
    assert counts.max() - counts.min() <= 1  # each once before any twice


def test_a_missing_stratum_falls_back_to_the_sensitive_value_then_to_every_row() -> None:
    aux = _aux(300)
    aux = aux[~((aux["s"] == 2) & (aux["y"] == 1))].reset_index(drop=True)
    donors = Donors.fit(aux, aux["s"].to_numpy(), ["row"], ["y", "c"], "y", k=5)
    given = pd.DataFrame({"y": [1, 1], "c": [10.0, 20.0]})
    out = donors.draw(given, np.array([2, 2]), np.random.default_rng(0))
    by_row = aux.set_index("row")
    assert (by_row.loc[out["row"], "s"] == 2).all()  # same value, another task level
    out = donors.draw(given, np.array([5, 5]), np.random.default_rng(0))  # a value aux lacks
    assert out["row"].isin(aux["row"]).all()


def test_missing_unknown_and_numeric_task_values_have_points_and_levels() -> None:
    aux = pd.DataFrame({"c": [1.0, 2.0, np.nan, 4.0], "k": ["u", "v", "u", None]})
    points = Coordinates.learn(aux, ["c", "k"]).points(
        pd.DataFrame({"c": [np.nan, 3.0], "k": ["w", "v"]})
    )
    assert points.shape == (2, 4) and np.isfinite(points).all()
    assert points[0, 1] == 1.0 and points[1, 1] == 0.0  # the missing indicator
    assert points[0, 2:].sum() == 0.0  # an unknown category is nowhere
    target = pd.Series(np.arange(1000, dtype=float))
    levels = TaskLevels.learn(target)
    codes = levels.of(pd.Series([0.0, 999.0, np.nan, 5e6]))
    assert codes[0] == 0 and codes[1] == codes[3] == levels.of(target).max()
    assert codes[2] == NO_TASK
    assert np.bincount(levels.of(target)).min() >= 1000 // 20 - 1
    few = TaskLevels.learn(pd.Series(["a", "b", "a"]))
    assert list(few.of(pd.Series(["b", "z", None]))) == [1, NO_TASK, NO_TASK]


def test_the_resampler_redraws_with_donors_by_default_and_matches_the_task() -> None:
    aux, private = _aux(800), _aux(400, seed=4)
    schema = Schema((Column("y", "target", Integer(0, 1)),))
    model = ProxyResampler("s", proxies=["row", "p"], sampler=SeededNumpyNoise(0),
                           allow_nonprivate=True).fit(aux, schema)  # fmt: skip
    assert isinstance(model.redraw_, Donors)
    out = model.release(private).values
    donor = aux.loc[out["row"].to_numpy()]
    assert (donor["y"].to_numpy() == private["y"].to_numpy()).all()
    assert (donor["s"].to_numpy() == out["s"].to_numpy()).all()
    assert out["row"].nunique() == len(out)  # 800 auxiliary rows for 400: no donor twice
    with pytest.raises(Exception, match="n_donors must be"):
        ProxyResampler("s", n_donors=0).fit(aux)
