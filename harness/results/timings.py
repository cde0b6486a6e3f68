"""What a cell cost, in seconds: its summary's `timings`, from its history's phase events.

Pure: history events (as `read_jsonl` gives them) and two figures measured elsewhere in,
seconds out. A phase runs from its `phase` event to the next one; the last phase the cell
reached (collect or collect-behind, unless it stopped early) runs to the history's last
event (the cluster's removal). Every key is always there: a phase the cell never reached is
0.0. Events before the first phase (`broker_logs.allow`) count in `total` only.

* cluster, steady_state, workload, heal, recovery, drain, collect: the phases' seconds;
* workload_scheduled: the workload the spec plans (`Spec.planned_workload_s`);
* checks: the checks' measured seconds (the Spark session's start included, if this cell's
  checks started it);
* total: the history's first to last event, plus checks (the cell's wall time up to the end
  of its checks);
* checks_wait: the `checks-wait` phase's seconds (a run's cells: waiting for the Spark
  session's start, or for the previous cell's checks, after the steady state);
* checks_hidden: the seconds of `collect_behind` and `checks` that ran while the next cell's
  cluster started (harness.verdict.checks_behind); `total` leaves them out, so a run's cells'
  totals add up to its wall time. 0 here: the run sets it once the next cell has started.
* collect_behind: the `collect-behind` phase's seconds (a run's cells but its last: decoding
  the segment copies, saving broker logs and removing the cluster, in the checks' thread
  behind the next cell); the history's last events, so they count in `total` like `collect`.
* warm_up: the `warm-up` phase's seconds (traffic on a topic of its own until the cluster's
  pace settles, harness.workload.warm_up; beside the previous cell's checks in a run).

The overhead of a set of cells is what they took beyond their scheduled workload, per 100 s of
it: (sum of total - sum of workload_scheduled) / sum of workload_scheduled * 100
(`overhead_per_100s`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from harness.results import events as ev
from harness.results.events import Event

# A summary's `timings` keys, in the order a cell runs them (a contract: only ever appended).
PHASE_KEYS = {
    ev.PHASE_CLUSTER: "cluster",
    ev.PHASE_STEADY_STATE: "steady_state",
    ev.PHASE_WORKLOAD: "workload",
    ev.PHASE_HEAL: "heal",
    ev.PHASE_RECOVERY: "recovery",
    ev.PHASE_DRAIN: "drain",
    ev.PHASE_COLLECT: "collect",
    ev.PHASE_CHECKS_WAIT: "checks_wait",
    ev.PHASE_COLLECT_BEHIND: "collect_behind",
    ev.PHASE_WARM_UP: "warm_up",
}
WORKLOAD_SCHEDULED = "workload_scheduled"
CHECKS = "checks"
TOTAL = "total"
TIMING_KEYS = (
    "cluster",
    "steady_state",
    "workload",
    WORKLOAD_SCHEDULED,
    "heal",
    "recovery",
    "drain",
    "collect",
    CHECKS,
    TOTAL,
    "checks_wait",  # appended: the contract's order is kept
    "checks_hidden",
    "collect_behind",
    "warm_up",
)
# Their columns in results/history.parquet (harness.results.tables.FIGURE_HISTORY).
HISTORY_COLUMNS = {key: f"t_{key}" for key in TIMING_KEYS}


def _s(ms: float) -> float:
    """Milliseconds as seconds, to the ms the events carry (no float noise in a summary)."""
    return round(ms / 1000, 3)


def cell_timings(
    history: Sequence[Event], workload_scheduled_s: float, checks_s: float
) -> dict[str, float]:
    """A cell's `timings` (every key of TIMING_KEYS, in seconds) from its history's events,
    its planned workload and its checks' measured duration."""
    stamps = sorted(float(e["ts"]) for e in history)
    ms = dict.fromkeys(PHASE_KEYS.values(), 0.0)
    marks = sorted(
        ((float(e["ts"]), str(e.get("phase"))) for e in history if e["kind"] == ev.PHASE),
        key=lambda mark: mark[0],
    )
    for i, (ts, phase) in enumerate(marks):
        end = marks[i + 1][0] if i + 1 < len(marks) else stamps[-1]
        if phase in PHASE_KEYS:  # an unknown phase's time counts in total only
            ms[PHASE_KEYS[phase]] += end - ts
    span = stamps[-1] - stamps[0] if stamps else 0.0
    timings = {key: _s(value) for key, value in ms.items()}
    timings[WORKLOAD_SCHEDULED] = round(workload_scheduled_s, 3)
    timings[CHECKS] = round(checks_s, 3)
    timings[TOTAL] = round(_s(span) + checks_s, 3)
    timings["checks_hidden"] = 0.0
    return {key: timings[key] for key in TIMING_KEYS}


def _seconds(value: Any) -> float:
    """A timing read from a file: a finite number, else 0.0."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0.0
    return float(value) if math.isfinite(value) else 0.0


def sum_timings(cells: Iterable[Mapping[str, Any]]) -> dict[str, float] | None:
    """Every key of the cells' `timings` summed (cell summaries as summary.json holds them);
    a cell without a `timings` object (a missing cell, an older summary) is left out, and
    None when no cell has one."""
    found = [t for cell in cells if isinstance(t := cell.get("timings"), Mapping)]
    if not found:
        return None
    return {key: round(sum(_seconds(t.get(key)) for t in found), 3) for key in TIMING_KEYS}


def overhead_per_100s(timings: Mapping[str, Any] | None) -> int | None:
    """Seconds beyond the scheduled workload per 100 s of it, rounded to an integer (halves
    up): (total - workload_scheduled) / workload_scheduled * 100 of summed timings. None
    without timings or without scheduled workload."""
    if timings is None:
        return None
    scheduled = _seconds(timings.get(WORKLOAD_SCHEDULED))
    if scheduled <= 0:
        return None
    return math.floor((_seconds(timings.get(TOTAL)) - scheduled) * 100 / scheduled + 0.5)
