"""The producer's schedule slip (spark_jobs/checks/schedule.py) on hand-built cells whose
answers are known: records planned at known times, sent late."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.results.metrics import SCHEDULE_METRICS
from harness.spec.expect import parse_bound
from harness.verdict.checks import evaluate
from tests.unit.test_latency_checks import (
    T,
    ev,
    needs_java,
    rec,
    state,
    verify,
    write_cell,
    write_machine,
)

pytestmark = pytest.mark.spark

PHASES = [ev(0, "phase", phase="workload"), ev(5000, "phase", phase="collect")]
# Rate 100/s: record i is due at T + 10 i; 300 planned before the end.
SCHEDULE = ev(0, "producer.schedule", first_seq=0, rate=100.0, end_ms=T + 3500, planned=300)


def late_ledger() -> list[Any]:
    """0..99 on time; 100..149 held up, sent at 2500 (planned 1000..1490); 150..199 sent at
    2600 (planned 1500..1990); 200..299 never sent. Every ack 5 ms after its send."""
    rows = [rec(i, T + 10 * i, 5) for i in range(100)]
    rows += [rec(i, T + 2500, 5) for i in range(100, 150)]
    rows += [rec(i, T + 2600, 5) for i in range(150, 200)]
    return rows


LATE_HISTORY = [
    *PHASES,
    state(0, 1, [1, 2, 3]),
    SCHEDULE,
    ev(0, "producer.start", acks="all", rate=100.0, idempotence=True),
    ev(1000, "producer.blocked", seq=100, ms=1500),
    ev(2550, "producer.blocked", seq=150, ms=90),
    ev(2400, "fault.inject", fault_id=1, fault="kill", target="broker-1"),
    ev(2550, "fault.heal", fault_id=1, fault="kill", target="broker-1"),
    ev(3300, "producer.end", attempted=200, acked=200, failed=0),
]


@needs_java
def test_sends_behind_their_planned_times_are_measured(tmp_path: Path, spark: Any) -> None:
    out = verify(spark, write_cell(tmp_path, late_ledger(), LATE_HISTORY))
    assert out["counts"]["attempted"] == 200 and out["producer_planned"] == 300
    # Record 100: planned 1000, sent 2500. The first never sent (200, due 2000) waits until
    # the producer's end at 3300 (before the schedule's end, 3500): 1.3 s, less.
    assert out["producer_behind_max_s"] == 1.5
    # More than 1 s behind: [2000, 2500) waiting for 100, [2500, 2600) for 150 (due 1500),
    # [3000, 3300) for 200, never sent: 0.9 s.
    assert out["producer_behind_s"] == 0.9
    assert out["producer_blocked_s"] == 1.59
    assert not set(SCHEDULE_METRICS) & set(out["undecided"])
    notes = out["schedule_notes"]
    # The whole run's figures, the fault's (its batch at 2500) and the steady part's (150..199
    # sent at 2600, record 150 1.1 s late); no recovery (the watch saw the ISR whole).
    assert set(notes) == {
        "ack_p50_ms",
        "ack_p99_ms",
        "ack_max_ms",
        "unavailable_s",
        "ack_p99_ms_faulted",
        "ack_p99_ms_steady",
    }
    assert "up to 1.5 s behind" in notes["ack_p99_ms_faulted"]
    assert "up to 1.1 s behind" in notes["ack_p99_ms_steady"]
    # The verdict shows the note beside the figure; it does not undecide it.
    (check,) = evaluate({"ack_p99_ms_steady": parse_bound("< 100")}, out)
    assert check.verdict == "pass"
    assert check.detail.endswith(f"(note: {notes['ack_p99_ms_steady']})")


@needs_java
@pytest.mark.parametrize(
    ("overloaded", "undecided"), [((1_000, 2_500), True), ((2_600, 3_400), False)]
)
def test_the_most_behind_records_window_is_recorded_and_judged_by_the_machine(
    tmp_path: Path, spark: Any, overloaded: tuple[int, int], undecided: bool
) -> None:
    """producer_behind_max_s is one record's wait, record 100's: planned 1000, sent 2500.
    Overloaded over that window (1.5 s, under OVERLOAD_MIN_S: a maximum has no minimum) it
    is undecided; the sums, over the workload, are not."""
    cell = write_cell(tmp_path, late_ledger(), LATE_HISTORY)
    write_machine(cell, overloaded)
    out = verify(spark, cell)
    assert out["timing_windows"] == {"producer_behind_max_s": [[T + 1000, T + 2500]]}
    assert ("producer_behind_max_s" in out["overloaded"]) is undecided
    assert not {"producer_behind_s", "producer_blocked_s"} & set(out["overloaded"])
    (check,) = evaluate({"producer_behind_max_s": parse_bound("< 2")}, out)
    assert check.verdict == ("unknown" if undecided else "pass"), check.detail
    if undecided:
        assert "machine overloaded for 1.5 s of this 1.5 s window" in check.detail


@needs_java
def test_a_restarted_producer_keeps_its_own_schedule_and_the_first_plan_counts(
    tmp_path: Path, spark: Any
) -> None:
    """A producer-crash: p1 goes on from seq 100 at its own start (2000 ms), on time."""
    history = [
        *PHASES,
        SCHEDULE,
        ev(2000, "producer.schedule", first_seq=100, rate=100.0, end_ms=T + 3000, planned=100),
    ]
    ledger = [rec(i, T + 10 * i, 5) for i in range(100)]
    ledger += [rec(i, T + 2000 + 10 * (i - 100), 5) for i in range(100, 200)]
    out = verify(spark, write_cell(tmp_path, ledger, history))
    assert (out["producer_planned"], out["producer_behind_max_s"]) == (300, 0.0)
    assert (out["producer_behind_s"], out["producer_blocked_s"]) == (0.0, 0.0)
    assert out["schedule_notes"] == {}


@needs_java
def test_a_history_before_the_schedule_event_paces_from_the_first_send(
    tmp_path: Path, spark: Any
) -> None:
    history = [*PHASES, ev(0, "producer.start", acks="all", rate=100.0, idempotence=True)]
    ledger = [rec(i, T + 500 + 10 * i, 5) for i in range(50)]
    ledger += [rec(i, T + 500 + 10 * i + 2000, 5) for i in range(50, 60)]  # 2 s late
    out = verify(spark, write_cell(tmp_path, ledger, history))
    assert out["producer_behind_max_s"] == 2.0
    assert out["producer_behind_s"] == 1.09  # [2000, 3090): 50 (due 1000) .. 59 unsent
    assert out["producer_planned"] is None and out["producer_blocked_s"] is None
    assert "producer.schedule" in out["undecided"]["producer_planned"]


@needs_java
def test_no_rate_in_the_history_leaves_the_schedule_undecided(tmp_path: Path, spark: Any) -> None:
    out = verify(spark, write_cell(tmp_path, [rec(0, T, 5)], PHASES))
    for name in (*SCHEDULE_METRICS, "schedule_notes"):
        assert "no producer.start with a rate" in out["undecided"][name]
