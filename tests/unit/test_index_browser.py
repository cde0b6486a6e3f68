"""results/index.html opened in real headless Chromium: the DOM the browser built holds every
cell, the change markers, the trend plots and working report links.

Chromium is part of `make setup` (scripts/ensure-chromium.sh): a missing browser fails this
test, it is not skipped. KAFKA_CHAOS_CHROMIUM names another binary.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import pytest
from typer.testing import CliRunner

from harness.cli import app
from harness.cli.terminal import EXIT_PASS
from tests.unit.index_folders import nightly_results

pytestmark = pytest.mark.browser

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def chromium() -> str:
    named = os.environ.get("KAFKA_CHAOS_CHROMIUM")
    found = named or next((b for b in map(shutil.which, BROWSERS) if b), None)
    if not found:
        pytest.fail(
            f"no Chromium ({', '.join(BROWSERS)} or KAFKA_CHAOS_CHROMIUM): "
            "`make setup` installs it (scripts/ensure-chromium.sh)"
        )
    return found


def dump_dom(page: Path, profile: Path) -> str:
    """The DOM after Chromium loaded the page (`--dump-dom`)."""
    done = subprocess.run(
        [
            chromium(),
            "--headless",
            "--no-sandbox",  # root in CI containers; a local file of our own
            "--disable-gpu",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--dump-dom",
            page.resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


class Dom(HTMLParser):
    """The elements the test looks at, with their attributes (and a cell row's markers)."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: dict[str, dict[str, str | None]] = {}  # "<experiment>/<cell>" -> row attrs
        self.markers: list[tuple[str | None, str | None, str | None]] = []  # (row, kind, figure)
        self.links: list[str] = []
        self.svgs = 0
        self.ids: dict[str, str] = {}  # element id -> its text
        self._row: str | None = None
        self._id: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        if tag == "tr" and "cell" in classes:
            self._row = f"{a.get('data-experiment')}/{a.get('data-cell')}"
            self.rows[self._row] = a
        if "change" in classes:
            self.markers.append((self._row, a.get("data-change"), a.get("data-figure")))
        if tag == "a" and a.get("href"):
            self.links.append(str(a["href"]))
        if tag == "svg":
            self.svgs += 1
        if a.get("id"):
            self._id = str(a["id"])
            self.ids[self._id] = ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "tr":
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._id is not None:
            self.ids[self._id] += data
            self._id = None


def test_the_index_in_a_real_browser(tmp_path: Path) -> None:
    results = tmp_path / "results"
    nightly_results(results)
    written = CliRunner().invoke(app, ["index", str(results)])
    assert written.exit_code == EXIT_PASS, written.output

    dom = Dom()
    dom.feed(dump_dom(results / "index.html", tmp_path / "profile"))

    assert {k: v.get("data-verdict") for k, v in dom.rows.items()} == {
        "acks/01_acks=1": "fail",
        "acks/02_acks=all": "pass",
        "offsets/01_rf=1": "pass",
        "offsets/02_rf=3": "pass",
    }
    assert dom.ids["suite-verdict"].strip() == "fail"
    assert "changed" in (dom.rows["acks/01_acks=1"].get("class") or "")
    assert "changed" not in (dom.rows["offsets/02_rf=3"].get("class") or "")
    in_rows = sorted((r, k, f) for r, k, f in dom.markers if r is not None)
    assert in_rows == [
        ("acks/01_acks=1", "flip", None),
        ("acks/01_acks=1", "out-of-range", "lost"),
        ("acks/02_acks=all", "out-of-range", "max_stall_s"),
        ("offsets/01_rf=1", "flip", None),
        ("offsets/02_rf=3", "new", None),
    ]
    # "What changed" above the tables lists the same flips and figures
    summary = sorted((k, f) for r, k, f in dom.markers if r is None)
    assert summary == [
        ("flip", None),
        ("flip", None),
        ("out-of-range", "lost"),
        ("out-of-range", "max_stall_s"),
    ]
    assert dom.svgs == 2  # one trend plot per experiment
    reports = sorted(link for link in dom.links if link.endswith("/report.html"))
    assert len(set(reports)) == 4
    for link in dom.links:  # every link is relative and leads to a file beside index.html
        assert not link.startswith(("/", "file:", "http")), link
        if not link.startswith("#"):
            assert (results / unquote(link)).is_file(), link
