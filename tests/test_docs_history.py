"""The docs under ``docs/`` describe what is true now; history belongs in ``CHANGELOG.md``.

A page fails if its prose names a working session ("session 7") or an issue by number ("issue
12", "issue #27", "#27 "). Fenced code blocks, inline code, link targets and HTML tags are left
out first, so that code samples (``scope="session"``), anchors to headings that start with a
digit (``(#1-utility)``), HTML entities and colour codes (``#000``) are not mistaken for history.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAGES = sorted(DOCS.rglob("*.md"))

FENCE = re.compile(r"^([ \t]*)(`{3,}|~{3,}).*?^\1\2[ \t]*$", re.DOTALL | re.MULTILINE)
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)
LINK_TARGET = re.compile(r"\]\([^)]*\)")
HTML_TAG = re.compile(r"<[^>\n]+>")

PATTERNS = {
    "a session": re.compile(r"\bsessions?\b", re.IGNORECASE),
    "an issue number": re.compile(r"\bissues?\s*#?\d+", re.IGNORECASE),
    "a '#NN' reference": re.compile(r"(?<![\w/&])#\d{1,3}\b"),
}


def prose(text: str) -> str:
    """The text of a Markdown page without its code, link targets and HTML tags."""
    for pattern in (FENCE, INLINE_CODE, LINK_TARGET, HTML_TAG):
        text = pattern.sub(lambda m: " " + "\n" * m.group(0).count("\n"), text)
    return text


def history_hits(text: str) -> list[str]:
    """Each history reference in the page's prose, as 'line N: what (the match)'."""
    hits = []
    for number, line in enumerate(prose(text).splitlines(), start=1):
        for what, pattern in PATTERNS.items():
            hits += [f"line {number}: {what} ({m.group(0)!r})" for m in pattern.finditer(line)]
    return hits


def test_the_pages_are_found() -> None:
    assert DOCS / "benchmarks.md" in PAGES


def test_line_numbers_survive_the_code_left_out() -> None:
    text = "```\none\ntwo\n```\nsee `a\nb` here\nsession 3"
    assert history_hits(text) == ["line 7: a session ('session')"]


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(DOCS)) for p in PAGES])
def test_a_page_tells_no_history(page: Path) -> None:
    hits = history_hits(page.read_text(encoding="utf-8"))
    assert not hits, f"{page.relative_to(DOCS.parent)}: history belongs in CHANGELOG.md: {hits}"


@pytest.mark.parametrize(
    "text",
    [
        "Measured in session 7 on 2 cores.",
        "Sessions 7, 8 and 9 gave 0.922, 0.907 and 0.918.",
        "(Session 11, `python benchmarks/accounting.py`)",
        "the target of issue 11",
        "this confirms issue #27's finding",
        "Issues 12 and 13 asked for it",
        "see #12 for the discussion",
        "(#27)",
    ],
)
def test_history_is_caught(text: str) -> None:
    assert history_hits(text)


@pytest.mark.parametrize(
    "text",
    [
        "#### 1. Utility and attacks (noise on the Gaussian approximations)",
        "## 2. Directional calibration",
        "see [the table](#1-utility-and-attacks) and [that page](other.md#3-certified)",
        '<span style="color:#000">black</span> and <a href="#12-rows">a link</a>',
        "an entity &#123; in HTML",
        "a colour #fff or #123abc or #0a0",
        "```python\n@pytest.fixture(scope='session')\ndef x(): ...  # 12 rows\n```",
        "the fixture's `scope='session'` and `issue 3` in code",
        "possession and obsessional are other words",
        "opendp/opendp#2789 is an upstream pull request",
        "a tissue 3 layers thick",
    ],
)
def test_legitimate_content_passes(text: str) -> None:
    assert not history_hits(text)
