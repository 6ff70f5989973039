"""Sanitizer pipeline (decoupler + S2's samplers) and the ``attrpriv sanitize`` CLI."""

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
from attrpriv.dp.ledger import BudgetLedger
from attrpriv.dp.noise import SeededNumpyNoise
from attrpriv.errors import BudgetExceededError, InputError
from attrpriv.sanitize.decoupler import GlobalDecoupler
from attrpriv.sanitize.samplers import DPObfuscation, DPSampling, Suppression
from attrpriv.sanitize.sanitizer import Sanitizer

TAB = {"epochs": 4, "hidden": 32, "batch_size": 128, "beta": 0.5,
       "alphas": (1.0, 10.0, 100.0, 1.0), "progress": False}  # fmt: skip


@pytest.fixture(scope="module")
def setup(adult_dataset: datasets.Dataset) -> Any:
    frame = adult_dataset.frame.sample(2500, random_state=1).reset_index(drop=True)
    aux, priv = frame.iloc[:2000], frame.iloc[2000:].reset_index(drop=True)
    schema = adult_dataset.schema
    return GlobalDecoupler(**TAB).fit(aux, "sex", schema=schema), priv, schema


def test_dp_sampling_gives_labelled_data_in_schema(setup: Any) -> None:
    model, priv, schema = setup
    before = priv.copy()
    sampler = DPSampling(1.0, 3.0, classes=["Female", "Male"], sampler=SeededNumpyNoise(0),
                         allow_nonprivate=True)  # fmt: skip
    result = Sanitizer(model, sampler).sanitize(priv)
    out = result.data
    assert isinstance(out, pd.DataFrame) and len(out) == len(priv)
    assert list(out.columns) == [c for c in priv.columns if c in out.columns] and "sex" in out
    schema.select(list(out.columns)).validate(out)
    assert out["sex"].dtype == priv["sex"].dtype
    np.testing.assert_array_equal(out["sex"].astype(str).to_numpy(), result.y_s.astype(str))
    assert result.record is not None and result.record.mechanism == "dp-sampling"
    assert json.dumps(result.to_dict())
    pd.testing.assert_frame_equal(priv, before)


def test_only_sensitive_latents_change(setup: Any) -> None:
    """Suppression keeps z_NS: decoding differs from plain reconstruction only through z_S
    (each categorical drawn from the decoder's law with the sanitizer's seed, or its mode)."""
    model, priv, _ = setup
    result = Sanitizer(model, Suppression()).sanitize(priv)
    assert result.record is None and result.y_s is None and "sex" not in result.data
    z_s, z_ns = model.encode(priv)
    decoded = model.decode(np.zeros_like(z_s), z_ns, rng=np.random.default_rng(0))
    pd.testing.assert_frame_equal(result.data[list(decoded.columns)], decoded)
    mode = Sanitizer(model, Suppression(), seed=None).sanitize(priv).data
    pd.testing.assert_frame_equal(
        mode[list(decoded.columns)], model.decode(np.zeros_like(z_s), z_ns)
    )
    # the ignored columns pass through unchanged, the sensitive one is dropped with a reason
    columns = result.diagnostics.columns
    assert columns.passed_through == ("fnlwgt", "split")
    assert set(columns.dropped) == {"sex"} and "no synthetic labels" in columns.dropped["sex"]
    assert columns.sanitized == tuple(decoded.columns)
    np.testing.assert_array_equal(result.data["fnlwgt"].to_numpy(), priv["fnlwgt"].to_numpy())
    assert list(result.data.columns) == [c for c in priv.columns if c != "sex"]
    dropped = Sanitizer(model, Suppression()).sanitize(priv, keep_ignored=False)
    assert list(dropped.data.columns) == list(decoded.columns)
    assert set(dropped.diagnostics.columns.dropped) == {"sex", "fnlwgt", "split"}


def test_ledger_charged_before_noise(setup: Any, tmp_path: Path) -> None:
    model, priv, _ = setup
    ledger = BudgetLedger(tmp_path / "l.db")
    ledger.set_budget(1.5, unit="dp/substitute:z_S")
    sampler = DPObfuscation(1.0, 3.0, sampler=SeededNumpyNoise(0), allow_nonprivate=True)
    Sanitizer(model, sampler).sanitize(priv, ledger=ledger)
    with pytest.raises(BudgetExceededError):
        Sanitizer(model, sampler).sanitize(priv, ledger=ledger)


def test_bad_labels(setup: Any) -> None:
    model, priv, _ = setup
    with pytest.raises(InputError, match="one label per row"):
        Sanitizer(model, Suppression()).sanitize(priv, np.zeros(3))
    with pytest.raises(InputError, match="'sex'"):
        Sanitizer(model, DPSampling(1.0, 3.0)).sanitize(priv.drop(columns="sex"))


@pytest.fixture(scope="module")
def cli_decoupler(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A decoupler fitted by the CLI on 600 rows of Adult's train split (2 epochs)."""
    dec = tmp_path_factory.mktemp("cli") / "dec"
    code = main(["sanitize", "fit", "adult", "--sensitive", "sex", "--where", "split=train",
                 "--rows", "600", "--epochs", "2", "--hidden", "16",
                 "--out", str(dec)])  # fmt: skip
    assert code == 0 and (dec / "weights.pt").is_file() and (dec / "fingerprint.npz").is_file()
    return dec


def test_cli_fit_and_apply(
    cli_decoupler: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dec = cli_decoupler
    capsys.readouterr()
    out, rec = tmp_path / "s.parquet", tmp_path / "r.json"
    code = main(["sanitize", "apply", "adult", "--decoupler", str(dec), "--where", "split=test",
                 "--rows", "300", "--mechanism", "dp-sampling", "--epsilon", "1", "--out",
                 str(out), "--record", str(rec)])  # fmt: skip
    assert code == 0
    text = capsys.readouterr().out
    assert "2 passed through unchanged (role 'ignore': fnlwgt, split)" in text
    frame = pd.read_parquet(out)
    assert len(frame) == 300 and "sex" in frame.columns and set(frame["split"]) == {"test"}
    assert list(frame.columns) == list(datasets.load("adult").frame.columns)
    payload = json.loads(rec.read_text())
    assert payload["record"]["epsilon"] == 1.0 and payload["diagnostics"]["training_rows"] == 0
    assert payload["diagnostics"]["columns"]["synthetic"] == ["sex"]
    bad = main(["sanitize", "apply", "adult", "--decoupler", str(dec), "--where", "split=test",
                "--mechanism", "dp-obfuscation", "--out", str(tmp_path / "x.parquet")])  # fmt: skip
    assert bad == 2 and "--epsilon" in capsys.readouterr().err
    assert not (tmp_path / "x.parquet").exists()
    assert (
        main(["sanitize", "fit", "adult", "--sensitive", "nope", "--out", str(tmp_path / "d2")])
        == 2
    )


def test_cli_fit_reports_validation_and_apply_takes_the_learned_bound(
    cli_decoupler: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    code = main(["sanitize", "fit", "adult", "--sensitive", "sex", "--where", "split=train",
                 "--rows", "300", "--epochs", "2", "--hidden", "16",
                 "--out", str(tmp_path / "d")])  # fmt: skip
    text = capsys.readouterr().out
    assert code == 0 and "best epoch" in text and "validation on 60 held-out rows: z_S" in text
    assert "log-loss of y_S: aligner (z_S)" in text and "retun" in text  # 2 epochs collapse
    assert "then trained on all 300 rows" in text and "latent bound from the auxiliary" in text
    assert "batch size 16 (cut from 128 so that an epoch" in text  # 240 training rows
    records = {}
    for given in ([], ["--bound", "3"]):
        rec = tmp_path / f"r{len(given)}.json"
        code = main(["sanitize", "apply", "adult", "--decoupler", str(cli_decoupler), "--where",
                     "split=test", "--rows", "50", "--mechanism", "dp-obfuscation", "--epsilon",
                     "1", "--out", str(tmp_path / f"s{len(given)}.parquet"), "--record",
                     str(rec), *given])  # fmt: skip
        assert code == 0
        records[len(given)] = json.loads(rec.read_text())["record"]
    assert any("latent bound from the auxiliary" in a for a in records[0]["assumptions"])
    assert not any("latent bound" in a for a in records[2]["assumptions"])
    assert "[-3, 3]" in json.dumps(records[2]) and "[-3, 3]" not in json.dumps(records[0])


def test_cli_apply_refuses_the_training_rows(
    cli_decoupler: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same seeded sample of the train split the decoupler was fitted on: refused."""
    out, rec = tmp_path / "s.parquet", tmp_path / "r.json"
    args = ["sanitize", "apply", "adult", "--decoupler", str(cli_decoupler), "--where",
            "split=train", "--rows", "600", "--epsilon", "1", "--out", str(out),
            "--record", str(rec)]  # fmt: skip
    capsys.readouterr()
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "most rows of 'adult' equal rows the decoupler" in err
    assert "--allow-training-rows" in err and not out.exists() and not rec.exists()
    assert main([*args, "--allow-training-rows"]) == 0
    err = capsys.readouterr().err
    assert "warning: --allow-training-rows: most rows of 'adult'" in err
    diagnostics = json.loads(rec.read_text())["diagnostics"]
    assert diagnostics["training_rows"] == 600 and diagnostics["training_rows_allowed"] is True
    # rows disjoint from the training ones, by position: --row-range
    assert main(["sanitize", "apply", "adult", "--decoupler", str(cli_decoupler),
                 "--row-range", "40000:40100", "--epsilon", "1",
                 "--out", str(out)]) == 0  # fmt: skip
    assert len(pd.read_parquet(out)) == 100
    for bad, message in (("40000", "START:STOP"), ("9:3", "selects no row"),
                         ("-5:", ">= 0")):  # fmt: skip
        assert main(["sanitize", "apply", "adult", "--decoupler", str(cli_decoupler),
                     "--row-range", bad, "--epsilon", "1", "--out", str(out)]) == 2  # fmt: skip
        assert message in capsys.readouterr().err
    for bad, message in (("split", "COLUMN=VALUE"), ("nope=1", "'nope' is not a column"),
                         ("split=dev", "selects no row")):  # fmt: skip
        assert main(["sanitize", "apply", "adult", "--decoupler", str(cli_decoupler),
                     "--where", bad, "--epsilon", "1", "--out", str(out)]) == 2  # fmt: skip
        assert message in capsys.readouterr().err


def test_cli_evaluate(cli_decoupler: Path, tmp_path: Path) -> None:
    dec = cli_decoupler
    sweep_json, page = tmp_path / "sweep.json", tmp_path / "sweep.html"
    code = main(["sanitize", "evaluate", "adult", "adult", "--decoupler", str(dec), "--target",
                 "income", "--rows", "400", "--epsilons", "1,4", "--noise-scales", "0.2",
                 "--interpolation-strengths", "1", "--out", str(sweep_json),
                 "--html", str(page)])  # fmt: skip
    assert code == 0
    result = json.loads(sweep_json.read_text())
    assert [p["name"] for p in result["points"]] == [
        "suppression", "dp-obfuscation eps=1", "dp-sampling eps=1", "dp-obfuscation eps=4",
        "dp-sampling eps=4", "input noise 0.2", "beta-VAE interpolation x1",
        "proxy-resampling eps=1", "proxy-resampling eps=4",
        "reconstruction (z_S kept)", "real data",
    ]  # fmt: skip
    assert all(-1 <= p["leakage"] <= 1 and 0 <= p["utility"] <= 1 for p in result["points"])
    families = {"suppression", "dp-obfuscation", "dp-sampling", "input-noise",
                "beta-VAE interpolation", "proxy-resampling"}  # fmt: skip
    assert set(result["pareto_auc"]) == families
    html = page.read_text()
    assert "data:image/png;base64," in html and "Sensitive column (y_S): <b>sex</b>" in html
    assert "predict <b>income</b>" in html and "\u03b5 = 4" in html
    public = result["public_only"]["auc"]
    retained = result["retained_private_information"]
    assert set(retained) == {p["name"] for p in result["points"] + result["baselines"]}
    for point in result["points"]:
        assert retained[point["name"]] == pytest.approx(point["utility"] - public)
    assert "The public rows alone" in html and "retained private information" in html
    assert main(["sanitize", "evaluate", "adult", "adult", "--decoupler", str(dec),
                 "--target", "income", "--epsilons", "0,1"]) == 2  # fmt: skip
    assert main(["sanitize", "evaluate", "adult", "adult", "--decoupler", str(dec),
                 "--target", "income", "--interpolation-strengths", "x"]) == 2  # fmt: skip


def test_sweep_refuses_missing_columns(setup: Any) -> None:
    from attrpriv.sanitize.tradeoff import sweep

    model, priv, _ = setup
    with pytest.raises(InputError, match="'nope'"):
        sweep(model, priv, priv, {"s": ("suppression", Suppression())}, target="nope")


def test_sweep_sanitizing_removes_measurable_leakage(
    setup: Any, adult_dataset: datasets.Dataset
) -> None:
    """The real data leaks sex to the adversary; the sanitized versions leak clearly less."""
    from attrpriv.sanitize.tradeoff import sweep

    model, priv, _ = setup
    aux = adult_dataset.frame.sample(2000, random_state=1).reset_index(drop=True)
    sampler = DPSampling(1.0, 3.0, classes=["Female", "Male"], sampler=SeededNumpyNoise(0),
                         allow_nonprivate=True)  # fmt: skip
    samplers = {"sup": ("suppression", Suppression()), "dps": ("dp-sampling", sampler)}
    result = sweep(model, aux, priv, samplers, target="income")
    by_name = {p.name: p for p in result.points}
    real = by_name["real data"].leakage
    assert real > 0.05
    assert max(by_name["sup"].leakage, by_name["dps"].leakage) < real - 0.05
    assert set(result.pareto_auc) == {"suppression", "dp-sampling"}
    assert json.dumps(result.to_dict())
