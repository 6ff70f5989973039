"""The documentation site renders formulas offline and explains every page in plain words.

Reads ``mkdocs.yml`` and ``docs/`` only (no site is built): formulas go through
``pymdownx.arithmatex`` to the KaTeX copy vendored under ``docs/assets/katex`` (every file the
site loads is there, fonts included, with KaTeX's licence); every page but the API reference
and the benchmarks opens with a "What this means" box; and every link into the glossary lands
on an anchor the glossary defines.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
GLOSSARY = DOCS / "glossary.md"
MARKER = '!!! info "What this means"'
KATEX = ("assets/katex/katex.min.js", "assets/katex/contrib/auto-render.min.js")


def _config() -> dict:
    return yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))


def _pages() -> list[Path]:
    """The pages that explain themselves: all but the API reference and the benchmarks."""
    return sorted(
        path
        for path in DOCS.rglob("*.md")
        if path.relative_to(DOCS).parts[0] != "api" and path.name != "benchmarks.md"
    )


def _anchors(path: Path) -> set[str]:
    """The explicit heading anchors of a page (``## Title {#anchor}``)."""
    return set(re.findall(r"^#+ .*\{#([A-Za-z0-9_-]+)\}\s*$", path.read_text("utf-8"), re.M))


def test_formulas_go_through_arithmatex_in_generic_mode() -> None:
    name, extensions = "pymdownx.arithmatex", _config()["markdown_extensions"]
    options = [e[name] for e in extensions if isinstance(e, dict) and name in e]
    assert options == [{"generic": True}]


def test_the_site_loads_katex_from_the_docs_folder_only() -> None:
    config = _config()
    scripts, styles = config["extra_javascript"], config["extra_css"]
    assert [s for s in scripts if s in KATEX] == list(KATEX)  # KaTeX first, then auto-render
    assert scripts.index("assets/katex-init.js") > scripts.index(KATEX[-1])
    assert "assets/katex/katex.min.css" in styles
    for asset in (*scripts, *styles):
        assert "//" not in asset, f"{asset} is fetched from the network"
        assert (DOCS / asset).is_file(), f"{asset} is not in docs/"
    assert "MIT" in (DOCS / "assets/katex/LICENSE").read_text(encoding="utf-8")
    assert config["theme"].get("font") is False  # no web fonts fetched either


def test_every_font_the_katex_stylesheet_prefers_is_vendored() -> None:
    css = (DOCS / "assets/katex/katex.min.css").read_text(encoding="utf-8")
    fonts = set(re.findall(r"url\((fonts/[^)]+\.woff2)\)", css))
    assert len(fonts) >= 15
    missing = sorted(f for f in fonts if not (DOCS / "assets/katex" / f).is_file())
    assert not missing


def test_the_init_script_renders_arithmatex_elements_also_under_instant_loading() -> None:
    script = (DOCS / "assets/katex-init.js").read_text(encoding="utf-8")
    assert ".arithmatex" in script and "renderMathInElement" in script
    assert "document$" in script  # mkdocs-material's page-change observable


def test_the_glossary_is_in_the_navigation() -> None:
    assert "glossary.md" in yaml.safe_dump(_config()["nav"])


@pytest.mark.parametrize("page", _pages(), ids=lambda p: str(p.relative_to(DOCS)))
def test_every_page_says_what_it_means_before_its_first_section(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert MARKER in text, f"{page.name} has no {MARKER!r} box"
    first_section = re.search(r"^## ", text, re.M)
    assert first_section is None or text.index(MARKER) < first_section.start()
    box = text.split(MARKER, 1)[1].split("\n\n", 1)[0]
    sentences = re.findall(r"[.?!](?:\s|$)", box)
    assert 3 <= len(sentences) <= 7, f"{page.name}: {len(sentences)} sentences"


def test_every_glossary_entry_has_an_anchor() -> None:
    text = GLOSSARY.read_text(encoding="utf-8")
    entries = re.findall(r"^### .*$", text, re.M)
    assert len(entries) >= 40
    assert all(re.search(r"\{#[a-z0-9-]+\}\s*$", entry) for entry in entries)


def test_every_link_into_the_glossary_lands_on_an_anchor() -> None:
    anchors = _anchors(GLOSSARY)
    link = re.compile(r"\]\((?:\.\./)*glossary\.md#([^)\s]+)\)")
    for page in sorted(DOCS.rglob("*.md")):
        for anchor in link.findall(page.read_text(encoding="utf-8")):
            assert anchor in anchors, f"{page.relative_to(DOCS)} links to glossary.md#{anchor}"


def test_epsilon_is_put_in_plain_words_on_the_home_page_and_linked_from_the_glossary() -> None:
    assert "epsilon-in-plain-words" in _anchors(DOCS / "index.md")
    assert "index.md#epsilon-in-plain-words" in GLOSSARY.read_text(encoding="utf-8")
    home = (DOCS / "index.md").read_text(encoding="utf-8")
    assert "how much one person's data" in home and "2.72" in home and "1.105" in home
