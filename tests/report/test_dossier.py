"""The project dossier: one page rendered from the files a project's steps stored. Every value
in a table names its stored source (``data-json``) and shows exactly what that source holds,
formatted as its ``data-format`` says; the contents link to every section; no private row value
is on the page; and the comparison notices one stored number changed."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
import yaml

from attrpriv import datasets
from attrpriv.project import Project
from attrpriv.report.dossier import formatted, ledger_documents, render_dossier_html

GERMAN = {
    "name": "german",
    "data": {"source": "german_credit"},
    "protect": {"row": {"epsilon": 3.0, "delta": 1e-5},
                "columns": {"personal_status_sex": {"epsilon": 2.0, "delta": 1e-5}}},
    "steps": {
        "assess": {"model": "logreg", "target": "credit_risk", "attacks": ["membership"],
                   "feature_sets": "age;purpose;personal_status_sex", "threshold": 0.0,
                   "repeats": 1},
        "mitigate": {"strategies": ["drop", "regularize"], "choose": "best",
                     "max_utility_loss": 0.05, "max_steps": 2},
        "release": [{"name": "hist", "epsilon": 0.5,
                     "columns": ["personal_status_sex", "foreign_worker", "credit_risk"]}],
        "sanitize": [{"name": "block", "method": "block", "sensitive": "personal_status_sex",
                      "epsilon": 1.0}],
    },
}  # fmt: skip
"""The project file: an assessment that flags two sets, two mitigation steps, a release of
histograms (a level with a slash) and a sanitized table, each budget a unit of its own."""
SECTIONS = ("project", "assessment", "mitigation", "releases", "sanitized", "budget",
            "provenance")  # fmt: skip
NUMBER = re.compile(r"\[?[-+]?\d[\d.e+-]*(?:, [-+]?\d[\d.e+-]*\])?")
"""A cell's text that is a number, or an interval of two."""


def german_project(folder: Path) -> Project:
    """The project of :data:`GERMAN` in ``folder``, not run."""
    (folder / "german.yaml").write_text(yaml.safe_dump(GERMAN), encoding="utf-8")
    return Project.from_yaml(folder / "german.yaml")


@pytest.fixture(scope="module")
def german(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, str]:
    """The german project, run once, and its dossier."""
    project = german_project(tmp_path_factory.mktemp("dossier"))
    assert project.run().failed == {}
    return project, render_dossier_html(project)


class _Page(HTMLParser):
    """Every table cell (its data-json, data-format and text), the ids, the contents' links and
    the text shown (no style or title)."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: list[tuple[str | None, str | None, str]] = []
        self.ids: list[str] = []
        self.contents: list[str] = []
        self.text: list[str] = []
        self._cell: tuple[str | None, str | None, list[str]] | None = None
        self._in_contents = False
        self._hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("id"):
            self.ids.append(found["id"] or "")
        self._in_contents |= tag == "nav" and found.get("id") == "contents"
        if tag == "a" and self._in_contents:
            self.contents.append(found.get("href") or "")
        if tag == "td":
            self._cell = (found.get("data-json"), found.get("data-format"), [])
        self._hidden += tag in ("style", "title")

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cell is not None:
            ref, fmt, parts = self._cell
            self.cells.append((ref, fmt, "".join(parts).strip()))
            self._cell = None
        self._in_contents &= tag != "nav"
        self._hidden -= tag in ("style", "title")

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell[2].append(data)
        if not self._hidden:
            self.text.append(data)


def parse(page: str) -> _Page:
    parser = _Page()
    parser.feed(page)
    parser.close()
    return parser


def traced(page: str) -> list[tuple[str, str, str]]:
    """The cells that name their source: (data-json, data-format, text)."""
    return [(ref, fmt or "", text) for ref, fmt, text in parse(page).cells if ref is not None]


def resolve(document: Any, pointer: str) -> Any:
    """RFC 6901: the value ``pointer`` points at in ``document``."""
    if pointer == "":
        return document
    assert pointer.startswith("/"), pointer
    for token in pointer[1:].split("/"):
        key = token.replace("~1", "/").replace("~0", "~")
        document = document[int(key)] if isinstance(document, list) else document[key]
    return document


def reader(state: Path, ledger: Path) -> Callable[[str, str], Any]:
    """``read(source, document)``: a step's stored JSON file in ``state``, or a ledger document."""
    books = ledger_documents(ledger)

    def read(source: str, document: str) -> Any:
        if source == "ledger":
            return books[document]
        folder = state / "steps" / source.replace(":", "-")
        return json.loads((folder / document).read_text(encoding="utf-8"))

    return read


def mismatches(page: str, state: Path, ledger: Path) -> list[tuple[str, str, str]]:
    """Each traced cell whose text is not its stored value formatted as it says: (data-json,
    the text shown, the text expected)."""
    read, wrong = reader(state, ledger), []
    for ref, fmt, text in traced(page):
        source, document, pointer = ref.split("|", 2)
        expected = formatted(resolve(read(source, document), pointer), fmt)
        if text != expected:
            wrong.append((ref, text, expected))
    return wrong


def test_every_value_shown_is_the_stored_one(german: tuple[Project, str]) -> None:
    project, page = german
    spec = project.spec
    cells = traced(page)
    assert len(cells) >= 20
    assert mismatches(page, spec.state_folder, spec.ledger_path) == []
    documents = {tuple(ref.split("|")[:2]) for ref, _, _ in cells}
    steps = {source for source, _ in documents}
    assert steps == {*spec.step_ids(), "ledger"}
    assert documents >= {
        ("assess", "report.json"),
        ("mitigate", "report.json"),
        ("mitigate", "final.json"),
        ("release:hist", "release.json"),
        ("sanitize:block", "release.json"),
        ("ledger", "summary"),
        ("ledger", "entries"),
    } | {(s, "DONE.json") for s in spec.step_ids()}
    # a level with a slash: the pointer escapes it (RFC 6901)
    assert "release:hist|release.json|/non_negative/values/personal_status_sex/male: " \
           "divorced~1separated" in {ref for ref, _, _ in cells}  # fmt: skip
    assert {fmt for _, fmt, _ in cells} >= {"num", "ci", "g6", "g3", "int", "interval", "when"}
    untraced = [
        text for ref, _, text in parse(page).cells if ref is None and NUMBER.fullmatch(text)
    ]
    assert untraced == [], "every number in a table names its source"


def test_the_contents_link_to_every_section_in_order(german: tuple[Project, str]) -> None:
    _, page = german
    found = parse(page)
    assert found.contents and all(link.startswith("#") for link in found.contents)
    assert {link[1:] for link in found.contents} <= set(found.ids)
    assert {link[1:] for link in found.contents} >= {*SECTIONS, "release-hist", "sanitize-block"}
    assert [i for i in found.ids if i in SECTIONS] == list(SECTIONS)
    assert len(found.ids) == len(set(found.ids)), "ids are unique"
    assert "<title>Project german: dossier</title>" in page


def _tokens(text: str) -> set[str]:
    return set(re.split(r"[\s,;:()\[\]]+", text))


def test_no_private_value_is_on_the_page(german: tuple[Project, str], check_page: Any) -> None:
    _, page = german
    found = parse(page)
    amounts = {str(v) for v in datasets.load("german_credit").frame["credit_amount"]}
    released = set().union(*(_tokens(text) for ref, _, text in traced(page)
                             if ref.startswith(("release:", "sanitize:"))))  # fmt: skip
    shown = _tokens(" ".join(found.text))
    assert (shown & amounts) - released == set()
    check_page(page, forbidden=[f">{v}<" for v in sorted(amounts - released)], min_figures=0)
    # the check sees a row's value put on the page
    leaked = page.replace("</h1>", f"</h1><p>credit amount {min(amounts - released)}</p>")
    assert _tokens(" ".join(parse(leaked).text)) & amounts - released


@pytest.mark.parametrize(
    ("step", "file", "path", "change"),
    [
        ("release:hist", "release.json", ("non_negative", "values", "personal_status_sex"), 1),
        ("assess", "report.json", ("feature_sets", 0, "modified"), 0.01),
        ("mitigate", "report.json", ("mitigation", "steps", 1, "total_excess"), -0.01),
    ],
)
def test_a_changed_stored_number_is_caught(
    german: tuple[Project, str],
    tmp_path: Path,
    step: str,
    file: str,
    path: tuple[str | int, ...],
    change: float,
) -> None:
    project, page = german
    state = tmp_path / "state"
    shutil.copytree(project.spec.state_folder / "steps", state / "steps")
    assert mismatches(page, state, project.spec.ledger_path) == []
    stored = state / "steps" / step.replace(":", "-") / file
    payload = json.loads(stored.read_text(encoding="utf-8"))
    *above, last = path
    parent = payload
    for key in above:
        parent = parent[key]
    if isinstance(parent[last], dict):  # a histogram: its first level, "male: divorced/separated"
        parent, above, last = parent[last], [*above, last], next(iter(parent[last]))
    parent[last] += change
    stored.write_text(json.dumps(payload), encoding="utf-8")
    wrong = mismatches(page, state, project.spec.ledger_path)
    tokens = (str(key).replace("~", "~0").replace("/", "~1") for key in [*above, last])
    assert {ref for ref, _, _ in wrong} == {f"{step}|{file}|/" + "/".join(tokens)}, wrong
    assert all(shown != expected for _, shown, expected in wrong)


def test_a_project_not_run_yet(tmp_path: Path) -> None:
    project = german_project(tmp_path)
    page = render_dossier_html(project, title="Before the run")
    found = parse(page)
    assert traced(page) == []
    assert {link[1:] for link in found.contents} <= set(found.ids)
    assert page.count("Not finished yet (see its provenance).") == 2
    assert "No release has finished yet." in page and page.count("not run yet.") == 4
    assert "release:hist: not finished yet" in page
    assert "<title>Before the run</title>" in page


def test_a_charge_whose_step_lost_its_done_file_is_an_orphan(
    german: tuple[Project, str], tmp_path: Path
) -> None:
    project, _ = german
    shutil.copytree(project.spec.base, tmp_path / "copy")
    copy = Project.from_yaml(tmp_path / "copy" / "german.yaml")
    (copy.state.step_folder("release:hist") / "DONE.json").unlink()
    [orphan] = copy.orphans()
    page = render_dossier_html(copy)
    found = parse(page)
    assert mismatches(page, copy.spec.state_folder, copy.spec.ledger_path) == []
    refs = {ref for ref, _, _ in traced(page)}
    assert not any(ref.startswith("release:hist|") for ref in refs), "not finished: not shown"
    assert "release-hist" not in {link[1:] for link in found.contents}
    assert "release:hist: not finished yet" in page
    orphans = page[page.index("Orphan charges") : page.index('id="provenance"')]
    assert f'data-format="int">{orphan.id}</td>' in orphans
