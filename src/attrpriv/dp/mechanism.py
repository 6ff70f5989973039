"""The mechanism contract (``docs/architecture.md``): every release runs ``validate -> measure ->
calibrate -> record -> charge -> add noise -> post-process``, so the ledger is charged before any
noise is drawn. Measuring splits the input into the private answer and the public facts;
calibration sees the public facts only. Parameters are stored as given and checked once, at the
entry point."""

from __future__ import annotations

import functools
import inspect
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar, cast

from sklearn.base import BaseEstimator

from attrpriv._checks import FLAG, Check, Rule, instance_of, optional
from attrpriv.dp.accuracy import Accuracy
from attrpriv.dp.noise import NoiseSampler, default_sampler, require_private
from attrpriv.dp.record import Diagnostics, Guarantee, PrivacyRecord, Release
from attrpriv.dp.units import PrivacyUnit
from attrpriv.errors import InputError, NotFittedError

if TYPE_CHECKING:
    from attrpriv.dp.ledger import BudgetLedger


class Parameters(BaseEstimator):  # type: ignore[misc]
    """scikit-learn's estimator contract (``get_params`` / ``set_params``, ``clone``, ``repr``).

    Constraints are declared in ``_constraints`` and checked by :func:`validated` entry points.
    """

    _constraints: ClassVar[Mapping[str, Rule]] = {}

    @classmethod
    def _param_names(cls) -> list[str]:
        return list(cls._get_param_names())

    @classmethod
    def constraints(cls) -> dict[str, str]:
        """What each parameter accepts, in words.

        Returns
        -------
        dict of str to str
            Every declared parameter and its rule's description, in declaration order.
        """
        return {name: str(rule) for name, rule in cls._constraints.items()}

    def set_params(self, **params: Any) -> Parameters:
        """Set parameters by name (``name__parameter`` for a nested one).

        Parameters
        ----------
        **params : Any
            New values by parameter name, stored as given and checked when the object is used.

        Returns
        -------
        Parameters
            ``self``.
        """
        names = self._param_names()
        for key in params:
            name, _, inner = key.partition("__")
            if name not in names:
                raise InputError(
                    f"{type(self).__name__} has no parameter {name!r}; expected one of {names}"
                )
            if inner and not hasattr(getattr(self, name), "set_params"):
                raise InputError(f"{type(self).__name__}'s {name!r} has no parameters to set")
        super().set_params(**params)
        return self

    def _validate_params(self) -> dict[str, Any]:
        """Check every declared constraint; return the cleaned values by name."""
        return {name: rule(getattr(self, name), name) for name, rule in self._constraints.items()}

    def __repr__(self) -> str:  # one line, not scikit-learn's pretty print
        """One line: the class and the parameters that differ from their defaults."""
        signature = inspect.signature(type(self).__init__).parameters.values()
        defaults = {p.name: p.default for p in signature}
        params = self.get_params(deep=False)
        shown = [
            self._repr_param(name, params[name])
            for name in defaults
            if name in params and not _is_default(params[name], defaults[name])
        ]
        return f"{type(self).__name__}({', '.join(shown)})"

    def _repr_param(self, name: str, value: Any) -> str:
        """How ``repr`` shows one parameter (``name=value``)."""
        return f"{name}={value!r}"


def _is_default(value: Any, default: Any) -> bool:
    """``value`` is its parameter's default: the same object, or an equal one of its type."""
    if value is default:
        return True
    if type(value) is not type(default):
        return False
    try:
        return bool(value == default)
    except (TypeError, ValueError):  # an array's == is elementwise
        return False


F = TypeVar("F", bound=Callable[..., Any])


def validated(method: F) -> F:
    """Mark a public entry point: the declared constraints are checked when it starts."""

    @functools.wraps(method)
    def entry(self: Parameters, *args: Any, **kwargs: Any) -> Any:
        self._validate_params()
        return method(self, *args, **kwargs)

    entry.validated = True  # type: ignore[attr-defined]
    return cast(F, entry)


@dataclass(frozen=True)
class NoisePlan:
    """What a calibration decides, from public quantities only: the guarantee the noise gives.

    Parameters
    ----------
    epsilon, delta, sampler
        The guarantee, and the sampler it holds for (its float grid can widen the sensitivity).
    inferred : tuple of str, default ()
        Keyword-only: the columns whose domains were read off the private data.
    """

    epsilon: float
    delta: float
    sampler: NoiseSampler
    inferred: tuple[str, ...] = field(default=(), kw_only=True)


SAMPLER_CONSTRAINTS: Mapping[str, Rule] = {
    "sampler": optional(instance_of(NoiseSampler, "a NoiseSampler")),
    "allow_nonprivate": FLAG,
}
"""The constraints of the two parameters every mechanism has."""

X = TypeVar("X")
Y = TypeVar("Y")
P = TypeVar("P", bound=NoisePlan)


class Mechanism(Parameters, ABC, Generic[X, Y, P]):
    """The template every mechanism follows (see the module docstring).

    ``X`` is the private answer, ``Y`` the public facts calibration reads and ``P`` the noise
    plan. Subclasses take ``sampler`` (default exact OpenDP noise) and ``allow_nonprivate``
    (accept a non-private sampler: reproducible tests only), and implement the steps below.
    """

    sampler: NoiseSampler | None
    allow_nonprivate: bool
    _result: ClassVar[type[Release]] = Release

    def _release(
        self, *inputs: Any, ledger: BudgetLedger | None = None, label: str = ""
    ) -> Release:
        """Validate, measure, calibrate, record, charge (before any noise), add noise."""
        self._validate_params()
        sampler = self._sampler()
        private, public = self._measure(*inputs)
        plan = self._calibrate(public, sampler)
        record = self.record(plan)
        if ledger is not None:
            ledger.charge(record, label=label)
        noisy = self._add_noise(private, plan)
        values = self._post_process(noisy)
        diagnostics = self._diagnostics(public, plan, noisy)
        return self._result(values, record, diagnostics, self._accuracy(plan, values))

    @validated
    def calibrate(self, public: Y | None = None, *, sampler: NoiseSampler | None = None) -> P:
        """The noise plan, from public facts only (no data is read).

        Parameters
        ----------
        public : public facts or None, optional
            Facts the noise depends on (see the docs page); default: those the parameters fix.
        sampler : NoiseSampler or None, optional
            Keyword-only: the noise sampler; default the mechanism's own.

        Returns
        -------
        NoisePlan
            The noise of a release and the guarantee it gives.
        """
        facts = self._public_facts() if public is None else public
        return self._calibrate(facts, sampler or self._sampler())

    def _public_facts(self) -> Y:
        """The public facts the parameters (or the fit) fix; raise if the data must say."""
        raise InputError(
            f"{type(self).__name__}.calibrate needs its public facts: pass them as `public`"
        )

    def _sampler(self) -> NoiseSampler:
        sampler = self.sampler if self.sampler is not None else default_sampler()
        require_private(sampler, allow_nonprivate=self.allow_nonprivate)
        return sampler

    @abstractmethod
    def _measure(self, *inputs: Any) -> tuple[X, Y]:
        """``(private, public)``: the exact answer, and the public facts calibration needs."""

    @abstractmethod
    def _calibrate(self, public: Y, sampler: NoiseSampler) -> P:
        """The noise plan from the public facts (the private answer is never passed here)."""

    @abstractmethod
    def record(self, plan: P) -> PrivacyRecord:
        """The guarantee of a release with ``plan``.

        Parameters
        ----------
        plan : NoisePlan
            The noise plan of the release.

        Returns
        -------
        PrivacyRecord
            The guarantee the release carries.
        """

    @abstractmethod
    def _add_noise(self, private: X, plan: P) -> Any:
        """The noisy values: ``private`` plus the noise of ``plan`` (drawn here only)."""

    @abstractmethod
    def _accuracy(self, plan: P, values: Any) -> Accuracy:
        """The noise scale and interval of every released value."""

    def _post_process(self, noisy: Any) -> Any:
        """The released values from the noisy ones (post-processing costs no privacy)."""
        return noisy

    def _diagnostics(self, public: Y, plan: P, noisy: Any) -> Diagnostics:
        """How the release was made, from the public facts, the plan and the noisy values."""
        return Diagnostics()

    def _record(
        self,
        plan: P,
        *,
        mechanism: str,
        unit: PrivacyUnit,
        protects: str,
        sensitivity: float | Mapping[str, float],
        noise: Mapping[str, Any],
        assumptions: Sequence[str] = (),
        guarantees: Sequence[Guarantee] = (),
    ) -> PrivacyRecord:
        """The one record shape: the plan's (epsilon, delta), sampler and shared assumptions."""
        return PrivacyRecord(
            mechanism=mechanism,
            definition=unit.definition,
            epsilon=plan.epsilon,
            delta=plan.delta,
            protects=protects,
            sensitivity=sensitivity,
            noise={**noise, **plan.sampler.describe()},
            unit=unit,
            assumptions=self._assumptions(plan, *assumptions),
            guarantees=tuple(guarantees),
        )

    @staticmethod
    def _assumptions(plan: NoisePlan, *own: str) -> tuple[str, ...]:
        """Own assumptions, then shared ones (inferred domains, a non-private sampler)."""
        found = list(own)
        if plan.inferred:
            found.append(
                f"the domains of {list(plan.inferred)} were read from the private data "
                "(Schema.infer): which values occur, and their range, are not protected"
            )
        if not plan.sampler.private:
            found.append("noise sampler is not private")
        return tuple(found)


def check_fitted(
    estimator: object, attribute: str, *, how: str = "fit(...)", unchanged: object = None
) -> None:
    """Raise ``NotFittedError`` unless ``attribute`` is set (and ``fitted_for_ == unchanged``)."""
    name = type(estimator).__name__
    if not hasattr(estimator, attribute):
        raise NotFittedError(f"this {name} is not fitted yet: call {how} first")
    if unchanged is not None and getattr(estimator, "fitted_for_", None) != unchanged:
        raise NotFittedError(f"this {name}'s parameters changed since fit: call {how} again")


__all__ = [
    "SAMPLER_CONSTRAINTS",
    "Check",
    "Mechanism",
    "NoisePlan",
    "Parameters",
    "check_fitted",
    "validated",
]
