"""The histogram toolkit the histogram mechanisms share: counts, l1 sensitivity, flat bins,
accuracy, and the one-scale discrete Laplace step of :class:`HistogramMechanism`.

Noise is drawn only in a mechanism's ``_add_noise``, after the ledger is charged.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import pandas as pd

from attrpriv.dp.accuracy import Accuracy
from attrpriv.dp.mechanism import NoisePlan
from attrpriv.release._table import TableMechanism

Histograms = dict[str, pd.Series]


@dataclass(frozen=True)
class Counts:
    """The exact histograms (private) and the columns' domain provenance (public)."""

    histograms: Histograms
    inferred: tuple[str, ...]


def flat_bins(histograms: Mapping[str, pd.Series]) -> np.ndarray:
    """Every bin of every histogram, in order, as one array (for one noise draw)."""
    return np.concatenate([h.to_numpy() for h in histograms.values()])


def split_bins(flat: np.ndarray, like: Mapping[str, pd.Series]) -> Histograms:
    """``flat`` cut back into histograms with the names, indexes and sizes of ``like``."""
    values, start = {}, 0
    for name, true in like.items():
        values[name] = pd.Series(flat[start : start + true.size], index=true.index, name=name)
        start += true.size
    return values


def histograms_sensitivity(n_histograms: int, neighbours: str) -> float:
    """L1 sensitivity of ``n_histograms`` whole-row histograms (substitution: twice add/remove)."""
    return float((1 if neighbours == "add-remove" else 2) * n_histograms)


def histogram_accuracy(values: Histograms, scales: Mapping[str, float]) -> Accuracy:
    """The accuracy of discrete Laplace noise of ``scales[name]`` on every bin of ``name``."""
    shaped = {name: pd.Series(scales[name], index=v.index) for name, v in values.items()}
    return Accuracy.of_scales("discrete laplace", shaped)


Y = TypeVar("Y")
P = TypeVar("P", bound=NoisePlan)


class HistogramMechanism(TableMechanism[Histograms, Y, P]):
    """A table mechanism that adds discrete Laplace noise of one scale to every bin."""

    @abstractmethod
    def _scale(self, plan: P) -> float:
        """The discrete Laplace scale of every bin under ``plan``."""

    def _add_noise(self, private: Histograms, plan: P) -> Histograms:
        flat = plan.sampler.discrete_laplace(flat_bins(private), self._scale(plan))
        return split_bins(flat, private)

    def _accuracy(self, plan: P, values: Histograms) -> Accuracy:
        return histogram_accuracy(values, dict.fromkeys(values, self._scale(plan)))
