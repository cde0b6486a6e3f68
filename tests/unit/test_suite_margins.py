"""Bound margins through history.parquet to the index page's "Thin margins" list, and flaky
cells on the page, from hand-built histories (no Docker)."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from harness.results.layout import figure_history
from harness.suite.history import append_history, history_rows
from harness.suite.index import build_index, write_index
from harness.suite.margins import row_margins, thin_margins
from tests.unit.index_folders import append_night, night, run_id, suite_summary, write_suite_folder
from tests.unit.suite_folders import cell_summary


def cell(name: str, verdict: str = "pass", **margins: float | None) -> dict[str, Any]:
    summary = cell_summary(name, verdict)
    summary["margins"] = {k.replace("__", "."): v for k, v in margins.items()}
    return summary


def test_history_rows_keep_each_bounds_margin(tmp_path: Path) -> None:
    path = tmp_path / "history.parquet"
    summary = suite_summary(1, {"acks": [cell("01", max_stall_s=0.1, stall_s__group=None)]})
    summary["experiments"][0]["cells"].append(cell_summary("02"))  # written before margins
    append_history(path, history_rows(summary))
    rows = pq.read_table(path).to_pylist()
    assert rows[0]["margins"] == [("max_stall_s", 0.1), ("stall_s.group", None)]
    assert rows[1]["margins"] == [] and rows[1]["confirmation"] is None
    assert row_margins(rows[0]) == {"max_stall_s": 0.1}  # undecided: not a margin


def three_nights(results: Path) -> Path:
    """acks/01: max_stall_s 0.5, 0.08 (night 2), 0.3; ack_p99_ms 0.9 each night.
    acks/02: max_stall_s 0.15 on night 1 only, then 0.4, and -0.2 (failing) on night 3."""
    append_night(
        results,
        1,
        {"acks": [cell("01", max_stall_s=0.5, ack_p99_ms=0.9), cell("02", max_stall_s=0.15)]},
    )
    append_night(
        results,
        2,
        {"acks": [cell("01", max_stall_s=0.08, ack_p99_ms=0.9), cell("02", max_stall_s=0.4)]},
    )
    return write_suite_folder(
        results,
        3,
        {
            "acks": [
                cell("01", max_stall_s=0.3, ack_p99_ms=0.9),
                cell("02", "fail", max_stall_s=-0.2),
            ]
        },
    )


def test_the_bounds_under_20_percent_in_the_last_runs(tmp_path: Path) -> None:
    three_nights(tmp_path)
    page = build_index(tmp_path)
    listed = [(m.experiment, m.cell, m.metric, m.margin, m.run, m.under) for m in page.thin_margins]
    assert listed == [
        ("acks", "02", "max_stall_s", -0.2, run_id(3), 2),  # smallest first; 0.15 counted too
        ("acks", "01", "max_stall_s", 0.08, run_id(2), 1),
    ]
    assert page.thin_margins[0].text == "-20.0 %"
    assert page.thin_margins[0].started == night(3).isoformat(timespec="seconds")
    assert page.thin_margins[0].report_href is not None  # the latest run's report of the cell


def test_only_the_last_runs_count(tmp_path: Path) -> None:
    three_nights(tmp_path)
    rows = pq.read_table(figure_history(tmp_path)).to_pylist()
    latest = [r for r in rows if r["suite_run"] == run_id(3)]
    earlier = [run_id(1), run_id(2)]
    past = [r for r in rows if r["suite_run"] != run_id(3)]
    found = thin_margins(past, earlier, latest, count=2)  # the latest and night 2
    assert [(t.cell, t.margin, t.under) for t in found] == [("02", -0.2, 1), ("01", 0.08, 1)]
    assert thin_margins(past, earlier, latest, count=1) == thin_margins([], [], latest)
    assert [t.cell for t in thin_margins(past, earlier, latest, low=0.0)] == ["02"]


class Rows(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.margins: list[dict[str, str | None]] = []
        self.ids: set[str] = set()
        self.changes: list[str | None] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "tr" and found.get("class") == "thin-margin":
            self.margins.append(found)
        if found.get("id"):
            self.ids.add(str(found["id"]))
        if tag == "span" and found.get("data-change"):
            self.changes.append(found["data-change"])


def test_the_page_lists_them(tmp_path: Path) -> None:
    three_nights(tmp_path)
    parser = Rows()
    parser.feed(write_index(tmp_path).read_text())
    assert [(r["data-cell"], r["data-metric"], r["data-margin"]) for r in parser.margins] == [
        ("02", "max_stall_s", "-0.2"),
        ("01", "max_stall_s", "0.08"),
    ]


def test_no_margins_recorded_says_so(tmp_path: Path) -> None:
    write_suite_folder(tmp_path, 1, {"acks": [cell_summary("01")]})
    page = build_index(tmp_path)
    assert page.thin_margins == [] and not page.margins_known
    parser = Rows()
    parser.feed(write_index(tmp_path).read_text())
    assert "no-thin-margins" in parser.ids


def test_a_flaky_cell_on_the_page_fails_nothing(tmp_path: Path) -> None:
    append_night(tmp_path, 1, {"acks": [cell_summary("01"), cell_summary("02")]})
    summary_cells = {"acks": [cell_summary("01", "fail", lost=7), cell_summary("02")]}
    folder = write_suite_folder(tmp_path, 2, summary_cells, history=False)
    # the suite runner's record of the confirmation (harness.suite.confirm)
    summary_path = folder / "summary.json"
    summary = json.loads(summary_path.read_text())
    summary["experiments"][0]["confirmations"] = [
        {
            "cell": "01",
            "verdict": "fail",
            "previous_verdict": "pass",
            "previous_run": run_id(1),
            "reruns": [{"run_dir": None, "run_id": None, "verdict": "pass", "error": None}],
            "status": "flaky",
        }
    ]
    summary_path.write_text(json.dumps(summary))
    append_history(figure_history(tmp_path), history_rows(summary))
    page = build_index(tmp_path)
    assert page.verdict == "pass" and page.experiments[0].verdict == "pass"
    assert (page.count("fail"), page.count("pass"), page.count("flaky")) == (0, 1, 1)
    (flaky,) = [c for c in page.cells if c.flaky]
    assert flaky.cell == "01" and flaky.verdict == "fail" and flaky.flipped
    parser = Rows()
    parser.feed(write_index(tmp_path).read_text())
    assert "flaky-count" in parser.ids and parser.changes.count("flaky") == 2  # list and table
