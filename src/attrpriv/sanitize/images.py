"""Small grey-scale images <-> tensors for the decoupler, and MNIST-5k's sensitive attribute.

The attribute is stroke thickness: 1 when the mean intensity exceeds the fixed public
:data:`THICKNESS_THRESHOLD`, else 0, so no label depends on other images.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.nn import functional

from attrpriv.errors import InputError

THICKNESS_THRESHOLD = 0.128
BUNDLED = "mnist_5k"
"""The bundled image data set; its sensitive label ``thickness`` is generated."""


def as_images(X: Any) -> np.ndarray:
    """(n, h, w) or (n, 1, h, w) floats in [0, 1] -> float32 (n, 1, h, w), h == w divisible by 4."""
    arr = np.asarray(X, dtype=np.float32)
    if arr.ndim == 3:
        arr = arr[:, None]
    if arr.ndim != 4 or arr.shape[1] != 1 or arr.shape[2] != arr.shape[3] or arr.shape[2] % 4:
        raise InputError(
            f"images must have shape (n, h, w) or (n, 1, h, w) with h == w divisible by 4, "
            f"got {np.shape(X)}"
        )
    if not np.all(np.isfinite(arr)) or arr.min() < 0.0 or arr.max() > 1.0:
        raise InputError("images must hold finite pixel values in [0, 1]")
    return arr


def thickness_labels(X: Any) -> np.ndarray:
    """The generated sensitive attribute: 1 if mean intensity > THICKNESS_THRESHOLD, else 0.

    Parameters
    ----------
    X : array-like
        Images (n, h, w) or (n, 1, h, w), h == w divisible by 4, pixels in [0, 1].

    Returns
    -------
    numpy.ndarray
        One label per image, int64 of shape (n,).
    """
    images = as_images(X)
    mass = images.reshape(len(images), -1).mean(1)
    return np.asarray(mass > THICKNESS_THRESHOLD, dtype=np.int64)


def mnist_images(frame: object) -> tuple[np.ndarray, np.ndarray]:
    """Bundled MNIST-5k frame -> (images (n, 28, 28) in [0, 1], digit labels).

    Parameters
    ----------
    frame : pandas.DataFrame
        The ``mnist_5k`` frame: ``pixel_0`` to ``pixel_783`` (0 to 255) and ``label``.

    Returns
    -------
    images : numpy.ndarray
        The pixels divided by 255, float32 of shape (n, 28, 28).
    labels : numpy.ndarray
        The digits, int64 of shape (n,).
    """
    import pandas as pd

    if not isinstance(frame, pd.DataFrame) or "label" not in frame.columns:
        raise InputError("expected the mnist_5k frame with pixel_* columns and 'label'")
    pixels = frame[[f"pixel_{i}" for i in range(784)]].to_numpy(dtype=np.float32) / 255.0
    return pixels.reshape(-1, 28, 28), frame["label"].to_numpy(dtype=np.int64)


def read_images(source: str) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Images (n, h, w) in [0, 1] and 1-D label arrays from :data:`BUNDLED` or an ``.npz``."""
    import zipfile

    from attrpriv.data.read import read_data

    if source == BUNDLED:
        images, digits = mnist_images(read_data(BUNDLED, load=True).frame)
        return images, {"thickness": thickness_labels(images), "label": digits}
    if not Path(source).is_file():
        raise InputError(f"image data {source!r} is neither {BUNDLED!r} nor an existing file")
    try:
        with np.load(source, allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        raise InputError(f"{source!r} is not a readable .npz file of arrays: {exc}") from None
    images = arrays.pop("images", None)
    if images is None or images.ndim != 3:
        found = "no 'images' array" if images is None else f"'images' of shape {images.shape}"
        raise InputError(
            f"{source!r} must hold an 'images' array of shape (n, h, w); found {found}"
        )
    for name, values in arrays.items():
        if values.shape != (len(images),):
            raise InputError(
                f"label array {name!r} of {source!r} must be 1-D with one label per image "
                f"({len(images)}), got shape {values.shape}"
            )
    return images, arrays


def bernoulli_nll(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Per-image negative log-likelihood of a per-pixel Bernoulli likelihood."""
    loss = functional.binary_cross_entropy_with_logits(logits, target, reduction="none")
    return loss.flatten(1).sum(-1)
