"""What the global decoupler's commands (``fit``, ``apply``, ``evaluate``) share.

The torch check, image data, the decoupler's kind and its samplers; torch loads only in a run.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from attrpriv.errors import InputError

if TYPE_CHECKING:
    import numpy as np

    from attrpriv.sanitize.decoupler import GlobalDecoupler
    from attrpriv.sanitize.samplers import DPObfuscation, DPSampling, Suppression


MECHANISMS = ("suppression", "dp-obfuscation", "dp-sampling")


def _require_torch() -> None:
    """One-line error instead of a traceback when the ``sanitize`` extra is missing."""
    try:
        import torch  # noqa: F401
    except ImportError:
        raise InputError(
            "the sanitize commands need torch: pip install 'attrpriv[sanitize]'"
        ) from None


def _read_images(data: str) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """:func:`attrpriv.sanitize.images.read_images`, imported when a command runs (torch)."""
    from attrpriv.sanitize.images import read_images

    return read_images(data)


def _is_images(data: str) -> bool:
    """Image data: the bundled MNIST-5k or an ``.npz`` file; anything else is a table."""
    from attrpriv.sanitize.images import BUNDLED  # the sanitize commands need torch anyway

    return data == BUNDLED or data.lower().endswith(".npz")


def _label(labels: dict[str, np.ndarray], name: str | None, data: str) -> np.ndarray:
    """The label array ``name`` of image data ``data``; the error lists the arrays present."""
    if name is None:
        raise InputError("the decoupler names no sensitive label array: fit it with 'sanitize fit'")
    if name not in labels:
        raise InputError(
            f"image data {data!r} has no label array {name!r}; it has {sorted(labels)}"
        )
    return labels[name]


def _check_kind(model: GlobalDecoupler, decoupler: Path, data: str) -> None:
    """The decoupler and the data must both be tables or both be images."""
    kind = "image" if _is_images(data) else "tabular"
    if model.kind != kind:
        raise InputError(
            f"decoupler {str(decoupler)!r} was trained on {model.kind} data, "
            f"but {data!r} is {kind} data"
        )


def _sampler(
    mechanism: str,
    epsilon: float | None,
    bound: float | None,
    projection_dim: int | None,
    seed: int,
    classes: list[Any],
    model: GlobalDecoupler | None = None,
) -> Suppression | DPObfuscation | DPSampling:
    """The sampler of ``--mechanism``; ``bound`` ``None``: the decoupler's learned bound."""
    from attrpriv._checks import check_epsilon
    from attrpriv.sanitize.samplers import (
        DPObfuscation,
        DPSampling,
        Suppression,
        with_latent_bound,
    )

    if mechanism not in MECHANISMS:
        raise InputError(f"--mechanism must be one of {list(MECHANISMS)}, got {mechanism!r}")
    if mechanism == "suppression":
        return Suppression()
    if epsilon is None:
        raise InputError(f"--epsilon is required by mechanism {mechanism!r}")
    check_epsilon(epsilon, "--epsilon")
    sampler: DPObfuscation | DPSampling
    if mechanism == "dp-obfuscation":
        sampler = DPObfuscation(epsilon, bound)
    else:
        sampler = DPSampling(
            epsilon, bound, projection_dim=projection_dim, classes=classes, seed=seed
        )
    filled: DPObfuscation | DPSampling = with_latent_bound(sampler, model)
    if filled.bound is None:
        raise InputError(
            "the decoupler has no learned latent bound (saved by an earlier attrpriv): pass "
            "--bound (a public number) or refit it"
        )
    return filled
