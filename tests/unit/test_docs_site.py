"""The docs site (mkdocs.yml, docs/) built with --strict and its first page opened in real
headless Chromium: the DOM the browser built holds the title and the nav's links, each
leading to a page of the build.

Chromium is part of `make setup`, as for the index page's test: a missing browser fails this
test, it is not skipped.
"""

from __future__ import annotations

import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.unit.test_index_browser import dump_dom

pytestmark = pytest.mark.browser

ROOT = Path(__file__).parents[2]
# pages the first page's navigation must link to (the docs' main contracts)
NAV = ("spec.html", "faults.html", "results.html", "checks.html", "cli.html", "incidents.html")


class Page(HTMLParser):
    """The first page's title, its h1 and every link."""

    def __init__(self) -> None:
        super().__init__()
        self.title = ""
        self.h1 = ""
        self.links: list[str] = []
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("title", "h1"):
            self._in = tag
        href = dict(attrs).get("href")
        if tag == "a" and href:
            self.links.append(href)

    def handle_endtag(self, tag: str) -> None:
        if tag == self._in:
            self._in = None

    def handle_data(self, data: str) -> None:
        if self._in == "title":
            self.title += data
        elif self._in == "h1":
            self.h1 += data


def test_the_docs_site_builds_and_its_first_page_renders(tmp_path: Path) -> None:
    site = tmp_path / "site"
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert built.returncode == 0, built.stderr[-3000:]
    pages = sorted(p.name for p in site.glob("*.html") if p.name != "404.html")
    assert len(pages) >= 6, pages

    page = Page()
    page.feed(dump_dom(site / "index.html", tmp_path / "profile"))

    assert "kafka-chaos" in page.title
    assert page.h1.replace("¶", "").strip() == "kafka-chaos"  # the permalink sign follows it
    for target in NAV:
        assert target in page.links, f"the first page's nav has no link to {target}"
    for link in page.links:  # every relative link leads to a file of the build
        if link.startswith(("http", "#", "mailto:")):
            continue
        path = link.split("#", 1)[0]
        if path:
            assert (site / path).is_file(), link
