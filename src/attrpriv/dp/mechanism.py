"""The mechanism contract: one template shared by every release and sampler.

A mechanism is configured by the parameters of its ``__init__``, stored as given
(scikit-learn's convention: ``get_params`` / ``set_params`` work, so ``sklearn.base.clone``
does). Its parameter constraints are declared once, in ``_constraints``, and checked once, when
a release starts; everything below that boundary trusts them. Every release then runs the same
steps, written once in :meth:`Mechanism._release`::

    validate -> measure (private) -> calibrate (public: a NoisePlan) -> record -> charge
             -> noise -> post-process

so a mechanism writes only what differs: what it measures (``_measure``), how it calibrates
(``calibrate``, returning a small typed :class:`NoisePlan`), its guarantee (``record(plan)``,
one shape everywhere), how the noise is drawn (``_noise``) and how accurate that makes each
released value (``_accuracy``). The ledger is charged before any noise is drawn, and noise is
drawn nowhere else: the drawing methods are private.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from attrpriv._checks import Check, check_flag, instance_of, optional
from attrpriv.dp.accuracy import Accuracy
from attrpriv.dp.noise import NoiseSampler, default_sampler, require_private
from attrpriv.dp.record import Guarantee, PrivacyRecord, Release
from attrpriv.dp.units import PrivacyUnit
from attrpriv.errors import InputError, NotFittedError

if TYPE_CHECKING:
    from attrpriv.dp.ledger import BudgetLedger


class Parameters:
    """``get_params`` / ``set_params`` / ``repr`` from the ``__init__`` signature, and the
    declared constraints, checked by :meth:`_validate_params`."""

    _constraints: ClassVar[Mapping[str, Check]] = {}

    @classmethod
    def _param_names(cls) -> list[str]:
        signature = inspect.signature(cls.__init__)
        return [
            p.name
            for p in signature.parameters.values()
            if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The parameters of ``__init__`` and their current values (scikit-learn's API).

        Parameters
        ----------
        deep : bool, default True
            Also give the parameters of every parameter that has ``get_params`` (an estimator,
            a sampler), as ``name__parameter``, as scikit-learn does.

        Returns
        -------
        dict of str to Any
            Every named parameter of ``__init__`` (not ``*args`` / ``**kwargs``) and the
            attribute of the same name; with ``deep``, the nested ones too.
        """
        out = {name: getattr(self, name) for name in self._param_names()}
        if deep:
            for name, value in list(out.items()):
                if hasattr(value, "get_params") and not isinstance(value, type):
                    out |= {f"{name}__{k}": v for k, v in value.get_params(deep=True).items()}
        return out

    def set_params(self, **params: Any) -> Parameters:
        """Set parameters by name (``name__parameter`` for a nested one); an unknown name is
        refused. Returns ``self``.

        Parameters
        ----------
        **params : Any
            New values by parameter name (a name of ``__init__``, or ``name__parameter`` for a
            parameter of the object in ``name``). They are stored as given and checked when
            the object is used.

        Returns
        -------
        Parameters
            ``self``.

        Raises
        ------
        InputError
            If a name is not a parameter of ``__init__``, or a nested name's object has no
            ``set_params`` (parameters set before it stay set).
        """
        names = self._param_names()
        nested: dict[str, dict[str, Any]] = {}
        for key, value in params.items():
            name, _, inner = key.partition("__")
            if name not in names:
                raise InputError(
                    f"{type(self).__name__} has no parameter {name!r}; expected one of {names}"
                )
            if inner:
                nested.setdefault(name, {})[inner] = value
            else:
                setattr(self, name, value)
        for name, inner_params in nested.items():
            owner = getattr(self, name)
            if not hasattr(owner, "set_params"):
                raise InputError(
                    f"{type(self).__name__}'s {name!r} has no parameters to set "
                    f"({', '.join(inner_params)})"
                )
            owner.set_params(**inner_params)
        return self

    def _validate_params(self) -> None:
        """Check every declared constraint once, at the boundary."""
        for name, check in self._constraints.items():
            check(getattr(self, name), name)

    def __repr__(self) -> str:
        defaults = {
            p.name: p.default for p in inspect.signature(type(self).__init__).parameters.values()
        }
        shown = [
            self._repr_param(name, value)
            for name, value in self.get_params(deep=False).items()
            if not _is_default(value, defaults.get(name, inspect.Parameter.empty))
        ]
        return f"{type(self).__name__}({', '.join(shown)})"

    def _repr_param(self, name: str, value: Any) -> str:
        """How ``repr`` shows one parameter (``name=value``)."""
        return f"{name}={value!r}"


def _is_default(value: Any, default: Any) -> bool:
    """``value`` is its parameter's default: the same object, or an equal one of its type (a
    copy, as ``clone`` makes); arrays and other objects without a plain ``==`` never are."""
    if value is default:
        return True
    if type(value) is not type(default):
        return False
    try:
        return bool(value == default)
    except (TypeError, ValueError):  # an array's == is elementwise
        return False


@dataclass(frozen=True)
class NoisePlan:
    """What a calibration decides, from public quantities only: the guarantee the noise gives.

    Every mechanism's plan extends this with its scales; ``sampler`` is the noise sampler the
    plan was made for (its float grid can widen the sensitivity); ``inferred`` names the
    columns whose domains were read off the private data (the record says so).

    Parameters
    ----------
    epsilon : float
        The epsilon of the guarantee the noise gives.
    delta : float
        The delta of the guarantee the noise gives.
    sampler : NoiseSampler
        The noise sampler the plan was made for.
    inferred : tuple of str, default ()
        Keyword-only: the columns whose domains were read off the private data.
    """

    epsilon: float
    delta: float
    sampler: NoiseSampler
    inferred: tuple[str, ...] = field(default=(), kw_only=True)


SAMPLER_CONSTRAINTS: Mapping[str, Check] = {
    "noise": optional(instance_of(NoiseSampler, "a NoiseSampler")),
    "allow_nonprivate": check_flag,
}
"""The constraints of the two parameters every mechanism has."""

M = TypeVar("M")
P = TypeVar("P", bound=NoisePlan)


class Mechanism(Parameters, ABC, Generic[M, P]):
    """The template every mechanism follows (see the module docstring).

    Subclasses take ``noise`` (a :class:`NoiseSampler`, default exact OpenDP) and
    ``allow_nonprivate`` (accept a reproducible, non-private sampler for tests) among their
    parameters, and implement the five small steps below.
    """

    noise: NoiseSampler | None
    allow_nonprivate: bool

    def _release(
        self, *inputs: Any, ledger: BudgetLedger | None = None, label: str = ""
    ) -> Release:
        """Validate, measure, calibrate, record, charge (before any noise), add noise."""
        self._validate_params()
        sampler = self._sampler()
        measured = self._measure(*inputs)
        plan = self._calibrate(measured, sampler)
        record = self.record(plan)
        if ledger is not None:
            ledger.charge(record, label=label)
        noisy = self._noise(measured, plan)
        values = self._post_process(noisy)
        parts = self._parts(measured, plan, noisy)
        return Release(values, record, parts, self._accuracy(plan, values))

    def _sampler(self) -> NoiseSampler:
        sampler = self.noise if self.noise is not None else default_sampler()
        require_private(sampler, allow_nonprivate=self.allow_nonprivate)
        return sampler

    @abstractmethod
    def _measure(self, *inputs: Any) -> M:
        """The exact (private) answer, with the public facts calibration needs."""

    @abstractmethod
    def _calibrate(self, measured: M, sampler: NoiseSampler) -> P:
        """The noise plan for ``measured``, from its public facts only (never its values)."""

    @abstractmethod
    def record(self, plan: P) -> PrivacyRecord:
        """The guarantee of a release with ``plan``.

        Parameters
        ----------
        plan : NoisePlan
            The noise plan of the release (the mechanism's own subclass).

        Returns
        -------
        PrivacyRecord
            The guarantee the release carries.
        """

    @abstractmethod
    def _noise(self, measured: M, plan: P) -> Any:
        """The released values: ``measured`` plus the noise of ``plan`` (drawn here only)."""

    @abstractmethod
    def _accuracy(self, plan: P, values: Any) -> Accuracy:
        """The noise scale and interval of every released value."""

    def _post_process(self, noisy: Any) -> Any:
        """The released values from the noisy ones (post-processing costs no privacy)."""
        return noisy

    def _parts(self, measured: M, plan: P, noisy: Any) -> dict[str, Any]:
        """Public diagnostics of the release (noise scales, calibration details)."""
        return {}

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
        """The one record shape: the plan's (epsilon, delta), the unit's definition, the
        sampler's description after ``noise`` and the shared assumptions after the own ones."""
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
        """A mechanism's own assumptions, then those every release shares: domains read off
        the private data, and a sampler that is not private."""
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
    """Raise :class:`NotFittedError` unless ``estimator`` has the learned ``attribute`` (and,
    with ``unchanged``, the parameters that shaped its fit still hold).

    Parameters
    ----------
    estimator : object
        The object whose method needs learned state.
    attribute : str
        The name of an attribute that ``fit`` sets.
    how : str, default "fit(...)"
        The call that learns it, as the message names it.
    unchanged : object, optional
        The current value of the parameters that shape the fit; ``fit`` stored the value it
        was fitted for as ``fitted_for_``.

    Raises
    ------
    NotFittedError
        If ``estimator`` has no attribute ``attribute``, or ``unchanged`` differs from its
        ``fitted_for_``.
    """
    name = type(estimator).__name__
    if not hasattr(estimator, attribute):
        raise NotFittedError(f"this {name} is not fitted yet: call {how} first")
    if unchanged is not None and getattr(estimator, "fitted_for_", None) != unchanged:
        raise NotFittedError(f"this {name}'s parameters changed since fit: call {how} again")


__all__ = ["SAMPLER_CONSTRAINTS", "Check", "Mechanism", "NoisePlan", "Parameters", "check_fitted"]
