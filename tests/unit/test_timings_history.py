"""Cells' timings in results/history.parquet (`t_*` columns; older files stay readable) and
their trend on results/index.html (harness overhead and mean seconds per phase, per night)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from harness.report.index_page import render_index
from harness.report.trends import cost_svg
from harness.results.layout import figure_history
from harness.results.tables import FIGURE_HISTORY
from harness.results.timings import HISTORY_COLUMNS, TIMING_KEYS
from harness.suite.changes import history_records
from harness.suite.cost import night_cost, night_costs, row_timings
from harness.suite.history import append_history, history_rows, read_history
from harness.suite.index import build_index
from tests.unit.index_folders import append_night, night, write_suite_folder
from tests.unit.suite_folders import cell_summary
from tests.unit.test_suite_history import suite_summary
from tests.unit.test_timings import EXPECTED

COLUMNS = [
    "t_cluster",
    "t_steady_state",
    "t_workload",
    "t_workload_scheduled",
    "t_heal",
    "t_recovery",
    "t_drain",
    "t_collect",
    "t_checks",
    "t_total",
    "t_checks_wait",
    "t_checks_hidden",
    "t_collect_behind",
    "t_warm_up",
]
# One cell's timings: the ones test_timings derives from its hand-built history.
TIMINGS = EXPECTED


def with_timings(cell: dict[str, Any], **timings: float) -> dict[str, Any]:
    return {**cell, "timings": {**TIMINGS, **timings}}


def timed_summary(run_id: str = "R1") -> dict[str, Any]:
    """The suite summary of test_suite_history, its first cell with timings."""
    summary = suite_summary(run_id)
    cells = summary["experiments"][0]["cells"]
    cells[0] = with_timings(cells[0])
    return summary


def test_the_history_columns_are_the_timings_keys() -> None:
    assert list(HISTORY_COLUMNS.values()) == COLUMNS
    assert list(HISTORY_COLUMNS) == list(TIMING_KEYS)
    start = FIGURE_HISTORY.names.index("params") + 1  # appended after params, in this order
    assert FIGURE_HISTORY.names[start : start + len(COLUMNS)] == COLUMNS
    assert all(FIGURE_HISTORY.field(c).type == pa.float64() for c in COLUMNS)


def test_rows_carry_the_timings_and_null_without_them() -> None:
    first, second = history_rows(timed_summary())
    assert [first[c] for c in COLUMNS] == list(TIMINGS.values())
    assert [second[c] for c in COLUMNS] == [None] * len(COLUMNS)  # a summary without timings


def test_a_round_trip_with_and_without_timings(tmp_path: Path) -> None:
    path = tmp_path / "history.parquet"
    assert append_history(path, history_rows(suite_summary("R0"))) == 2  # no timings at all
    assert append_history(path, history_rows(timed_summary("R1"))) == 4
    table = read_history(path)
    assert table.schema.equals(FIGURE_HISTORY)
    assert table.column("t_total").to_pylist() == [None, None, 110.25, None]
    assert table.column("t_recovery").to_pylist() == [None, None, 4.25, None]
    rows = history_records(table)
    assert row_timings(rows[2]) == TIMINGS
    assert row_timings(rows[0]) is None and row_timings(rows[3]) is None


def test_an_older_history_without_the_timing_columns_is_kept(tmp_path: Path) -> None:
    """A file written before the t_* columns: its rows get nulls, the new rows their values."""
    path = tmp_path / "history.parquet"
    old_schema = pa.schema(list(FIGURE_HISTORY)[: FIGURE_HISTORY.names.index("params") + 1])
    old = pa.Table.from_pylist(
        [{"suite_run": "R0", "cell": "01_main", "verdict": "pass", "lost": 0}], schema=old_schema
    )
    pq.write_table(old, path)
    assert append_history(path, history_rows(timed_summary("R1"))) == 3
    table = pq.read_table(path)
    assert table.schema.equals(FIGURE_HISTORY)
    assert table.column("suite_run").to_pylist() == ["R0", "R1", "R1"]
    assert table.column("t_workload").to_pylist() == [None, 60.0, None]
    assert table.column("t_checks").to_pylist() == [None, 12.5, None]


def row(total: float | None, scheduled: float = 50.0, started: datetime | None = None) -> dict:
    timings = None if total is None else {**TIMINGS, "workload_scheduled": scheduled}
    if timings is not None:
        timings["total"] = total
    return {
        "started": started or datetime(2026, 11, 2, 1, tzinfo=timezone.utc),
        **{c: None if timings is None else timings[k] for k, c in HISTORY_COLUMNS.items()},
    }


def test_a_nights_cost_over_its_cells_with_timings() -> None:
    point = night_cost([row(80.0, 50.0), row(131.0, 70.0), row(None)])
    assert point is not None
    assert point.cells == 2
    assert point.overhead == 76  # (211 - 120) / 120 x 100 = 75.8
    assert point.mean_s["workload_scheduled"] == 60.0 and point.mean_s["total"] == 105.5
    assert point.mean_s["recovery"] == 4.25 and point.mean_s["checks"] == 12.5
    assert night_cost([row(None)]) is None  # a night from before timings: no point
    assert night_costs([[row(None)], [row(80.0)]]) == [night_cost([row(80.0)])]


def test_the_cost_plot_from_the_second_night_on() -> None:
    one = night_cost([row(80.0, started=night(1))])
    two = night_cost([row(90.0, started=night(2))])
    assert one is not None and two is not None
    assert cost_svg([one]) is None
    svg = cost_svg([one, two])
    assert svg is not None and svg.startswith("<svg")
    assert "harness overhead (s per 100 s of workload)" in svg and "mean seconds per cell" in svg


def test_the_index_shows_the_latest_overhead_and_the_cost_trend(tmp_path: Path) -> None:
    append_night(tmp_path, 1, {"acks": [cell_summary("01_a")]})  # before timings
    append_night(tmp_path, 2, {"acks": [with_timings(cell_summary("01_a"), total=100.0)]})
    write_suite_folder(
        tmp_path,
        3,
        {
            "acks": [
                with_timings(cell_summary("01_a"), total=80.0, workload_scheduled=50.0),
                with_timings(cell_summary("02_b"), total=131.0, workload_scheduled=70.0),
            ]
        },
    )
    page = build_index(tmp_path)
    assert (
        page.overhead == "harness overhead: 76 s per 100 s of workload"
    )  # (211 - 120) / 120 x 100
    assert page.cost_svg is not None and page.cost_svg.startswith("<svg")
    html = render_index(page)
    assert '<h2 id="cost">Cost</h2>' in html
    assert '<p id="overhead">harness overhead: 76 s per 100 s of workload' in html
    assert figure_history(tmp_path).is_file()


def test_an_index_without_timings_has_no_cost_section(tmp_path: Path) -> None:
    append_night(tmp_path, 1, {"acks": [cell_summary("01_a")]})
    write_suite_folder(tmp_path, 2, {"acks": [cell_summary("01_a")]})
    page = build_index(tmp_path)
    assert page.overhead is None and page.cost_svg is None
    assert 'id="cost"' not in render_index(page)
