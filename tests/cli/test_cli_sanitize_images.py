"""``attrpriv sanitize`` on images: MNIST-5k (generated thickness label) and .npz files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("torch")

from attrpriv import datasets
from attrpriv.cli import main
from attrpriv.sanitize.images import mnist_images, thickness_labels


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    if code == 2:
        assert captured.err.strip().count("\n") == 0, captured.err
    return code, captured.out, captured.err


SPREAD = slice(1, 1 + 40 * 124, 124)  # 40 odd rows: the decoupler is fitted on even ones


@pytest.fixture(scope="module")
def digits() -> tuple[np.ndarray, np.ndarray]:
    return mnist_images(datasets.load("mnist_5k").frame)


@pytest.fixture(scope="module")
def decoupler(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Image decoupler fitted by the CLI on 300 even-row MNIST-5k images, 1 epoch, batch 32."""
    out = tmp_path_factory.mktemp("fit") / "dec"
    code = main(["sanitize", "fit", "mnist_5k", "--sensitive", "thickness", "--row-range", "::2",
                 "--rows", "300", "--epochs", "1", "--batch-size", "32",
                 "--out", str(out)])  # fmt: skip
    assert code == 0
    return out


@pytest.fixture
def npz(tmp_path: Path, digits: tuple[np.ndarray, np.ndarray]) -> Path:
    """40 odd-row MNIST images (the decoupler trains on even rows) spread over the
    (digit-sorted) set, with digit, thickness and an id."""
    images, labels = digits
    spread = SPREAD
    assert len(set(labels[spread].tolist())) == 10
    path = tmp_path / "private.npz"
    np.savez(path, images=images[spread], label=labels[spread],
             thickness=thickness_labels(images[spread]), id=np.arange(40))  # fmt: skip
    return path


def test_fit_on_images_takes_image_defaults_unless_given(decoupler: Path) -> None:
    config = json.loads((decoupler / "decoupler.json").read_text())
    params = config["params"]
    assert params["kind"] == "image" and config["side"] == 28 and config["in_dim"] == 784
    assert (params["beta"], params["lr"], params["hidden"]) == (1.0, 1e-3, 128)  # image defaults
    assert (params["epochs"], params["batch_size"]) == (1, 32)  # given on the command line
    assert config["sensitive_column"] == "thickness" and config["classes"] == [0, 1]
    assert len(config["history"]) == 1


def test_apply_dp_sampling_writes_images_and_labels(
    capsys: pytest.CaptureFixture[str],
    decoupler: Path,
    npz: Path,
    tmp_path: Path,
    digits: tuple[np.ndarray, np.ndarray],
) -> None:
    out, record = tmp_path / "sanitized.npz", tmp_path / "record.json"
    code, text, _ = _cli(capsys, "sanitize", "apply", str(npz), "--decoupler", str(decoupler),
                         "--epsilon", "2", "--rows", "30", "--out", str(out),
                         "--record", str(record))  # fmt: skip
    assert code == 0 and "sanitized 30 images with dp-sampling: epsilon=2" in text
    with np.load(out, allow_pickle=False) as archive:
        arrays: dict[str, Any] = {name: archive[name] for name in archive.files}
    assert sorted(arrays) == ["id", "images", "label", "thickness"]
    assert arrays["images"].shape == (30, 28, 28) and arrays["images"].dtype == np.float32
    assert arrays["images"].min() >= 0.0 and arrays["images"].max() <= 1.0
    ids = arrays["id"]
    assert len(set(ids.tolist())) == 30 and set(ids.tolist()) <= set(range(40))
    images, labels = (a[SPREAD] for a in digits)  # as in the npz fixture
    np.testing.assert_array_equal(arrays["label"], labels[ids])  # other labels kept, aligned
    assert set(arrays["thickness"].tolist()) <= {0, 1}  # synthetic labels from the sampler
    assert np.abs(arrays["images"] - images[ids]).mean() > 0.01  # not the private images
    payload = json.loads(record.read_text())
    assert payload["shape"] == [30, 1, 28, 28] and payload["synthetic_labels"] is True
    assert payload["record"]["epsilon"] == 2.0


def test_apply_suppression_on_mnist_drops_the_sensitive_labels(
    capsys: pytest.CaptureFixture[str], decoupler: Path, tmp_path: Path
) -> None:
    out = tmp_path / "suppressed.npz"
    args = ("sanitize", "apply", "mnist_5k", "--decoupler", str(decoupler),
            "--row-range", "1::2")  # fmt: skip
    code, text, _ = _cli(capsys, *args, "--mechanism", "suppression", "--rows", "25", "--out",
                         str(out))  # fmt: skip
    assert code == 0 and "no DP claim" in text
    with np.load(out, allow_pickle=False) as archive:
        assert sorted(archive.files) == ["images", "label"]  # no real thickness released
        assert archive["images"].shape == (25, 28, 28) and archive["label"].shape == (25,)


def test_wrong_out_suffix_and_bad_image_files_write_nothing(
    capsys: pytest.CaptureFixture[str], decoupler: Path, npz: Path, tmp_path: Path
) -> None:
    base = ("sanitize", "apply", "--decoupler", str(decoupler), "--epsilon", "1")
    for name in ("s.parquet", "s.csv"):
        code, _, err = _cli(capsys, *base, str(npz), "--out", str(tmp_path / name))
        assert code == 2 and f"--out for image data must end in .npz, got {name!r}" in err
    code, _, err = _cli(capsys, *base, "adult", "--out", str(tmp_path / "s.npz"))
    assert code == 2 and "--out for a table must end in .parquet, .pq, .csv" in err
    code, _, err = _cli(capsys, *base, "german_credit", "--out", str(tmp_path / "s.parquet"))
    assert code == 2 and "trained on image data, but 'german_credit' is tabular data" in err
    rng = np.random.default_rng(0)
    bad_files: dict[str, tuple[dict[str, Any], str]] = {
        "wide.npz": ({"images": rng.uniform(size=(5, 32, 32)), "thickness": np.zeros(5)},
                     "(n, 28, 28)"),
        "flat.npz": ({"images": rng.uniform(size=(5, 784)), "thickness": np.zeros(5)},
                     "'images' array of shape (n, h, w); found 'images' of shape (5, 784)"),
        "nolabel.npz": ({"images": rng.uniform(size=(5, 28, 28)), "label": np.zeros(5)},
                        "no label array 'thickness'; it has ['label']"),
        "short.npz": ({"images": rng.uniform(size=(5, 28, 28)), "thickness": np.zeros(4)},
                      "one label per image (5), got shape (4,)"),
        "noimages.npz": ({"pixels": rng.uniform(size=(5, 28, 28))}, "found no 'images' array"),
        "bright.npz": ({"images": rng.uniform(size=(5, 28, 28)) * 255,
                        "thickness": np.zeros(5)}, "[0, 1]"),
    }  # fmt: skip
    for name, (arrays, message) in bad_files.items():
        np.savez(tmp_path / name, **arrays)
        out = tmp_path / f"out-{name}"
        code, _, err = _cli(capsys, *base, str(tmp_path / name), "--out", str(out))
        assert code == 2 and message in err, (name, err)
        assert not out.exists()
    (tmp_path / "junk.npz").write_text("not an archive")
    code, _, err = _cli(capsys, *base, str(tmp_path / "junk.npz"), "--out", str(tmp_path / "j.npz"))
    assert code == 2 and "not a readable .npz file" in err
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(("s.", "out-", "j.", "."))]


def test_fit_refuses_a_missing_sensitive_label_and_a_schema(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "dec"
    code, _, err = _cli(capsys, "sanitize", "fit", "mnist_5k", "--sensitive", "stroke",
                        "--out", str(out))  # fmt: skip
    assert code == 2 and "no label array 'stroke'; it has ['label', 'thickness']" in err
    code, _, err = _cli(capsys, "sanitize", "fit", "mnist_5k", "--sensitive", "thickness",
                        "--schema", str(tmp_path / "s.yaml"), "--out", str(out))  # fmt: skip
    assert code == 2 and "image data takes no schema" in err
    assert not out.exists()


def test_evaluate_on_images(
    capsys: pytest.CaptureFixture[str], decoupler: Path, npz: Path, tmp_path: Path
) -> None:
    out = tmp_path / "sweep.json"
    code, text, _ = _cli(capsys, "sanitize", "evaluate", "mnist_5k", str(npz), "--decoupler",
                         str(decoupler), "--target", "label", "--rows", "150", "--epsilons",
                         "2", "--noise-scales", "0.3", "--interpolation-strengths", "0.5",
                         "--out", str(out))  # fmt: skip
    assert code == 0 and "Pareto AUC" in text
    result = json.loads(out.read_text())
    assert [p["name"] for p in result["points"]] == [
        "suppression", "dp-obfuscation eps=2", "dp-sampling eps=2", "input noise 0.3",
        "beta-VAE interpolation x0.5", "reconstruction (z_S kept)", "real data",
    ]  # fmt: skip
    assert all(-1 <= p["leakage"] <= 1 and 0 <= p["utility"] <= 1 for p in result["points"])
    families = {"suppression", "dp-obfuscation", "dp-sampling", "input-noise",
                "beta-VAE interpolation"}  # fmt: skip
    assert set(result["pareto_auc"]) == families
    base = ("sanitize", "evaluate", "--decoupler", str(decoupler), "--out", str(tmp_path / "x"))
    code, _, err = _cli(capsys, *base, "mnist_5k", "mnist_5k", "--target", "label",
                        "--noise-scales", "0.1,-1")  # fmt: skip
    assert code == 2 and "--noise-scales must be positive numbers, got '0.1,-1'" in err
    code, _, err = _cli(capsys, *base, "mnist_5k", "mnist_5k", "--target", "digit")
    assert code == 2 and "no label array 'digit'; it has ['label', 'thickness']" in err
    code, _, err = _cli(capsys, *base, "mnist_5k", "adult", "--target", "label")
    assert code == 2 and "trained on image data, but 'adult' is tabular data" in err
    assert not (tmp_path / "x").exists()
