"""What changed in the latest run against hand-built history rows: flips, and figures outside
the range of the last N nights (counts exactly, times with compare's tolerance)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from harness.results.layout import figure_history
from harness.suite.changes import (
    CellChange,
    cell_changes,
    earlier_runs,
    history_records,
    out_of_range,
    row_figures,
)
from harness.suite.history import append_history, read_history
from harness.suite.history import rows_table as history_table

T0 = datetime(2026, 11, 1, 1, tzinfo=timezone.utc)
CELL = ("acks", "01_acks=1")


def row(n: int, verdict: str = "pass", suite: str = "nightly", **figures: Any) -> dict[str, Any]:
    """A history row of night n for CELL (FIGURE_HISTORY's columns; unset figures 0 / 5 s)."""
    stall = figures.pop("stall", 5.0)
    base: dict[str, Any] = {
        "suite_run": f"run{n:02d}-{suite}",
        "suite": suite,
        "started": T0 + timedelta(days=n),
        "experiment": CELL[0],
        "cell": CELL[1],
        "verdict": verdict,
        "lost": 0,
        "lost_never_consumed": 0,
        "duplicated": 0,
        "reprocessed": 0,
        "max_stall_s": stall,
        "stall_s": [("group", stall)],
        "unavailable_s": 1.0,
    }
    base.update(figures)
    return base


def latest(verdict: str = "pass", **figures: Any) -> dict[tuple[str, str], tuple[str, Any]]:
    return {CELL: (verdict, row_figures(row(99, verdict, **figures)))}


def changes(rows: list[dict[str, Any]], nights: int = 7, **figures: Any) -> CellChange:
    """CELL's change: the latest night (99) with `figures` against `rows`."""
    verdict = figures.pop("verdict", "pass")
    return cell_changes(
        latest(verdict, **figures),
        rows,
        suite="nightly",
        latest_run="run99-nightly",
        latest_started=T0 + timedelta(days=99),
        nights=nights,
    )[CELL]


def test_nothing_changed() -> None:
    c = changes([row(n) for n in range(1, 8)])
    assert not c.changed and not c.flipped and not c.is_new
    assert c.previous_run == "run07-nightly" and c.nights == 7


def test_a_flip_is_against_the_most_recent_earlier_run_with_the_cell() -> None:
    rows = [row(1, "fail"), row(2, "pass"), row(3, "fail")]
    other = dict(row(4), cell="02_other")  # a later run without our cell
    c = changes([*rows, other], verdict="pass")
    assert c.flipped and not c.flipped_from_pass
    assert (c.previous_verdict, c.previous_run) == ("fail", "run03-nightly")
    c = changes([row(1, "fail"), row(2, "pass")], verdict="unknown", lost=None)
    assert c.flipped_from_pass and c.previous_verdict == "pass"


def test_a_cell_in_no_earlier_run_is_new_not_a_flip() -> None:
    c = changes([], verdict="fail", lost=3)
    assert c.is_new and not c.flipped and not c.out_of_range and c.nights == 0


def test_counts_out_of_range_at_all_times_beyond_the_tolerance() -> None:
    rows = [row(n, stall=8.0 + n % 3) for n in range(1, 8)]  # stall 8..10 s
    c = changes(rows, lost=1, stall=10.9)  # 10.9 s: within max(1 s, 25 %) of 10
    assert [(o.figure, o.value, o.low, o.high, o.direction) for o in c.out_of_range] == [
        ("lost", 1, 0, 0, "above")
    ]
    c = changes(rows, stall=14.0)
    assert {o.figure: o.direction for o in c.out_of_range} == {
        "max_stall_s": "above",
        "stall_s.group": "above",
    }
    c = changes([row(n, stall=40.0 + n) for n in range(1, 8)], stall=5.0)  # recovered: below
    assert c.out_of_range[0].direction == "below" and c.out_of_range[0].low == 41.0


def test_the_range_is_over_the_last_n_nights_only() -> None:
    rows = [row(1, stall=30.0), *(row(n, stall=8.0) for n in range(2, 9))]
    assert changes(rows, stall=30.0).out_of_range  # night 1 is outside the last 7
    assert not changes(rows, nights=8, stall=30.0).out_of_range
    only_two = changes(rows, nights=2, stall=30.0)
    assert only_two.nights == 2 and only_two.out_of_range[0].nights == 2


def test_undecided_now_is_flagged_only_when_the_nights_decided_it() -> None:
    c = changes([row(n) for n in range(1, 4)], verdict="unknown", lost=None)
    (flag,) = [o for o in c.out_of_range if o.figure == "lost"]
    assert flag.value is None and flag.direction == "undecided" and flag.nights == 3
    never = [row(n, unavailable_s=None) for n in range(1, 4)]
    assert not changes(never, unavailable_s=None).out_of_range
    assert not changes(never, unavailable_s=60.0).out_of_range  # no range to leave


def test_other_suites_and_later_runs_are_not_the_past() -> None:
    rows = [row(1), row(2, suite="weekly", lost=50), row(100, lost=50)]
    assert earlier_runs(rows, "nightly", "run99-nightly", T0 + timedelta(days=99)) == [
        "run01-nightly"
    ]
    c = changes(rows, lost=50)
    assert [o.figure for o in c.out_of_range] == ["lost"] and c.nights == 1


def test_out_of_range_alone() -> None:
    assert out_of_range("lost", 0, [0, 0]) is None
    assert out_of_range("lost", 2, [0, 1, None]) is not None
    assert out_of_range("max_stall_s", 12.0, [10.0]) is None  # within 25 % of 12
    assert out_of_range("max_stall_s", 13.5, [10.0]) is not None
    assert out_of_range("lost", 1, []) is None


def test_rows_read_back_from_parquet_and_from_pandas(tmp_path: Path) -> None:
    path = figure_history(tmp_path)
    append_history(path, [row(n, stall=8.0) for n in range(1, 4)])
    rows = history_records(read_history(path))
    assert rows[0]["stall_s"] == [("group", 8.0)]
    c = changes(rows, stall=20.0, lost=2)
    assert {o.figure for o in c.out_of_range} == {"lost", "max_stall_s", "stall_s.group"}
    # a pandas frame of the same table: nullable ints arrive as floats with NaN
    frame = history_table([row(1, lost=None), row(2)]).to_pandas()
    records = frame.to_dict("records")
    assert row_figures(records[0])["lost"] is None
    assert not changes([dict(r) for r in records], lost=0).out_of_range
