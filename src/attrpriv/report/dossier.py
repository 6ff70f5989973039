"""HTML dossier of a project: one page from the files its finished steps stored.

The page is rendered from the state folder's JSON files and the project's ledger only, never
from live objects or data rows. Every value shown in a table cell names where it was read:

``data-json="<source>|<document>|<pointer>"`` and ``data-format="<format>"``

- ``<source>``: a step id (``assess``, ``mitigate``, ``release:NAME``, ``sanitize:NAME``), or
  ``ledger``;
- ``<document>``: for a step, a file in its folder (``report.json``, ``final.json``,
  ``model.json``, ``release.json``, ``DONE.json``); for the ledger, ``summary``
  (``BudgetLedger.summary().to_dict()``) or ``entries`` (see :func:`ledger_documents`);
- ``<pointer>``: an RFC 6901 JSON pointer into that document (``~`` written ``~0``, ``/``
  written ``~1``);
- ``<format>``: a key of :data:`FORMATS`; the cell's text is ``formatted(value, format)``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attrpriv.assess.scoring import FLAG_REASONS
from attrpriv.dp.record import PrivacyRecord
from attrpriv.dp.units import PART, PrivacyUnit
from attrpriv.report._page import _environment, render
from attrpriv.report._words import delta_words, epsilon_example, plain, plural
from attrpriv.report.release import _fmt, _guarantee, unit_meaning, unit_secret

if TYPE_CHECKING:
    from attrpriv.project import Project
    from attrpriv.project.spec import DataSpec
    from attrpriv.project.state import Done

__all__ = ["FORMATS", "Cell", "Stored", "formatted", "ledger_documents", "render_dossier_html"]

TEMPLATE = "dossier.html.j2"
SEPARATOR = "|"
"""Between the source, the document and the pointer of a ``data-json`` attribute."""
NUMBERS = frozenset({"epsilon", "delta", "rho (zCDP)"})
"""The rows of the release page's guarantee table shown here as traced cells instead."""
ROW = "dp/add-remove"
"""The unit of the project's row budget, whose epsilon the page works out."""
_FILTERS = _environment().filters
_LISTED = re.compile(r"\[((?:'[^'\[\]]*'(?:, )?)+)\]")


def _set(value: Any) -> str:
    return "+".join(map(str, value)) or "the model"


def _flagged(flags: Mapping[str, Any]) -> str:
    return "yes" if any(flags.get(reason, False) for reason in FLAG_REASONS) else "no"


FORMATS: dict[str, Callable[[Any], str]] = {
    "num": _FILTERS["num"],  # the pages' 3 decimals (risk scores, utility)
    "ci": _FILTERS["ci"],  # [low, high], 3 decimals each
    "g6": _fmt,  # 6 significant digits, as the release page (epsilon, counts)
    "g3": lambda v: f"{float(v):.3g}",  # delta, as the ledger page
    "interval": lambda v: f"[{_fmt(v[0])}, {_fmt(v[1])}]",
    "int": lambda v: str(int(v)),
    "ids": lambda v: ", ".join(str(int(i)) for i in v) or "-",
    "set": _set,
    "flagged": _flagged,
    "text": str,
    "plain": plain,
    "when": _FILTERS["when"],
}
"""How a cell's value becomes its text, by the name in its ``data-format``."""
NULLS = {"set": "the model"}
"""What a null shows in a cell of these formats (``"-"`` in the others)."""


def formatted(value: Any, fmt: str) -> str:
    """A stored value as its cell shows it: ``FORMATS[fmt](value)``, a null as :data:`NULLS` says.

    Parameters
    ----------
    value : Any
        The value the cell's pointer finds.
    fmt : str
        A key of :data:`FORMATS`.

    Returns
    -------
    str
        The cell's text.
    """
    return NULLS.get(fmt, "-") if value is None else FORMATS[fmt](value)


def pointer(path: Sequence[str | int]) -> str:
    """The RFC 6901 pointer of a path of keys and indexes (``()`` -> ``""``)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


@dataclass(frozen=True)
class Cell:
    """One shown value: where it was read (``ref``, the ``data-json``), how it was formatted
    (``fmt``) and its ``text``."""

    ref: str
    fmt: str
    text: str


class Stored:
    """One stored JSON document: its ``source`` (a step id, or ``ledger``), its ``document``
    (the file name) and its parsed ``data``."""

    def __init__(self, source: str, document: str, data: Any) -> None:
        self.source = source
        self.document = document
        self.data = data

    @classmethod
    def read(cls, source: str, path: Path) -> Stored | None:
        """The JSON file ``path`` of step ``source`` (None when it is absent).

        Parameters
        ----------
        source : str
            The step id.
        path : pathlib.Path
            The file, in the step's folder.

        Returns
        -------
        Stored or None
            The parsed document.
        """
        if not path.is_file():
            return None
        return cls(source, path.name, json.loads(path.read_text(encoding="utf-8")))

    def at(self, *path: str | int) -> Any:
        """The value at ``path`` (keys and indexes), None past a null or a missing key.

        Parameters
        ----------
        *path : str or int
            The keys and list indexes, outermost first.

        Returns
        -------
        Any
            The value found.
        """
        value = self.data
        for key in path:
            if isinstance(value, Mapping):
                value = value.get(key)
            elif value is not None:
                value = value[key]
        return value

    def cell(self, *path: str | int, fmt: str = "num") -> Cell:
        """The cell of the value at ``path``, formatted with ``fmt`` (a key of :data:`FORMATS`).

        Parameters
        ----------
        *path : str or int
            The keys and list indexes, outermost first; a null on the way ends the pointer there.
        fmt : str, default "num"
            How the value is shown.

        Returns
        -------
        Cell
            The value's text with its ``data-json`` reference.

        Raises
        ------
        KeyError, IndexError
            If the document has nothing at ``path``.
        """
        value, found = self.data, list(path)
        for depth, key in enumerate(path):
            if value is None:
                found = found[:depth]
                break
            value = value[key]
        ref = SEPARATOR.join((self.source, self.document, pointer(found)))
        return Cell(ref, fmt, formatted(value, fmt))


def ledger_documents(path: Path) -> dict[str, Any]:
    """The ledger's two documents as the page reads them.

    Parameters
    ----------
    path : pathlib.Path
        The ledger file.

    Returns
    -------
    dict of str to Any
        ``summary``: ``BudgetLedger.summary().to_dict()``; ``entries``: per charged release,
        its ``id``, ``created``, ``label``, ``budgeted`` and ``record`` (its ``to_dict()``).
    """
    from attrpriv.dp.ledger import BudgetLedger

    book = BudgetLedger(path, create=False)
    entries = [{"id": e.id, "created": e.created, "label": e.label, "budgeted": e.budgeted,
                "record": e.record.to_dict()} for e in book.entries()]  # fmt: skip
    return {"summary": book.summary().to_dict(), "entries": entries}


def _words(text: str) -> str:
    """A stored sentence in words: no ``name=`` parameters, no ``['a', 'b']`` lists."""
    return _LISTED.sub(lambda found: found.group(1).replace("'", ""), plain(text))


def _source(data: DataSpec) -> str:
    """Where the rows come from, in words (the settings given)."""
    given = {k: v for k, v in asdict(data).items() if v not in (None, False) and k != "seed"}
    return _words(plain(given))


def _anchor(step: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", step)


# -- the sections -----------------------------------------------------------------------------


def _risk(steps: Sequence[Mapping[str, Any]], mitigation: Stored, k: int) -> dict[str, Any]:
    """Step ``k``'s risk: the total excess, the largest score and that set's CI."""
    step = steps[k]
    scores: Mapping[str, float] = step.get("scores") or {}
    largest = max(scores, key=lambda s: scores[s], default=None)
    where = ("mitigation", "steps", k)
    ci = None
    if largest is not None and largest in (step.get("scores_ci") or {}):
        ci = mitigation.cell(*where, "scores_ci", largest, fmt="ci")
    return {"excess": mitigation.cell(*where, "total_excess"),
            "largest": mitigation.cell(*where, "max_score"), "set": largest,
            "ci": ci}  # fmt: skip


def _mitigation(report: Stored) -> list[dict[str, Any]]:
    """Each step of the mitigation loop after the assessment, with the risk before and after."""
    steps = report.at("mitigation", "steps") or []
    return [{"k": k, "step": steps[k], "before": _risk(steps, report, k - 1),
             "after": _risk(steps, report, k)} for k in range(1, len(steps))]  # fmt: skip


def _counts(release: Stored) -> list[dict[str, Any]]:
    """The non-negative noisy counts (or, without them, the released values) with intervals."""
    base: tuple[str, ...] = ("non_negative",) if release.at("non_negative") else ()
    intervals = release.at(*base, "intervals") if base else None
    rows = []
    for name, value in release.at(*base, "values").items():
        paths = [(name, level) for level in value] if isinstance(value, Mapping) else [(name,)]
        for path in paths:
            known = intervals
            for key in path:
                known = known.get(key) if isinstance(known, Mapping) else None
            rows.append({
                "name": name, "level": path[1] if len(path) > 1 else "",
                "count": release.cell(*base, "values", *path, fmt="g6"),
                "interval": None if known is None
                else release.cell(*base, "intervals", *path, fmt="interval"),
            })  # fmt: skip
    return rows


def _released(release: Stored) -> dict[str, Any]:
    """What a release or a sanitized table shows of its guarantee, in words and numbers."""
    record = PrivacyRecord.from_dict(release.at("record"))
    words = [epsilon_example(record.epsilon, *unit_secret(record.unit)),
             delta_words(record.delta)]  # fmt: skip
    return {
        "step": release.source,
        "anchor": _anchor(release.source),
        "stored": release,
        "protects": _words(record.protects),
        "words": " ".join(filter(None, words)),
        "guarantee": [(k, _words(v)) for k, v in _guarantee(record) if k not in NUMBERS],
        "rho": record.rho is not None,
        "assumptions": [_words(a) for a in record.assumptions],
        "summary": [_words(line) for line in release.at("summary") or []],
        "counts": _counts(release) if release.source.startswith("release:") else [],
        "confidence": f"{float(release.at('accuracy', 'confidence') or 0.95):.0%}",
        "clipped": _clipped(release),
        "rows": _maybe(release, "diagnostics", "rows", fmt="int"),
    }


def _maybe(stored: Stored, *path: str | int, fmt: str) -> Cell | None:
    """The cell at ``path``, or None when the document has nothing there."""
    return None if stored.at(*path) is None else stored.cell(*path, fmt=fmt)


def _clipped(release: Stored) -> list[tuple[str, Cell]]:
    """Per histogram, the amount that clipping the counts at 0 added to its total."""
    clipped = release.at("non_negative", "clipped")
    if isinstance(clipped, Mapping):
        return [(name, release.cell("non_negative", "clipped", name, fmt="g6")) for name in clipped]
    if clipped is None:
        return []
    return [("all counts", release.cell("non_negative", "clipped", fmt="g6"))]


def _protected(project: Project, summary: Stored | None) -> list[dict[str, Any]]:
    """Each budget of the project file, with its unit's row in the ledger summary."""
    protect = project.spec.protect
    wanted = [PrivacyUnit.parse(ROW)] if protect.row else []
    wanted += [PrivacyUnit("dp", PART + column) for column in protect.columns]
    units = [] if summary is None else [u["unit"] for u in summary.at("units")]
    return [{"unit": unit.key, "meaning": unit_meaning(unit),
             "index": units.index(unit.key) if unit.key in units else None}
            for unit in wanted]  # fmt: skip


def _provenance(project: Project, done: Mapping[str, Done | None]) -> list[dict[str, Any]]:
    """Per step: its folder, its DONE.json and whether its outputs still have their sha256."""
    out = []
    for step in project.spec.step_ids():
        folder = project.state.step_folder(step)
        stored = Stored.read(step, folder / "DONE.json")
        checked = done[step]
        if stored is None:
            status = "not run yet"
        elif checked is None:
            status = "its outputs changed (or are gone) since it finished: it runs again"
        elif checked.digest != project.spec.digest(step):
            status = "finished with another spec"
        else:
            status = "finished; every output has its sha256"
        out.append({"step": step, "folder": str(folder), "done": stored, "status": status})
    return out


def _meaning(project: Project, ledger: Mapping[str, Any] | None, found: Mapping[str, Any]) -> str:
    """The page's "What this means" paragraph."""
    spec = project.spec
    finished = len(spec.step_ids()) - len(found["unfinished"])
    sentences = [
        f"This dossier gathers what project {spec.name} did with the data {spec.data.source}, "
        f"read back from the files its steps stored: {finished} of "
        f"{plural(len(spec.step_ids()), 'step')} finished.",
    ]
    assess = found["assess"]
    if assess is not None:
        sets = assess.at("feature_sets")
        flagged = sum(_flagged(s["flags"]) == "yes" for s in sets)
        sentences.append(
            f"The assessment measured the risk of {plural(len(sets), 'feature set')} and flagged "
            f"{flagged}; a risk score is measured by attacks, not bounded, so it has no epsilon."
        )
    spent = len(found["releases"]) + len(found["sanitized"])
    sentences.append(
        f"The project's ledger was charged for {plural(spent, 'release')} of statistics or "
        "tables; it refuses any release over its privacy unit's budget, and spends add up "
        "within a unit, never across units."
    )
    budgets = {u["unit"]: u["budget"]["epsilon"] for u in (ledger or {}).get("units", [])
               if u["budget"] is not None}  # fmt: skip
    if spec.protect.row is not None:  # the ledger's, or the project file's before it is made
        budgets.setdefault(ROW, spec.protect.row.epsilon)
    key = ROW if ROW in budgets else max(budgets, key=budgets.__getitem__, default=None)
    if key is None:
        sentences.append("No budget is set, so nothing here has an epsilon yet.")
    else:
        sentences.append(epsilon_example(budgets[key], *unit_secret(PrivacyUnit.parse(key))))
    sentences.append(
        "Each number in a table below names the stored file and the place in it that it was "
        "read from, and no data row is shown."
    )
    return " ".join(sentences)


def render_dossier_html(project: Project, *, title: str | None = None) -> str:
    """The project's dossier as one self-contained HTML page, from its stored files only.

    Sections: the project, the assessment, the mitigation, each release, each sanitized
    table, the budget and the provenance of every step; a table of contents links them. Every
    value in a table names its stored source (see the module's docstring).

    Parameters
    ----------
    project : Project
        The project; its state folder and ledger are read, nothing is run.
    title : str or None, optional
        The page's title (default ``"Project <name>: dossier"``).

    Returns
    -------
    str
        The page.
    """
    spec, state = project.spec, project.state
    ids = spec.step_ids()
    done = {step: state.done(step) for step in ids}  # None: not run, or its outputs changed

    def stored(step: str, name: str) -> Stored | None:
        """A file of a finished step (None for a step not in the project or not finished)."""
        if done.get(step) is None:
            return None
        return Stored.read(step, state.step_folder(step) / name)

    ledger = ledger_documents(spec.ledger_path) if spec.ledger_path.exists() else None
    summary = None if ledger is None else Stored("ledger", "summary", ledger["summary"])
    entries = None if ledger is None else Stored("ledger", "entries", ledger["entries"])
    prefix = project._prefix()
    mine = [] if ledger is None else [i for i, e in enumerate(ledger["entries"])
                                      if e["label"].startswith(prefix)]  # fmt: skip
    orphans = {e.id for e in project.orphans()}
    mitigation = stored("mitigate", "report.json")
    found: dict[str, Any] = {
        "assess": stored("assess", "report.json"),
        "mitigation": mitigation,
        "mitigation_steps": [] if mitigation is None else _mitigation(mitigation),
        "final": stored("mitigate", "final.json"),
        "model": stored("mitigate", "model.json"),
        "releases": [_released(r) for s in ids if s.startswith("release:")
                     if (r := stored(s, "release.json")) is not None],
        "sanitized": [_released(r) for s in ids if s.startswith("sanitize:")
                      if (r := stored(s, "release.json")) is not None],
        "unfinished": [step for step in ids if done[step] is None],
        "provenance": _provenance(project, done),
    }  # fmt: skip
    return render(
        TEMPLATE,
        meaning=_meaning(project, None if ledger is None else ledger["summary"], found),
        title=title if title is not None else f"Project {spec.name}: dossier",
        spec=spec,
        data=_source(spec.data),
        steps=ids,
        planned={kind: any(s.startswith(kind) for s in ids) for kind in ("release:", "sanitize:")},
        protected=_protected(project, summary),
        summary=summary,
        entries=entries,
        mine=mine,
        orphans=[i for i in mine if ledger is not None and ledger["entries"][i]["id"] in orphans],
        unit_meaning=lambda key: unit_meaning(PrivacyUnit.parse(key)),
        **found,
    )
