"""Data in and out of ``sanitize``: a new table, nullable numerics, out-of-domain values, ignored
columns, ``--infer-schema``, and the fingerprint that keeps the training rows out of ``apply``.

Issue 12, items 4 and 5. Tiny data and 1-2 epochs: these check plumbing, not quality.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("torch")

from attrpriv.cli import main
from attrpriv.data.schema import Categorical, Column, Integer, Numeric, Schema
from attrpriv.errors import InputError, SchemaError
from attrpriv.sanitize._store import FINGERPRINT_FILE, table_hashes
from attrpriv.sanitize.decoupler import GlobalDecoupler
from attrpriv.sanitize.samplers import DPSampling, Suppression
from attrpriv.sanitize.sanitizer import Sanitizer

FAST: dict[str, Any] = {"epochs": 2, "hidden": 16, "latent_dim": 6, "sensitive_dim": 2,
                        "batch_size": 32, "progress": False}  # fmt: skip
TRAIN = ["--epochs", "2", "--hidden", "16", "--latent-dim", "6", "--sensitive-dim", "2"]


def _table(n: int = 240, seed: int = 0) -> pd.DataFrame:
    """A table nobody tuned for: an id to ignore, a nullable integer and a nullable float."""
    rng = np.random.default_rng(seed)
    group = rng.integers(0, 2, n)
    frame = pd.DataFrame(
        {
            "record_id": np.arange(7000, 7000 + n),
            "age": rng.integers(18, 80, n).astype(float),
            "income": np.round(rng.normal(40 + 10 * group, 8, n), 2),
            "region": rng.choice(["north", "south", "east"], n),
            "group": np.where(group == 1, "a", "b"),
            "outcome": rng.choice(["yes", "no"], n),
        }
    )
    frame.loc[rng.choice(n, 30, replace=False), "income"] = np.nan
    frame.loc[rng.choice(n, 15, replace=False), "age"] = np.nan
    return frame


SCHEMA = Schema(
    (
        Column("record_id", "ignore", description="a row id: passed through, never modelled"),
        Column("age", "feature", Integer(18, 90), nullable=True),
        Column("income", "feature", Numeric(0.0, 100.0), nullable=True),
        Column("region", "feature", Categorical(("north", "south", "east"))),
        Column("group", "sensitive", Categorical(("a", "b"))),
        Column("outcome", "target", Categorical(("yes", "no"))),
    )
)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """aux.csv (160 rows), private.csv (80 other rows, out-of-domain values, an extra column)."""
    folder = tmp_path_factory.mktemp("table")
    frame = _table()
    frame.iloc[:160].to_csv(folder / "aux.csv", index=False)
    private = frame.iloc[160:].copy()
    private.loc[private.index[3], "age"] = 150.0  # above the public bound 90
    private.loc[private.index[4], "income"] = -7.5  # below 0
    private.loc[private.index[5], "region"] = "west"  # not a category
    private["batch"] = "b7"  # a column the schema does not declare
    private.to_csv(folder / "private.csv", index=False)
    SCHEMA.save(folder / "schema.yaml")
    return {"folder": folder, "aux": folder / "aux.csv", "private": folder / "private.csv",
            "schema": folder / "schema.yaml"}  # fmt: skip


@pytest.fixture(scope="module")
def decoupler(files: dict[str, Path]) -> Path:
    out = files["folder"] / "dec"
    code = main(["sanitize", "fit", str(files["aux"]), "--schema", str(files["schema"]),
                 "--sensitive", "group", *TRAIN, "--out", str(out)])  # fmt: skip
    assert code == 0
    return out


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    if code == 2:
        assert captured.err.strip().count("\n") == 0, captured.err
    return code, captured.out, captured.err


def test_a_new_table_goes_through_fit_and_apply_with_every_column_accounted_for(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path], decoupler: Path
) -> None:
    out, record = files["folder"] / "sanitized.csv", files["folder"] / "record.json"
    code, text, _ = _cli(capsys, "sanitize", "apply", str(files["private"]), "--schema",
                         str(files["schema"]), "--decoupler", str(decoupler), "--epsilon", "1",
                         "--out", str(out), "--record", str(record))  # fmt: skip
    assert code == 0, text
    assert "1 passed through unchanged (role 'ignore': record_id)" in text
    assert "1 dropped: batch (not in the schema" in text
    assert "clipped 3 values outside their public domain into it" in text
    private, released = pd.read_csv(files["private"]), pd.read_csv(out)
    assert len(released) == len(private)
    columns = json.loads(record.read_text())["diagnostics"]["columns"]
    assert columns == {
        "sanitized": ["age", "income", "region", "outcome"],
        "synthetic": ["group"],
        "passed_through": ["record_id"],
        "dropped": {"batch": columns["dropped"]["batch"]},
    }
    accounted = [*columns["sanitized"], *columns["synthetic"], *columns["passed_through"],
                 *columns["dropped"]]  # fmt: skip
    assert sorted(accounted) == sorted(private.columns)  # every input column, once
    assert list(released.columns) == [c for c in private.columns if c != "batch"]
    np.testing.assert_array_equal(released["record_id"], private["record_id"])  # unchanged
    diagnostics = json.loads(record.read_text())["diagnostics"]
    assert diagnostics["clipped"] == {"age": 1, "income": 1, "region": 1}
    assert diagnostics["training_rows"] == 0
    SCHEMA.select([c for c in released.columns if c != "age"]).validate(
        released.drop(columns="age").astype({"region": object})
    )
    present = released["age"].dropna()
    assert present.between(18, 90).all() and (present == present.round()).all()


def test_apply_refuses_the_training_rows_and_says_how_to_override(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path], decoupler: Path
) -> None:
    out = files["folder"] / "again.csv"
    base = ("sanitize", "apply", str(files["aux"]), "--decoupler", str(decoupler),
            "--epsilon", "1", "--out", str(out))  # fmt: skip
    code, _, err = _cli(capsys, *base)
    assert code == 2 and not out.exists()
    assert "most rows of" in err and "equal rows the decoupler" in err
    assert "160" not in err  # how many private rows match is not said
    assert "--allow-training-rows" in err
    code, _, err = _cli(capsys, *base, "--row-range", "150:")  # 10 of them, no schema needed
    assert code == 2 and "most rows of" in err
    code, _, err = _cli(capsys, *base, "--allow-training-rows")
    assert code == 0 and "warning: --allow-training-rows: most rows" in err
    assert out.exists()
    # without the ignored id column, rows are compared on the modelled columns
    no_id = files["folder"] / "aux-no-id.csv"
    pd.read_csv(files["aux"]).drop(columns="record_id").to_csv(no_id, index=False)
    code, _, err = _cli(capsys, *base[:2], str(no_id), *base[3:])
    assert code == 2 and "compared on the modelled columns only" in err
    assert "['record_id']" in err


def test_strict_domain_refuses_and_drop_ignored_drops(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path], decoupler: Path
) -> None:
    out = files["folder"] / "strict.parquet"
    base = ("sanitize", "apply", str(files["private"]), "--decoupler", str(decoupler),
            "--mechanism", "suppression", "--out", str(out))  # fmt: skip
    code, _, err = _cli(capsys, *base, "--strict-domain")
    assert code == 2 and "column 'age'" in err and "at row 3" in err and "150" not in err
    assert not out.exists()
    code, text, _ = _cli(capsys, *base, "--drop-ignored")
    assert code == 0
    released = pd.read_parquet(out)
    assert "record_id" not in released and "group" not in released  # suppression: no labels
    assert "record_id (role 'ignore': dropped on request)" in text.replace("\n", " ")
    assert "group (the sensitive column: Suppression draws no synthetic labels" in text


def test_infer_schema_on_fit_warns_and_apply_needs_no_schema(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path]
) -> None:
    dec = files["folder"] / "dec-inferred"
    aux = files["folder"] / "aux-no-id-inferred.csv"
    pd.read_csv(files["aux"]).drop(columns="record_id").to_csv(aux, index=False)
    code, text, err = _cli(capsys, "sanitize", "fit", str(aux), "--infer-schema", "--sensitive",
                           "group", *TRAIN, "--out", str(dec))  # fmt: skip
    assert code == 0 and "warning: Schema.infer reads category lists" in err
    assert "(--infer-schema)" in text and "nullable numeric columns imputed" in text
    config = json.loads((dec / "decoupler.json").read_text())
    assert config["schema"]["inferred"] and config["columns"] == ["age", "income", "region",
                                                                  "outcome"]  # fmt: skip
    assert {b for b in ("age", "income") if config["schema"]["columns"][b].get("nullable")} == {
        "age", "income"
    }  # fmt: skip
    out = files["folder"] / "inferred.csv"
    code, text, _ = _cli(capsys, "sanitize", "apply", str(files["private"]), "--decoupler",
                         str(dec), "--epsilon", "1", "--out", str(out))  # fmt: skip
    assert code == 0 and "clipped" in text  # the inferred bounds are the aux data's
    # the private file's id is not in the inferred schema: dropped, with the reason
    assert "record_id (not in the schema" in text and "batch (not in the schema" in text
    code, _, err = _cli(capsys, "sanitize", "fit", "mnist_5k", "--infer-schema", "--sensitive",
                        "thickness", "--out", str(files["folder"] / "x"))  # fmt: skip
    assert code == 2 and "--infer-schema describes a table" in err


def test_nullable_numerics_are_imputed_with_an_indicator_and_decoded_missing() -> None:
    frame = _table()
    model = GlobalDecoupler(**FAST).fit(frame, "group", schema=SCHEMA)
    codec = model.codec_
    blocks = {b.name: b for b in codec.blocks}
    assert blocks["age"].missing and blocks["income"].missing and blocks["age"].width == 2
    assert codec.fill["income"] == pytest.approx(float(frame["income"].median()))
    assert codec.fill["age"] == round(float(frame["age"].median()))
    matrix = codec.encode(frame)
    absent = frame["income"].isna().to_numpy()
    np.testing.assert_array_equal(matrix[:, blocks["income"].start + 1], absent)
    filled = (codec.fill["income"] - 0.0) / 100.0
    np.testing.assert_allclose(matrix[absent, blocks["income"].start], filled, rtol=1e-6)
    out = np.zeros((3, codec.dim), dtype=np.float32)
    out[0, blocks["age"].start + 1] = 5.0  # indicator on: missing
    out[1, blocks["income"].start + 1] = -5.0  # indicator off: a value
    decoded = codec.decode(out)
    assert str(decoded["age"].dtype) == "Int64" and decoded["age"].isna().tolist()[0]
    assert pd.api.types.is_float_dtype(decoded["income"]) and not np.isnan(decoded["income"][1])
    # a column that is not nullable still refuses missing values, naming it
    strict = Schema((*(c for c in SCHEMA.columns if c.name != "income"),
                     Column("income", "feature", Numeric(0.0, 100.0))))  # fmt: skip
    with pytest.raises(SchemaError, match=r"'income'.*missing"):
        GlobalDecoupler(**FAST).fit(frame, "group", schema=strict)


def test_sanitizer_clips_or_refuses_out_of_domain_values() -> None:
    frame = _table()
    aux, private = frame.iloc[:160], frame.iloc[160:].reset_index(drop=True)
    model = GlobalDecoupler(**FAST).fit(aux, "group", schema=SCHEMA)
    bad = private.copy()
    bad.loc[2, "age"], bad.loc[3, "region"] = 500.0, "west"
    before = bad.copy()
    result = Sanitizer(model, Suppression()).sanitize(bad)
    assert result.diagnostics.clipped == {"age": 1, "region": 1}
    pd.testing.assert_frame_equal(bad, before)  # the input is not changed
    conformed, counts = model.codec_.conform(bad)
    assert counts == {"age": 1, "region": 1} and conformed.loc[2, "age"] == 90
    assert conformed.loc[3, "region"] == model.codec_.fill["region"]
    with pytest.raises(SchemaError, match=r"'age'.*at row 2"):
        Sanitizer(model, Suppression()).sanitize(bad, out_of_domain="refuse")
    with pytest.raises(InputError, match="out_of_domain must be one of"):
        Sanitizer(model, Suppression()).sanitize(bad, out_of_domain="drop")


def test_training_rows_python_api() -> None:
    frame = _table()
    aux, private = frame.iloc[:160], frame.iloc[160:]
    model = GlobalDecoupler(**FAST).fit(aux, "group", schema=SCHEMA)
    assert model.training_rows(aux).all() and not model.training_rows(private).any()
    mixed = pd.concat([private.iloc[:5], aux.iloc[:3]])
    np.testing.assert_array_equal(model.training_rows(mixed), [False] * 5 + [True] * 3)
    # the same rows read back from another file type or dtype still match
    retyped = aux.astype({"region": "category", "outcome": "category"})
    retyped["record_id"] = retyped["record_id"].astype(float)
    assert model.training_rows(retyped).all()
    changed = aux.copy()
    changed.loc[changed.index[0], "income"] = 99.0
    assert not model.training_rows(changed)[0] and model.training_rows(changed)[1:].all()
    # the sensitive column decides nothing: a neighbour that changes one row's group, or data
    # without it, gets the same answer
    flipped = aux.copy()
    flipped.loc[flipped.index[0], "group"] = next(
        g for g in SCHEMA.domain("group").categories if g != aux["group"].iloc[0]
    )
    assert (
        model.training_rows(flipped).all() and model.training_rows(aux.drop(columns="group")).all()
    )
    with pytest.raises(InputError, match=r"lacks column\(s\) \['income'\]"):
        model.training_rows(aux.drop(columns="income"))
    sampler = DPSampling(1.0, 3.0, classes=list(model.classes_))
    with pytest.raises(InputError, match="most rows equal one of the decoupler's"):
        Sanitizer(model, sampler).sanitize(aux, training_rows="refuse")
    with pytest.warns(UserWarning, match="more rows equal one of the decoupler's training rows"):
        result = Sanitizer(model, Suppression()).sanitize(mixed, training_rows="warn")
    assert result.diagnostics.training_rows == 3
    assert Sanitizer(model, Suppression()).sanitize(aux).diagnostics.training_rows is None  # allow


def test_the_fingerprint_stores_keyed_hashes_not_values(tmp_path: Path) -> None:
    frame = _table()
    frame["region"] = frame["region"].replace("east", "Zanzibar-9931")  # a distinctive value
    schema = Schema(
        tuple(c if c.name != "region" else Column("region", "feature", Categorical(
            ("north", "south", "Zanzibar-9931"))) for c in SCHEMA.columns)
    )  # fmt: skip
    one = GlobalDecoupler(**FAST).fit(frame, "group", schema=schema)
    two = GlobalDecoupler(**FAST).fit(frame, "group", schema=schema)
    a, b = one.fingerprint_, two.fingerprint_
    assert a is not None and b is not None and a.key != b.key  # a random key per fit
    assert not set(a.rows.tolist()) & set(b.rows.tolist())  # unlinkable across decouplers
    assert a.n_rows == len(frame) and len(a.rows) == len(frame)
    assert a.columns == tuple(n for n in schema.names if n != "group")  # never the sensitive one
    assert a.core_columns == ("age", "income", "region", "outcome")
    assert np.all(np.diff(a.rows.astype(np.float64)) > 0)  # sorted: the row order is not kept
    one.save(tmp_path / "dec")
    stored = np.load(tmp_path / "dec" / FINGERPRINT_FILE, allow_pickle=False)
    assert sorted(stored.files) == ["core", "rows"] and stored["rows"].dtype == np.uint64
    blob = (tmp_path / "dec" / FINGERPRINT_FILE).read_bytes()
    assert b"7003" not in blob and b"Zanzibar" not in blob  # ids and values are not stored
    hashes = table_hashes(a.key, frame, a.columns)
    assert np.isin(hashes, stored["rows"]).all()
    loaded = GlobalDecoupler.load(tmp_path / "dec")
    assert loaded.training_rows(frame).all()


def test_a_decoupler_saved_without_a_fingerprint_is_warned_about(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path], decoupler: Path, tmp_path: Path
) -> None:
    """An earlier attrpriv saved no fingerprint: apply warns that it cannot check, and runs."""
    old = tmp_path / "old"
    old.mkdir()
    config = json.loads((decoupler / "decoupler.json").read_text())
    for key in ("fingerprint", "fill", "fit_schema"):
        config.pop(key)
    (old / "decoupler.json").write_text(json.dumps(config))
    (old / "weights.pt").write_bytes((decoupler / "weights.pt").read_bytes())
    model = GlobalDecoupler.load(old)
    assert model.fingerprint_ is None
    with pytest.raises(InputError, match="no fingerprint of its training rows"):
        model.training_rows(pd.read_csv(files["aux"]))
    out = tmp_path / "s.csv"
    code, _, err = _cli(capsys, "sanitize", "apply", str(files["private"]), "--schema",
                        str(files["schema"]), "--decoupler", str(old), "--epsilon", "1",
                        "--out", str(out))  # fmt: skip
    assert code == 0 and "has no fingerprint of its training rows" in err


def test_images_are_fingerprinted_too(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    images = rng.uniform(size=(80, 8, 8)).astype(np.float32)
    path = tmp_path / "digits.npz"
    np.savez(path, images=images, writer=(images.mean((1, 2)) > 0.5).astype(np.int64),
             id=np.arange(80))  # fmt: skip
    dec = tmp_path / "dec"
    code, text, _ = _cli(capsys, "sanitize", "fit", str(path), "--sensitive", "writer",
                         "--row-range", ":60", "--epochs", "1", "--hidden", "16",
                         "--batch-size", "16", "--out", str(dec))  # fmt: skip
    assert code == 0 and "fingerprint of the 60 training rows" in text
    out = tmp_path / "out.npz"
    base = ("sanitize", "apply", str(path), "--decoupler", str(dec), "--epsilon", "1",
            "--out", str(out))  # fmt: skip
    code, text, _ = _cli(capsys, *base, "--row-range", "60:")
    assert code == 0 and "sanitized 20 images" in text
    code, _, err = _cli(capsys, *base, "--row-range", "30:")  # 30 of 50 are training images
    assert code == 2 and "most images of" in err and "--allow-training-rows" in err
    code, _, err = _cli(capsys, *base, "--row-range", "50:")  # 10 of 30: under the limit
    assert code == 0 and "warning: more images of" in err
    code, text, _ = _cli(capsys, *base, "--row-range", "60::5")
    assert code == 0 and "sanitized 4 images" in text
    code, text, _ = _cli(capsys, *base, "--where", "id=70")
    assert code == 0 and "sanitized 1 images" in text
    model = GlobalDecoupler.load(dec)
    np.testing.assert_array_equal(model.training_rows(images), np.arange(80) < 60)
