"""Partition ownership from hand-built histories (spark_jobs.checks.ownership), and the
`ownership` check on a hand-built cell folder: unowned partition-seconds per set and, per
generation, the wait its assignment ended beside the records it processed again."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from harness.results.metrics import PER_SET_KEYS
from harness.verdict.checks import lookup
from spark_jobs.checks.ownership import ownership, with_reprocessed
from tests.unit.test_verify import T, complete_history, ev, led, verify, write_cell

START, END = T, T + 60_000


def assign(ts: int, member: str, gen: int, *parts: int) -> dict[str, Any]:
    return ev(T + ts, "consumer.assign", consumer=member, generation=gen, partitions=list(parts))


def revoke(ts: int, member: str, gen: int, *parts: int) -> dict[str, Any]:
    return ev(T + ts, "consumer.revoke", consumer=member, generation=gen, partitions=list(parts))


def test_an_eager_rebalance_leaves_every_partition_unowned_until_it_is_assigned_again() -> None:
    history = [
        assign(100, "group/m0", 1, 0, 1),
        assign(100, "group/m1", 2, 2, 3),
        # a rebalance: both revoke everything, then get their partitions back 4 s / 6 s later
        revoke(10_000, "group/m0", 1, 0, 1),
        revoke(12_000, "group/m1", 2, 2, 3),
        assign(16_000, "group/m0", 3, 0, 1),
        assign(18_000, "group/m1", 4, 2, 3),
    ]
    by_set, waits = ownership(history, START, END)
    assert by_set == {
        "group": {
            "assignments": 4,
            "revocations": 2,
            "unowned_s": 2 * 6.0 + 2 * 6.0,
            "longest_unowned_s": 6.0,
        }
    }
    assert [(w["consumer"], w["generation"], w["waited_s"]) for w in waits] == [
        ("group/m0", 1, 0.0),  # the start-up is no wait
        ("group/m1", 2, 0.0),
        ("group/m0", 3, 6.0),
        ("group/m1", 4, 6.0),
    ]
    assert waits[2]["partitions"] == [0, 1] and waits[2]["reprocessed"] is None


def test_an_incremental_move_costs_only_the_partition_that_moves() -> None:
    history = [
        assign(0, "group/m0", 1, 0, 1, 2),
        assign(5_000, "group/m1", 2),  # a new member, nothing for it yet
        revoke(9_000, "group/m0", 1, 2),  # m0 gives up 2 at its next poll, keeps 0 and 1
        assign(9_500, "group/m1", 3, 2),
    ]
    by_set, waits = ownership(history, START, END)
    assert by_set["group"]["unowned_s"] == 0.5 and by_set["group"]["longest_unowned_s"] == 0.5
    assert [w["waited_s"] for w in waits] == [0.0, 0.0, 0.5]


def test_a_crashed_or_restarted_process_holds_nothing_and_the_window_clips() -> None:
    history = [
        assign(-5_000, "group/m0", 1, 0),  # before the workload phase
        assign(-5_000, "group/m1", 2, 1),
        ev(T - 1_000, "consumer.crash", consumer="group/m0", pid=7),  # unowned from here ...
        ev(T + 2_000, "consumer.crash", consumer="group/m1", note="not running"),  # no pid: no-op
        ev(T + 3_000, "consumer.launch", consumer="group/m1", pid=8),  # a new process: none
        assign(4_000, "group/m0", 3, 0),  # ... to here, counted from START: 4 s
        ev(T + 50_000, "consumer.exit", consumer="group/m0", code=1),  # to END: 10 s
        ev(T + 1_000, "consumer.start", consumer="spark/q", generation=1),  # holds nothing
    ]
    by_set, waits = ownership(history, START, END)
    assert set(by_set) == {"group"}  # a set that never held a partition has no figures
    assert by_set["group"]["unowned_s"] == 4.0 + 10.0 + 57.0  # p1 from the launch to END
    assert by_set["group"]["longest_unowned_s"] == 57.0
    assert [w["waited_s"] for w in waits] == [0.0, 0.0, 4.0]


def test_each_wait_gets_its_generations_reprocessed_rows() -> None:
    _, waits = ownership([assign(0, "group/m0", 1, 0), assign(1, "group/m1", 2, 1)], START, END)
    rows = [{"set": "group", "generation": 2, "rows": 5, "distinct": 5, "reprocessed": 3}]
    assert [w["reprocessed"] for w in with_reprocessed(waits, rows)] == [0, 3]  # type: ignore[list-item]
    assert with_reprocessed(waits, None) == waits


@pytest.mark.spark
@pytest.mark.skipif(
    shutil.which("java") is None and not os.environ.get("JAVA_HOME"),
    reason="Spark needs a Java runtime (java on PATH or JAVA_HOME); none found",
)
def test_the_ownership_check_on_a_hand_built_cell(tmp_path: Path, spark: Any) -> None:
    log = [(100 + o, 0, o) for o in range(4)] + [(200 + o, 1, o) for o in range(2)]
    ledger = [led(seq, p=p, o=o, ack=T + 500) for seq, p, o in log]
    consumed = [
        (100, 0, 0, "group/m0", T + 1000, 1),
        (101, 0, 1, "group/m0", T + 1001, 1),
        (200, 1, 0, "group/m1", T + 1000, 2),
        # after the rebalance m1 owns p0 and reads 101 again (not committed), then goes on
        (101, 0, 1, "group/m1", T + 8000, 4),
        (102, 0, 2, "group/m1", T + 8001, 4),
        (103, 0, 3, "group/m1", T + 8002, 4),
        (201, 1, 1, "group/m1", T + 8003, 4),
    ]
    history = [
        *complete_history(end=T + 10_000),
        assign(100, "group/m0", 1, 0),
        assign(100, "group/m1", 2, 1),
        ev(T + 2_000, "consumer.crash", consumer="group/m0", pid=9),
        revoke(5_000, "group/m1", 2, 1),
        assign(7_000, "group/m0", 3),  # the restarted m0 gets nothing
        assign(7_000, "group/m1", 4, 0, 1),
    ]
    cell = write_cell(tmp_path / "cell", ledger, consumed, log, [], history)
    summary = verify(spark, cell)
    assert summary["ownership_by_set"] == {
        "group": {
            "assignments": 4,
            "revocations": 1,
            "unowned_s": 5.0 + 2.0,  # p0 from the crash, p1 from the revoke
            "longest_unowned_s": 5.0,
        }
    }
    assert [
        (w["generation"], w["waited_s"], w["reprocessed"]) for w in summary["generation_waits"]
    ] == [
        (1, 0.0, 0),
        (2, 0.0, 0),
        (3, 0.0, 0),
        (4, 5.0, 1),
    ]
    assert PER_SET_KEYS["unowned_s"] == "ownership_by_set"
    assert lookup("unowned_s.group", summary) == 7.0  # type: ignore[arg-type]
