"""The global decoupler: a beta-VAE whose latent splits into sensitive and non-sensitive parts.

Trained on auxiliary (public) data only; it gives no formal guarantee by itself.
The objective (equation 5 of Decouple-and-Sample) is on docs/sanitize/decoupler.md.
"""

from __future__ import annotations

import copy
import math
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import torch
from scipy.special import log_softmax
from torch import nn

from attrpriv._checks import (
    FLAG,
    NON_NEGATIVE,
    POSITIVE,
    SEED,
    Rule,
    check_delta,
    integer,
    one_of,
    optional,
)
from attrpriv._progress import progress
from attrpriv.data.schema import Schema
from attrpriv.dp.mechanism import Parameters, check_fitted, validated
from attrpriv.errors import InputError, SchemaError, offending
from attrpriv.sanitize import networks as nets
from attrpriv.sanitize._store import (
    WEIGHTS_FILE,
    RowFingerprint,
    plain,
    read_fingerprint,
    read_saved,
    read_weights,
    write_files,
)
from attrpriv.sanitize.defaults import (
    ALPHAS,
    BOUND_QUANTILE,
    COLLAPSE_TOLERANCE,
    KIND_DEFAULTS,
    KINDS,
    LOSSES,
    MIN_BATCH,
    MIN_BATCHES_PER_EPOCH,
    MIN_SPLIT_ROWS,
    ON_COLLAPSE,
    PATIENCE,
    RETUNE_EPOCHS,
    RETUNE_GRID,
    VALIDATION_SHARE,
)
from attrpriv.sanitize.images import as_images, bernoulli_nll
from attrpriv.sanitize.overlap import Verdict, overlap_verdict
from attrpriv.sanitize.samplers import LatentBound
from attrpriv.sanitize.tabular import TabularCodec, modelled_columns


@contextmanager
def _deterministic(seed: int) -> Iterator[None]:
    """Seed torch and switch on deterministic kernels, restoring the global flag afterwards."""
    previous, threads = torch.are_deterministic_algorithms_enabled(), torch.get_num_threads()
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)  # small networks: one thread is fastest and avoids contention
    torch.manual_seed(seed)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(previous)
        torch.set_num_threads(threads)


ADDED_PARAMS = ("validation_share", "patience", "on_collapse")
"""Parameters newer than the first saved decouplers: a config without them gets the defaults."""


def _alphas(value: object, name: str) -> tuple[float, ...]:
    """Four weights >= 0, alpha1..alpha4."""
    if not isinstance(value, (list, tuple, np.ndarray)) or len(value) != 4:
        raise InputError(f"{name} must be 4 numbers (alpha1..alpha4), got {value!r}")
    return tuple(NON_NEGATIVE(a, f"{name}[{i}]") for i, a in enumerate(value, start=1))


class GlobalDecoupler(Parameters):
    """beta-VAE with an aligner, an adversary and a distance-correlation term.

    Splits the latent into z_S (carries y_S) and z_NS (does not). No formal guarantee: train it
    on public auxiliary data only. ``beta``, ``hidden``, ``epochs``, ``batch_size`` and ``lr``
    left at ``None`` take the data kind's value in
    :data:`~attrpriv.sanitize.defaults.KIND_DEFAULTS`. See docs/sanitize/decoupler.md.

    Parameters
    ----------
    kind : str, optional
        ``"tabular"`` (a DataFrame and its schema) or ``"image"`` (an (n, h, w) array).
    latent_dim, sensitive_dim : int, optional
        m, the whole latent's dimension, and k: z_S is its first k dimensions.
    beta : float or None, optional
        beta of the beta-VAE.
    alphas : tuple of four float, optional
        (alpha1, ..., alpha4) of the objective, default (1, 10, 100, 1); 0 removes a term.
    hidden : int or None, optional
        Hidden width of the networks.
    epochs, batch_size : int or None, optional
        Maximum number of training epochs; training batch size.
    lr : float or None, optional
        Adam learning rate.
    seed : int, optional
        Seeds the weights, batch order, reparameterisation noise and validation split.
    progress : bool, optional
        Report each epoch's losses on stderr.
    validation_share : float, optional
        Share of rows held out for early stopping and the collapse check (0.2; 0: none).
    patience : int or None, optional
        Epochs without a better validation objective before stopping (``None``: no stopping).
    on_collapse : {"retune", "raise", "warn"}, optional
        What ``fit`` does when z_S carries nothing about y_S: retune, raise, or warn.

    Attributes
    ----------
    latent_bound_ : LatentBound
        Public bound of z_S from the auxiliary data; the DP samplers' default ``bound``.
    collapsed_ : bool or None
        Whether the kept z_S is collapsed (``None``: not checked).
    """

    _constraints: ClassVar[Mapping[str, Rule]] = {
        "kind": one_of(KINDS),
        "latent_dim": integer(2),
        "sensitive_dim": integer(),
        "beta": optional(NON_NEGATIVE),
        "alphas": Rule("4 numbers >= 0 (alpha1..alpha4)", _alphas),
        "hidden": optional(integer()),
        "epochs": optional(integer()),
        "batch_size": optional(integer(2)),
        "lr": optional(POSITIVE),
        "seed": SEED,
        "progress": FLAG,
        "validation_share": Rule("a number in [0, 1)", check_delta),
        "patience": optional(integer()),
        "on_collapse": one_of(ON_COLLAPSE),
    }

    def __init__(
        self,
        *,
        kind: str = "tabular",
        latent_dim: int = 32,
        sensitive_dim: int = 8,
        beta: float | None = None,
        alphas: tuple[float, float, float, float] = ALPHAS,
        hidden: int | None = None,
        epochs: int | None = None,
        batch_size: int | None = None,
        lr: float | None = None,
        seed: int = 0,
        progress: bool = True,
        validation_share: float = VALIDATION_SHARE,
        patience: int | None = PATIENCE,
        on_collapse: str = "retune",
    ) -> None:
        self.kind = kind
        self.latent_dim = latent_dim
        self.sensitive_dim = sensitive_dim
        self.beta = beta
        self.alphas = alphas
        self.hidden = hidden
        self.epochs = epochs
        self.batch_size = batch_size
        self.lr = lr
        self.seed = seed
        self.progress = progress
        self.validation_share = validation_share
        self.patience = patience
        self.on_collapse = on_collapse

    def settings(self) -> dict[str, Any]:
        """The parameters as training uses them: ``None`` ones filled from the kind's defaults.

        Returns
        -------
        dict of str to object
            Every parameter of ``get_params()``, with the defaults filled in; nothing is checked.
        """
        params = self.get_params(deep=False)
        kind = params["kind"] if params["kind"] in KIND_DEFAULTS else "tabular"
        defaults = KIND_DEFAULTS[kind]
        return {k: defaults[k] if v is None and k in defaults else v for k, v in params.items()}

    def _validate_params(self) -> dict[str, Any]:
        """The declared constraints, then the one between two of them."""
        cleaned = super()._validate_params()
        if cleaned["sensitive_dim"] >= cleaned["latent_dim"]:
            raise InputError(
                f"sensitive_dim must be < latent_dim ({cleaned['latent_dim']}), "
                f"got {cleaned['sensitive_dim']}"
            )
        return cleaned

    # ----------------------------------------------------------------- data
    def _labels(self, X: Any, y_s: Any) -> tuple[np.ndarray, tuple[str, ...], np.ndarray]:
        """Codes of y_S, the excluded column name (if y_s names one) and the sorted classes."""
        if isinstance(y_s, pd.Series) and isinstance(X, pd.DataFrame) and y_s.name in X.columns:
            if not y_s.equals(X[y_s.name]):
                raise InputError(f"y_s is named {y_s.name!r} but differs from that column of X")
            y_s = str(y_s.name)
        if isinstance(y_s, str) and (not isinstance(X, pd.DataFrame) or y_s not in X.columns):
            raise InputError(f"sensitive column {y_s!r} is not a column of the data")
        exclude: tuple[str, ...] = (y_s,) if isinstance(y_s, str) else ()
        values = X[y_s] if exclude else pd.Series(np.asarray(y_s))
        if len(values) != len(X):
            raise InputError(f"y_s has {len(values)} labels for {len(X)} rows")
        if values.isna().any():
            raise InputError(
                "y_s has missing labels; every auxiliary row needs its sensitive label"
            )
        classes = sorted(values.unique(), key=str)
        if len(classes) < 2:
            raise InputError(f"y_s needs at least 2 classes, got one{offending(classes[0])}")
        codes = pd.Categorical(values.astype(object), categories=classes).codes.astype(np.int64)
        return codes, exclude, np.asarray(classes, dtype=object)

    def _to_matrix(
        self, X: Any, *, trained: bool = False, codec: TabularCodec | None = None
    ) -> np.ndarray:
        """Data -> network input; refuses data of the wrong kind, image size or schema."""
        if self.kind == "image":
            if isinstance(X, (pd.DataFrame, pd.Series)):
                raise InputError(
                    "an image decoupler (kind='image') needs an (n, h, w) array in [0, 1], "
                    f"got a {type(X).__name__} (a table)"
                )
            if trained:
                self._check_image_shape(X)
            return as_images(X)
        if not isinstance(X, pd.DataFrame):
            raise InputError(
                "a tabular decoupler (kind='tabular') needs a pandas DataFrame, got "
                f"{type(X).__name__} of shape {np.shape(X)}"
            )
        codec = self.codec_ if codec is None else codec
        missing = [c for c in codec.columns if c not in X.columns]
        if missing:
            hint = " (was it trained on another schema?)" if trained else ""
            raise InputError(f"data lacks column(s) {missing} that the decoupler models{hint}")
        try:
            codec.schema.validate(X, allow_extra=True)
        except SchemaError as exc:
            raise SchemaError(f"data does not fit the decoupler's schema: {exc}") from None
        return codec.encode(X)

    def _check_image_shape(self, X: Any) -> None:
        """Images must have the (h, w) of the training images."""
        shape, side = np.shape(X), int(self.side_)
        if tuple(shape[1:]) not in ((side, side), (1, side, side)):
            raise InputError(
                f"images must have shape (n, {side}, {side}) (or (n, 1, {side}, {side})), the "
                f"(h, w) = ({side}, {side}) this decoupler was trained on; got {shape}"
            )

    # ----------------------------------------------------------------- networks
    def _build(self, in_dim: int, n_classes: int, side: int) -> None:
        m, k, h = self.latent_dim, self.sensitive_dim, int(self.settings()["hidden"])
        if self.kind == "image":
            self.encoder_: nn.Module = nets.image_encoder(h, m, side)
            self.decoder_: nn.Module = nets.ImageDecoder(h, m, side)
        else:
            self.encoder_ = nets.tabular_encoder(in_dim, h, m)
            self.decoder_ = nets.mlp(m, h, in_dim)
        self.aligner_: nn.Module = nets.mlp(k, h // 2, n_classes)
        self.adversary_: nn.Module = nets.mlp(m - k, h // 2, n_classes)
        self.in_dim_, self.n_classes_, self.side_ = in_dim, n_classes, side

    def _modules(self) -> dict[str, nn.Module]:
        return {"encoder": self.encoder_, "decoder": self.decoder_,
                "aligner": self.aligner_, "adversary": self.adversary_}  # fmt: skip

    def _recon(self, out: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        if self.kind == "image":
            return bernoulli_nll(out, target)
        return self.codec_.reconstruction_loss(out, target)

    # ----------------------------------------------------------------- training
    @validated
    def fit(self, X: Any, y_s: Any, *, schema: Schema | None = None) -> GlobalDecoupler:
        """Train on auxiliary (public) data.

        Parameters
        ----------
        X : pandas.DataFrame or numpy.ndarray
            A DataFrame (``kind="tabular"``) or an (n, h, w) array (``kind="image"``).
        y_s : array-like or str
            The sensitive labels, or the name of a column of ``X``.
        schema : Schema or None, optional
            Roles and public domains; required for tabular data.

        Returns
        -------
        GlobalDecoupler
            The decoupler itself, fitted (at least 2 rows needed).
        """
        codes, exclude, classes = self._labels(X, y_s)
        codec = None
        if self.kind == "tabular":
            if schema is None:
                raise InputError("a tabular decoupler needs schema= (roles and public domains)")
            codec = TabularCodec(schema, modelled_columns(schema, exclude))
        matrix = self._to_matrix(X, codec=codec)
        if len(matrix) < 2:
            raise InputError(f"need at least 2 rows to train, got {len(matrix)}")
        if codec is not None and schema is not None:
            codec = codec.learn(X)  # the fill statistics of the auxiliary data
            matrix = codec.encode(X)
            present = {str(c) for c in X.columns}
            # never the sensitive column: a release protects it, so it must decide nothing
            fingerprint = RowFingerprint.of_table(
                X, [c for c in schema.names if c in present and c not in exclude], codec.columns
            )
        else:
            fingerprint = RowFingerprint.of_images(matrix)
        train, val = self._split(len(matrix))
        previous = dict(self.__dict__)
        try:
            # every check passed: only now is learned state (re)set
            self.sensitive_column_: str | None = exclude[0] if exclude else None
            self.classes_ = classes
            if codec is not None and schema is not None:
                self.codec_ = codec
                self.schema_ = schema
            self.fingerprint_: RowFingerprint | None = fingerprint
            self.batch_size_ = self._batch_rows(len(train))
            side = matrix.shape[-1] if self.kind == "image" else 0
            x, y = torch.from_numpy(matrix), torch.from_numpy(codes)
            with _deterministic(self.seed):
                self._build(int(np.prod(matrix.shape[1:])), len(self.classes_), side)
                self._fit_networks(x, y, train, val)
        except InputError:  # a refused collapse: leave a fitted decoupler as it was
            self.__dict__.clear()
            self.__dict__.update(previous)
            raise
        rows = val if len(val) else train
        self.fidelity_: pd.DataFrame | None = None
        if self.kind == "tabular":  # on the validated weights, before the refit sees these rows
            self.fidelity_ = self._fidelity(X.iloc[rows])
        self.validation_["fidelity_rows"] = "validation" if len(val) else "training"
        flat = self.uninformative_columns()
        if flat:
            warnings.warn(
                f"the decoder carries nothing of {', '.join(flat)} on the "
                f"{self.validation_['fidelity_rows']} rows (a numeric column decoded as one "
                "value, a categorical one whose decoded law does no better than the rows' own "
                "frequencies): a release draws them as noise (too few rows or epochs to learn "
                "them); for a table, BlockResampler ('sanitize resample') keeps them",
                UserWarning,
                stacklevel=3,
            )
        self.refit_: dict[str, Any] | None = None
        if len(val):
            with _deterministic(self.seed):
                self._refit(x, y)
        self.latent_bound_: LatentBound | None = self._latent_bound(X)
        return self

    # ----------------------------------------------------------------- defaults that work
    def _split(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Seeded (training, validation) row indices; no validation rows for a small table."""
        share = float(self.validation_share)
        everything = np.arange(n)
        if share == 0.0 or n < MIN_SPLIT_ROWS:
            return everything, everything[:0]
        held = min(n - 2, max(10, round(share * n)))
        order = np.random.default_rng(int(self.seed)).permutation(n)
        return np.sort(order[held:]), np.sort(order[:held])

    def _batch_rows(self, n: int) -> int:
        """The batch size: the given one, else the kind's, cut so an epoch has enough steps.

        On a table of a few hundred rows the kind's batch gives an epoch of two or three Adam
        steps, and early stopping ends training before the decoder has learned even the
        columns' frequencies; so the default is at most ``n / MIN_BATCHES_PER_EPOCH`` rows
        (and at least ``MIN_BATCH``).
        """
        if self.batch_size is not None:
            return int(self.batch_size)
        default = int(KIND_DEFAULTS[self.kind]["batch_size"])
        return min(default, max(MIN_BATCH, math.ceil(n / MIN_BATCHES_PER_EPOCH)))

    def _fit_networks(
        self, x: torch.Tensor, y: torch.Tensor, train: np.ndarray, val: np.ndarray
    ) -> None:
        """Train, check z_S for collapse on the validation rows, retune or refuse."""
        settings = self.settings()
        beta, alphas = float(settings["beta"]), tuple(float(a) for a in self.alphas)
        epochs = int(settings["epochs"])
        xt, yt = x[train], y[train]
        held = (x[val], y[val]) if len(val) else None
        self.history_, self.best_epoch_ = self._train(xt, yt, held, beta, alphas, epochs)
        self.validation_: dict[str, Any] = self._check(xt, yt, held, alphas)
        self.retuned_: dict[str, Any] | None = None
        if self.validation_["status"] == "collapsed":
            message = self._collapse_message(self.validation_, beta, alphas)
            if self.on_collapse == "raise":
                raise InputError(message)
            if self.on_collapse == "retune":
                assert held is not None
                self._retune(xt, yt, held, beta, alphas, epochs)
            if self.validation_["status"] == "collapsed":
                tried = (
                    ""
                    if self.retuned_ is None
                    else (f"; retuning tried {len(self.retuned_['tried'])} settings, none worked")
                )
                warnings.warn(message + tried, UserWarning, stacklevel=4)  # fmt: skip
        elif self.validation_["status"] == "uninformative":
            warnings.warn(
                "the modelled columns predict y_S on the validation split no better than its "
                f"prior (log-loss {self.validation_['features_logloss']:.3g} vs "
                f"{self.validation_['prior_logloss']:.3g}): z_S has nothing to carry, and "
                "sanitizing changes little",
                UserWarning,
                stacklevel=4,
            )
        self.collapsed_: bool | None = (
            None if held is None else bool(self.validation_["aligner_collapsed"])
        )

    def _retune(
        self,
        xt: torch.Tensor,
        yt: torch.Tensor,
        held: tuple[torch.Tensor, torch.Tensor],
        beta: float,
        alphas: tuple[float, ...],
        epochs: int,
    ) -> None:
        """Search (beta, alphas) on the auxiliary data; keep the best non-collapsed z_S."""
        side = int(self.side_)
        original = (self._state(), self.history_, self.best_epoch_, self.validation_)
        search = min(epochs, RETUNE_EPOCHS)
        tried: list[dict[str, Any]] = []
        best: tuple[float, Any] | None = None
        for cand_beta, cand_alphas in RETUNE_GRID:
            if (cand_beta, tuple(cand_alphas)) == (beta, alphas):
                continue
            torch.manual_seed(int(self.seed))
            self._build(self.in_dim_, self.n_classes_, side)
            history, epoch = self._train(xt, yt, held, cand_beta, cand_alphas, search)
            check = self._check(xt, yt, held, cand_alphas)
            tried.append({"beta": cand_beta, "alphas": list(cand_alphas), "epochs": len(history),
                          **{k: check[k] for k in ("aligner_logloss", "aligner_accuracy",
                                                   "status")}})  # fmt: skip
            if check["status"] != "collapsed" and (
                best is None or check["aligner_logloss"] < best[0]
            ):
                best = (check["aligner_logloss"],
                        (self._state(), history, epoch, check, cand_beta, cand_alphas))  # fmt: skip
        record: dict[str, Any] = {"from": {"beta": beta, "alphas": list(alphas)},
                                  "search_epochs": search, "tried": tried,
                                  "beta": None, "alphas": None}  # fmt: skip
        self.retuned_ = record
        if best is None:
            self._load_state(original[0])
            self.history_, self.best_epoch_, self.validation_ = original[1:]
            return
        state, history, epoch, check, cand_beta, cand_alphas = best[1]
        if epochs > search:  # the winner with the full budget, if that does better
            torch.manual_seed(int(self.seed))
            self._build(self.in_dim_, self.n_classes_, side)
            full = self._train(xt, yt, held, cand_beta, cand_alphas, epochs)
            full_check = self._check(xt, yt, held, cand_alphas)
            if full_check["status"] != "collapsed" and (
                full_check["aligner_logloss"] <= check["aligner_logloss"]
            ):
                state, (history, epoch), check = self._state(), full, full_check
        self._load_state(state)
        self.history_, self.best_epoch_, self.validation_ = history, epoch, check
        record.update(beta=cand_beta, alphas=list(cand_alphas), epochs=len(history))

    def _kept_settings(self) -> tuple[float, tuple[float, ...]]:
        """The (beta, alphas) of the kept weights: the retuned ones if retuning found any."""
        found = self.retuned_
        if found is not None and found.get("beta") is not None:
            return float(found["beta"]), tuple(float(a) for a in found["alphas"])
        return float(self.settings()["beta"]), tuple(float(a) for a in self.alphas)

    def _refit(self, x: torch.Tensor, y: torch.Tensor) -> None:
        """Train again from fresh weights on every row, for the validated ``best_epoch_``."""
        beta, alphas = self._kept_settings()
        epochs = max(1, int(self.best_epoch_))
        torch.manual_seed(int(self.seed))
        self._build(self.in_dim_, self.n_classes_, int(self.side_))
        history, _ = self._train(x, y, None, beta, alphas, epochs)
        self.refit_ = {"rows": len(x), "epochs": epochs, "beta": beta, "alphas": list(alphas),
                       "last": {k: v for k, v in history[-1].items() if k != "epoch"}}  # fmt: skip

    def _state(self) -> dict[str, dict[str, torch.Tensor]]:
        modules = self._modules().items()
        return {name: copy.deepcopy(module.state_dict()) for name, module in modules}

    def _load_state(self, state: dict[str, dict[str, torch.Tensor]]) -> None:
        for name, module in self._modules().items():
            module.load_state_dict(state[name])

    def _check(
        self,
        xt: torch.Tensor,
        yt: torch.Tensor,
        held: tuple[torch.Tensor, torch.Tensor] | None,
        alphas: tuple[float, ...],
    ) -> dict[str, Any]:
        """The aligner (from z_S) against the prior and the columns, on the validation rows."""
        if held is None:
            reason = ("validation_share=0" if float(self.validation_share) == 0.0 else
                      f"fewer than {MIN_SPLIT_ROWS} rows")  # fmt: skip
            return {"rows": 0, "train_rows": len(xt), "status": "unchecked",
                    "reason": f"no validation split ({reason})"}  # fmt: skip
        xv, yv = held
        n_classes = int(self.n_classes_)
        counts = np.bincount(yt.numpy(), minlength=n_classes) + 0.5
        prior = counts / counts.sum()
        labels = yv.numpy()
        with torch.no_grad():
            mu = self.encoder_(xv)[0]
            proba = torch.softmax(self.aligner_(mu[:, : self.sensitive_dim]), -1).numpy()
        features = _features_probabilities(xt.numpy(), yt.numpy(), xv.numpy(), n_classes)
        out: dict[str, Any] = {"rows": len(xv), "train_rows": len(xt),
                               "tolerance": COLLAPSE_TOLERANCE}  # fmt: skip
        for name, p in (("aligner", proba), ("prior", np.tile(prior, (len(labels), 1))),
                        ("features", features)):  # fmt: skip
            out[f"{name}_logloss"] = _log_loss(p, labels)
            out[f"{name}_accuracy"] = float(np.mean(p.argmax(1) == labels))
        limit = COLLAPSE_TOLERANCE * out["prior_logloss"]
        out["aligner_collapsed"] = bool(out["aligner_logloss"] >= limit)
        if float(alphas[1]) == 0.0:
            out.update(status="unchecked", reason="alpha2 = 0: no aligner is trained")
        elif out["features_logloss"] >= limit:
            out["status"] = "uninformative"
        else:
            out["status"] = "collapsed" if out["aligner_collapsed"] else "ok"
        return out

    def _collapse_message(
        self, check: dict[str, Any], beta: float, alphas: tuple[float, ...]
    ) -> str:
        what = repr(self.sensitive_column_) if self.sensitive_column_ else "y_S"
        return (
            f"z_S collapsed: the aligner predicts {what} from z_S no better than its prior on "
            f"the {check['rows']} validation rows (log-loss {check['aligner_logloss']:.3g} vs "
            f"prior {check['prior_logloss']:.3g}, accuracy {check['aligner_accuracy']:.3g} vs "
            f"{check['prior_accuracy']:.3g}; the columns alone reach "
            f"{check['features_logloss']:.3g}) with beta {beta:g}, alphas "
            f"{','.join(f'{a:g}' for a in alphas)}: try a smaller beta and a larger alpha2 "
            "(e.g. beta=0.1, alphas=(1, 100, 100, 1); --beta 0.1 --alphas 1,100,100,1), more "
            "epochs, or on_collapse='retune'"
        )

    def _latent_bound(self, X: Any) -> LatentBound:
        """BOUND_QUANTILE of |z_S| (per dimension) and of ||z_S|| over the auxiliary rows."""
        z_s, _ = self.encode(X)
        per_dim = np.quantile(np.abs(z_s), BOUND_QUANTILE, axis=0)
        ball = float(np.quantile(np.linalg.norm(z_s, axis=1), BOUND_QUANTILE))
        tiny = 1e-6  # a bound must be positive, even for latents squeezed to 0
        return LatentBound(max(float(per_dim.max()), tiny), max(ball, tiny),
                           tuple(max(float(v), tiny) for v in per_dim), BOUND_QUANTILE,
                           len(z_s))  # fmt: skip

    def uninformative_columns(self) -> list[str]:
        """The columns fit's fidelity check flagged: the decoder carries nothing of them.

        A numeric column decoded as one value where it varies (``"constant"``), a categorical
        one whose decoded law is no better than the rows' own frequencies (``"marginal"``).

        Returns
        -------
        list of str
            Those columns, read off the (public) rows fit validated on; empty for images or
            before a tabular fit.
        """
        fidelity: pd.DataFrame | None = getattr(self, "fidelity_", None)
        if fidelity is None:
            return []
        return [str(c) for c in fidelity.loc[fidelity["flag"] != "", "column"]]

    def _fidelity(self, frame: pd.DataFrame) -> pd.DataFrame:
        """Per modelled column: how its reconstruction from (z_S, z_NS) follows the source.

        A numeric column: the correlation of decoded and source values, flagged ``"constant"``
        when it is decoded as one value where the source varies. A categorical column: the
        mean log-likelihood of the source values under the decoder's law minus that under the
        rows' own frequencies (nats per row), flagged ``"marginal"`` when it is not positive:
        no law that ignores the row does better than those frequencies (Gibbs' inequality),
        so a decoder that has learned nothing of the row is always flagged.
        """
        latents = self.encode(frame)
        decoded = self.decode(*latents)
        assert isinstance(decoded, pd.DataFrame)
        out = self._decoder_output(*latents)
        truth = self.codec_.encode(frame)
        rows = []
        for block in self.codec_.blocks:
            source, dec = pd.Series(frame[block.name]), pd.Series(decoded[block.name])
            varies = source.nunique(dropna=False) > 1
            flag = ""
            if block.kind == "categorical":
                cells = slice(block.start, block.start + block.width)
                codes = truth[:, cells].argmax(axis=1)
                law = log_softmax(out[:, cells].astype(np.float64), axis=1)
                counts = np.bincount(codes, minlength=block.width)
                own = np.log(counts[codes] / len(codes))
                score = float(np.mean(law[np.arange(len(codes)), codes] - own))
                measure, baseline = "log-likelihood gain", 0.0
                flag = "marginal" if varies and score <= 0.0 else ""
            else:
                a = pd.to_numeric(source, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
                b = pd.to_numeric(dec, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
                both = np.isfinite(a) & np.isfinite(b)
                score, measure, baseline = np.nan, "correlation", 0.0
                if both.sum() > 2 and np.std(a[both]) > 0 and np.std(b[both]) > 0:
                    score = float(np.corrcoef(a[both], b[both])[0, 1])
                flag = "constant" if varies and dec.nunique(dropna=False) <= 1 else ""
            rows.append({"column": block.name, "kind": block.kind, "measure": measure,
                         "score": score, "baseline": baseline,
                         "decoded_distinct": int(dec.nunique(dropna=False)),
                         "source_distinct": int(source.nunique(dropna=False)),
                         "flag": flag})  # fmt: skip
        return pd.DataFrame(rows)

    def _train(
        self,
        x: torch.Tensor,
        y: torch.Tensor,
        held: tuple[torch.Tensor, torch.Tensor] | None,
        beta: float,
        alphas: tuple[float, ...],
        epochs: int,
    ) -> tuple[list[dict[str, float]], int]:
        """Adam on ``(x, y)``; with ``held`` rows, early stopping restoring the best epoch."""
        settings = self.settings()
        lr, batch = float(settings["lr"]), int(self.batch_size_)
        main = [self.encoder_, self.decoder_, self.aligner_]
        optimizer = torch.optim.Adam([p for mod in main for p in mod.parameters()], lr=lr)
        adv_optimizer = torch.optim.Adam(self.adversary_.parameters(), lr=lr)
        gen = torch.Generator().manual_seed(int(self.seed))
        history: list[dict[str, float]] = []
        best, best_epoch, best_state, waited = np.inf, epochs, None, 0
        with _progress(bool(self.progress), epochs) as advance:
            for epoch in range(epochs):
                order = torch.randperm(len(x), generator=gen)
                sums: dict[str, float] = {}
                for start in range(0, len(x) - 1, batch):
                    idx = order[start : start + batch]
                    parts = self._step(x[idx], y[idx], gen, adv_optimizer, beta, alphas)
                    optimizer.zero_grad()
                    parts.pop("objective").backward()  # type: ignore[no-untyped-call]
                    optimizer.step()
                    for key, val in parts.items():
                        sums[key] = sums.get(key, 0.0) + float(val) * len(idx)
                row = {key: val / len(x) for key, val in sums.items()} | {"epoch": epoch + 1}
                if held is not None:
                    score = self._validation_objective(*held, beta, alphas)
                    row["validation"] = score
                    if best_state is None or score < best - 1e-4 * abs(best):
                        best, best_epoch, best_state, waited = score, epoch + 1, self._state(), 0
                    else:
                        waited += 1
                history.append(row)
                advance(row)
                if held is not None and self.patience is not None and waited >= self.patience:
                    break
        if best_state is not None:
            self._load_state(best_state)
        else:
            best_epoch = len(history)
        return history, best_epoch

    def _validation_objective(
        self, x: torch.Tensor, y: torch.Tensor, beta: float, alphas: tuple[float, ...]
    ) -> float:
        """alpha1 L1 + alpha2 L2 on held-out rows (no adversary or distance-correlation term)."""
        k = self.sensitive_dim
        with torch.no_grad():
            mu, logvar = self.encoder_(x)
            recon = self._recon(self.decoder_(mu), x).mean()
            kl = nets.kl_standard_normal(mu, logvar).mean()
            l2 = nn.functional.cross_entropy(self.aligner_(mu[:, :k]), y)
            a1, a2 = float(alphas[0]), float(alphas[1])
            return float(a1 * (recon + beta * kl) + a2 * l2)

    def _step(
        self,
        x: torch.Tensor,
        y: torch.Tensor,
        gen: torch.Generator,
        adv_opt: torch.optim.Optimizer,
        beta: float,
        alphas: tuple[float, ...],
    ) -> dict[str, torch.Tensor]:
        """One alternating update: an adversary step, then the weighted objective on one batch."""
        k = self.sensitive_dim
        ce = nn.functional.cross_entropy
        mu, logvar = self.encoder_(x)
        z = mu + torch.exp(0.5 * logvar) * torch.randn(mu.shape, generator=gen)
        adv_opt.zero_grad()
        ce(self.adversary_(z[:, k:].detach()), y).backward()  # type: ignore[no-untyped-call]
        adv_opt.step()
        recon = self._recon(self.decoder_(z), x).mean()
        kl = nets.kl_standard_normal(mu, logvar).mean()
        l1 = recon + beta * kl
        l2 = ce(self.aligner_(z[:, :k]), y)
        l3 = nets.distance_correlation(z[:, :k], z[:, k:])
        l4 = ce(self.adversary_(z[:, k:]), y)
        a1, a2, a3, a4 = (float(a) for a in alphas)
        objective = a1 * l1 + a2 * l2 + a3 * l3 - a4 * l4
        return {"objective": objective, "reconstruction": recon.detach(), "kl": kl.detach(),
                "aligner": l2.detach(), "dcorr": l3.detach(), "adversary": l4.detach()}  # fmt: skip

    # ----------------------------------------------------------------- use
    def _require_fitted(self) -> None:
        check_fitted(self, "encoder_", how="fit() or load()")

    def encode(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        """Posterior means, split into (z_S (n, k), z_NS (n, m - k)).

        Parameters
        ----------
        X : pandas.DataFrame or numpy.ndarray
            Data of the trained kind: a DataFrame with every modelled column, or images of the
            trained (h, w), shape (n, h, w) or (n, 1, h, w), pixels in [0, 1].

        Returns
        -------
        z_s : numpy.ndarray
            The sensitive latents, float64 of shape (n, ``sensitive_dim``).
        z_ns : numpy.ndarray
            The non-sensitive latents, float64 of shape (n, ``latent_dim - sensitive_dim``).

        Raises
        ------
        SchemaError
            A value lies outside its column's public domain.
        """
        self._require_fitted()
        x = torch.from_numpy(self._to_matrix(X, trained=True))
        with torch.no_grad():
            mu = self.encoder_(x)[0].numpy().astype(np.float64)
        return mu[:, : self.sensitive_dim], mu[:, self.sensitive_dim :]

    def decode(
        self, z_s: Any, z_ns: Any, *, rng: np.random.Generator | None = None
    ) -> pd.DataFrame | np.ndarray:
        """Latents -> data: a DataFrame in the schema's domains, or images in [0, 1].

        Parameters
        ----------
        z_s, z_ns : array-like
            Finite latents, (n, k) and (n, m - k), row for row.
        rng : numpy.random.Generator or None, optional
            Tabular: draw categories from the decoder's law; None: take the most likely one.

        Returns
        -------
        pandas.DataFrame or numpy.ndarray
            The modelled columns (not the sensitive one), or float32 images (n, 1, h, w).
        """
        self._require_fitted()
        zs, zn = np.asarray(z_s, dtype=np.float32), np.asarray(z_ns, dtype=np.float32)
        k, m = self.sensitive_dim, self.latent_dim
        if (
            zs.ndim != 2
            or zn.ndim != 2
            or zs.shape[1] != k
            or zn.shape[1] != m - k
            or len(zs) != len(zn)
        ):
            raise InputError(
                f"decode needs z_s (n, {k}) and z_ns (n, {m - k}), got {zs.shape}, {zn.shape}"
            )
        if not (np.all(np.isfinite(zs)) and np.all(np.isfinite(zn))):
            raise InputError("latents must be finite")
        out = self._decoder_output(zs, zn)
        if self.kind == "image":
            # torch's sigmoid saturates quietly where 1 / (1 + exp(-x)) overflows (noisy z_S)
            return np.asarray(torch.sigmoid(torch.from_numpy(out)).numpy(), dtype=np.float32)
        return self.codec_.decode(out, rng)

    def _decoder_output(self, z_s: np.ndarray, z_ns: np.ndarray) -> np.ndarray:
        """The decoder's raw output (logits, scaled means) for checked latents."""
        latents = np.concatenate([z_s, z_ns], axis=1).astype(np.float32)
        with torch.no_grad():
            return np.asarray(self.decoder_(torch.from_numpy(latents)).numpy())

    def predict_sensitive(self, X: Any) -> np.ndarray:
        """The aligner's guess of y_S from z_S (a diagnostic of how much z_S carries).

        Parameters
        ----------
        X : pandas.DataFrame or numpy.ndarray
            Data as :meth:`encode` takes it.

        Returns
        -------
        numpy.ndarray
            One class of ``classes_`` per row, shape (n,).
        """
        z_s, _ = self.encode(X)
        with torch.no_grad():
            logits = self.aligner_(torch.from_numpy(z_s.astype(np.float32)))
        return np.asarray(self.classes_[logits.argmax(-1).numpy()])

    def training_rows(self, X: Any) -> np.ndarray:
        """Which rows of ``X`` were among this decoupler's training rows (by keyed hashes).

        Private rows it was trained on must not be sanitized with it. Tables are compared on every
        declared column when present, else on the modelled and sensitive columns only.

        Parameters
        ----------
        X : pandas.DataFrame or numpy.ndarray
            Data as :meth:`encode` takes it, with the sensitive column for a table.

        Returns
        -------
        numpy.ndarray
            Bool of shape (n,): True where the row is a training row.
        """
        self._require_fitted()
        fingerprint: RowFingerprint | None = getattr(self, "fingerprint_", None)
        if fingerprint is None:
            raise InputError(
                "this decoupler has no fingerprint of its training rows (saved by an earlier "
                "attrpriv): refit it to check which rows it was trained on"
            )
        if self.kind == "image":
            if isinstance(X, (pd.DataFrame, pd.Series)):
                raise InputError(
                    f"an image decoupler (kind='image') needs an (n, h, w) array, got a "
                    f"{type(X).__name__} (a table)"
                )
            self._check_image_shape(X)
            return fingerprint.match_images(as_images(X))
        if not isinstance(X, pd.DataFrame):
            raise InputError(
                "a tabular decoupler (kind='tabular') needs a pandas DataFrame, got "
                f"{type(X).__name__} of shape {np.shape(X)}"
            )
        return fingerprint.match_table(X)[0]

    def training_overlap(self, X: pd.DataFrame | np.ndarray) -> Verdict:
        """Whether ``X`` is the training rows again, against the duplicate share chance gives.

        Parameters
        ----------
        X : pandas.DataFrame or numpy.ndarray
            Data as :meth:`training_rows` takes it.

        Returns
        -------
        str
            ``"disjoint"``, ``"more than chance"``, ``"training rows"`` or ``"cannot tell"``.
        """
        matched = self.training_rows(X)  # raises without a fingerprint
        fingerprint = self.fingerprint_
        assert fingerprint is not None
        if isinstance(X, pd.DataFrame):
            chance = fingerprint.chance(fingerprint.match_table(X)[1])
        else:
            chance = fingerprint.repeated
        return overlap_verdict(float(matched.mean()) if matched.size else 0.0, chance, len(matched))

    # ----------------------------------------------------------------- files
    def save(self, directory: str | Path) -> Path:
        """Write weights (torch state dicts) and a JSON config to ``directory``; never pickle.

        Parameters
        ----------
        directory : str or pathlib.Path
            Created if needed; ``decoupler.json``, ``weights.pt`` and ``fingerprint.npz`` replaced.

        Returns
        -------
        pathlib.Path
            The directory written to.
        """
        self._require_fitted()
        weights = {name: module.state_dict() for name, module in self._modules().items()}
        fingerprint = getattr(self, "fingerprint_", None)
        return write_files(Path(directory), self._config(), weights, fingerprint)

    def _config(self) -> dict[str, Any]:
        """What ``decoupler.json`` holds: the settings training used (defaults filled in, so a
        later change of the defaults cannot rebuild other networks), the codec, the diagnostics."""
        config: dict[str, Any] = {
            "params": self.settings() | {"alphas": [float(a) for a in self.alphas]},
            "classes": [plain(c) for c in self.classes_],
            "in_dim": self.in_dim_,
            "side": self.side_,
            "sensitive_column": self.sensitive_column_,
            "history": self.history_,
        }
        if self.kind == "tabular":
            config["schema"] = self.codec_.schema.to_dict()
            config["columns"] = list(self.codec_.columns)
            config["fill"] = {name: plain(v) for name, v in self.codec_.fill.items()}
            config["fit_schema"] = self.schema_.to_dict()
        return config | {"diagnostics": self._diagnostics()}

    def _diagnostics(self) -> dict[str, Any]:
        """What ``fit`` found (validation, collapse, retuning, bound, fidelity), JSON-ready."""
        bound: LatentBound | None = getattr(self, "latent_bound_", None)
        fidelity: pd.DataFrame | None = getattr(self, "fidelity_", None)
        records = None if fidelity is None else [
            {k: (None if isinstance(v, float) and not np.isfinite(v) else _scalar(v))
             for k, v in row.items()} for row in fidelity.to_dict("records")]  # fmt: skip
        return {
            "validation": _jsonable(getattr(self, "validation_", None)),
            "collapsed": getattr(self, "collapsed_", None),
            "retuned": _jsonable(getattr(self, "retuned_", None)),
            "best_epoch": getattr(self, "best_epoch_", None),
            "batch_size": getattr(self, "batch_size_", None),
            "refit": _jsonable(getattr(self, "refit_", None)),
            "latent_bound": None if bound is None else bound.to_dict(),
            "fidelity": records,
        }

    def _restore_diagnostics(self, diagnostics: dict[str, Any] | None) -> None:
        """The learned diagnostics of a saved decoupler (``None`` for an earlier version)."""
        found = diagnostics or {}
        self.validation_ = found.get("validation") or {
            "status": "unchecked",
            "reason": "saved without diagnostics",
        }
        self.collapsed_ = found.get("collapsed")
        self.retuned_ = found.get("retuned")
        self.best_epoch_ = found.get("best_epoch", len(self.history_))
        self.batch_size_ = found.get("batch_size") or int(self.settings()["batch_size"])
        self.refit_ = found.get("refit")
        bound = found.get("latent_bound")
        self.latent_bound_ = None if bound is None else LatentBound.from_dict(bound)
        rows = found.get("fidelity")
        self.fidelity_ = None if rows is None else pd.DataFrame(rows).fillna({"score": np.nan})

    @classmethod
    def load(cls, directory: str | Path) -> GlobalDecoupler:
        """Read a decoupler written by :meth:`save` (weights loaded with ``weights_only=True``).

        Parameters
        ----------
        directory : str or pathlib.Path
            A directory written by :meth:`save`.

        Returns
        -------
        GlobalDecoupler
            A fitted decoupler.
        """
        path = Path(directory)
        return read_saved(path, lambda config: cls._from_config(config, path))

    @classmethod
    def _from_config(cls, config: dict[str, Any], directory: Path) -> GlobalDecoupler:
        """The model a saved config describes, with its weights; only :data:`ADDED_PARAMS`
        may be missing from it."""
        defaults = cls().get_params(deep=False)
        params = {k: defaults[k] for k in ADDED_PARAMS if k not in config["params"]}
        params |= config["params"]
        if set(params) != set(defaults):
            raise InputError(
                f"decoupler config params {sorted(params)} are not the parameters "
                f"{sorted(defaults)} of GlobalDecoupler (another version?)"
            )
        model = cls(**params | {"alphas": tuple(params["alphas"])})
        model._validate_params()
        model.classes_ = np.asarray(config["classes"], dtype=object)
        column = config["sensitive_column"]
        model.sensitive_column_ = None if column is None else str(column)
        if model.kind == "tabular":
            codec = TabularCodec(
                Schema.from_dict(config["schema"]), tuple(config["columns"]), config.get("fill")
            )
            model.codec_ = codec
            fit_schema = config.get("fit_schema")  # absent: saved before it was kept
            model.schema_ = codec.schema if fit_schema is None else Schema.from_dict(fit_schema)
        model._build(int(config["in_dim"]), len(model.classes_), int(config["side"]))
        state = read_weights(directory / WEIGHTS_FILE)
        for name, module in model._modules().items():
            module.load_state_dict(state[name])
            module.eval()
        model.history_ = list(config["history"])
        model.fingerprint_ = read_fingerprint(config.get("fingerprint"), directory)
        model._restore_diagnostics(config.get("diagnostics"))
        return model


@contextmanager
def _progress(enabled: bool, total: int) -> Iterator[Any]:
    """Per-epoch progress with the epoch's losses on stderr, or a no-op."""
    with progress("decoupler", total, enabled=enabled) as step:

        def advance(row: dict[str, float]) -> None:
            step(detail=" ".join(f"{key}={row[key]:.3g}" for key in LOSSES))

        yield advance


def _log_loss(proba: np.ndarray, labels: np.ndarray) -> float:
    """Mean cross-entropy of the true labels under row-wise class probabilities."""
    p = np.clip(proba[np.arange(len(labels)), labels], 1e-12, 1.0)
    return float(-np.mean(np.log(p)))


def _features_probabilities(
    xt: np.ndarray, yt: np.ndarray, xv: np.ndarray, n_classes: int
) -> np.ndarray:
    """A logistic regression on the network inputs: what the columns alone say about y_S."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    xt, xv = xt.reshape(len(xt), -1), xv.reshape(len(xv), -1)
    if len(xt) > 4000:
        pick = np.random.default_rng(0).choice(len(xt), 4000, replace=False)
        xt, yt = xt[pick], yt[pick]
    out = np.full((len(xv), n_classes), 1.0 / n_classes)
    seen = np.unique(yt)
    if len(seen) < 2:
        return out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = LogisticRegression(max_iter=300).fit(xt, yt)
    out[:] = 1e-6
    out[:, model.classes_] = model.predict_proba(xv)
    return np.asarray(out / out.sum(1, keepdims=True))


def _scalar(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _jsonable(value: Any) -> Any:
    """Plain JSON values: numpy scalars unwrapped, NaN as None, containers walked."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    value = _scalar(value)
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value
