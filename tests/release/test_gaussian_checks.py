"""Before a release: discrete variables under a Gaussian model, the model check against the
reference data, and the warnings (record, diagnostics, Python warnings)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from attrpriv import Column, Integer, Numeric, Schema, datasets
from attrpriv.dp import SeededNumpyNoise
from attrpriv.errors import InputError
from attrpriv.release.gaussian.checks import LIMIT, ModelWarning, check_model, tilt
from attrpriv.release.gaussian.mechanism import AttributePrivateGaussian
from attrpriv.release.gaussian.query import Query, Secret
from attrpriv.release.gaussian.resampling import ResamplingModel
from attrpriv.release.gaussian.theta import GaussianModel

SCHEMA = Schema(tuple(Column(c, "feature", Numeric(-10, 10)) for c in "xyz"))
COV = [[1.0, 0.5, 0.2], [0.5, 1.0, 0.3], [0.2, 0.3, 1.0]]


@pytest.fixture(scope="module")
def gaussian_reference() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame(rng.multivariate_normal([0, 0, 0], COV, 20_000), columns=list("xyz"))


def test_a_gaussian_model_of_gaussian_data_passes_its_check(
    gaussian_reference: pd.DataFrame,
) -> None:
    model = GaussianModel.from_data(gaussian_reference, SCHEMA, ["x", "y", "z"], 100)
    query, secret = Query.of(["mean(y)", "sum(z)"]), Secret("mean(x)", values=(-0.1, 0.1))
    report, warnings = check_model(model, query, secret)
    assert warnings == [] and report["max_z"] < LIMIT
    mech = AttributePrivateGaussian(query, secret, model, 1.0, 1e-3)
    plan = mech.calibrate()
    assert plan.checks and not plan.warnings and not plan.unchecked
    assert not any(a.startswith("warning") for a in mech.record(plan).assumptions)


def test_the_check_finds_a_model_that_misses_the_datas_shape() -> None:
    """Heteroscedastic data: var(y | x) grows with |x|, the Gaussian model says it is constant."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal(20_000)
    y = 0.5 * x + (0.2 + np.abs(x)) * rng.standard_normal(x.size)
    frame = pd.DataFrame({"x": np.clip(x, -10, 10), "y": np.clip(y, -10, 10), "z": 0.0})
    model = GaussianModel.from_data(frame, SCHEMA, ["x", "y"], 50)
    mech = AttributePrivateGaussian(
        "mean(y)", Secret("mean(x)", values=(-0.3, 0.3)), model, 1, 1e-3
    )
    plan = mech.calibrate()
    (text,) = [w for w in plan.warnings if "conditional variance of mean(y)" in w]
    assert "standard errors apart" in text
    assert f"warning: {text}" in mech.record(plan).assumptions


def test_tilting_a_binary_variable_is_the_resampling_model(adult_dataset: datasets.Dataset) -> None:
    """For a category's indicator the tilted law is exact: the check's reference moments are
    the resampling model's closed forms, to round-off."""
    frame, schema = adult_dataset.frame.iloc[:8000], adult_dataset.schema
    query = Query.of(["count(sex=Female)", "mean(age)"])
    secret = Secret("share(income=>50K)", values=(0.3, 0.6))
    model = GaussianModel.from_data(
        frame, schema, ["sex=Female", "age", "income=>50K"], 40, force=True
    )
    report, _ = check_model(model, query, secret)
    resampling = ResamplingModel(frame, schema, 40)
    for row in report["values"]:
        law = resampling.conditional(query, secret, row["value"])
        for j, name in enumerate(query.names):
            entry = row["statistics"][name]
            assert entry["mean_reference"] == pytest.approx(law.mean[j], rel=1e-9)
            assert entry["var_reference"] == pytest.approx(law.cov[j, j], rel=1e-9)
    x = (frame["income"] == ">50K").to_numpy(float)
    assert tilt(x, 0.0) is None and tilt(x, 1.0) is None  # no tilt reaches the ends


def test_forced_gaussian_on_indicators_warns_in_record_diagnostics_and_python(
    adult_dataset: datasets.Dataset,
) -> None:
    adult = adult_dataset
    model = GaussianModel.from_data(
        adult.frame, adult.schema, ["sex=Female", "income=>50K"], 50, force=True
    )
    secret = Secret("share(income=>50K)", values=(0.4, 0.6))
    mech = AttributePrivateGaussian(
        "count(sex=Female)",
        secret,
        model,
        1.0,
        1e-3,
        sampler=SeededNumpyNoise(0),
        allow_nonprivate=True,
    )
    data = adult.frame.sample(50, random_state=0)
    with pytest.warns(ModelWarning) as caught:
        result = mech.release(data, adult.schema)
    texts = [str(w.message) for w in caught]
    assert any("forced on discrete variables" in t for t in texts)
    assert any("conditional variance of count(sex=Female)" in t for t in texts)
    assert list(result.diagnostics.warnings) == texts
    assert result.to_dict()["diagnostics"]["warnings"] == texts
    assert result.record.noise["accounting"] == "gaussian"


def test_integer_columns_are_discrete_at_release() -> None:
    """A hand-built Gaussian model on a column the schema makes integer is refused at release
    (the plan made without data cannot know it), and accepted when forced."""
    schema = Schema(
        (Column("x", "feature", Numeric(-10, 10)), Column("k", "feature", Integer(0, 9)))
    )
    rng = np.random.default_rng(2)
    data = pd.DataFrame({"x": rng.standard_normal(30).clip(-10, 10), "k": rng.integers(0, 10, 30)})
    secret = Secret("mean(x)", values=(0.0, 0.3))

    def mech(force: bool) -> AttributePrivateGaussian:
        model = GaussianModel(["x", "k"], [0, 4.5], [[1, 0.5], [0.5, 8]], 30, force=force)
        return AttributePrivateGaussian(
            "mean(k)", secret, model, 1.0, 1e-3, sampler=SeededNumpyNoise(0), allow_nonprivate=True
        )

    mech(False).calibrate()  # without the schema it cannot tell
    with pytest.raises(InputError, match=r"discrete variables \['k'\]"):
        mech(False).release(data, schema)
    with pytest.warns(ModelWarning) as caught:
        result = mech(True).release(data, schema)
    assert any("forced on discrete variables ['k']" in str(w.message) for w in caught)
    assert any("a Gaussian model given by its parameters" in a for a in result.record.assumptions)
