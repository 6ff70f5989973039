"""Baselines (input noise, beta-VAE latent interpolation) and the sweep over images."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("torch")


from attrpriv import datasets
from attrpriv.dp.noise import SeededNumpyNoise
from attrpriv.errors import InputError, showing_private_values
from attrpriv.sanitize import InputNoise, LatentInterpolation, sweep_images, tradeoff
from attrpriv.sanitize.decoupler import GlobalDecoupler
from attrpriv.sanitize.evaluate import utility
from attrpriv.sanitize.images import mnist_images, thickness_labels
from attrpriv.sanitize.samplers import DPSampling, Suppression
from attrpriv.sanitize.sanitizer import SanitizedData, Sanitizer
from attrpriv.sanitize.tradeoff import evaluated_columns, sweep

TAB = {"epochs": 2, "hidden": 16, "batch_size": 128, "beta": 0.5,
       "alphas": (1.0, 10.0, 100.0, 1.0), "progress": False}  # fmt: skip
IMG = {"kind": "image", "epochs": 2, "hidden": 32, "batch_size": 64, "beta": 1.0,
       "alphas": (1.0, 10.0, 100.0, 1.0), "progress": False}  # fmt: skip


@pytest.fixture(scope="module")
def adult(adult_dataset: datasets.Dataset) -> Any:
    frame = adult_dataset.frame.sample(1200, random_state=2).reset_index(drop=True)
    return frame, adult_dataset.schema


@pytest.fixture(scope="module")
def tab_decoupler(adult: Any) -> GlobalDecoupler:
    frame, schema = adult
    return GlobalDecoupler(**TAB).fit(frame.iloc[:800], "sex", schema=schema)


@pytest.fixture(scope="module")
def mnist() -> Any:
    """300 shuffled MNIST-5k images (the file is sorted by digit), thickness and digit labels."""
    images, digits = mnist_images(datasets.load("mnist_5k").frame)
    pick = np.random.default_rng(0).permutation(len(images))[:300]
    x = images[pick]
    return x, thickness_labels(x), digits[pick]


@pytest.fixture(scope="module")
def img_decoupler(mnist: Any) -> GlobalDecoupler:
    x, y, _ = mnist
    return GlobalDecoupler(**IMG).fit(x[:150], y[:150])


# ------------------------------------------------------------------ InputNoise on tables
def test_input_noise_keeps_the_public_domains(adult: Any) -> None:
    frame, schema = adult
    before = frame.copy()
    result = InputNoise(0.3, schema=schema, seed=1).sanitize(frame, "sex")
    out = result.data
    assert isinstance(out, pd.DataFrame) and list(out.columns) == list(frame.columns)
    assert result.record is None and result.y_s is None and "none" in result.diagnostics.guarantee
    schema.validate(out, allow_extra=True)  # numbers in range, categories public, dtypes kept
    assert (out.dtypes == frame.dtypes).all()
    for untouched in ("sex", "income", "fnlwgt", "split"):  # sensitive, target, ignored
        pd.testing.assert_series_equal(out[untouched], frame[untouched])
    assert "race" in result.diagnostics.perturbed_columns  # y_s names the one left alone
    changed = (out["relationship"] != frame["relationship"]).mean()
    assert changed == pytest.approx(0.3 * 5 / 6, abs=0.06)  # p * (1 - 1/K), K = 6
    assert (out["age"] != frame["age"]).mean() > 0.9
    assert out["age"].dtype == np.int64
    pd.testing.assert_frame_equal(frame, before)


def test_input_noise_defaults_to_the_schema_sensitive_columns(adult: Any) -> None:
    frame, schema = adult
    out = InputNoise(1.0, schema=schema).sanitize(frame).data
    for name in schema.sensitive:
        pd.testing.assert_series_equal(out[name], frame[name])


def test_input_noise_scale_zero_is_identity_and_seeded(adult: Any) -> None:
    frame, schema = adult
    pd.testing.assert_frame_equal(InputNoise(0.0, schema=schema).sanitize(frame).data, frame)
    first = InputNoise(0.2, schema=schema, seed=3).sanitize(frame).data
    pd.testing.assert_frame_equal(
        first, InputNoise(0.2, schema=schema, seed=3).sanitize(frame).data
    )
    other = InputNoise(0.2, schema=schema, seed=4).sanitize(frame).data
    assert not first.equals(other)


@pytest.mark.parametrize(
    ("noise", "message"),
    [
        (InputNoise(-0.1), "scale must be >= 0"),
        (InputNoise(float("nan")), "scale must be a finite number"),
        (InputNoise("0.1"), "scale must be a finite number"),  # type: ignore[arg-type]
        (InputNoise(0.1, seed=-1), "seed must be an integer >= 0"),
        (InputNoise(0.1), "needs schema="),
    ],
)
def test_input_noise_bad_parameters(adult: Any, noise: InputNoise, message: str) -> None:
    with pytest.raises(InputError, match=message):
        noise.sanitize(adult[0])


def test_input_noise_unknown_sensitive_column(adult: Any) -> None:
    frame, schema = adult
    with pytest.raises(InputError, match="'nope'"):
        InputNoise(0.1, schema=schema).sanitize(frame, "nope")


# ------------------------------------------------------------------ InputNoise on images
def test_input_noise_on_images() -> None:
    flat = np.full((50, 28, 28), 0.5)
    out = InputNoise(0.1, seed=0).sanitize(flat).data
    assert isinstance(out, np.ndarray) and out.shape == flat.shape
    assert out.std() == pytest.approx(0.1, abs=0.003)  # 5 sigma away from the clip
    assert out.mean() == pytest.approx(0.5, abs=0.002)
    channel = np.random.default_rng(1).random((20, 1, 8, 8))
    wide = InputNoise(2.0).sanitize(channel).data
    assert wide.shape == channel.shape and wide.min() >= 0.0 and wide.max() <= 1.0
    assert {0.0, 1.0} <= set(np.unique(wide))  # large noise hits both clip bounds
    with pytest.raises(InputError, match="images must"):
        InputNoise(0.1).sanitize(np.ones((3, 5, 5)))


# ------------------------------------------------------------------ LatentInterpolation
def test_latent_interpolation_moves_by_the_class_mean_difference(
    mnist: Any, img_decoupler: GlobalDecoupler
) -> None:
    x, y, _ = mnist
    model = LatentInterpolation(img_decoupler, strength=0.5, seed=3).fit(x[:150], y[:150])
    m = img_decoupler.latent_dim
    assert model.class_means_.shape == (2, m) and list(model.classes_) == [0, 1]
    z = np.concatenate(img_decoupler.encode(x[:150]), axis=1)
    np.testing.assert_allclose(model.class_means_[1], z[y[:150] == 1].mean(0))
    z_priv = np.concatenate(img_decoupler.encode(x[150:]), axis=1)
    moved, target = model.interpolate(z_priv, y[150:])
    means = model.class_means_
    np.testing.assert_allclose(moved, z_priv + 0.5 * (means[target.astype(int)] - means[y[150:]]))
    assert 0 < np.mean(target == y[150:]) < 1  # j drawn from all classes, i included
    out = model.sanitize(x[150:], y[150:])
    k = img_decoupler.sensitive_dim
    np.testing.assert_array_equal(out.data, img_decoupler.decode(moved[:, :k], moved[:, k:]))
    assert out.record is None and out.y_s is None and json.dumps(out.to_dict())


def test_latent_interpolation_strength_zero_is_the_reconstruction(
    mnist: Any, img_decoupler: GlobalDecoupler
) -> None:
    x, y, _ = mnist
    model = LatentInterpolation(img_decoupler, strength=0.0).fit(x[:150], y[:150])
    plain = img_decoupler.decode(*img_decoupler.encode(x[150:]))
    np.testing.assert_array_equal(model.sanitize(x[150:], y[150:]).data, plain)


def test_latent_interpolation_errors(mnist: Any, img_decoupler: GlobalDecoupler) -> None:
    x, y, _ = mnist
    with pytest.raises(InputError, match="not fitted"):
        LatentInterpolation(img_decoupler).sanitize(x[:5], y[:5])
    with pytest.raises(InputError, match="y_aux is required"):
        LatentInterpolation(img_decoupler).fit(x[:50])
    model = LatentInterpolation(img_decoupler).fit(x[:150], y[:150])
    with pytest.raises(InputError, match=r"label \(value hidden"):
        model.sanitize(x[:3], np.array([0, 7, 1]))
    with showing_private_values(), pytest.raises(InputError, match="label 7 not among"):
        model.sanitize(x[:3], np.array([0, 7, 1]))
    with pytest.raises(InputError, match="strength must be >= 0"):
        LatentInterpolation(img_decoupler, strength=-1.0).fit(x[:150], y[:150]).sanitize(
            x[:3], y[:3]
        )
    with pytest.raises(InputError, match="at least 2 classes"):
        LatentInterpolation(img_decoupler).fit(x[:10], np.zeros(10))


def test_latent_interpolation_on_tables_matches_sanitizer_output(
    adult: Any, tab_decoupler: GlobalDecoupler
) -> None:
    frame, _ = adult
    aux, priv = frame.iloc[:800], frame.iloc[800:].reset_index(drop=True)
    out = LatentInterpolation(tab_decoupler).fit(aux, "sex").sanitize(priv).data
    reference = Sanitizer(tab_decoupler, Suppression()).sanitize(priv).data
    assert isinstance(out, pd.DataFrame) and "sex" not in out.columns
    assert list(out.columns) == list(tab_decoupler.codec_.columns)  # the decoded columns
    assert set(out.columns) <= set(reference.columns)
    assert (out.dtypes == reference[out.columns].dtypes).all()


# ------------------------------------------------------------------ sweeps
def test_sweep_takes_baselines_as_they_are(adult: Any, tab_decoupler: GlobalDecoupler) -> None:
    """InputNoise(0) hands the data back unchanged, so it scores exactly as the real data."""
    frame, schema = adult
    aux, priv = frame.iloc[:800], frame.iloc[800:].reset_index(drop=True)
    samplers = {
        "sup": ("suppression", Suppression()),
        "noise 0": ("input-noise", InputNoise(0.0, schema=schema, drop_sensitive=True)),
        "noise 0.5": ("input-noise", InputNoise(0.5, schema=schema, drop_sensitive=True)),
        "noise 0, sex kept": ("input-noise", InputNoise(0.0, schema=schema)),
        "interp": ("latent-interpolation", LatentInterpolation(tab_decoupler).fit(aux, "sex")),
    }
    result = sweep(tab_decoupler, aux, priv, samplers, target="income", seeds=1)
    by_name = {p.name: p for p in result.points}
    real, dropped = by_name["real data"], result.baselines[0]
    assert (by_name["noise 0"].leakage, by_name["noise 0"].utility) == (
        dropped.leakage, dropped.utility)  # fmt: skip
    assert by_name["noise 0"].leakage == real.leakage  # the real data's adversary: all but sex
    assert [a.name for a in by_name["noise 0"].leakage_result.adversaries] == ["raw-aux"]
    assert by_name["noise 0, sex kept"].leakage_auc == 1.0  # the true column, released
    assert by_name["noise 0.5"].leakage != real.leakage
    assert len(by_name["noise 0.5"].leakage_result.adversaries) == 2
    assert set(result.pareto_auc) == {"suppression", "input-noise", "latent-interpolation"}
    assert [p.name for p in result.baselines] == [
        "drop sensitive", "drop sensitive + top 3 proxies", "marginal draw"]  # fmt: skip
    assert set(result.baseline_pareto_auc) == {p.name for p in result.baselines}
    assert result.settings["release_rows"] + result.settings["test_rows"] == len(priv)
    assert json.dumps(result.to_dict())
    # the public rows alone: the same utility as a task model trained on them (the real data
    # point is the private rows released as they are: the same model on other rows)
    public = result.public_only
    assert public is not None and public.n_train == len(aux)
    columns = evaluated_columns(tab_decoupler, aux, "income")
    features = [c for c in columns if c != "income"]
    _, held = tradeoff._split(priv, None, 0.3, 0)
    alone = utility(aux[features], aux["income"].astype(str).to_numpy(), held[features],
                    held["income"].astype(str).to_numpy(), seeds=1)  # fmt: skip
    assert public.auc.attack == pytest.approx(alone.auc.attack)
    assert result.retained(real) == pytest.approx(real.utility - public.auc.attack)
    assert result.to_dict()["retained_private_information"]["real data"] == result.retained(real)


class _SexInTheTarget:
    """A bad sanitizer: every column shuffled, but the target column carries the sensitive one."""

    def sanitize(self, X: pd.DataFrame, y_s: Any = None, **_: Any) -> SanitizedData:
        rng = np.random.default_rng(0)
        out = X.apply(lambda c: c.sample(frac=1.0, random_state=rng.integers(1 << 30)).to_numpy())
        out["income"] = np.where(X["sex"] == "Male", ">50K", "<=50K")
        return SanitizedData(out.drop(columns="sex"), None, None)


def test_the_adversary_sees_the_target_column(adult: Any, tab_decoupler: GlobalDecoupler) -> None:
    """A released target is released too: a leak through a decoded target is leakage, which
    the adversary trained on sanitized auxiliary data finds (the raw-aux one cannot)."""
    frame, _ = adult
    aux, priv = frame.iloc[:800], frame.iloc[800:].reset_index(drop=True)
    bad = {"bad": ("bad", _SexInTheTarget())}
    decoded = sweep(tab_decoupler, aux, priv, bad, target="income", seeds=1, decoded_target=True)
    leak = decoded.points[0].leakage_result
    assert leak.strongest.name == "sanitized-aux" and leak.auc == 1.0
    assert decoded.points[0].leakage == pytest.approx(0.5)
    raw = next(a for a in leak.adversaries if a.name == "raw-aux")
    assert raw.auc.attack < 0.7
    # passed through (the default), the real target replaces the decoded one: no such leak
    passed = sweep(tab_decoupler, aux, priv, bad, target="income", seeds=1).points[0]
    assert passed.leakage_auc < 0.75
    assert passed.parts["released_columns"][-1] == "income"
    with pytest.raises(InputError, match="'sex' is the sensitive column"):
        sweep(tab_decoupler, aux, priv, bad, target="sex")


class _KeepsTheSensitiveColumn:
    """A bad sanitizer: the data as given, the true sensitive column included."""

    def sanitize(self, X: pd.DataFrame, y_s: Any = None, **_: Any) -> SanitizedData:
        return SanitizedData(X.copy(), None, None)


def test_a_released_sensitive_column_is_leakage(adult: Any, tab_decoupler: GlobalDecoupler) -> None:
    frame, _ = adult
    aux, priv = frame.iloc[:800], frame.iloc[800:].reset_index(drop=True)
    out = sweep(tab_decoupler, aux, priv, {"id": ("id", _KeepsTheSensitiveColumn())},
                target="income", seeds=1).points[0]  # fmt: skip
    assert out.leakage_auc == 1.0 and out.leakage_result.strongest.name == "sanitized-aux"


def test_sweep_images(mnist: Any, img_decoupler: GlobalDecoupler) -> None:
    x, y, digit = mnist
    aux, priv = slice(0, 150), slice(150, 300)
    dps = DPSampling(1.0, 3.0, classes=[0, 1], sampler=SeededNumpyNoise(0), allow_nonprivate=True)
    samplers = {
        "suppression": ("suppression", Suppression()),
        "dp-sampling eps=1": ("dp-sampling", dps),  # needs y_S handed to sanitize
        "noise 0": ("input-noise", InputNoise(0.0)),
        "noise 0.3": ("input-noise", InputNoise(0.3)),
        "interp": ("latent-interpolation", LatentInterpolation(img_decoupler).fit(x[aux], y[aux])),
    }
    result = sweep_images(img_decoupler, x[aux], y[aux], x[priv], y[priv], digit[priv], samplers,
                          seeds=1)  # fmt: skip
    names = [p.name for p in result.points]
    assert names == [*samplers, "reconstruction (z_S kept)", "real data"]
    for p in result.points:
        assert np.isfinite([p.leakage, p.utility, p.cas]).all()
        assert -1 <= p.leakage <= 1 and 0 <= p.utility <= 1
    by_name = {p.name: p for p in result.points}
    real = by_name["real data"]
    assert real.utility > 0.7 and real.cas > 0.3  # digits: trained on 105 real images, 45 tested
    assert result.baselines == () and result.settings["test_rows"] == 45
    assert real.utility_result.auc_form == "one-vs-rest macro"
    assert (by_name["noise 0"].leakage, by_name["noise 0"].utility) == (real.leakage, real.utility)
    families = {"suppression", "dp-sampling", "input-noise", "latent-interpolation"}
    assert set(result.pareto_auc) == families
    assert all(0 <= v <= 1 for v in result.pareto_auc.values())
    assert json.dumps(result.to_dict())


def test_sweep_images_bad_input(
    mnist: Any, img_decoupler: GlobalDecoupler, tab_decoupler: GlobalDecoupler
) -> None:
    x, y, digit = mnist
    samplers = {"s": ("suppression", Suppression())}
    with pytest.raises(InputError, match="private_target"):
        sweep_images(img_decoupler, x[:20], y[:20], x[20:40], y[20:40], digit[:5], samplers)
    with pytest.raises(InputError, match="image decoupler"):
        sweep_images(tab_decoupler, x[:20], y[:20], x[20:40], y[20:40], digit[20:40], samplers)
