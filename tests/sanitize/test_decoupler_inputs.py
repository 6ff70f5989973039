"""Bad input to a fitted GlobalDecoupler: another schema, the wrong kind or shape, bad settings.

Each is a one-line InputError naming what is wrong (exit 2 from the CLI, nothing written).
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch")

from attrpriv import datasets  # noqa: E402
from attrpriv.cli import main  # noqa: E402
from attrpriv.data.schema import Schema  # noqa: E402
from attrpriv.errors import InputError, SchemaError, showing_private_values  # noqa: E402
from attrpriv.sanitize.decoupler import GlobalDecoupler  # noqa: E402
from attrpriv.sanitize.samplers import DPObfuscation, DPSampling  # noqa: E402
from attrpriv.sanitize.sanitizer import Sanitizer  # noqa: E402

FAST: dict[str, Any] = {"epochs": 1, "hidden": 16, "latent_dim": 6, "sensitive_dim": 2,
                        "batch_size": 64, "progress": False}  # fmt: skip


@pytest.fixture(scope="module")
def adult(adult_dataset: datasets.Dataset) -> pd.DataFrame:
    return adult_dataset.frame.sample(200, random_state=0).reset_index(drop=True)


@pytest.fixture(scope="module")
def adult_schema(adult_dataset: datasets.Dataset) -> Schema:
    return adult_dataset.schema


@pytest.fixture(scope="module")
def tabular(adult: pd.DataFrame, adult_schema: Schema) -> GlobalDecoupler:
    return GlobalDecoupler(**FAST).fit(adult, "sex", schema=adult_schema)


@pytest.fixture(scope="module")
def image() -> GlobalDecoupler:
    rng = np.random.default_rng(0)
    pixels = rng.uniform(size=(64, 8, 8))
    return GlobalDecoupler(kind="image", **FAST).fit(pixels, (pixels.mean((1, 2)) > 0.5) * 1)


def _one_line(exc: pytest.ExceptionInfo[InputError]) -> str:
    message = str(exc.value)
    assert "\n" not in message
    return message


def test_tabular_frame_lacking_a_modelled_column(
    tabular: GlobalDecoupler, adult: pd.DataFrame
) -> None:
    before = adult.copy()
    with pytest.raises(InputError, match=r"\['education'\].*another schema") as exc:
        tabular.encode(adult.drop(columns="education"))
    _one_line(exc)
    pd.testing.assert_frame_equal(adult, before)
    z_s, z_ns = tabular.encode(adult.drop(columns=["sex", "fnlwgt"]))  # not modelled: fine
    assert z_s.shape == (200, 2) and z_ns.shape == (200, 4)


def test_tabular_decoupler_on_another_dataset(tabular: GlobalDecoupler) -> None:
    german = datasets.load("german_credit").frame
    with pytest.raises(InputError, match=r"lacks column.*'workclass'.*another schema"):
        tabular.encode(german)


@pytest.mark.parametrize(
    ("column", "value"), [("age", 500), ("workclass", "Martian"), ("hours_per_week", -3)]
)
def test_values_outside_the_decoupler_domains(
    tabular: GlobalDecoupler, adult: pd.DataFrame, column: str, value: Any
) -> None:
    bad = adult.copy()
    if isinstance(bad[column].dtype, pd.CategoricalDtype):
        bad[column] = bad[column].astype(object)
    bad.loc[7, column] = value
    with pytest.raises(SchemaError, match=f"decoupler's schema.*{column!r}.*at row 7") as exc:
        tabular.encode(bad)
    _one_line(exc)
    assert repr(value) not in str(exc.value)  # a private value, not shown by default
    with showing_private_values(), pytest.raises(SchemaError, match=f"{value!r} at row 7"):
        tabular.encode(bad)


def test_wrong_kind_of_data(tabular: GlobalDecoupler, image: GlobalDecoupler) -> None:
    pixels = np.zeros((3, 8, 8))
    with pytest.raises(InputError, match=r"tabular decoupler.*DataFrame.*ndarray.*\(3, 8, 8\)"):
        tabular.encode(pixels)
    with pytest.raises(InputError, match=r"image decoupler.*DataFrame \(a table\)"):
        image.encode(pd.DataFrame(pixels.reshape(3, -1)))


@pytest.mark.parametrize("shape", [(3, 12, 12), (3, 2, 8, 8), (3, 64), (3, 8, 12)])
def test_images_of_the_wrong_shape(image: GlobalDecoupler, shape: tuple[int, ...]) -> None:
    with pytest.raises(InputError, match=r"\(n, 8, 8\).*trained on; got") as exc:
        image.encode(np.zeros(shape))
    assert str(shape) in _one_line(exc)
    z_s, _ = image.encode(np.zeros((3, 1, 8, 8)))  # the channel axis is optional
    assert z_s.shape == (3, 2)


def test_image_refit_on_another_size_is_not_refused(image: GlobalDecoupler) -> None:
    """Only a fitted decoupler's encode checks the size; fit learns it afresh."""
    refit = GlobalDecoupler(**image.get_params())
    refit.fit(np.random.default_rng(1).uniform(size=(8, 12, 12)), np.arange(8) % 2)
    assert refit.side_ == 12 and image.side_ == 8


def test_a_failed_refit_leaves_the_fitted_decoupler_as_it_was(
    adult: pd.DataFrame, adult_schema: Schema
) -> None:
    """Checks run before any learned attribute is set (race would give 5 classes, not 2)."""
    schema = adult_schema
    model = GlobalDecoupler(**FAST).fit(adult, "sex", schema=schema)
    before = (model.sensitive_column_, list(model.classes_), model.codec_.columns)
    with pytest.raises(InputError, match="needs schema="):
        model.fit(adult, "race")
    with pytest.raises(SchemaError, match="does not fit the decoupler's schema"):
        model.fit(adult.assign(age=-5), "race", schema=schema)
    assert (model.sensitive_column_, list(model.classes_), model.codec_.columns) == before


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda c, w: c.update(in_dim=c["in_dim"] + 1), "damaged or does not match"),
        (lambda c, w: c["params"].pop("latent_dim"), "are not the parameters"),
        (lambda c, w: c.pop("history"), "damaged or does not match"),
        (lambda c, w: w.write_bytes(b"not a torch file"), "damaged or does not match"),
        (
            lambda c, w: w.write_bytes(pickle.dumps({"encoder": Path("x")})),
            "holds Python objects besides tensors",
        ),
    ],
)
def test_a_damaged_decoupler_directory_is_one_clear_error(
    tabular: GlobalDecoupler, tmp_path: Path, damage: Any, message: str
) -> None:
    directory = tabular.save(tmp_path / "dec")
    config_path = directory / "decoupler.json"
    config = json.loads(config_path.read_text())
    damage(config, directory / "weights.pt")
    config_path.write_text(json.dumps(config))
    with pytest.raises(InputError, match=message) as exc:
        GlobalDecoupler.load(directory)
    _one_line(exc)
    assert "weights_only" not in str(exc.value)  # never the advice to load it unsafely


def test_sensitive_dim_must_be_below_latent_dim(adult: pd.DataFrame, adult_schema: Schema) -> None:
    model = GlobalDecoupler(**(FAST | {"sensitive_dim": 6}))
    with pytest.raises(InputError, match=r"sensitive_dim must be < latent_dim \(6\), got 6"):
        model.fit(adult, "sex", schema=adult_schema)


@pytest.mark.parametrize("epsilon", [0.0, -1.0])
@pytest.mark.parametrize("family", [DPObfuscation, DPSampling])
def test_epsilon_must_be_positive(
    tabular: GlobalDecoupler, adult: pd.DataFrame, epsilon: float, family: type
) -> None:
    with pytest.raises(InputError, match="epsilon must be > 0"):
        Sanitizer(tabular, family(epsilon, 3.0)).sanitize(adult)


def test_missing_sensitive_column(
    tabular: GlobalDecoupler, adult: pd.DataFrame, adult_schema: Schema
) -> None:
    with pytest.raises(InputError, match="sensitive column 'sex' is not a column"):
        Sanitizer(tabular, DPSampling(1.0, 3.0)).sanitize(adult.drop(columns="sex"))
    with pytest.raises(InputError, match="sensitive column 'nope'"):
        GlobalDecoupler(**FAST).fit(adult, "nope", schema=adult_schema)


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    err = capsys.readouterr().err.strip()
    assert code != 2 or "\n" not in err
    return code, err


def test_cli_refuses_data_of_another_schema_and_writes_nothing(
    capsys: pytest.CaptureFixture[str],
    tabular: GlobalDecoupler,
    adult: pd.DataFrame,
    adult_schema: Schema,
    tmp_path: Path,
) -> None:
    tabular.save(tmp_path / "dec")
    data, schema = tmp_path / "data" / "adult.parquet", tmp_path / "data" / "adult.yaml"
    data.parent.mkdir()
    adult.drop(columns="education").to_parquet(data)
    adult_schema.save(schema)
    out = tmp_path / "out.parquet"
    base = ("sanitize", "apply", "--decoupler", str(tmp_path / "dec"), "--out", str(out))
    code, err = _cli(capsys, *base, str(data), "--schema", str(schema), "--epsilon", "1")
    assert code == 2 and "lacks column(s) ['education']" in err and "another schema" in err
    code, err = _cli(capsys, *base, "german_credit", "--epsilon", "1")  # its age is 18-100
    assert code == 2 and "column 'age' has domain" in err and "another schema" in err
    code, err = _cli(capsys, *base, "mnist_5k", "--epsilon", "1")
    assert code == 2 and "--out for image data must end in .npz" in err
    npz = tmp_path / "out.npz"
    code, err = _cli(capsys, *base[:-1], str(npz), "mnist_5k", "--epsilon", "1")
    assert code == 2 and "trained on tabular data, but 'mnist_5k' is image data" in err
    other = adult_schema.to_dict()
    other["columns"]["age"]["domain"]["upper"] = 120  # same names, another public domain
    Schema.from_dict(other).save(schema)
    adult.to_parquet(data)
    code, err = _cli(capsys, *base, str(data), "--schema", str(schema), "--epsilon", "1")
    assert code == 2 and "column 'age' has domain" in err and "another schema" in err
    for epsilon in ("0", "-2"):
        code, err = _cli(capsys, *base, "adult", "--rows", "50", "--epsilon", epsilon)
        assert code == 2 and "--epsilon must be > 0" in err
    assert not out.exists() and not npz.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "dec"]  # no temporary file


def test_cli_fit_refuses_k_at_least_m(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    for data, sensitive in (("adult", "sex"), ("mnist_5k", "thickness")):
        code, err = _cli(capsys, "sanitize", "fit", data, "--sensitive", sensitive, "--rows",
                         "50", "--latent-dim", "8", "--sensitive-dim", "8", "--out",
                         str(tmp_path / "dec"))  # fmt: skip
        assert code == 2 and "sensitive_dim must be < latent_dim (8), got 8" in err
    assert not (tmp_path / "dec").exists()
