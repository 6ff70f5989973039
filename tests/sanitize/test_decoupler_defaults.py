"""Defaults that work on a new table: collapse check, early stopping, learned bound, fidelity."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("torch")

from attrpriv import datasets
from attrpriv.errors import InputError
from attrpriv.sanitize.decoupler import GlobalDecoupler
from attrpriv.sanitize.samplers import (
    DPObfuscation,
    DPSampling,
    LatentBound,
    Suppression,
    with_latent_bound,
)
from attrpriv.sanitize.sanitizer import Sanitizer

SMALL: dict[str, Any] = {"epochs": 10, "hidden": 64, "latent_dim": 6, "sensitive_dim": 2,
                         "batch_size": 64, "progress": False}  # fmt: skip
COLLAPSING = {"beta": 50.0, "alphas": (1.0, 0.01, 100.0, 1.0)}  # KL prices z_S out entirely


@pytest.fixture(scope="module")
def adult(adult_dataset: datasets.Dataset) -> tuple[pd.DataFrame, Any]:
    frame = adult_dataset.frame.sample(1500, random_state=1).reset_index(drop=True)
    return frame, adult_dataset.schema


@pytest.fixture(scope="module")
def fitted(adult: tuple[pd.DataFrame, Any]) -> GlobalDecoupler:
    frame, schema = adult
    working = {"beta": 0.1, "alphas": (1.0, 100.0, 100.0, 1.0)}  # the defaults collapse here
    return GlobalDecoupler(**(SMALL | working)).fit(frame, "sex", schema=schema)


def test_a_working_fit_is_checked_and_not_retuned(fitted: GlobalDecoupler) -> None:
    v = fitted.validation_
    assert v["status"] == "ok" and fitted.collapsed_ is False and fitted.retuned_ is None
    assert v["rows"] == 300 and v["train_rows"] == 1200
    assert v["aligner_logloss"] < 0.98 * v["prior_logloss"]
    assert v["features_logloss"] < v["prior_logloss"]


def test_a_collapsing_setting_is_refused_with_one_line(adult: tuple[pd.DataFrame, Any]) -> None:
    frame, schema = adult
    model = GlobalDecoupler(**(SMALL | COLLAPSING | {"on_collapse": "raise"}))
    with pytest.raises(InputError, match=r"z_S collapsed: .*'sex'.*prior.*try a smaller beta") as e:
        model.fit(frame, "sex", schema=schema)
    assert "\n" not in str(e.value)
    assert not hasattr(model, "encoder_")  # a refused fit leaves no half-fitted state


def test_a_collapsing_setting_is_detected_and_warned(adult: tuple[pd.DataFrame, Any]) -> None:
    frame, schema = adult
    model = GlobalDecoupler(**(SMALL | COLLAPSING | {"on_collapse": "warn"}))
    with pytest.warns(UserWarning, match="z_S collapsed"):
        model.fit(frame, "sex", schema=schema)
    v = model.validation_
    assert model.collapsed_ is True and v["status"] == "collapsed" and model.retuned_ is None
    assert v["aligner_logloss"] >= 0.98 * v["prior_logloss"]


def test_a_collapsing_setting_is_retuned_by_default(adult: tuple[pd.DataFrame, Any]) -> None:
    frame, schema = adult
    model = GlobalDecoupler(**(SMALL | COLLAPSING)).fit(frame, "sex", schema=schema)
    assert model.collapsed_ is False and model.validation_["status"] == "ok"
    retuned = model.retuned_
    assert retuned is not None and retuned["from"]["beta"] == 50.0
    assert retuned["beta"] is not None and retuned["beta"] < 50.0
    kept = [t for t in retuned["tried"] if t["status"] == "ok"]
    best = min(t["aligner_logloss"] for t in kept)
    assert model.validation_["aligner_logloss"] <= best + 1e-9


def test_early_stopping_picks_the_best_epoch_then_refits_on_every_row(
    adult: tuple[pd.DataFrame, Any],
) -> None:
    frame, schema = adult
    # a learning rate too high for the model: the validation objective soon stops improving
    params = {"epochs": 30, "lr": 3e-2, "patience": 2, "on_collapse": "warn"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model = GlobalDecoupler(**(SMALL | params)).fit(frame, "sex", schema=schema)
        # the final networks: trained again on every row, for the best epoch count
        plain = GlobalDecoupler(**(SMALL | params | {"validation_share": 0.0}))
        plain.set_params(epochs=model.best_epoch_).fit(frame, "sex", schema=schema)
    scores = [row["validation"] for row in model.history_]
    best = int(np.argmin(scores)) + 1
    assert model.best_epoch_ == best and len(scores) == best + 2 < 30
    assert model.refit_ is not None
    assert (model.refit_["rows"], model.refit_["epochs"]) == (len(frame), best)
    assert plain.refit_ is None and "validation" not in plain.history_[0]
    for ours, theirs in zip(model.encode(frame), plain.encode(frame), strict=True):
        np.testing.assert_array_equal(ours, theirs)


def test_latent_bound_is_learned_from_the_aux_data_and_used_by_default(
    adult: tuple[pd.DataFrame, Any], fitted: GlobalDecoupler
) -> None:
    frame, _ = adult
    bound = fitted.latent_bound_
    assert isinstance(bound, LatentBound) and bound.rows == len(frame) and bound.quantile == 0.95
    z_s, _ = fitted.encode(frame)  # the rows fit was given: auxiliary data only
    np.testing.assert_allclose(bound.per_dim, np.quantile(np.abs(z_s), 0.95, axis=0))
    assert bound.box == max(bound.per_dim)
    assert bound.ball == pytest.approx(np.quantile(np.linalg.norm(z_s, axis=1), 0.95))
    assert np.mean(np.abs(z_s) <= bound.box) >= 0.95
    obfuscation = with_latent_bound(DPObfuscation(1.0), fitted)
    sampling = with_latent_bound(DPSampling(1.0, classes=list(fitted.classes_)), fitted)
    assert obfuscation.bound == bound.box and sampling.bound == bound.ball
    assert with_latent_bound(DPObfuscation(1.0, 2.0), fitted).bound == 2.0  # given wins
    suppression = Suppression()
    assert with_latent_bound(suppression, fitted) is suppression
    record = obfuscation.sample(z_s[:5]).record
    assert record is not None and any("public parameter" in a for a in record.assumptions)
    with pytest.raises(InputError, match="has no bound"):
        DPObfuscation(1.0).sample(z_s[:5])


def test_fidelity_flags_a_column_the_decoder_carries_nothing_of(
    adult: tuple[pd.DataFrame, Any], fitted: GlobalDecoupler
) -> None:
    table = fitted.fidelity_
    assert table is not None and list(table["column"]) == list(fitted.codec_.columns)
    assert set(table["measure"]) == {"correlation", "log-likelihood gain"}
    age = table.set_index("column").loc["age"]
    assert age["score"] > 0.2 and age["flag"] == ""  # age is reconstructed
    relationship = table.set_index("column").loc["relationship"]
    assert relationship["score"] > 0.1 and relationship["flag"] == ""  # its law is learned
    # a decoder that ignores its input decodes every numeric column as a constant, and no law
    # that ignores the row beats the rows' own frequencies (Gibbs): every column is flagged
    import torch

    with torch.no_grad():
        last = fitted.decoder_[-1]
        saved = last.weight.clone()
        last.weight.zero_()
        try:
            broken = fitted._fidelity(adult[0].iloc[:100])
        finally:
            last.weight.copy_(saved)
    flagged = broken.set_index("column")
    assert flagged.loc["age", "flag"] == "constant" and flagged.loc["age", "decoded_distinct"] == 1
    assert set(broken.loc[broken["kind"] == "categorical", "flag"]) <= {"marginal", ""}
    varies = broken["source_distinct"] > 1
    assert (broken.loc[varies, "flag"] != "").all() and (broken.loc[~varies, "flag"] == "").all()
    assert (broken.loc[broken["kind"] == "categorical", "score"] <= 0).all()
    assert "age" not in fitted.uninformative_columns()


def test_a_column_decoded_as_one_value_is_warned_at_fit(
    adult: tuple[pd.DataFrame, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A decoder that gives one value of a column where its public rows vary (a table too small
    for the networks) is said at fit, and the model keeps the list for 'sanitize apply'."""
    frame, schema = adult
    real = GlobalDecoupler._fidelity

    def flat_age(self: GlobalDecoupler, rows: pd.DataFrame) -> pd.DataFrame:
        table = real(self, rows)
        return table.assign(flag=np.where(table["column"] == "age", "constant", ""))

    monkeypatch.setattr(GlobalDecoupler, "_fidelity", flat_age)
    with pytest.warns(UserWarning, match="carries nothing of age on the"):
        model = GlobalDecoupler(**(SMALL | {"epochs": 2})).fit(
            frame.iloc[:200], "sex", schema=schema
        )
    assert model.uninformative_columns() == ["age"]


def test_diagnostics_survive_save_and_load(fitted: GlobalDecoupler, tmp_path: Path) -> None:
    loaded = GlobalDecoupler.load(fitted.save(tmp_path / "dec"))
    assert loaded.latent_bound_ == fitted.latent_bound_
    assert loaded.validation_ == pytest.approx(fitted.validation_)
    assert loaded.collapsed_ is False and loaded.best_epoch_ == fitted.best_epoch_
    assert loaded.batch_size_ == fitted.batch_size_
    assert loaded.fidelity_ is not None and fitted.fidelity_ is not None
    pd.testing.assert_frame_equal(loaded.fidelity_, fitted.fidelity_, check_dtype=False)


def test_no_split_on_a_tiny_table(adult: tuple[pd.DataFrame, Any]) -> None:
    frame, schema = adult
    model = GlobalDecoupler(**(SMALL | {"epochs": 2})).fit(frame.iloc[:40], "sex", schema=schema)
    assert model.validation_["status"] == "unchecked" and model.collapsed_ is None
    assert model.validation_["fidelity_rows"] == "training" and len(model.history_) == 2
    with pytest.raises(InputError, match="on_collapse"):
        GlobalDecoupler(on_collapse="ignore").fit(frame, "sex", schema=schema)
    with pytest.raises(InputError, match="validation_share"):
        GlobalDecoupler(validation_share=1.0).fit(frame, "sex", schema=schema)


def test_a_folder_saved_before_the_new_parameters_loads(
    fitted: GlobalDecoupler, adult: tuple[pd.DataFrame, Any], tmp_path: Path
) -> None:
    frame, _ = adult
    directory = fitted.save(tmp_path / "old")
    config_path = directory / "decoupler.json"
    config = json.loads(config_path.read_text())
    for name in ("validation_share", "patience", "on_collapse"):  # the earlier format
        del config["params"][name]
    del config["diagnostics"]
    config_path.write_text(json.dumps(config))
    loaded = GlobalDecoupler.load(directory)
    defaults = GlobalDecoupler().get_params()
    for name in ("validation_share", "patience", "on_collapse"):
        assert loaded.get_params()[name] == defaults[name]
    assert loaded.validation_["status"] == "unchecked" and loaded.latent_bound_ is None
    for ours, theirs in zip(loaded.encode(frame), fitted.encode(frame), strict=True):
        np.testing.assert_array_equal(ours, theirs)
    # a saved sampler bound still works; one left at None refuses without a learned bound
    z_s = loaded.encode(frame.iloc[:5])[0]
    assert with_latent_bound(DPObfuscation(1.0), loaded).bound is None
    assert DPObfuscation(1.0, bound=3.0).sample(z_s).z_s.shape == z_s.shape


def test_sanitizer_takes_the_learned_bound_for_a_sampler_without_one(
    adult: tuple[pd.DataFrame, Any], fitted: GlobalDecoupler
) -> None:
    frame, _ = adult
    bound = fitted.latent_bound_
    assert bound is not None
    private = frame.iloc[:50]
    for sampler in (DPObfuscation(1.0), DPSampling(1.0, classes=list(fitted.classes_))):
        out = Sanitizer(fitted, sampler).sanitize(private, "sex")
        assert out.record is not None and sampler.bound is None  # the sampler is not changed
        assert any("public parameter" in a for a in out.record.assumptions)
        given = Sanitizer(fitted, type(sampler)(**(sampler.get_params() | {"bound": 3.0})))
        record = given.sanitize(private, "sex").record
        assert record is not None and record.to_dict() != out.record.to_dict()


def test_a_small_table_gets_batches_that_leave_the_decoder_time_to_learn() -> None:
    """On 400 rows (320 to train) the tabular batch of 128 gave epochs of three Adam steps and
    early stopping ended training before the decoder knew even the columns' frequencies; the
    default batch is cut so an epoch has 16 steps, and the decoded laws are far better."""
    data = datasets.load("german_credit")
    frame = data.frame.sample(frac=1, random_state=0).reset_index(drop=True).iloc[:400]
    gains = {}
    for batch in (None, 128):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = GlobalDecoupler(progress=False, batch_size=batch).fit(
                frame, "personal_status_sex", schema=data.schema
            )
        assert model.batch_size_ == (20 if batch is None else 128)  # ceil(320 / 16); kept
        table = model.fidelity_
        assert table is not None
        gains[batch] = float(table.loc[table["kind"] == "categorical", "score"].sum())
    assert gains[None] > gains[128] + 1.0  # nats a row over the 13 categorical columns
    tiny = GlobalDecoupler(progress=False).fit(
        frame.iloc[:60], "personal_status_sex", schema=data.schema
    )
    assert tiny.batch_size_ == 16  # the floor: 48 training rows / 16 is 3
