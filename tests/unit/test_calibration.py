"""calibration.json from hand-built run folders (no Docker): every bound's figures per run,
spread, margin, verdicts and suggestion; undecided and overloaded figures; the status."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.experiment import Plan, make_plan
from harness.spec import parse_bound
from harness.verdict.calibration import (
    COUNT_NOTE,
    LOAD,
    CellRun,
    bound_entry,
    calibration,
    is_count,
    unknown_why,
    worst_status,
)
from tests.unit.suite_folders import cell_summary, write_run

SPEC = """\
name: cal
seed: 5
producer: {duration_s: 60}
consumer: {kind: group, members: 1}
faults: [{at_s: 10, kind: kill, target: "broker:1", duration_s: 60}]
expect:
  lost: 0
  max_stall_s: ">= 54"
  stall_s.group: ">= 0.8 * faults.0.duration_s"
  unavailable_s: "< 15.3"
  recovered: true
matrix:
  faults.0.duration_s: [60, 90]
"""
CELL_1, CELL_2 = "01_duration_s=60", "02_duration_s=90"


def make_spec(tmp_path: Path, text: str = SPEC) -> Plan:
    path = tmp_path / "cal.yaml"
    path.write_text(text, encoding="utf-8")
    return make_plan(path)


def summary(
    cell: str,
    stall: float | None,
    unavailable: float | None,
    lost: int | None = 0,
    **extra: Any,
) -> dict[str, Any]:
    s = cell_summary(cell, lost=lost, stalls={"group": stall}, unavailable_s=unavailable)
    s["undecided"] = {}
    if unavailable is None:
        s["undecided"]["unavailable_s"] = "no acknowledgement after the fault"
    if stall is None:
        s["undecided"]["stalls_by_set"] = "the group never started"
    s.update(extra)
    return s


def three_runs(tmp_path: Path) -> list[Path | str]:
    """Run 1 and 2 with both cells, run 3 with cell 1 only (cell 2 did not finish)."""
    overloaded = {"unavailable_s": "load 7.9 on 2 cores during the fault"}
    runs: list[list[dict[str, Any]]] = [
        [summary(CELL_1, 60.1, 11.2), summary(CELL_2, 80.0, 5.0)],
        [summary(CELL_1, 61.0, 9.0, overloaded=overloaded), summary(CELL_2, 81.0, 6.0, lost=3)],
        [summary(CELL_1, 70.0, None)],
    ]
    return [write_run(tmp_path / f"run{i}", "cal", cells) for i, cells in enumerate(runs, 1)]


def by_metric(doc: dict[str, Any], cell: str) -> dict[str, dict[str, Any]]:
    (entry,) = [c for c in doc["cells"] if c["cell"] == cell]
    return {b["metric"]: b for b in entry["bounds"]}


def test_every_bound_of_a_cell_over_the_runs(tmp_path: Path) -> None:
    plan = make_spec(tmp_path)
    doc = calibration({"spec": "cal", "runs": 3, "load": 0}, plan.cells, three_runs(tmp_path))
    assert doc["spec"] == "cal" and doc["margin_goal"] == 0.3
    bounds = by_metric(doc, CELL_1)
    assert list(bounds) == ["lost", "max_stall_s", "stall_s.group", "unavailable_s"]  # no flag

    stall = bounds["max_stall_s"]
    assert stall["figures"] == [60.1, 61.0, 70.0]
    assert (stall["min"], stall["max"], stall["threshold"]) == (60.1, 70.0, 54.0)
    assert stall["direction"] == "lower" and stall["kind"] == "numeric"
    assert round(stall["margin"] * 100) == 10  # the team's `>= 54` with 60.1
    assert stall["verdicts"] == ["pass", "pass", "pass"] and stall["status"] == "thin"
    assert stall["suggested"] == ">= 42" and stall["suggested_threshold"] == 42.0
    assert stall["suggested_margin"] >= 0.3

    relative = bounds["stall_s.group"]
    assert relative["bound"] == ">= 0.8 * faults.0.duration_s" and relative["threshold"] == 48
    assert relative["kind"] == "relative" and relative["status"] == "thin"
    assert relative["suggested"] == ">= 0.7 * faults.0.duration_s"  # 42.07 / 60 = 0.701 down
    assert relative["suggested_threshold"] == pytest.approx(42.0)

    unavailable = bounds["unavailable_s"]
    assert unavailable["figures"] == [11.2, 9.0, None]
    assert unavailable["undecided"] == [{"run": 3, "reason": "no acknowledgement after the fault"}]
    assert unavailable["overloaded"] == [
        {"run": 2, "reason": "load 7.9 on 2 cores during the fault"}
    ]
    assert (unavailable["min"], unavailable["max"]) == (9.0, 11.2)  # the undecided left out
    assert round(unavailable["margin"] * 100) == 27  # the team's `< 15.3` with 11.2
    # run 2's figure counts in the spread but its verdict is the overload rule's: unknown
    assert unavailable["verdicts"] == ["pass", "unknown", "unknown"]
    assert unavailable["suggested"] == "< 16" and unavailable["direction"] == "upper"

    lost = bounds["lost"]
    assert lost["kind"] == "count" and lost["status"] == "ok" and lost["figures"] == [0, 0, 0]
    assert lost["suggested"] is None and lost["note"] == COUNT_NOTE


def test_a_failed_count_bound_gets_a_number_and_a_missing_run_its_reason(tmp_path: Path) -> None:
    plan = make_spec(tmp_path)
    doc = calibration({}, plan.cells, three_runs(tmp_path))
    bounds = by_metric(doc, CELL_2)
    lost = bounds["lost"]
    assert lost["figures"] == [0, 3, None] and lost["verdicts"] == ["pass", "fail", "unknown"]
    assert lost["status"] == "failed" and lost["suggested"] == "<= 5"  # 3 / 0.7 = 4.3, whole
    (missing,) = lost["undecided"]
    assert missing["run"] == 3 and missing["reason"].startswith("no summary.json")
    (entry,) = [c for c in doc["cells"] if c["cell"] == CELL_2]
    assert entry["verdicts"] == ["pass", "pass", "unknown"]
    assert doc["status"] == "failed"  # failed beats thin


def test_a_run_without_a_folder_undecides_its_figures(tmp_path: Path) -> None:
    plan = make_spec(tmp_path)
    doc = calibration({}, plan.cells[:1], ["HarnessError: Docker does not answer"])
    stall = by_metric(doc, CELL_1)["max_stall_s"]
    assert stall["figures"] == [None] and stall["status"] == "undecided"
    assert stall["undecided"] == [{"run": 1, "reason": "HarnessError: Docker does not answer"}]
    assert stall["margin"] is None and stall["note"] == "no run decided this figure"
    assert doc["status"] == "undecided"


def test_bounds_with_room_are_ok(tmp_path: Path) -> None:
    plan = make_spec(tmp_path, SPEC.replace('">= 54"', '">= 30"').replace("0.8 *", "0.5 *"))
    runs = [
        write_run(tmp_path / f"r{i}", "cal", [summary(CELL_1, 60.0 + i, 5.0 + i)]) for i in range(2)
    ]
    doc = calibration({}, plan.cells[:1], runs)
    assert {b["metric"]: b["status"] for b in doc["cells"][0]["bounds"]} == {
        "lost": "ok",
        "max_stall_s": "ok",
        "stall_s.group": "ok",
        "unavailable_s": "ok",
    }
    assert doc["status"] == "ok"


def runs_of(metric_values: list[Any]) -> list[CellRun]:
    return [CellRun(summary(CELL_1, 1.0, 1.0, lost=v)) for v in metric_values]


def test_a_count_bound_that_should_happen_and_did_not_gets_no_floor_at_0() -> None:
    entry = bound_entry("lost", parse_bound(">= 1"), runs_of([0, 5, 7]))
    assert entry["status"] == "failed" and entry["suggested"] is None
    assert "worst figure is 0" in entry["note"]


def test_a_numeric_floor_that_would_be_0_is_not_suggested() -> None:
    entry = bound_entry("lost", parse_bound(">= 1000"), runs_of([1, 1500]))
    assert entry["kind"] == "numeric" and entry["status"] == "failed"
    assert entry["suggested"] is None and "0 or less" in entry["note"]


def test_a_count_threshold_is_rounded_to_a_whole_number() -> None:
    entry = bound_entry("lost", parse_bound("<= 500"), runs_of([300, 120]))
    assert entry["kind"] == "numeric" and entry["suggested"] == "<= 430"


def test_figures_on_both_sides_of_an_equality_get_no_suggestion() -> None:
    entry = bound_entry("lost", parse_bound("== 2"), runs_of([0, 5]))
    assert entry["status"] == "failed" and entry["suggested"] is None
    assert "both sides" in entry["note"]


@pytest.mark.parametrize(
    ("metric", "count"),
    [
        ("lost", True),
        ("lost_never_consumed.group", True),
        ("broker.unclean_elections", True),
        ("lost_where.truncated", True),
        ("max_stall_s", False),
        ("stall_s.group", False),
        ("unowned_s.group", False),
        ("ack_p99_ms", False),
        ("broker.offline_partitions_s", False),
        ("broker.produce_p99_ms_max", False),
    ],
)
def test_is_count(metric: str, count: bool) -> None:
    assert is_count(metric) is count


def test_worst_status() -> None:
    assert worst_status(["ok", "thin", "undecided"]) == "thin"
    assert worst_status(["ok", "undecided"]) == "undecided"
    assert worst_status([]) == "ok"


def test_an_unknown_run_says_whether_the_load_alone_left_it_undecided() -> None:
    """Issue 40: beside burners a run must pass or be unknown *naming the load*; an unknown
    with any other undecided check (a fault that did not fire) is not the noise's."""
    load = {"stall_s.group": "machine overloaded for 51.1 s of this 51.1 s window"}

    def run(verdict: str, *checks: tuple[str, str]) -> CellRun:
        listed = [{"name": n, "verdict": v, "detail": f"{n} detail"} for n, v in checks]
        return CellRun({"verdict": verdict, "checks": listed, "overloaded": load})

    assert unknown_why(run("pass", ("lost", "pass"))) is None
    assert unknown_why(run("fail", ("lost", "fail"))) is None
    assert unknown_why(run("unknown", ("lost", "pass"), ("stall_s.group", "unknown"))) == LOAD
    both = run("unknown", ("faults", "unknown"), ("stall_s.group", "unknown"))
    assert unknown_why(both) == "faults: faults detail"
    assert unknown_why(run("unknown", ("lost", "pass"))) == "unknown with no check saying why"
    missing = unknown_why(CellRun(None, "no summary.json: the cell did not finish"))
    assert missing is not None and missing.startswith("no summary.json")
