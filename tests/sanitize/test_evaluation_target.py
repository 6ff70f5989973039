"""A task whose target is a copy of a proxy: the evaluation must not report more utility than
the real data give (issue 12: decoding the target into the features flattered it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("torch")

from attrpriv import datasets
from attrpriv.cli import main
from attrpriv.data.schema import Schema
from attrpriv.sanitize.decoupler import GlobalDecoupler
from attrpriv.sanitize.evaluate import utility
from attrpriv.sanitize.sanitizer import SanitizedData
from attrpriv.sanitize.tradeoff import sweep

TAB = {"epochs": 4, "hidden": 32, "progress": False}


@pytest.fixture(scope="module")
def proxy_table(adult_dataset: datasets.Dataset) -> tuple[pd.DataFrame, Schema]:
    """Adult with a target ``husband`` copied from the sex proxy ``relationship`` (dropped)."""
    frame = adult_dataset.frame.sample(2400, random_state=4).reset_index(drop=True)
    frame["husband"] = pd.Categorical(
        np.where(frame["relationship"] == "Husband", "yes", "no"), ["no", "yes"]
    )
    frame = frame.drop(columns=["relationship", "fnlwgt", "split"])
    spec = adult_dataset.schema.to_dict()
    for column in ("relationship", "fnlwgt", "split"):
        del spec["columns"][column]
    spec["columns"]["income"]["role"] = "feature"
    domain = {"type": "categorical", "categories": ["no", "yes"]}
    spec["columns"]["husband"] = {"role": "target", "domain": domain}
    return frame, Schema.from_dict(spec)


@pytest.fixture(scope="module")
def parts(proxy_table: Any) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    frame, _ = proxy_table
    return frame.iloc[:1000], frame.iloc[1000:1800], frame.iloc[1800:]


@pytest.fixture(scope="module")
def decoupler(proxy_table: Any, parts: Any) -> GlobalDecoupler:
    _, schema = proxy_table
    return GlobalDecoupler(**TAB).fit(parts[0], "sex", schema=schema)


class _Flatterer:
    """A release that agrees with itself: features decoded from its own target, against what
    the real rows say (its husbands are never married and work 1 hour a week).

    Trained and tested on such rows, a task model scores 1.0; on real rows it cannot."""

    def sanitize(self, X: pd.DataFrame, y_s: Any = None, **_: Any) -> SanitizedData:
        rng = np.random.default_rng(0)
        out = X.drop(columns="sex").copy()
        fake = pd.Categorical(rng.choice(["no", "yes"], len(X)), ["no", "yes"])
        out["husband"] = fake
        out["marital_status"] = pd.Categorical(
            np.where(fake == "yes", "Never-married", "Married-civ-spouse"),
            X["marital_status"].cat.categories,
        )
        out["hours_per_week"] = np.where(fake == "yes", 1, 99)
        return SanitizedData(out, None, None)


def test_a_self_consistent_release_does_not_beat_the_real_data(
    decoupler: GlobalDecoupler, parts: Any
) -> None:
    aux, private, test = parts
    samplers = {"flatterer": ("flatterer", _Flatterer())}
    for decoded in (False, True):
        result = sweep(decoupler, aux, private, samplers, target="husband", test=test, seeds=1,
                       decoded_target=decoded)  # fmt: skip
        by_name = {p.name: p for p in result.points}
        real = by_name["real data"]
        assert real.utility > 0.9
        for point in (*result.points, *result.baselines):
            assert point.utility <= real.utility, point.name
        if decoded:  # its own target: nothing learnt from it carries over to real rows
            assert by_name["flatterer"].utility < 0.6
    # what the old protocol (train and test on the release) reported for the same release
    release = _Flatterer().sanitize(private).data
    x, y = release.drop(columns="husband"), release["husband"].astype(str)
    old = utility(x[:400], y[:400], x[400:], y[400:], seeds=1)
    assert old.auc.attack == 1.0 > real.utility


def test_sanitize_evaluate_reports_no_more_utility_than_the_real_data(
    decoupler: GlobalDecoupler, proxy_table: Any, parts: Any, tmp_path: Path
) -> None:
    _, schema = proxy_table
    files = []
    for name, frame in zip(("aux", "private", "test"), parts, strict=True):
        path = tmp_path / f"{name}.csv"
        frame.to_csv(path, index=False)
        files.append(str(path))
    schema.save(tmp_path / "schema.yaml")
    decoupler.save(tmp_path / "dec")
    for extra in ([], ["--decoded-target"]):
        out = tmp_path / "sweep.json"
        code = main(["sanitize", "evaluate", files[0], files[1], "--test", files[2], "--schema",
                     str(tmp_path / "schema.yaml"), "--decoupler", str(tmp_path / "dec"),
                     "--target", "husband", "--epsilons", "1", "--seeds", "1", "--out", str(out),
                     *extra])  # fmt: skip
        assert code == 0
        result = json.loads(out.read_text())
        points = {p["name"]: p for p in result["points"]}
        real = points["real data"]["utility"]
        assert real > 0.9
        ceiling = points["real data"]["utility_parts"]["auc_ci"][1]  # ties within its error
        for point in (*result["points"], *result["baselines"]):
            assert point["utility"] <= ceiling, point["name"]
        assert result["settings"]["test_rows"] == len(parts[2])
        assert result["settings"]["release_rows"] == len(parts[1])
        expected = "decoded by the sanitizer" if extra else "passed through unchanged"
        assert result["settings"]["target"] == expected
        assert [p["name"] for p in result["baselines"]] == [
            "drop sensitive", "drop sensitive + top 3 proxies", "marginal draw"]  # fmt: skip
