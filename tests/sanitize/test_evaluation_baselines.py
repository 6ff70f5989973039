"""The simple baselines every tabular sweep scores: drop the sensitive column, drop it and its
top proxies (ranked on auxiliary data only), draw it from its marginal."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("torch")

from attrpriv import datasets
from attrpriv.errors import InputError
from attrpriv.sanitize.baselines import DropProxies, DropSensitive, MarginalDraw, rank_proxies


@pytest.fixture(scope="module")
def adult(adult_dataset: datasets.Dataset) -> tuple[pd.DataFrame, pd.DataFrame]:
    frame = adult_dataset.frame.sample(3000, random_state=5).reset_index(drop=True)
    frame = frame.drop(columns=["fnlwgt", "split"])
    return frame.iloc[:2000], frame.iloc[2000:].reset_index(drop=True)


def test_rank_proxies_finds_relationship_for_sex(adult: Any) -> None:
    aux, _ = adult
    ranking = rank_proxies(aux, "sex", exclude=["income"])
    assert ranking.index[0] == "relationship" and ranking.iloc[0] > 0.8
    assert "sex" not in ranking.index and "income" not in ranking.index
    assert ranking.is_monotonic_decreasing and ranking.between(0.0, 1.0).all()
    assert ranking["native_country"] < 0.6  # a weak proxy
    multi = rank_proxies(aux, "race")  # more than two classes: one-vs-rest macro AUC
    assert multi.iloc[0] > 0.55 and "native_country" in multi.index[:3]


def test_rank_proxies_is_cross_fitted() -> None:
    """A column of unique values memorises the rows but predicts nothing out of fold."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"s": rng.choice(["a", "b"], 600), "id": np.arange(600).astype(str),
                          "noise": rng.normal(size=600)})  # fmt: skip
    frame["copy"] = frame["s"]
    ranking = rank_proxies(frame, "s")
    assert ranking.index[0] == "copy" and ranking["copy"] == pytest.approx(1.0)
    assert ranking["id"] == pytest.approx(0.5) and abs(ranking["noise"] - 0.5) < 0.08


def test_drop_proxies_reads_the_auxiliary_data_only(adult: Any) -> None:
    aux, private = adult
    model = DropProxies(2, keep=["income"]).fit(aux, "sex")
    assert model.proxies_ == tuple(model.ranking_.index[:2]) and "income" not in model.proxies_
    # the private rows are never read to choose: scrambling them changes nothing chosen
    scrambled = private.apply(lambda c: c.sample(frac=1.0, random_state=1).to_numpy())
    out = model.sanitize(scrambled)
    assert out.diagnostics.dropped == ("sex", *model.proxies_)
    kept = [c for c in private.columns if c not in out.diagnostics.dropped]
    assert list(out.data.columns) == kept
    assert out.record is None and out.y_s is None
    assert set(out.diagnostics.proxy_auc) == set(model.proxies_)


def test_drop_sensitive_and_marginal_draw(adult: Any) -> None:
    aux, private = adult
    dropped = DropSensitive(["race"]).sanitize(private, "sex")
    assert dropped.diagnostics.dropped == ("sex", "race") and "sex" not in dropped.data.columns
    drawn = MarginalDraw(seed=3).fit(aux, "sex").sanitize(private)
    out = drawn.data
    assert list(out.columns) == list(private.columns) and out["sex"].dtype == private["sex"].dtype
    pd.testing.assert_frame_equal(out.drop(columns="sex"), private.drop(columns="sex"))
    share = (aux["sex"] == "Male").mean()
    assert (out["sex"] == "Male").mean() == pytest.approx(share, abs=0.04)
    # independent of the row: the drawn value agrees with the true one at chance rate
    agree = (out["sex"] == private["sex"]).mean()
    assert agree == pytest.approx(share**2 + (1 - share) ** 2, abs=0.04)
    np.testing.assert_array_equal(drawn.y_s, out["sex"].astype(object).to_numpy())
    again = MarginalDraw(seed=3).fit(aux, "sex").sanitize(private).data
    pd.testing.assert_frame_equal(out, again)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda a: DropSensitive().sanitize(a), "needs y_s"),
        (lambda a: DropSensitive().sanitize(a, "nope"), "'nope' is not a column"),
        (lambda a: DropSensitive().sanitize(np.zeros((3, 2)), "sex"), "works on a table"),
        (lambda a: DropProxies().sanitize(a, "sex"), "not fitted"),
        (lambda a: DropProxies(-1).fit(a, "sex"), "k must be an integer >= 0"),
        (lambda a: MarginalDraw().sanitize(a, "sex"), "not fitted"),
        (lambda a: rank_proxies(a, "sex", folds=1), "folds must be an integer >= 2"),
        (lambda a: rank_proxies(a.assign(sex="Male"), "sex"), "two classes"),
    ],
)
def test_bad_input(adult: Any, call: Any, message: str) -> None:
    with pytest.raises(InputError, match=message):
        call(adult[0])
