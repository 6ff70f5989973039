"""GlobalDecoupler: equation-5 training on Adult and MNIST-5k, determinism, save/load, checks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402

from attrpriv import datasets  # noqa: E402
from attrpriv.errors import InputError  # noqa: E402
from attrpriv.sanitize.decoupler import GlobalDecoupler  # noqa: E402
from attrpriv.sanitize.images import mnist_images, thickness_labels  # noqa: E402

# Tabular settings measured on Adult (docs/sanitize/decoupler.md): the paper's beta = 5 and
# alpha2 = 1 collapse z_S to the prior there, so the tests use beta = 0.5 and alpha2 = 10.
TAB = {"epochs": 15, "hidden": 64, "batch_size": 128, "beta": 0.5, "lr": 3e-3,
       "alphas": (1.0, 10.0, 100.0, 1.0), "progress": False}  # fmt: skip


@pytest.fixture(scope="module")
def adult(adult_dataset: datasets.Dataset) -> Any:
    frame = adult_dataset.frame.sample(4000, random_state=0).reset_index(drop=True)
    return (
        frame.iloc[:3000].reset_index(drop=True),
        frame.iloc[3000:].reset_index(drop=True),
        adult_dataset.schema,
    )


@pytest.fixture(scope="module")
def fitted(adult: Any) -> GlobalDecoupler:
    aux, _, schema = adult
    return GlobalDecoupler(**TAB).fit(aux, "sex", schema=schema)


def _probe(train: np.ndarray, y_train: Any, test: np.ndarray, y_test: Any) -> float:
    return float(LogisticRegression(max_iter=2000).fit(train, y_train).score(test, y_test))


def test_z_s_carries_the_sensitive_attribute(adult: Any, fitted: GlobalDecoupler) -> None:
    aux, priv, _ = adult
    ya, yp = aux["sex"].astype(str), priv["sex"].astype(str)
    (sa, na), (sp, np_) = fitted.encode(aux), fitted.encode(priv)
    prior = float(yp.value_counts(normalize=True).max())
    acc_s, acc_ns = _probe(sa, ya, sp, yp), _probe(na, ya, np_, yp)
    assert acc_s > prior + 0.15
    assert acc_ns < acc_s - 0.015  # z_NS keeps relationship/marital status, which reveal sex
    assert fitted.history_[-1]["aligner"] < 0.7 * fitted.history_[0]["aligner"]


def test_untrained_vs_trained_reconstruction(adult: Any, fitted: GlobalDecoupler) -> None:
    aux, priv, schema = adult
    untrained = GlobalDecoupler(**(TAB | {"epochs": 1, "lr": 1e-9})).fit(aux, "sex", schema=schema)

    def error(model: GlobalDecoupler) -> float:
        out = model.decode(*model.encode(priv))
        cats = [c for c in out.columns if isinstance(out[c].dtype, pd.CategoricalDtype)]
        return float(np.mean([(out[c].astype(str) != priv[c].astype(str)).mean() for c in cats]))

    assert error(fitted) < error(untrained) - 0.1


def test_decode_keeps_schema_domains(adult: Any, fitted: GlobalDecoupler) -> None:
    aux, priv, schema = adult
    out = fitted.decode(*fitted.encode(priv))
    assert "sex" not in out.columns and "fnlwgt" not in out.columns
    assert fitted.sensitive_column_ == "sex"
    schema.select(list(out.columns)).validate(out)
    assert out["age"].dtype == np.int64
    assert isinstance(out["income"].dtype, pd.CategoricalDtype)
    assert len(priv) == len(out) and not priv.equals(aux)


def test_seeded_training_is_deterministic(adult: Any) -> None:
    aux, _, schema = adult
    small = aux.iloc[:400]
    params = TAB | {"epochs": 2}
    a = GlobalDecoupler(**params).fit(small, "sex", schema=schema)
    b = GlobalDecoupler(**params).fit(small, "sex", schema=schema)
    c = GlobalDecoupler(**(params | {"seed": 1})).fit(small, "sex", schema=schema)
    for (name, ta), tb in zip(
        a.encoder_.state_dict().items(),
        b.encoder_.state_dict().values(),
        strict=True,
    ):
        assert torch.equal(ta, tb), name
    for name, module in a._modules().items():
        other = b._modules()[name].state_dict()
        assert all(torch.equal(v, other[key]) for key, v in module.state_dict().items()), name
    assert not all(
        torch.equal(x, y)
        for x, y in zip(
            a.encoder_.state_dict().values(), c.encoder_.state_dict().values(), strict=True
        )
    )


def test_save_load_round_trip(adult: Any, fitted: GlobalDecoupler, tmp_path: Path) -> None:
    _, priv, _ = adult
    fitted.save(tmp_path / "dec")
    assert sorted(p.name for p in (tmp_path / "dec").iterdir()) == [
        "decoupler.json", "fingerprint.npz", "weights.pt"
    ]  # fmt: skip
    loaded = GlobalDecoupler.load(tmp_path / "dec")
    aux, _, _ = adult
    np.testing.assert_array_equal(loaded.training_rows(aux), fitted.training_rows(aux))
    assert loaded.training_rows(aux).all() and not loaded.training_rows(priv).any()
    assert loaded.codec_.fill == fitted.codec_.fill and loaded.schema_ == fitted.schema_
    for x, y in zip(fitted.encode(priv), loaded.encode(priv), strict=True):
        np.testing.assert_array_equal(x, y)
    pd.testing.assert_frame_equal(
        fitted.decode(*fitted.encode(priv)), loaded.decode(*loaded.encode(priv))
    )
    assert loaded.sensitive_column_ == "sex" and loaded.get_params() == fitted.get_params() | {
        "alphas": loaded.alphas
    }


def test_load_refuses_bad_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="lacks"):
        GlobalDecoupler.load(tmp_path)
    (tmp_path / "decoupler.json").write_text("{}")
    (tmp_path / "weights.pt").write_bytes(b"")
    with pytest.raises(InputError, match="not an attrpriv decoupler"):
        GlobalDecoupler.load(tmp_path)


def test_bad_input(adult: Any) -> None:
    aux, _, schema = adult
    small = aux.iloc[:50]
    with pytest.raises(InputError, match="'nope'"):
        GlobalDecoupler(**TAB).fit(small, "nope", schema=schema)
    series = GlobalDecoupler(**(TAB | {"epochs": 1})).fit(small, small["sex"], schema=schema)
    assert series.sensitive_column_ == "sex" and "sex" not in series.codec_.columns
    with pytest.raises(InputError, match="sensitive_dim"):
        GlobalDecoupler(latent_dim=8, sensitive_dim=8).fit(small, "sex", schema=schema)
    broken = small.copy()
    broken.loc[broken.index[3], "age"] = np.nan
    with pytest.raises(InputError, match="'age'"):
        GlobalDecoupler(**TAB).fit(broken, "sex", schema=schema)
    with pytest.raises(InputError, match="schema"):
        GlobalDecoupler(**TAB).fit(small, "sex")
    with pytest.raises(InputError, match="not fitted"):
        GlobalDecoupler().encode(small)
    assert small.equals(aux.iloc[:50])  # inputs never modified


@settings(max_examples=25, deadline=None)
@given(
    k=st.integers(-2, 40),
    m=st.integers(-2, 40),
    beta=st.one_of(st.floats(-2, 10), st.just(float("nan"))),
)
def test_parameter_checks(k: int, m: int, beta: float) -> None:
    model = GlobalDecoupler(sensitive_dim=k, latent_dim=m, beta=beta)
    valid = 1 <= k < m and m >= 2 and np.isfinite(beta) and beta >= 0
    if valid:
        model._validate_params()
    else:
        with pytest.raises(InputError):
            model._validate_params()


def test_image_decoupler_on_mnist(tmp_path: Path) -> None:
    x, _ = mnist_images(datasets.load("mnist_5k").frame)
    y = thickness_labels(x)
    assert 0.45 < y.mean() < 0.55 and np.array_equal(y, thickness_labels(x))
    aux, priv = slice(0, 1500), slice(4000, 4500)
    params = TAB | {"kind": "image", "epochs": 4, "batch_size": 64, "beta": 1.0, "lr": 1e-3}
    model = GlobalDecoupler(**params).fit(x[aux], y[aux])
    zs, _ = model.encode(x[aux])
    ps, pn = model.encode(x[priv])
    assert _probe(zs, y[aux], ps, y[priv]) > 0.7
    out = model.decode(ps, pn)
    assert out.shape == (500, 1, 28, 28) and out.min() >= 0.0 and out.max() <= 1.0
    assert model.history_[-1]["reconstruction"] < model.history_[0]["reconstruction"]
    model.save(tmp_path)
    np.testing.assert_array_equal(GlobalDecoupler.load(tmp_path).encode(x[priv])[0], ps)
    with pytest.raises(InputError, match="shape"):
        model.encode(np.zeros((3, 27, 27)))


def test_a_decoded_category_is_drawn_from_the_decoder_law_not_its_mode() -> None:
    """Logits of a 70/30 law in every row: the most likely value is one category in every row
    (a weak decoder's collapse); drawn, both appear at their shares, seeded."""
    from attrpriv.data.schema import Categorical, Column, Numeric, Schema
    from attrpriv.sanitize.tabular import TabularCodec

    schema = Schema((Column("risk", "target", Categorical(("good", "bad"))),
                     Column("amount", "feature", Numeric(0.0, 10.0), nullable=True)))  # fmt: skip
    codec = TabularCodec(schema, ("risk", "amount"))
    n = 20_000
    out = np.tile([np.log(0.7), np.log(0.3), 0.5, 0.0], (n, 1))  # amount missing at logit 0
    mode = codec.decode(out)
    assert (mode["risk"] == "good").all() and not mode["amount"].isna().any()
    drawn = codec.decode(out, np.random.default_rng(0))
    assert (drawn["risk"] == "good").mean() == pytest.approx(0.7, abs=0.015)
    assert drawn["amount"].isna().mean() == pytest.approx(0.5, abs=0.015)
    again = codec.decode(out, np.random.default_rng(0))
    pd.testing.assert_frame_equal(drawn, again)
