"""The project file (``attrpriv.yaml``): the data, what is protected with its budget, the steps.

Read once, checked at the boundary: every error is one line naming the dotted key
(``steps.release[1].epsilon``) and what was expected. See docs/project.md.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from attrpriv._checks import (
    DELTA,
    EPSILON,
    FLAG,
    NON_NEGATIVE,
    SEED,
    Rule,
    instance_of,
    integer,
    names,
    one_of,
    optional,
    probability,
)
from attrpriv._yaml import load_yaml
from attrpriv.assess.choices import ATTACKS, FLAG_ON, MODEL_CHOICES
from attrpriv.assess.mitigation.choice import CHOICES
from attrpriv.errors import InputError

RELEASE_MECHANISMS = ("histograms",)
"""What a ``release`` step publishes: Laplace histograms of categorical columns."""

SANITIZE_METHODS = ("block", "mst", "aim")
"""How a ``sanitize`` step shares the table: block resampling of the sensitive column and its
proxies, or whole-table DP synthetic data."""

TEXT = instance_of(str, "a text")


def _workload(value: Any, name: str) -> int:
    if value not in (2, 3) or isinstance(value, bool):
        raise InputError(f"{name} must be 2 or 3 (AIM's marginals of that many columns)")
    return int(value)


WORKLOAD = Rule("2 or 3", _workload)
REQUIRED = object()
"""The default of a key that must be given."""


@dataclass(frozen=True)
class BudgetSpec:
    """A privacy budget: ``epsilon`` and ``delta`` (None: pure)."""

    epsilon: float
    delta: float | None = None


@dataclass(frozen=True)
class DataSpec:
    """Where the rows come from: a bundled ``source`` name or a CSV/Parquet path (relative to
    the project file), its ``schema`` file, a row selection (``where``, ``row_range``, a
    ``rows`` sample drawn with ``seed``) and whether an inferred schema is accepted."""

    source: str
    schema: str | None = None
    where: str | None = None
    row_range: str | None = None
    rows: int | None = None
    seed: int = 0
    accept_inferred: bool = False


@dataclass(frozen=True)
class ProtectSpec:
    """The budgets of the project's ledger: per ``row`` (``dp/add-remove``) and per protected
    column (``dp/substitute:<column>``), and the ``ledger`` file (None: in the state folder)."""

    ledger: str | None = None
    row: BudgetSpec | None = None
    columns: Mapping[str, BudgetSpec] = field(default_factory=dict)


@dataclass(frozen=True)
class AssessSpec:
    """The assessment: the ``model`` trained on ``target``, the feature sets, attacks, flag rule,
    repeats, the sensitive columns and a sample of ``max_rows``."""

    target: str
    model: str = "hgb"
    feature_sets: str = "singles"
    attacks: tuple[str, ...] = ("membership", "attribute")
    threshold: float = 0.05
    flag_on: str = "estimate"
    repeats: int = 3
    max_rows: int | None = None
    sensitive: tuple[str, ...] = ()
    seed: int = 0


@dataclass(frozen=True)
class MitigateSpec:
    """The mitigation loop: the ``strategies`` (CLI forms), how the step is chosen, the test
    utility the user accepts to lose and the most steps."""

    strategies: tuple[str, ...]
    choose: str = "best"
    max_utility_loss: float | None = None
    max_steps: int = 5

    @property
    def draws_noise(self) -> bool:
        """True when a strategy may draw local-DP noise (an ``ldp`` one), charged draw by draw."""
        return any(s.split(":")[0].strip().lower() == "ldp" for s in self.strategies)


@dataclass(frozen=True)
class ReleaseSpec:
    """One release of statistics: its ``name``, ``mechanism``, ``columns``, ``epsilon`` and the
    neighbouring relation."""

    name: str
    columns: tuple[str, ...]
    epsilon: float
    mechanism: str = "histograms"
    neighbours: str = "add-remove"


@dataclass(frozen=True)
class SanitizeSpec:
    """One sanitized table: its ``name``, ``method``, the ``sensitive`` column (block), the
    guarantee and the method's options."""

    name: str
    method: str
    epsilon: float
    delta: float = 1e-6
    sensitive: str | None = None
    proxies: tuple[str, ...] | None = None
    keep: tuple[str, ...] = ()
    workload: int = 2
    seed: int = 0


@dataclass(frozen=True)
class ProjectSpec:
    """A whole project: its ``name``, the folder paths are relative to (``base``), the data,
    the protection and the steps (each optional; at least one)."""

    name: str
    base: Path
    data: DataSpec
    protect: ProtectSpec
    state: str | None = None
    assess: AssessSpec | None = None
    mitigate: MitigateSpec | None = None
    release: tuple[ReleaseSpec, ...] = ()
    sanitize: tuple[SanitizeSpec, ...] = ()

    @property
    def state_folder(self) -> Path:
        """Where the steps' outputs are kept (default ``<file stem>.state`` beside the file)."""
        return self.base / (self.state or f"{self.name}.state")

    @property
    def ledger_path(self) -> Path:
        """The project's budget ledger (default ``ledger.sqlite`` in the state folder)."""
        given = self.protect.ledger
        return self.state_folder / "ledger.sqlite" if given is None else self.base / given

    def step_ids(self) -> list[str]:
        """The steps in the order they run: ``assess``, ``mitigate``, ``release:NAME``...,
        ``sanitize:NAME``..."""
        ids = ["assess"] if self.assess else []
        ids += ["mitigate"] if self.mitigate else []
        ids += [f"release:{r.name}" for r in self.release]
        return ids + [f"sanitize:{s.name}" for s in self.sanitize]

    def step(self, step_id: str) -> Any:
        """The spec of step ``step_id``."""
        kind, _, name = step_id.partition(":")
        if not name:
            return getattr(self, kind)
        found = {s.name: s for s in getattr(self, kind)}
        return found[name]

    def digest(self, step_id: str) -> str:
        """What a finished step's outputs depend on: the data, the step's own spec and, for
        mitigate, the assessment's (sha256 of their canonical JSON)."""
        parts: dict[str, Any] = {"data": asdict(self.data), "step": asdict(self.step(step_id))}
        if step_id == "mitigate":
            parts["assess"] = asdict(self.step("assess"))
        text = json.dumps(parts, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()


# -- reading ----------------------------------------------------------------------------------


def load_project(path: str | Path) -> ProjectSpec:
    """Read and check a project file.

    Parameters
    ----------
    path : str or pathlib.Path
        The YAML file; paths inside it are relative to its folder.

    Returns
    -------
    ProjectSpec
        The checked project.

    Raises
    ------
    InputError
        If the file cannot be read or parsed, or a key is unknown, missing or invalid (the
        message names the dotted key).
    """
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read the project file {str(file)!r}: {exc.strerror}") from None
    try:
        raw = load_yaml(text)
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = "" if where is None else f" line {where.line + 1}"
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(f"{file.name}{line}: not valid YAML ({problem})") from None
    return parse_project(raw, base=file.resolve().parent, stem=file.stem)


def parse_project(raw: Any, *, base: Path, stem: str = "attrpriv") -> ProjectSpec:
    """A :class:`ProjectSpec` from the parsed YAML ``raw`` (see :func:`load_project`)."""
    top = _mapping(raw, "the project file")
    values = _section(top, "", {
        "name": (optional(TEXT), None), "data": (_any, REQUIRED), "protect": (_any, None),
        "state": (optional(TEXT), None), "steps": (_any, REQUIRED),
    })  # fmt: skip
    data = DataSpec(**_data(values["data"], "data"))
    protect = _protect(values["protect"], "protect")
    steps = _mapping(values["steps"], "steps")
    known = {"assess", "mitigate", "release", "sanitize"}
    _known_keys(steps, known, "steps")
    if not steps:
        raise InputError(f"steps must name at least one of {sorted(known)}")
    assess = None if steps.get("assess") is None else _assess(steps["assess"], "steps.assess")
    mitigate = None
    if steps.get("mitigate") is not None:
        if assess is None:
            raise InputError("steps.mitigate needs steps.assess (it mitigates what that flags)")
        mitigate = MitigateSpec(**_section(_mapping(steps["mitigate"], "steps.mitigate"),
                                           "steps.mitigate", MITIGATE_KEYS))  # fmt: skip
    release = tuple(ReleaseSpec(**v) for v in _items(steps.get("release"), "steps.release",
                                                     RELEASE_KEYS))  # fmt: skip
    tables = _items(steps.get("sanitize"), "steps.sanitize", SANITIZE_KEYS)
    sanitize = tuple(_sanitize(v, f"steps.sanitize[{i}]") for i, v in enumerate(tables))
    spec = ProjectSpec(values["name"] or stem, base, data, protect, values["state"], assess,
                       mitigate, release, sanitize)  # fmt: skip
    _check_covered(spec)
    return spec


Check = Callable[[Any, str], Any]
Keys = Mapping[str, tuple[Rule | Check, Any]]


def _any(value: Any, name: str) -> Any:
    return value


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise InputError(f"{where} must be a mapping of keys to values, got {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    return "nothing" if value is None else type(value).__name__


def _known_keys(raw: Mapping[str, Any], known: set[str], where: str) -> None:
    for key in raw:
        if key not in known:
            close = difflib.get_close_matches(str(key), sorted(known), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            at = f"{where}." if where else ""
            raise InputError(
                f"{at}{key} is not a key of {where or 'the project file'}{hint}; expected one "
                f"of {sorted(known)}"
            )


def _section(raw: Mapping[str, Any], where: str, keys: Keys) -> dict[str, Any]:
    """Each key of ``keys`` checked by its rule (its default when absent), unknown keys refused."""
    _known_keys(raw, set(keys), where)
    out = {}
    for key, (rule, default) in keys.items():
        dotted = f"{where}.{key}" if where else key
        if key not in raw:
            if default is REQUIRED:
                raise InputError(f"{dotted} is missing")
            out[key] = default
            continue
        out[key] = rule(raw[key], dotted)
    return out


def _items(raw: Any, where: str, keys: Keys) -> list[dict[str, Any]]:
    """A list of sections with distinct ``name`` keys."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise InputError(f"{where} must be a list of steps, got {_kind(raw)}")
    out = [_section(_mapping(item, f"{where}[{i}]"), f"{where}[{i}]", keys)
           for i, item in enumerate(raw)]  # fmt: skip
    seen: set[str] = set()
    for i, item in enumerate(out):
        if item["name"] in seen:
            raise InputError(f"{where}[{i}].name {item['name']!r} is used twice; names differ")
        seen.add(item["name"])
    return out


def _budget(value: Any, where: str) -> BudgetSpec:
    raw = _mapping(value, where)
    found = _section(raw, where, {"epsilon": (EPSILON, REQUIRED), "delta": (optional(DELTA), None)})
    return BudgetSpec(found["epsilon"], found["delta"])


def _data(value: Any, where: str) -> dict[str, Any]:
    if isinstance(value, str):
        value = {"source": value}
    return _section(_mapping(value, where), where, {
        "source": (TEXT, REQUIRED), "schema": (optional(TEXT), None),
        "where": (optional(TEXT), None), "row_range": (optional(TEXT), None),
        "rows": (optional(integer(1)), None), "seed": (SEED, 0),
        "accept_inferred": (FLAG, False),
    })  # fmt: skip


def _protect(value: Any, where: str) -> ProtectSpec:
    if value is None:
        return ProtectSpec()
    raw = _section(_mapping(value, where), where, {
        "ledger": (optional(TEXT), None), "row": (_any, None), "columns": (_any, None),
    })  # fmt: skip
    row = None if raw["row"] is None else _budget(raw["row"], f"{where}.row")
    columns = {}
    for column, budget in _mapping(raw["columns"] or {}, f"{where}.columns").items():
        columns[str(column)] = _budget(budget, f"{where}.columns.{column}")
    return ProtectSpec(raw["ledger"], row, columns)


def _assess(value: Any, where: str) -> AssessSpec:
    found = _section(_mapping(value, where), where, {
        "target": (TEXT, REQUIRED), "model": (one_of(MODEL_CHOICES), "hgb"),
        "feature_sets": (TEXT, "singles"), "attacks": (names(), ("membership", "attribute")),
        "threshold": (probability(open_interval=False), 0.05),
        "flag_on": (one_of(FLAG_ON), "estimate"), "repeats": (integer(1), 3),
        "max_rows": (optional(integer(40)), None), "sensitive": (names(single=True), ()),
        "seed": (SEED, 0),
    })  # fmt: skip
    for i, attack in enumerate(found["attacks"]):
        one_of(ATTACKS)(attack, f"{where}.attacks[{i}]")
    return AssessSpec(**found)


MITIGATE_KEYS: Keys = {
    "strategies": (names(), REQUIRED), "choose": (one_of(CHOICES), "best"),
    "max_utility_loss": (optional(NON_NEGATIVE), None), "max_steps": (integer(1), 5),
}  # fmt: skip
RELEASE_KEYS: Keys = {
    "name": (TEXT, REQUIRED), "mechanism": (one_of(RELEASE_MECHANISMS), "histograms"),
    "columns": (names(), REQUIRED), "epsilon": (EPSILON, REQUIRED),
    "neighbours": (one_of(("add-remove", "substitute")), "add-remove"),
}  # fmt: skip
SANITIZE_KEYS: Keys = {
    "name": (TEXT, REQUIRED), "method": (one_of(SANITIZE_METHODS), REQUIRED),
    "epsilon": (EPSILON, REQUIRED), "delta": (probability(), 1e-6),
    "sensitive": (optional(TEXT), None), "proxies": (optional(names()), None),
    "keep": (names(), ()), "workload": (WORKLOAD, 2), "seed": (SEED, 0),
}  # fmt: skip


def _sanitize(found: dict[str, Any], where: str) -> SanitizeSpec:
    if found["method"] == "block" and found["sensitive"] is None:
        raise InputError(f"{where}.sensitive is missing (method block redraws that column)")
    if found["method"] != "block":
        for key in ("sensitive", "proxies"):
            if found[key] is not None:
                raise InputError(
                    f"{where}.{key} is an option of method block, not {found['method']}"
                )
    return SanitizeSpec(**found)


def _check_covered(spec: ProjectSpec) -> None:
    """Every release and sanitized table needs a budget in ``protect`` that covers it."""
    noisy = spec.mitigate is not None and spec.mitigate.draws_noise
    if (spec.release or spec.sanitize or noisy) and not (spec.protect.row or spec.protect.columns):
        raise InputError(
            "protect has no budget: add protect.row (each row) or protect.columns.<name> (a "
            "column's values): the project's releases are charged to it"
        )
