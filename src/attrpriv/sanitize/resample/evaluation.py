"""Proxy resampling on the evaluation's (leakage, utility) plane, beside the other sanitizers.

:func:`attrpriv.sanitize.sweep` sanitizes the private rows (scored) and the auxiliary rows (to
train the sanitized-aux adversary) with the same method. A :class:`ProxyResampler` fitted on
the auxiliary rows refuses to release them (they are its training rows), so the sweep's method
is a pair: one resampler fitted on the auxiliary rows releases the private ones, and one fitted
on the private rows releases the auxiliary ones, as an auditor who holds both would.
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

    Parameters
    ----------
    for_private : ProxyResampler
        Fitted on the auxiliary rows; releases every table that does not repeat them.
    for_aux : ProxyResampler
        Fitted on the private rows; releases the auxiliary rows (which ``for_private``
        refuses).
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
        """Fit both resamplers (the task's ``target`` is never a proxy).

        Parameters
        ----------
        aux : pandas.DataFrame
            The auxiliary rows, with ``sensitive``.
        private : pandas.DataFrame
            The private rows, with ``sensitive``.
        sensitive : str
            The sensitive column.
        target : str
            The task's column, kept out of the proxies.
        epsilon : float
            The privacy loss of each release, > 0.
        n_proxies : int or "auto", default 3
            Proxies to redraw.
        columns : sequence of str or None, default None
            The columns the sweep evaluates (the decoupler's, with the sensitive and target
            ones): the resamplers are fitted on these only. ``None``: every column.
        seed : int, default 0
            Seed of both resamplers (the second uses ``seed + 1``).

        Returns
        -------
        ResamplingSanitizer
            The pair.
        """
        if columns is not None:
            aux, private = aux[list(columns)], private[list(columns)]
        settings: dict[str, Any] = {"task": target, "epsilon": epsilon, "n_proxies": n_proxies}
        first = ProxyResampler(sensitive, seed=seed, **settings).fit(aux)
        second = ProxyResampler(sensitive, seed=seed + 1, **settings).fit(private)
        return cls(first, second)

    def at(self, epsilon: float) -> ResamplingSanitizer:
        """The same fitted pair, releasing at another ``epsilon`` (the fits do not depend on it).

        Parameters
        ----------
        epsilon : float
            The privacy loss of each release, > 0 (checked when a release starts).

        Returns
        -------
        ResamplingSanitizer
            A pair of shallow copies with ``epsilon`` set; this pair is left as it is.
        """
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
        """Release ``X`` with the resampler that was not fitted on it.

        Parameters
        ----------
        X : pandas.DataFrame
            The rows to release, with the sensitive column.
        y_s : object, optional
            Unused (the sensitive column is in ``X``).
        ledger : BudgetLedger or None, optional
            Charged with the release.
        label : str, optional
            The release's name in the ledger.

        Returns
        -------
        SanitizedData
            The released table, no synthetic labels apart from the table's own column, and the
            release's record.
        """
        model = self.for_aux if self.for_private.repeats_training_rows(X) else self.for_private
        out = model.release(X, ledger=ledger, label=label)
        parts = {"rows": len(X), "sampler": "proxy-resampling", "proxies": list(model.proxies_)}
        return SanitizedData(out.values, None, out.record, parts)
