"""The decoupler as a scikit-learn estimator, with one set of defaults for Python and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

from sklearn.base import clone

from attrpriv import datasets
from attrpriv.cli import main
from attrpriv.errors import InputError, NotFittedError
from attrpriv.sanitize.decoupler import GlobalDecoupler
from attrpriv.sanitize.defaults import ALPHAS, KIND_DEFAULTS
from attrpriv.sanitize.samplers import DPSampling, Suppression
from attrpriv.sanitize.sanitizer import Sanitizer

FAST = {"epochs": 1, "hidden": 8, "latent_dim": 6, "sensitive_dim": 2, "progress": False}


def test_defaults_are_the_tuned_ones_for_each_kind() -> None:
    tabular, image = GlobalDecoupler(), GlobalDecoupler(kind="image")
    for model, kind in ((tabular, "tabular"), (image, "image")):
        settings = model.settings()
        assert {k: settings[k] for k in KIND_DEFAULTS[kind]} == KIND_DEFAULTS[kind]
        assert settings["alphas"] == ALPHAS == (1.0, 10.0, 100.0, 1.0)
    assert tabular.settings()["beta"] == 0.5 and image.settings()["hidden"] == 128
    assert GlobalDecoupler(beta=5.0, kind="image").settings()["beta"] == 5.0  # given wins
    assert repr(GlobalDecoupler()) == "GlobalDecoupler()"
    assert (
        repr(GlobalDecoupler(beta=5.0, kind="image")) == "GlobalDecoupler(kind='image', beta=5.0)"
    )


def test_clone_fit_and_not_fitted(tmp_path: Path) -> None:
    adult = datasets.load("adult")
    frame = adult.frame.sample(200, random_state=0)
    model = GlobalDecoupler(**FAST)
    with pytest.raises(NotFittedError, match="not fitted yet"):
        model.encode(frame)
    assert isinstance(NotFittedError("x"), InputError)
    copy = clone(model)
    assert copy.get_params() == model.get_params() and copy is not model
    assert copy.fit(frame, "sex", schema=adult.schema) is copy  # fit returns the decoupler
    z_s, z_ns = copy.encode(frame)
    assert z_s.shape == (200, 2) and z_ns.shape == (200, 4)
    assert copy.set_params(epochs=2) is copy and copy.epochs == 2
    with pytest.raises(InputError, match="has no parameter"):
        copy.set_params(epoch=2)
    sanitized = Sanitizer(copy, Suppression()).sanitize(frame)
    # 13 modelled columns decoded, the 2 ignored ones (fnlwgt, split) passed through
    assert repr(sanitized) == "SanitizedData(200 rows x 15 columns; no DP claim (z_S suppressed))"
    sampled = Sanitizer(copy, DPSampling(1.0, 3.0, classes=list(copy.classes_))).sanitize(frame)
    assert "synthetic sensitive labels" in repr(sampled) and "(epsilon=1" in repr(sampled)
    assert "<table" in sampled._repr_html_() and "Sanitized data" in sampled._repr_html_()
    copy.save(tmp_path / "dec")
    params = json.loads((tmp_path / "dec" / "decoupler.json").read_text())["params"]
    assert params["beta"] == 0.5 and params["lr"] == 3e-3 and params["hidden"] == 8  # as used


def test_the_cli_trains_with_the_python_defaults(tmp_path: Path) -> None:
    """`sanitize fit` without training options takes GlobalDecoupler's defaults (one table)."""
    out = tmp_path / "dec"
    code = main(["sanitize", "fit", "adult", "--sensitive", "sex", "--rows", "100",
                 "--epochs", "1", "--out", str(out)])  # fmt: skip
    assert code == 0
    params = json.loads((out / "decoupler.json").read_text())["params"]
    python = GlobalDecoupler(epochs=1).settings()
    assert {k: params[k] for k in python if k != "alphas"} == {
        k: v for k, v in python.items() if k != "alphas"
    }
    assert tuple(params["alphas"]) == python["alphas"]
    assert np.isfinite(json.loads((out / "decoupler.json").read_text())["history"][0]["dcorr"])
