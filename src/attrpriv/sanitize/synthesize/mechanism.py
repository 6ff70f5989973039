"""Whole-table DP synthetic data through OpenDP's AIM or MST (``opendp.extras.mbi``).

Cells come from the schema's public domains; OpenDP measures noisy marginals and
Private-PGM draws the synthetic rows from them. ``(epsilon, delta)``-DP under add/remove of
one row. See docs/sanitize/synthesize.md.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from importlib import metadata
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from attrpriv._checks import (
    EPSILON,
    SEED,
    Rule,
    check_positive_int,
    integer,
    one_of,
    optional,
    probability,
)
from attrpriv.data.schema import Role, Schema
from attrpriv.dp.accounting import rho_for
from attrpriv.dp.accuracy import Accuracy
from attrpriv.dp.mechanism import NoisePlan, validated
from attrpriv.dp.noise import NoiseSampler
from attrpriv.dp.record import PrivacyRecord
from attrpriv.dp.units import PrivacyUnit
from attrpriv.errors import InputError
from attrpriv.sanitize._names import COLUMN_NAMES
from attrpriv.sanitize.block.codebook import ColumnCode, codebook, typed_values
from attrpriv.sanitize.table import TableDiagnostics, TableFacts, TableSanitizer

METHODS = ("aim", "mst")
"""The algorithms of ``opendp.extras.mbi`` a release can run."""
WORKLOADS = (2, 3)
"""AIM's workload: every marginal of this many columns (3, AIM's own default, or 2)."""


def _workload(value: object, name: str) -> int:
    """2 or 3 (an integer; bools refused)."""
    count = check_positive_int(value, name, minimum=2)
    if count not in WORKLOADS:
        raise InputError(f"{name} must be 2 or 3 (marginals of that many columns), got {count}")
    return count


ALGORITHMS = {
    "aim": "AIM (McKenna, Mullins, Sheldon & Miklau, VLDB 2022)",
    "mst": "MST (McKenna, Miklau & Sheldon, Journal of Privacy and Confidentiality 2021)",
}
"""Each method's algorithm and where it is published."""

SENSITIVITY = 1.0
"""How far one row added or removed moves any count table of the rows (one cell by one: l1 and
l2 sensitivity 1), which OpenDP derives itself from the unit."""


@dataclass(frozen=True)
class SynthesisPlan(NoisePlan):
    """The zCDP budget ``rho`` of a release and the OpenDP measurement that spends it
    (``workload``: AIM's marginal size, ``None`` for MST)."""

    method: str
    workload: int | None
    columns: tuple[str, ...]
    rho: float
    oneway_scale: float
    measurement: Any = field(compare=False, repr=False)


@dataclass(frozen=True)
class SynthesisFacts(TableFacts):
    """The ``columns`` synthesized, each one's ``cells`` (categories, integer values or bins;
    OpenDP adds a missing one), whether each is ``nullable``, and ``inferred``."""

    columns: tuple[str, ...]
    cells: tuple[int, ...]
    nullable: tuple[bool, ...]


@dataclass(frozen=True, eq=False)  # holds a frame
class CodedRows:
    """The private rows as public codes, one ``UInt32`` column per synthesized column (private)."""

    frame: Any  # polars.DataFrame


@dataclass(frozen=True)
class MeasuredMarginal:
    """One marginal OpenDP measured: its ``columns``, ``cells`` and each cell's ``noise_std``."""

    columns: tuple[str, ...]
    cells: int
    noise_std: float

    def to_dict(self) -> dict[str, Any]:
        """The marginal as a JSON-ready dict: ``columns`` (a list), ``cells``, ``noise_std``."""
        return {"columns": list(self.columns), "cells": self.cells, "noise_std": self.noise_std}


@dataclass(frozen=True, eq=False, kw_only=True)
class SynthesisDiagnostics(TableDiagnostics):
    """How a synthetic table was made (public and noisy only): ``rows`` synthesized, one-way
    ``noisy_counts`` (missing cell last), ``method`` (aim/mst), ``bins`` edges, the ``marginals``
    measured (one-way first) and their ``oneway_scale``, columns ``left_out``, the guarantee's
    ``epsilon`` and ``delta``, and AIM's ``workload`` (``None`` for MST)."""

    method: str
    workload: int | None
    columns: tuple[str, ...]
    bins: Mapping[str, list[float]]
    marginals: tuple[MeasuredMarginal, ...]
    oneway_scale: float
    left_out: tuple[str, ...]
    epsilon: float
    delta: float

    def released(self) -> str:
        """The synthetic rows and columns: ``"800 synthetic rows, 4 columns"``."""
        return f"{self.rows} synthetic rows, {len(self.columns)} columns"

    def summary_lines(self) -> list[str]:
        """What was released, from which marginals, and what it is for (the CLI prints them)."""
        measured = [m.columns for m in self.marginals if len(m.columns) > 1]
        scored = (
            ""
            if self.workload is None
            else f", chosen against every marginal of {self.workload} columns,"
        )
        shown = ", ".join("+".join(c) for c in measured[:12])
        more = f" and {len(measured) - 12} more" if len(measured) > 12 else ""
        return [
            f"released {self.rows} synthetic rows of {len(self.columns)} columns at "
            f"epsilon={self.epsilon:g}, delta={self.delta:g} (dp, one whole row added or "
            f"removed): {self.method.upper()} (OpenDP) measured the one-way marginals of every "
            f"column and{scored} {len(measured)} more: {shown or 'none'}{more}",
            "every column is private and no released row is a private row: for analyses of the "
            "whole table, not a row-aligned release ('attrpriv sanitize resample' redraws only "
            "the sensitive column and its proxies of every private row)",
            "left out (not synthesized): " + (", ".join(self.left_out) or "none"),
        ]

    def to_dict(self) -> dict[str, Any]:
        """Every field as JSON-ready values (each marginal as its dict)."""
        return super().to_dict() | {"marginals": [m.to_dict() for m in self.marginals]}


def neighbours() -> list[Any]:
    """OpenDP's neighbour distance: one row added or removed (``[Bound(per_group=1)]``)."""
    from opendp.extras.polars import Bound

    return [Bound(per_group=1)]


def _key(position: int) -> str:
    """The name OpenDP knows the column at ``position`` by (the schema's names may be
    anything, ``len`` included, which OpenDP reserves)."""
    return f"c{position}"


PRIOR_SLACK = 1e-9
"""How much below its budget (relative) each of MST's selection steps is kept, so that OpenDP
0.16's sum of them stays within the selection budget (see :func:`_mst_budgets_kept`)."""


@contextmanager
def _mst_budgets_kept() -> Iterator[None]:
    """Work around OpenDP's ``MST()`` overshooting its budget by an ulp, during a release.

    ``prior`` steps :data:`PRIOR_SLACK` lower, so every derived budget only shrinks and OpenDP's
    privacy map still bounds the release.
    """
    from opendp.extras.mbi import _mst

    module: Any = _mst  # its ``prior`` is a private name of OpenDP's
    original = getattr(module, "prior", None)
    if original is None:  # a later OpenDP: nothing to work around here
        yield
        return
    module.prior = _lower_prior
    try:
        yield
    finally:
        module.prior = original


def _lower_prior(value: float) -> float:
    """A float below ``value`` by a relative :data:`PRIOR_SLACK` and one ulp."""
    return float(np.nextafter(value * (1.0 - PRIOR_SLACK), -np.inf))


@contextmanager
def _global_numpy_seed(seed: int) -> Iterator[None]:
    """Private-PGM draws synthetic rows from numpy's global generator: seed it for the draw
    and put its state back after (post-processing only: no privacy noise is drawn there)."""
    state = np.random.get_state()  # noqa: NPY002 - the generator Private-PGM draws from
    np.random.seed(seed)  # noqa: NPY002
    try:
        yield
    finally:
        np.random.set_state(state)  # noqa: NPY002


class DPSynthesizer(TableSanitizer[CodedRows, SynthesisFacts, SynthesisPlan]):
    """Synthesize a whole table under row-level DP with OpenDP's AIM or MST.

    Guarantee: ``(epsilon, delta)``-DP for the unit ``dp/add-remove`` (one whole row; the row
    count too). Cells come from the schema alone; the noise is always OpenDP's own, inside its
    measurement. See docs/sanitize/synthesize.md.

    Parameters
    ----------
    method : {"aim", "mst"}, default "aim"
        AIM (adaptive, marginals of up to three columns) or MST (spanning tree, faster).
    epsilon : float, default 1.0
        The privacy loss of a release, > 0.
    delta : float, default 1e-6
        The delta of the ``(epsilon, delta)`` guarantee, in (0, 1).
    bins : int, default 10
        Bins of a numeric column with more than 20 values, >= 2.
    workload : {3, 2}, default 3
        AIM only: the marginals it is scored against and chooses among, every one of this many
        columns (3: AIM's own default; 2: several times faster). MST does not read it.
    rows : int or None, default None
        Rows of the synthetic table, >= 1; None: the model's noisy total.
    columns : list of str or None, default None
        At least two columns with a domain; None: every schema column not ``ignore``.
    seed : int, default 0
        Seeds the post-processing draws, >= 0; OpenDP's noise is never seeded.
    """

    sampler: NoiseSampler | None = None  # not a parameter: OpenDP's own, inside its measurement
    allow_nonprivate: bool = False

    _constraints: ClassVar[Mapping[str, Rule]] = {
        "method": one_of(METHODS),
        "epsilon": EPSILON,
        "delta": probability(),
        "bins": integer(2),
        "workload": Rule("2 or 3", _workload),
        "rows": optional(integer()),
        "columns": optional(COLUMN_NAMES),
        "seed": SEED,
    }

    def __init__(
        self,
        method: str = "aim",
        *,
        epsilon: float = 1.0,
        delta: float = 1e-6,
        bins: int = 10,
        workload: int = 3,
        rows: int | None = None,
        columns: Sequence[str] | None = None,
        seed: int = 0,
    ) -> None:
        self.method = method
        self.epsilon = epsilon
        self.delta = delta
        self.bins = bins
        self.workload = workload
        self.rows = rows
        self.columns = columns
        self.seed = seed

    # -- fit: public facts only -------------------------------------------------------------
    @validated
    def fit(self, schema: Schema) -> DPSynthesizer:
        """Read the public domains: which columns to synthesize, and their cells.

        Parameters
        ----------
        schema : Schema
            The public domains and roles; every synthesized column needs a domain.

        Returns
        -------
        DPSynthesizer
            ``self``, fitted.
        """
        _require_libraries()
        if not isinstance(schema, Schema):
            raise InputError(f"schema must be a Schema, got {type(schema).__name__}")
        columns = self._chosen(schema)
        if len(columns) < 2:
            raise InputError(
                f"a synthetic table needs at least two columns with a public domain, got "
                f"{list(columns)} (one column's counts: 'attrpriv release histograms')"
            )
        self.codes_ = dict(codebook(columns, schema, None, int(self.bins)))
        self.columns_ = columns
        self.left_out_ = tuple(c for c in schema.names if c not in columns)
        self.schema_ = schema
        self.inferred_ = schema.inferred_among(columns)
        self.fitted_for_ = self._structure()
        return self

    def _chosen(self, schema: Schema) -> tuple[str, ...]:
        if self.columns is None:
            return tuple(c.name for c in schema.columns
                         if c.domain is not None and c.role is not Role.IGNORE)  # fmt: skip
        for name in self.columns:
            if name not in schema:
                raise InputError(f"columns names {name!r}, which is not in the schema")
            if schema[name].domain is None:
                raise InputError(f"columns names {name!r}, which has no public domain")
        return tuple(self.columns)

    def _structure(self) -> tuple[Any, ...]:
        """The parameters that shape what ``fit`` decides (a release checks they still hold)."""
        columns = None if self.columns is None else tuple(self.columns)
        return (columns, self.bins)

    # -- release: the mechanism template ----------------------------------------------------
    _fitted: ClassVar[str] = "codes_"

    def _facts(self) -> SynthesisFacts:
        codes = [self.codes_[name] for name in self.columns_]
        cells, nullable = tuple(c.values for c in codes), tuple(c.nullable for c in codes)
        return SynthesisFacts(self.columns_, cells, nullable, inferred=self.inferred_)

    def _calibrate(self, public: SynthesisFacts, sampler: NoiseSampler) -> SynthesisPlan:
        """The budget and OpenDP's measurement (``sampler`` is recorded only: OpenDP draws)."""
        epsilon, delta = float(self.epsilon), float(self.delta)
        rho = rho_for(epsilon, delta)
        workload = int(self.workload) if self.method == "aim" else None
        measurement, scale = self._measurement(rho, public, workload)
        return SynthesisPlan(epsilon, delta, sampler, str(self.method), workload, public.columns,
                             rho, scale, measurement, inferred=public.inferred)  # fmt: skip

    def _measurement(
        self, rho: float, facts: SynthesisFacts, workload: int | None
    ) -> tuple[Any, float]:
        """OpenDP's measurement for ``rho``-zCDP over public cells, and the one-way scale
        (AIM scored against every marginal of ``workload`` columns; MST: ``None``)."""
        import opendp.prelude as dp
        from opendp.extras import mbi

        dp.enable_features("contrib")
        series = []
        for position, nullable in enumerate(facts.nullable):
            atom = dp.atom_domain(T="u32")
            element = dp.option_domain(atom) if nullable else atom
            series.append(dp.series_domain(_key(position), element))
        keys = {_key(p): list(range(cells)) for p, cells in enumerate(facts.cells)}
        algorithm = mbi.MST() if workload is None else mbi.AIM(queries=workload)
        measurement, scale, _ = mbi.make_contingency_table(
            dp.lazyframe_domain(series), dp.frame_distance(dp.symmetric_distance()),
            dp.zero_concentrated_divergence(), d_in=neighbours(), d_out=rho, keys=keys,
            algorithm=algorithm,
        )  # fmt: skip
        assert scale is not None  # every column keyed: OpenDP measures the one-way marginals
        return measurement, float(scale)

    def _measure(self, data: pd.DataFrame) -> tuple[CodedRows, SynthesisFacts]:
        import polars as pl
        import pyarrow as pa

        facts = self._public_facts()
        frame = self._frame_with(data, self.columns_, "it is synthesized")
        coded = {}
        for position, name in enumerate(self.columns_):
            code = self.codes_[name]
            codes = code.encode(frame[name], "the private data")  # refuses values outside
            absent = codes == code.missing
            coded[_key(position)] = pa.array(codes.astype(np.uint32), type=pa.uint32(),
                                             mask=absent)  # fmt: skip
        return CodedRows(pl.DataFrame(pa.table(coded))), facts

    def record(self, plan: SynthesisPlan) -> PrivacyRecord:
        """The guarantee of a release with ``plan``.

        Parameters
        ----------
        plan : SynthesisPlan
            The plan of the release.

        Returns
        -------
        PrivacyRecord
            ``(epsilon, delta)``-DP and ``rho``-zCDP under ``dp/add-remove``.
        """
        binned = [c for c in plan.columns if self.codes_[c].levels is None]
        own = [
            "every cell is the schema's: one per category or integer value"
            + (f", equal-width bins over the schema's range for {binned}" if binned else "")
            + "; no private value decides a cell, and nothing but the private rows is read",
            "the guarantee is OpenDP's: its privacy map of the contingency-table measurement "
            f"(one-way marginals, then {plan.method.upper()}'s noisy selections and measured "
            f"marginals, adaptively composed) bounds the release by rho={plan.rho:.6g}-zCDP for "
            "one row added or removed, converted to (epsilon, delta); the ledger is charged "
            "all of it, even where the algorithm stops early",
            "every column is private, and no synthetic row is a private row: the table serves "
            "analyses of the whole population, not a row-aligned release",
        ]
        record = self._record(
            plan,
            mechanism=f"dp-synthetic-data-{plan.method}",
            protects=(
                "each private row as a whole, every column of it, and whether it is in the "
                "table at all (add/remove: neighbours differ by one row; the number of rows is "
                "protected too)"
            ),
            sensitivity=SENSITIVITY,
            noise={"distribution": "discrete gaussian", "rho": plan.rho,
                   "oneway_scale": plan.oneway_scale,
                   "per": f"cell of the one-way marginal of each of {len(plan.columns)} columns "
                   "(half of rho); the rest of rho on the marginals the algorithm selects by "
                   "noisy max and measures (the diagnostics' marginals give their noise)",
                   "algorithm": ALGORITHMS[plan.method],
                   "implementation": "opendp.extras.mbi.make_contingency_table (OpenDP "
                   f"{_version('opendp')}) with Private-PGM (mbi {_version('mbi')})",
                   "post_processing": "Private-PGM fits a graphical model to the noisy "
                   "marginals; the synthetic rows are drawn from it, a numeric value uniform in "
                   "its drawn bin, a missing value the schema does not allow redrawn from the "
                   "model's counts of the column"},
            unit=PrivacyUnit("dp", "add-remove"),
            assumptions=own,
        )  # fmt: skip
        return replace(record, rho=plan.rho)

    def _add_noise(self, private: CodedRows, plan: SynthesisPlan) -> Any:
        """OpenDP's measurement on the coded rows: every noise draw, selection and the model
        fit happen inside it; a ``ContingencyTable`` comes out."""
        if plan.method != "mst":
            return plan.measurement(private.frame.lazy())
        with _mst_budgets_kept():
            return plan.measurement(private.frame.lazy())

    def _post_process(self, noisy: Any) -> pd.DataFrame:
        """The synthetic rows, drawn from the fitted model (post-processing)."""
        with _global_numpy_seed(int(self.seed)):
            drawn = noisy.model.synthetic_data(self.rows).df
        rng = np.random.default_rng(int(self.seed))
        table = {}
        for position, name in enumerate(self.columns_):
            code = self.codes_[name]
            codes = np.asarray(drawn[_key(position)], dtype=np.int64)
            if not code.nullable:
                codes = _without_missing(codes, code, noisy.project((_key(position),)), rng)
            table[name] = typed_values(code.decode(codes, rng), self.schema_, name)
        frame = pd.DataFrame(table, columns=list(self.columns_))
        # the model's draw comes grouped by cell: rows in a random order read as a sample
        return frame.iloc[rng.permutation(len(frame))].reset_index(drop=True)

    def _accuracy(self, plan: SynthesisPlan, values: pd.DataFrame) -> Accuracy:
        scales = {name: pd.Series(plan.oneway_scale, index=_labels(self.codes_[name]))
                  for name in plan.columns}  # fmt: skip
        return Accuracy.of_scales(  # the discrete Gaussian is sub-Gaussian
            "gaussian", scales, of="every cell of the one-way marginals measured first"
        )

    def _diagnostics(
        self, public: SynthesisFacts, plan: SynthesisPlan, noisy: Any
    ) -> SynthesisDiagnostics:
        names = {_key(p): n for p, n in enumerate(plan.columns)}
        marginals = tuple(
            MeasuredMarginal(tuple(names[c] for c in clique),
                             int(np.prod([self.codes_[names[c]].size for c in clique])),
                             float(m.stddev))
            for clique, group in noisy.marginals.by_clique.items()
            for m in group
        )  # fmt: skip
        counts = {}
        for key, name in names.items():
            first = noisy.marginals.by_clique[(key,)][0]  # the one-way step comes first
            counts[name] = pd.Series(np.asarray(first.noisy_measurement, dtype=np.float64),
                                     index=_labels(self.codes_[name]), name=name)  # fmt: skip
        bins = {c: [float(e) for e in code.edges]
                for c, code in self.codes_.items() if code.edges is not None}  # fmt: skip
        return SynthesisDiagnostics(
            rows=max(1, int(self.rows or noisy.model.total)),
            noisy_counts=counts,
            method=plan.method,
            workload=plan.workload,
            columns=plan.columns,
            bins=bins,
            marginals=marginals,
            oneway_scale=plan.oneway_scale,
            left_out=self.left_out_,
            epsilon=plan.epsilon,
            delta=plan.delta,
        )


def _require_libraries() -> None:
    """One line instead of a traceback when the ``sanitize`` extra is not installed."""
    try:
        import mbi  # noqa: F401
        import polars  # noqa: F401
    except ImportError as error:
        raise InputError(
            f"DP synthetic data needs {error.name or 'polars and mbi'} (OpenDP's AIM and MST run "
            "on them): pip install 'attrpriv[sanitize]'"
        ) from None


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:  # pragma: no cover - imported, so installed
        return "unknown"


def _labels(code: ColumnCode) -> list[str]:
    """A name for each cell of ``code``, in the order OpenDP keys them (the missing cell,
    which OpenDP adds to every column, last)."""
    if code.levels is not None:
        labels = [str(level) for level in code.levels]
    else:
        assert code.edges is not None
        bounds = [code.lower, *code.edges, code.upper]
        labels = [f"{'[' if i == 0 else '('}{bounds[i]:g}, {bounds[i + 1]:g}]"
                  for i in range(len(bounds) - 1)]  # fmt: skip
    return [*labels, "missing"]


def _without_missing(
    codes: np.ndarray, code: ColumnCode, counts: Any, rng: np.random.Generator
) -> np.ndarray:
    """``codes`` with OpenDP's missing cell (``code.values``) of a column that may not be
    missing redrawn from the model's counts of the column's other cells."""
    missing = np.flatnonzero(codes >= code.values)
    if missing.size == 0:
        return codes
    weights = np.clip(np.asarray(counts, dtype=np.float64)[: code.values], 0.0, None)
    if weights.sum() <= 0:
        weights = np.ones(code.values)
    out = codes.copy()
    out[missing] = rng.choice(code.values, size=missing.size, p=weights / weights.sum())
    return out


__all__ = [
    "METHODS",
    "DPSynthesizer",
    "MeasuredMarginal",
    "SynthesisDiagnostics",
    "SynthesisFacts",
    "SynthesisPlan",
    "neighbours",
]
