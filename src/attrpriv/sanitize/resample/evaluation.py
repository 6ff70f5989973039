"""Proxy resampling on the evaluation's (leakage, utility) plane, beside the other sanitizers.

A pair of resamplers: one fitted on the auxiliary rows releases the private ones, the other
the auxiliary ones (which the first refuses as its training rows).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from attrpriv.sanitize.resample.mechanism import ProxyResampler
from attrpriv.sanitize.sanitizer import SanitizedData

if TYPE_CHECKING:
    from attrpriv.dp.ledger import BudgetLedger

__all__ = ["ResamplingSanitizer"]


class ResamplingSanitizer:
    """Two fitted proxy resamplers seen as one sanitizer, for the sweep.

    ``for_private`` (fitted on the auxiliary rows) releases the private rows; ``for_aux``
    (fitted on the private rows) releases the auxiliary ones.
    """

    def __init__(self, for_private: ProxyResampler, for_aux: ProxyResampler) -> None:
        self.for_private = for_private
        self.for_aux = for_aux

    @classmethod
    def fitted(
        cls,
        aux: pd.DataFrame,
        private: pd.DataFrame,
        sensitive: str,
        *,
        target: str,
        epsilon: float,
        n_proxies: int | str = 3,
        columns: Sequence[str] | None = None,
        seed: int = 0,
    ) -> ResamplingSanitizer:
        """Fit both on ``columns`` (default all), seeds ``seed``, ``seed + 1``; ``target`` kept."""
        if columns is not None:
            aux, private = aux[list(columns)], private[list(columns)]
        settings: dict[str, Any] = {"task": target, "epsilon": epsilon, "n_proxies": n_proxies}
        first = ProxyResampler(sensitive, seed=seed, **settings).fit(aux)
        second = ProxyResampler(sensitive, seed=seed + 1, **settings).fit(private)
        return cls(first, second)

    def at(self, epsilon: float) -> ResamplingSanitizer:
        """Shallow copies of the fitted pair, releasing at another ``epsilon``."""
        first, second = copy.copy(self.for_private), copy.copy(self.for_aux)
        first.set_params(epsilon=epsilon)
        second.set_params(epsilon=epsilon)
        return ResamplingSanitizer(first, second)

    def sanitize(
        self,
        X: pd.DataFrame,
        y_s: Any = None,
        *,
        ledger: BudgetLedger | None = None,
        label: str = "",
    ) -> SanitizedData:
        """Release ``X`` with the resampler not fitted on it (``y_s`` is unused)."""
        model = self.for_aux if self.for_private.repeats_training_rows(X) else self.for_private
        out = model.release(X, ledger=ledger, label=label)
        return SanitizedData(out.data, None, out.record, out.diagnostics)
