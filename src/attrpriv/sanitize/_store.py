"""Saving and loading a fitted GlobalDecoupler: JSON config + torch state dicts, never pickle."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from attrpriv.data.schema import Schema
from attrpriv.errors import InputError
from attrpriv.sanitize.tabular import TabularCodec

if TYPE_CHECKING:
    from attrpriv.sanitize.decoupler import GlobalDecoupler

CONFIG_FILE, WEIGHTS_FILE, FORMAT = "decoupler.json", "weights.pt", "attrpriv-decoupler/1"


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def save_decoupler(model: GlobalDecoupler, directory: Path) -> Path:
    """Write ``decoupler.json`` and ``weights.pt`` (a dict of state dicts) into ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    # the settings training used, defaults filled in: a later change of the defaults cannot
    # rebuild these weights into networks of another size
    params = model.settings() | {"alphas": [float(a) for a in model.alphas]}
    config: dict[str, Any] = {
        "format": FORMAT,
        "params": params,
        "classes": [_plain(c) for c in model.classes_],
        "in_dim": model.in_dim_,
        "side": model.side_,
        "sensitive_column": model.sensitive_column_,
        "history": model.history_,
    }
    if model.kind == "tabular":
        config["schema"] = model.codec_.schema.to_dict()
        config["columns"] = list(model.codec_.columns)
    weights = {name: module.state_dict() for name, module in model._modules().items()}
    tmp = directory / (WEIGHTS_FILE + ".tmp")
    torch.save(weights, tmp)
    tmp.replace(directory / WEIGHTS_FILE)
    tmp = directory / (CONFIG_FILE + ".tmp")
    tmp.write_text(json.dumps(config, indent=2))
    tmp.replace(directory / CONFIG_FILE)
    return directory


def load_decoupler(cls: type[GlobalDecoupler], directory: Path) -> GlobalDecoupler:
    """Rebuild the networks from the config and load the weights with ``weights_only=True``."""
    config_path, weights_path = directory / CONFIG_FILE, directory / WEIGHTS_FILE
    if not config_path.is_file() or not weights_path.is_file():
        raise InputError(
            f"decoupler directory {str(directory)!r} lacks {CONFIG_FILE} or {WEIGHTS_FILE}"
        )
    try:
        config = json.loads(config_path.read_text())
    except json.JSONDecodeError as exc:
        raise InputError(f"decoupler config {str(config_path)!r} is not valid JSON: {exc}") from exc
    if not isinstance(config, dict) or config.get("format") != FORMAT:
        raise InputError(f"{str(config_path)!r} is not an attrpriv decoupler config ({FORMAT})")
    try:
        return _rebuild(cls, config, weights_path)
    except InputError:
        raise
    except Exception as exc:  # any failure to rebuild from disk means a damaged directory
        cause = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(
            f"decoupler directory {str(directory)!r} is damaged or does not match its config "
            f"({type(exc).__name__}: {cause}); refit and save it again"
        ) from None


def _rebuild(cls: type[GlobalDecoupler], config: dict[str, Any], weights: Path) -> GlobalDecoupler:
    """The model the config describes, with its weights; strict about missing or extra keys."""
    params = dict(config["params"])
    expected = set(cls().get_params())
    if set(params) != expected:
        raise InputError(
            f"decoupler config params {sorted(params)} are not the parameters "
            f"{sorted(expected)} of GlobalDecoupler (another version?)"
        )
    params["alphas"] = tuple(params["alphas"])
    model = cls(**params)
    model._check_params()
    model.classes_ = np.asarray(config["classes"], dtype=object)
    column = config["sensitive_column"]
    model.sensitive_column_ = None if column is None else str(column)
    if model.kind == "tabular":
        model.codec_ = TabularCodec(Schema.from_dict(config["schema"]), tuple(config["columns"]))
    model._build(int(config["in_dim"]), len(model.classes_), int(config["side"]))
    state = torch.load(weights, weights_only=True)
    for name, module in model._modules().items():
        module.load_state_dict(state[name])
        module.eval()
    model.history_ = list(config["history"])
    return model
