"""Shared fixtures, and hypothesis profiles: reproducible by default, exploratory on request.

The default run (the README's ``pytest``, and CI) is derandomized: every run draws the same
examples, so a result does not depend on luck. ``HYPOTHESIS_PROFILE=explore pytest`` draws new
random examples each run, to look for edge cases (a failure prints the example to reproduce).
"""

from __future__ import annotations

import base64
import io
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator, Sequence
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest
from hypothesis import settings
from threadpoolctl import threadpool_limits

from attrpriv import datasets

settings.register_profile("default", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

AdultXY = Callable[[int, int], tuple[pd.DataFrame, np.ndarray]]


@pytest.fixture(autouse=True, scope="session")
def one_thread() -> Iterator[None]:
    """Native thread pools (OpenMP in gradient boosting, BLAS) oversubscribe a shared 2-core
    machine badly: HGB runs up to 50x slower. Every test runs single-threaded."""
    with threadpool_limits(1):
        yield


@pytest.fixture(scope="session")
def adult_dataset() -> datasets.Dataset:
    """The bundled Adult frame and schema, loaded once per run (tests never modify it)."""
    return datasets.load("adult")


@pytest.fixture(scope="session")
def adult_xy(adult_dataset: datasets.Dataset) -> AdultXY:
    """``adult_xy(n, seed)``: n shuffled Adult rows as (features, income labels), without the
    ``split`` bookkeeping column and the ``fnlwgt`` sampling weight."""

    def sample(n: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
        frame = adult_dataset.frame.sample(n, random_state=seed).reset_index(drop=True)
        y = frame.pop("income").astype(str).to_numpy()
        return frame.drop(columns=["split", "fnlwgt"]), y

    return sample


# -- HTML pages ----------------------------------------------------------------------------------
class _Page(HTMLParser):
    """Collects the images (data URIs) and the text of a page; fails on unbalanced tags."""

    VOID = frozenset({"img", "meta", "br", "hr", "input", "link"})

    def __init__(self) -> None:
        super().__init__()
        self.images: list[str] = []
        self.text: list[str] = []
        self.open: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "img":
            self.images.append(dict(attrs).get("src") or "")
        elif tag not in self.VOID:
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self.open and self.open[-1] == tag, f"</{tag}> closes {self.open[-1:]}"
        self.open.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


CheckPage = Callable[..., list[bytes]]


@pytest.fixture
def check_page(tmp_path_factory: pytest.TempPathFactory) -> CheckPage:
    """``check_page(html, forbidden=(), min_figures=1)``: the page parses with balanced tags,
    has a title, at least ``min_figures`` images that are valid PNGs, and none of the
    ``forbidden`` strings (data rows) anywhere; returns the PNGs. With chromium (or
    chromium-browser) on PATH it is also rendered headless to a screenshot."""

    def check(page: str, forbidden: Sequence[str] = (), min_figures: int = 1) -> list[bytes]:
        import matplotlib.image

        parser = _Page()
        parser.feed(page)
        parser.close()
        assert parser.open == [], f"unclosed tags {parser.open}"
        assert page.startswith("<!DOCTYPE html>") and "<title>" in page
        pngs = []
        for src in parser.images:
            assert src.startswith("data:image/png;base64,"), src[:40]
            data = base64.b64decode(src.split(",", 1)[1], validate=True)
            assert data.startswith(b"\x89PNG\r\n\x1a\n")
            height, width = matplotlib.image.imread(io.BytesIO(data), format="png").shape[:2]
            assert height > 50 and width > 50
            pngs.append(data)
        assert len(pngs) >= min_figures
        for text in forbidden:
            assert text not in page, f"{text!r} is on the page"
        browser = shutil.which("chromium") or shutil.which("chromium-browser")
        if browser is not None:
            folder = tmp_path_factory.mktemp("page")
            (folder / "page.html").write_text(page, encoding="utf-8")
            shot = folder / "page.png"
            subprocess.run(
                [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                 "--window-size=1200,1600", f"--screenshot={shot}",
                 (folder / "page.html").as_uri()],
                check=True, capture_output=True,
            )  # fmt: skip
            assert shot.read_bytes().startswith(b"\x89PNG")
        return pngs

    return check
