"""Every kind of page, rendered by headless Chromium: the screenshot has the window's size and
is not blank, and the text the browser shows has the "What this means" paragraph (3 to 5
sentences, the page's own epsilon worked out), a glossary that every term link lands in, and
no Python repr. The check itself fails on a page with a repr injected, and on a blank one."""

from __future__ import annotations

import io
import math
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from attrpriv import Categorical, Column, Integer, Schema
from attrpriv.cli import main
from attrpriv.dp import SeededNumpyNoise
from attrpriv.release.ddp.mechanism import TabularDDP
from attrpriv.report import render_release_html, render_sweep_html
from attrpriv.report.dossier import render_dossier_html
from attrpriv.sanitize.evaluate import leakage, utility
from attrpriv.sanitize.tradeoff import SweepPoint, SweepResult
from cli.test_cli_pages import write_public, write_survey, write_walk
from report.test_dossier import german_project

CHROMIUM = shutil.which("chromium")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no headless browser: chromium is not installed (apt-get install "
    "chromium; .ci/run installs it)",
)
WIDTH, HEIGHT = 1200, 1600
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
REPRS = {
    "a dict": r"\{'",
    "a list": r"\['",
    "None": r"\bNone\b",
    "True": r"\bTrue\b",
    "False": r"\bFalse\b",
    "numpy": r"\bnp\.",
    "an array": r"array\(",
    "an object": r" object at 0x",
    "a release's parts": r"parts\[",
    "a parameter": r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+=",
    "a dtype": r"\bdtype\b",
    "a NaN": r"\bnan\b",
    "a module path": r"\battrpriv\.\w",
}
# The page kinds, with the epsilon of their worked example and terms their glossary must have.
PAGES: dict[str, tuple[float | None, tuple[str, ...]]] = {
    "histograms": (1.0, ("epsilon", "noise-interval", "privacy-unit", "non-negative")),
    "histograms-raw": (0.5, ("epsilon", "noise-interval", "add-remove")),
    "ddp-modules": (1.0, ("dependent-dp", "module", "any-law")),
    "ddp-model": (1.0, ("markov-tree", "data-model", "any-law")),
    "tabular-ddp": (1.0, ("g-test", "bonferroni", "dirichlet", "dependent-dp")),
    "quilt-histogram": (1.0, ("x-i", "theta", "pufferfish", "markov-chain")),
    "quilt-sum": (1.0, ("x-i", "theta")),
    "attribute": (1.0, ("theta", "pmf", "pufferfish-prior", "delta", "gaussian")),
    "assess": (None, ("auc", "ci", "membership-attack")),
    "sweep": (0.5, ("epsilon", "y-s", "z-s", "auc")),
    "ledger": (1.5, ("ledger", "budget", "privacy-unit", "composition")),
    "ledger-empty": (2.0, ("ledger", "budget", "epsilon")),
    "dossier": (3.0, ("epsilon", "budget", "privacy-unit", "ledger", "auc", "non-negative")),
}
APART = {"dossier": "dossier"}
"""The page kinds written by a fixture of their own (the others by ``pages``)."""


class _Dom(HTMLParser):
    """The text a browser shows (no style, script or title), the ids and the term links."""

    HIDDEN = frozenset({"style", "script", "title"})

    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.meaning: list[str] = []
        self.ids: set[str] = set()
        self.links: set[str] = set()
        self._hidden = 0
        self._in_meaning = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        self.ids.add(found.get("id") or "")
        if tag == "a" and (found.get("href") or "").startswith("#"):
            self.links.add((found.get("href") or "")[1:])
        self._hidden += tag in self.HIDDEN
        self._in_meaning += tag == "section" and found.get("class") == "meaning"

    def handle_endtag(self, tag: str) -> None:
        self._hidden -= tag in self.HIDDEN
        self._in_meaning -= tag == "section" and self._in_meaning > 0

    def handle_data(self, data: str) -> None:
        if not self._hidden:
            self.text.append(data)
            if self._in_meaning:
                self.meaning.append(data)


def in_browser(page: Path, folder: Path) -> tuple[bytes, _Dom]:
    """The page as headless Chromium shows it: its screenshot (PNG) and its DOM."""
    browser = [f"{CHROMIUM}", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
               "--no-first-run", "--disable-background-networking", "--disable-component-update",
               "--disable-sync", "--hide-scrollbars", f"--user-data-dir={folder / 'profile'}",
               f"--window-size={WIDTH},{HEIGHT}"]  # fmt: skip
    shot = folder / f"{page.stem}.png"
    subprocess.run([*browser, f"--screenshot={shot}", page.as_uri()], check=True,
                   capture_output=True, timeout=120)  # fmt: skip
    dumped = subprocess.run([*browser, "--dump-dom", page.as_uri()], check=True,
                            capture_output=True, text=True, timeout=120)  # fmt: skip
    dom = _Dom()
    dom.feed(dumped.stdout)
    dom.close()
    return shot.read_bytes(), dom


def blank(screenshot: bytes) -> bool:
    """Whether a screenshot is (nearly) one colour: under 16 colours or 1% of non-white."""
    image = Image.open(io.BytesIO(screenshot)).convert("RGB")
    colours = image.getcolors(maxcolors=WIDTH * HEIGHT) or []
    grey = np.asarray(image.convert("L"))
    return len(colours) < 16 or (grey < 245).mean() < 0.01


def reprs(text: str) -> list[str]:
    """The Python reprs (and parameter dumps) in a page's text: what each is, and where."""
    return [f"{what}: ...{text[max(m.start() - 30, 0) : m.end() + 30]}..."
            for what, pattern in REPRS.items() for m in re.finditer(pattern, text)]  # fmt: skip


def words(parts: list[str]) -> str:
    return " ".join(" ".join(parts).split())


def _sweep() -> SweepResult:
    """A small sweep: one leakage and one utility measured, shared by its points."""
    rng = np.random.default_rng(0)
    secret, task = rng.choice(["F", "M"], 160), rng.choice(["low", "high"], 160)
    x = pd.DataFrame({"x": rng.normal(size=160) + (secret == "F") + (task == "high")})
    leak = leakage(x[:80], secret[:80], x[80:], secret[80:], x_aux_sanitized=x[:80], seeds=1)
    use = utility(x[:80], task[:80], x[80:], task[80:], seeds=1)
    parts = {"leakage_parts": leak.to_dict(), "utility_parts": use.to_dict()}
    names = {"suppression": "suppression", "dp-obfuscation eps=0.5": "dp-obfuscation",
             "dp-obfuscation eps=4": "dp-obfuscation", "real data": "reference"}  # fmt: skip
    points = tuple(SweepPoint(name, family, leak.advantage + i / 20, use.auc.attack - i / 30,
                              use.accuracy.attack, parts, leak, use)
                   for i, (name, family) in enumerate(names.items()))  # fmt: skip
    baseline = SweepPoint("drop sensitive", "baseline", leak.advantage, use.auc.attack,
                          use.accuracy.attack, parts, leak, use)  # fmt: skip
    return SweepResult(points, {"dp-obfuscation": 0.3, "suppression": 0.1}, (baseline,),
                       {"drop sensitive": 0.2}, {"seeds": 1})  # fmt: skip


def _tabular_ddp() -> str:
    """The Tabular-DDP benchmark mechanism's page (Python only), chunks tested on its rows."""
    schema = Schema((Column("colour", "feature", Categorical(("red", "green", "blue"))),
                     Column("likes", "sensitive", Categorical(("yes", "no"))),
                     Column("age", "feature", Integer(18, 97))))  # fmt: skip
    rng = np.random.default_rng(1)
    colour = rng.choice(["red", "green", "blue"], 600)
    likes = np.where((colour == "red") ^ (rng.random(600) < 0.1), "yes", "no")
    frame = pd.DataFrame({"colour": colour, "likes": likes, "age": rng.integers(18, 98, 600)})
    mechanism = TabularDDP(1.0, 2, max_levels=4, sampler=SeededNumpyNoise(5),
                           allow_nonprivate=True)  # fmt: skip
    return render_release_html(mechanism.release(frame, schema), title="Tabular-DDP",
                               counts="non-negative")  # fmt: skip


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every page kind, written once: the release commands, the assessment, the sweep and
    the budget ledger (two of them: with releases, and empty)."""
    folder = tmp_path_factory.mktemp("pages")
    data, schema, ledger, _ = write_survey(folder)
    survey = [str(data), "--schema", str(schema)]
    quilt = ["release", "quilt", "--transition", "0.8,0.2;0.3,0.7", "--sequence",
             str(write_walk(folder)), "--epsilon", "1"]  # fmt: skip
    budget, empty = folder / "b.ledger", folder / "e.ledger"
    commands = {
        "histograms": ["release", "histograms", *survey, "--columns", "answer,vote,age",
                       "--epsilon", "1", "--ledger", str(ledger)],
        "histograms-raw": ["release", "histograms", *survey, "--columns", "age", "--epsilon",
                           "0.5", "--counts", "raw"],
        "ddp-modules": ["release", "ddp", *survey, "--epsilon", "1", "--modules",
                        "answer,vote;age,income", "--ledger", str(ledger)],
        "ddp-model": ["release", "ddp", *survey, "--epsilon", "1", "--aux",
                      str(write_public(folder))],
        "quilt-histogram": [*quilt, "--query", "histogram"],
        "quilt-sum": [*quilt, "--query", "sum"],
        "attribute": ["release", "attribute", str(EXAMPLES / "attribute.yaml")],
        "assess": ["assess", "run", "german_credit", "--target", "credit_risk", "--model",
                   "logreg", "--repeats", "1", "--references", "1", "--backend", "sequential",
                   "--feature-sets", "age;purpose,savings", "--attacks", "membership",
                   "--threshold", "0.0", "--mitigate", "generalize,drop", "--max-steps", "1"],
    }  # fmt: skip
    assert main(["budget", "set", "--ledger", str(budget), "--epsilon", "5"]) == 0
    assert main(["budget", "set", "--ledger", str(empty), "--epsilon", "2"]) == 0
    for epsilon in ("0.5", "1"):
        assert main(["release", "histograms", *survey, "--epsilon", epsilon, "--ledger",
                     str(budget)]) == 0  # fmt: skip
    commands["ledger"] = ["budget", "show", "--ledger", str(budget)]
    commands["ledger-empty"] = ["budget", "show", "--ledger", str(empty)]
    found = {}
    for kind, command in commands.items():
        found[kind] = folder / f"{kind}.html"
        assert main([*command, "--html", str(found[kind])]) == 0, kind
    (folder / "tabular-ddp.html").write_text(_tabular_ddp(), encoding="utf-8")
    sweep = render_sweep_html(_sweep(), title="Sanitizer sweep", sensitive="sex", target="income")
    (folder / "sweep.html").write_text(sweep, encoding="utf-8")
    return {**found, "tabular-ddp": folder / "tabular-ddp.html", "sweep": folder / "sweep.html"}


@pytest.fixture(scope="module")
def dossier(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The dossier of a project run once (tests/report/test_dossier.py's german project)."""
    folder = tmp_path_factory.mktemp("dossier")
    project = german_project(folder)
    assert project.run().failed == {}
    page = folder / "dossier.html"
    page.write_text(render_dossier_html(project), encoding="utf-8")
    return {"dossier": page}


@pytest.mark.parametrize("kind", list(PAGES))
def test_the_page_in_a_browser(request: pytest.FixtureRequest, kind: str) -> None:
    pages: dict[str, Path] = request.getfixturevalue(APART.get(kind, "pages"))
    epsilon, terms = PAGES[kind]
    screenshot, dom = in_browser(pages[kind], pages[kind].parent)
    assert Image.open(io.BytesIO(screenshot)).size == (WIDTH, HEIGHT)
    assert not blank(screenshot)
    text, meaning = words(dom.text), words(dom.meaning)
    assert reprs(text) == []
    assert meaning.startswith("What this means")
    sentences = re.split(r"(?<=[.!?])\s+(?=[A-Z])", meaning.removeprefix("What this means "))
    assert 3 <= len(sentences) <= 5, sentences
    if epsilon is None:
        assert "no epsilon" in meaning
    else:
        assert f"e^{epsilon:g} \u2248 {math.exp(epsilon):.3g} times more likely" in meaning
    assert "Glossary" in text and dom.links and dom.links <= dom.ids
    assert {f"term-{term}" for term in terms} <= dom.links


def test_the_check_fails_on_a_repr_and_on_a_blank_page(pages: dict[str, Path]) -> None:
    folder = pages["histograms"].parent
    injected = folder / "injected.html"
    html = pages["histograms"].read_text(encoding="utf-8")
    injected.write_text(html.replace("</h1>", "</h1><p>{'seed': None, 'max_iter=': True}</p>"),
                        encoding="utf-8")  # fmt: skip
    _, dom = in_browser(injected, folder)
    found = reprs(words(dom.text))
    assert {line.split(":")[0] for line in found} >= {"a dict", "None", "True", "a parameter"}
    empty = folder / "empty.html"
    empty.write_text("<!DOCTYPE html><html><body></body></html>", encoding="utf-8")
    screenshot, _ = in_browser(empty, folder)
    assert blank(screenshot)
    assert not blank(in_browser(pages["histograms"], folder)[0])
