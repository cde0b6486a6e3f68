"""A cell's `timings` from a hand-built history (exact seconds), their sums in the run and suite
summaries, and the end-of-run footer `harness overhead: N s per 100 s of workload`."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest
import yaml
from rich.console import Console

from harness.report import render_table, write_run_summary
from harness.report.run_summary import overhead_line
from harness.report.suite_summary import write_suite_summary
from harness.results.timings import TIMING_KEYS, cell_timings, overhead_per_100s, sum_timings
from harness.spec import expand_cells, parse_spec
from harness.verdict import run_verify
from harness.verdict.cell_verdict import summarize
from tests.unit.suite_folders import cell_summary
from tests.unit.test_cell_verdict import metrics

T = 1_700_000_000_000


def at(ms: int, kind: str, **fields: Any) -> dict[str, Any]:
    return {"ts": T + ms, "kind": kind, **fields}


# A whole cell: every phase, the cluster removed 7.5 s into collect.
HISTORY = [
    at(0, "broker_logs.allow", allow=["x"]),  # before the first phase: total only
    at(500, "phase", phase="cluster"),
    at(3_000, "cluster.ready"),
    at(6_500, "phase", phase="steady-state"),
    at(12_500, "phase", phase="warm-up"),  # beside the previous cell's checks, then 2 windows
    at(16_250, "warm_up.end", settled=True, seconds=3.75, beside_checks_s=1.75),
    at(16_500, "phase", phase="checks-wait"),  # the run's Spark session still starting
    at(18_500, "phase", phase="workload"),
    at(20_000, "fault.inject", fault="kill", target="broker:1"),
    at(78_500, "phase", phase="heal"),
    at(80_000, "phase", phase="recovery"),
    at(84_250, "phase", phase="drain"),
    at(90_250, "phase", phase="collect"),
    at(97_750, "cluster.removed"),
]
EXPECTED = {
    "cluster": 6.0,
    "steady_state": 6.0,
    "workload": 60.0,
    "workload_scheduled": 55.0,
    "heal": 1.5,
    "recovery": 4.25,
    "drain": 6.0,
    "collect": 7.5,
    "checks": 12.5,
    "total": 110.25,  # 97.75 s of history + 12.5 s of checks
    "checks_wait": 2.0,
    "checks_hidden": 0.0,
    "collect_behind": 0.0,
    "warm_up": 4.0,
}


def test_every_phase_from_its_event_to_the_next_and_total_with_the_checks() -> None:
    timings = cell_timings(HISTORY, 55.0, 12.5)
    assert timings == EXPECTED
    assert list(timings) == list(TIMING_KEYS)


def test_the_order_of_the_file_does_not_matter() -> None:
    assert cell_timings(list(reversed(HISTORY)), 55.0, 12.5) == EXPECTED


def test_a_cell_that_stopped_early_has_zero_for_the_phases_it_never_reached() -> None:
    history = [
        at(0, "phase", phase="cluster"),
        at(7_250, "phase", phase="steady-state"),
        at(97_250, "cell.error", error="HarnessError: steady state not reached"),
        at(99_000, "cluster.removed"),
    ]
    assert cell_timings(history, 75.0, 2.0) == {
        "cluster": 7.25,
        "steady_state": 91.75,  # to the last event: the cluster's removal included
        "workload": 0.0,
        "workload_scheduled": 75.0,
        "heal": 0.0,
        "recovery": 0.0,
        "drain": 0.0,
        "collect": 0.0,
        "checks": 2.0,
        "total": 101.0,
        "checks_wait": 0.0,
        "checks_hidden": 0.0,
        "collect_behind": 0.0,
        "warm_up": 0.0,
    }


def test_collect_behind_runs_to_the_last_event_and_counts_in_total() -> None:
    history = [
        *HISTORY[:-1],
        at(94_000, "tables.written"),
        at(94_500, "phase", phase="collect-behind"),  # in the checks' thread
        at(96_750, "segments.decoded"),
        at(97_750, "cluster.removed"),
    ]
    timings = cell_timings(history, 55.0, 12.5)
    assert (timings["collect"], timings["collect_behind"]) == (4.25, 3.25)
    assert timings["total"] == EXPECTED["total"]  # hidden later, with the checks
    assert timings["checks_hidden"] == 0.0


def test_an_unknown_phase_counts_in_total_only_and_no_history_is_the_checks_alone() -> None:
    history = [
        at(0, "phase", phase="cluster"),
        at(1_000, "phase", phase="warm-up"),
        at(4_000, "phase", phase="collect"),
        at(5_000, "cluster.removed"),
    ]
    timings = cell_timings(history, 10.0, 0.5)
    assert (timings["cluster"], timings["collect"], timings["total"]) == (1.0, 1.0, 5.5)
    assert cell_timings([], 10.0, 3.0) == {
        **dict.fromkeys(TIMING_KEYS, 0.0),
        "workload_scheduled": 10.0,
        "checks": 3.0,
        "total": 3.0,
    }


SPEC = """
name: timings
producer: {records: 100, rate: 2}
faults: [{kind: kill, target: "broker:1", at_s: 20, duration_s: 35}]
expect: {lost: 0}
"""


def test_summarize_writes_timings_with_the_specs_scheduled_workload(tmp_path: Path) -> None:
    [cell] = expand_cells(parse_spec(yaml.safe_load(SPEC)))
    assert cell.spec.planned_workload_s == 55.0  # the kill's window ends after the 50 s producer
    cell_dir = tmp_path / cell.id
    cell_dir.mkdir()
    (cell_dir / "history.jsonl").write_text("".join(json.dumps(e) + "\n" for e in HISTORY))
    summary = summarize(cell, cell_dir, metrics(), checks_s=12.5)
    assert summary["timings"] == EXPECTED
    assert json.loads((cell_dir / "summary.json").read_text())["timings"] == EXPECTED


def test_the_checks_are_timed_by_the_run_and_by_verify(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SparkChecks.verify measures the checks (session start included) into timings.checks,
    and a check that crashes is timed too."""
    [cell] = expand_cells(parse_spec(yaml.safe_load(SPEC)))
    cell_dir = tmp_path / cell.id
    cell_dir.mkdir()
    (cell_dir / "history.jsonl").write_text("".join(json.dumps(e) + "\n" for e in HISTORY))
    clock = types.SimpleNamespace(now=100.0)
    monkeypatch.setattr(run_verify, "time", types.SimpleNamespace(monotonic=lambda: clock.now))

    def spark_session(small_cells: bool = False) -> str:
        assert small_cells is False  # SparkChecks() is not told its cells are small
        clock.now += 4.0  # the JVM's start
        return "spark"

    def verify_cell(_spark: Any, _cell_dir: Path, _gap_ms: int) -> dict[str, Any]:
        clock.now += 8.5
        return metrics()

    monkeypatch.setitem(
        sys.modules, "spark_jobs.session", types.SimpleNamespace(spark_session=spark_session)
    )
    monkeypatch.setitem(
        sys.modules, "spark_jobs.verify", types.SimpleNamespace(verify_cell=verify_cell)
    )
    checks = run_verify.SparkChecks()
    assert checks.verify(cell, cell_dir)["timings"]["checks"] == 12.5
    assert checks.verify(cell, cell_dir)["timings"]["checks"] == 8.5  # the session is started

    def broken(_spark: Any, _cell_dir: Path, _gap_ms: int) -> dict[str, Any]:
        clock.now += 1.25
        raise RuntimeError("no Java")

    monkeypatch.setitem(sys.modules, "spark_jobs.verify", types.SimpleNamespace(verify_cell=broken))
    summary = checks.verify(cell, cell_dir)
    assert summary["verdict"] == "unknown" and summary["timings"]["checks"] == 1.25
    assert summary["timings"]["total"] == 97.75 + 1.25


def timed(cell: str, **timings: float) -> dict[str, Any]:
    summary = cell_summary(cell)
    summary["timings"] = {**dict.fromkeys(TIMING_KEYS, 0.0), **timings}
    return summary


# Two cells with timings (total 203.45 s for 100 s of scheduled workload) and one without (a
# planned cell whose folder is missing, or a summary from before timings).
CELLS = [
    timed("01_a", cluster=8.0, workload=60.0, workload_scheduled=55.0, checks=12.5, total=110.25),
    timed("02_b", cluster=7.5, workload=45.5, workload_scheduled=45.0, checks=4.0, total=93.2),
    cell_summary("03_c"),
]


def test_sum_timings_adds_every_key_over_the_cells_that_have_them() -> None:
    assert sum_timings(CELLS) == {
        **dict.fromkeys(TIMING_KEYS, 0.0),
        "cluster": 15.5,
        "workload": 105.5,
        "workload_scheduled": 100.0,
        "checks": 16.5,
        "total": 203.45,
    }
    assert sum_timings([cell_summary("01"), {"timings": "broken"}]) is None


def test_overhead_per_100s_of_workload() -> None:
    assert overhead_per_100s(sum_timings(CELLS)) == 103  # (203.45 - 100) / 100 x 100
    assert overhead_per_100s({"workload_scheduled": 100.0, "total": 150.5}) == 51  # halves up
    assert overhead_per_100s({"workload_scheduled": 80.0, "total": 60.0}) == -25
    assert overhead_per_100s({"workload_scheduled": 0.0, "total": 60.0}) is None
    assert overhead_per_100s(None) is None


def test_the_end_of_run_table_has_the_overhead_footer() -> None:
    line = "harness overhead: 103 s per 100 s of workload"
    assert overhead_line(sum_timings(CELLS)) == line
    table = render_table(CELLS)
    assert table.caption == line
    console = Console(width=100, record=True, color_system=None)
    console.print(table)
    printed = console.export_text().splitlines()
    assert printed[-1].rstrip() == line  # its own line below the table, flush left (Rich pads it)
    assert render_table([cell_summary("01")]).caption is None  # no cell has timings


def test_the_run_summary_sums_the_cells_timings(tmp_path: Path) -> None:
    info = {"run_id": "R", "spec": "s", "seed": 1, "started": "x", "duration_s": 210.0}
    summary = write_run_summary(tmp_path, info, CELLS)
    assert summary["timings"] == sum_timings(CELLS)
    assert summary["timings"]["total"] == 203.45
    written = json.loads((tmp_path / "summary.json").read_text())
    assert written["timings"] == summary["timings"]
    assert list(written).index("timings") == list(written).index("cells") - 1
    assert write_run_summary(tmp_path, info, [cell_summary("01")])["timings"] is None


def test_the_suite_summary_sums_every_experiments_cells(tmp_path: Path) -> None:
    more = timed("01_d", workload=30.0, workload_scheduled=30.0, total=41.0)
    info = {
        "suite": "nightly",
        "run_id": "S",
        "experiments": [{"experiment": "a", "cells": CELLS}, {"experiment": "b", "cells": [more]}],
    }
    summary = write_suite_summary(tmp_path, info)
    assert summary["timings"]["workload_scheduled"] == 130.0
    assert summary["timings"]["total"] == 244.45
    assert overhead_line(summary["timings"]) == "harness overhead: 88 s per 100 s of workload"


def test_the_suite_table_has_the_overhead_footer(monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.cli import suite_run

    console = Console(width=100, record=True, color_system=None)
    monkeypatch.setattr(suite_run, "console", console)
    suite_run.print_suite_result(
        {"suite": "nightly", "experiments": [{"experiment": "a", "cells": CELLS}]}
    )
    printed = console.export_text().splitlines()
    assert printed[-1].rstrip() == "harness overhead: 103 s per 100 s of workload"
