"""The checks on hand-built cells whose answers are known by construction."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from harness.results.metrics import BROKER_FIGURES, SCHEDULE_METRICS
from harness.results.tables import COMMITS, CONSUMED, LEDGER, LOG, write_table
from harness.spec import Cell, expand_cells, parse_spec
from spark_jobs.local_rows import local_frame

pytestmark = [
    pytest.mark.spark,
    pytest.mark.skipif(
        shutil.which("java") is None and not os.environ.get("JAVA_HOME"),
        reason="Spark needs a Java runtime (java on PATH or JAVA_HOME); none found",
    ),
]

T = 1_700_000_000_000  # a base wall-clock time in ms


Row = tuple[Any, ...]


def led(
    seq: int, status: str = "ok", p: int | None = 0, o: int | None = None, ack: int | None = None
) -> Row:
    """A ledger row; send_ts is 5 ms before the ack (or T+seq when there is none)."""
    send = ack - 5 if ack is not None else T + seq
    error = None if status == "ok" else "timed out"
    return (seq, f"k{seq}", p, o, status, error, send, ack if ack is not None else None)


def write_rows(path: Path, schema: pa.Schema, rows: list[Row]) -> None:
    """Rows give the schema's first columns in order; the columns after them (appended to
    the contract later) are null, as write_table makes them."""
    width = len(rows[0]) if rows else len(schema)
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in range(width)]
    write_table(path, schema, dict(zip(schema.names[:width], columns, strict=True)))


def write_cell(
    root: Path,
    ledger: list[Row] | None = None,
    consumed: list[Row] | None = None,
    log: list[Row] | None = None,
    commits: list[Row] | None = None,
    history: list[dict[str, Any]] | None = None,
) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, rows, schema in (
        ("ledger", ledger, LEDGER),
        ("consumed", consumed, CONSUMED),
        ("log", log, LOG),
        ("commits", commits, COMMITS),
    ):
        if rows is not None:
            write_rows(root / f"{name}.parquet", schema, rows)
    if history is not None:
        history = as_written(history, ledger, log)
        lines = [json.dumps(e) for e in history]
        (root / "history.jsonl").write_text("\n".join(lines) + "\n")
    return root


def as_written(
    history: list[dict[str, Any]], ledger: list[Row] | None, log: list[Row] | None
) -> list[dict[str, Any]]:
    """The history as a run writes it beside these tables (the evidence check holds them to
    it): a producer.end counting the ledger unless one is given, a complete log.read's
    records the log's rows."""
    events = [
        {**e, "records": len(log)}
        if e["kind"] == "log.read" and e.get("complete") is True and log is not None
        else e
        for e in history
    ]
    if ledger is not None and not any(e["kind"] == "producer.end" for e in events):
        acked = sum(1 for row in ledger if row[4] == "ok")
        end = {"kind": "producer.end", "attempted": len(ledger), "acked": acked}
        events.append({"ts": max((e["ts"] for e in events), default=T), **end})
    return events


def ev(ts: int, kind: str, **fields: Any) -> dict[str, Any]:
    return {"ts": ts, "kind": kind, **fields}


def complete_history(end: int = T + 10_000, drained: bool = True) -> list[dict[str, Any]]:
    return [
        ev(T, "phase", phase="workload"),
        ev(T, "consumer.start", consumer="group/m0", generation=1, partitions=[0]),
        ev(end, "drain.end", complete=drained, lag={}),
        ev(end + 1, "log.read", complete=True, records=0),
    ]


def verify(spark: Any, cell: Path) -> dict[str, Any]:
    from spark_jobs.verify import verify_cell

    return verify_cell(spark, cell)


# --- ledger against log, consumer sets ---------------------------------------------------

RECORDS_LEDGER = [
    led(1, o=0, ack=T + 10),
    led(2, o=1, ack=T + 20),
    led(3, o=2, ack=T + 30),  # ok, offset known, not in the log: lost
    led(4, p=None, o=None, ack=T + 40),  # acks=0 style: ok without offset, not in log: lost
    led(5, p=None, o=None, ack=T + 50),  # acks=0 style, in the log: fine
    led(6, "fail"),  # in the log although failed: unacked_present
    led(7, "unknown"),  # in the log: unacked_present
    led(8, "unknown"),  # not in the log: fine
    led(9, p=1, o=0, ack=T + 90),  # written twice: duplicated
]
RECORDS_LOG = [
    (1, 0, 0),
    (2, 0, 1),
    (2, 0, 1),  # the same place read twice is not a duplicate
    (5, 0, 2),
    (6, 0, 3),
    (7, 1, 0),
    (9, 1, 1),
    (9, 1, 2),
]
RECORDS_CONSUMED = [
    (1, 0, 0, "group/m0", T + 100, 1),
    (2, 0, 1, "group/m0", T + 101, 1),
    (5, 0, 2, "group/m0", T + 102, 1),
    (9, 1, 1, "group/m1", T + 103, 1),
    (1, 0, 0, "spark/q", T + 100, 1),
    (2, 0, 1, "spark/q", T + 101, 1),
    (3, 0, 2, "spark/q", T + 102, 1),
]


@pytest.fixture(scope="module")
def records_cell(tmp_path_factory: pytest.TempPathFactory, spark: Any) -> dict[str, Any]:
    history = [
        *complete_history(),
        ev(T, "consumer.start", consumer="audit/m0", generation=1, partitions=[0, 1]),
    ]
    cell = write_cell(
        tmp_path_factory.mktemp("records"),
        RECORDS_LEDGER,
        RECORDS_CONSUMED,
        RECORDS_LOG,
        [],
        history,
    )
    return verify(spark, cell)


def test_ledger_counts_and_samples(records_cell: dict[str, Any]) -> None:
    counts = records_cell["counts"]
    assert counts["attempted"] == 9
    assert counts["acked"] == 6
    assert counts["lost"] == 2
    assert records_cell["lost_seqs_sample"] == [3, 4]
    assert counts["unacked_present"] == 2
    assert counts["duplicated"] == 1
    assert records_cell["duplicated_seqs_sample"] == [9]
    assert "lost" not in records_cell["undecided"]


def test_lost_never_consumed_per_set_and_max(records_cell: dict[str, Any]) -> None:
    # ok = {1,2,3,4,5,9}; group saw {1,2,5,9}; spark saw {1,2,3}; audit (history only) nothing.
    assert records_cell["lost_never_consumed_by_set"] == {"audit": 6, "group": 2, "spark": 3}
    assert records_cell["counts"]["lost_never_consumed"] == 6


def test_log_read_incomplete_makes_log_checks_unknown(tmp_path: Path, spark: Any) -> None:
    history = [*complete_history()[:-1], ev(T + 10_001, "log.read", complete=False, records=7)]
    cell = write_cell(tmp_path, RECORDS_LEDGER, RECORDS_CONSUMED, RECORDS_LOG, [], history)
    result = verify(spark, cell)
    counts, undecided = result["counts"], result["undecided"]
    assert counts["lost"] is None and counts["duplicated"] is None
    assert counts["unacked_present"] is None
    assert "incomplete" in undecided["lost"] and "records=7" in undecided["lost"]
    assert counts["attempted"] == 9  # the ledger alone still decides these
    assert counts["lost_never_consumed"] == 3


def test_missing_consumed_and_no_log_read(tmp_path: Path, spark: Any) -> None:
    history = complete_history()[:-1]  # no log.read event
    cell = write_cell(tmp_path, RECORDS_LEDGER, None, RECORDS_LOG, None, history)
    result = verify(spark, cell)
    counts, undecided = result["counts"], result["undecided"]
    assert counts["lost"] is None and "no log.read" in undecided["lost"]
    for name in ("reprocessed", "out_of_order", "lost_never_consumed"):
        assert counts[name] is None
        assert undecided[name] == "consumed.parquet missing"
    assert result["max_stall_s"] is None and "consumed.parquet" in undecided["max_stall_s"]
    assert result["resumptions"] == []


# --- consumers: reprocessing, order, resumption --------------------------------------------

LOG_P0 = [(100 + o, 0, o) for o in range(10)]
LOG_P1 = [(200 + o, 1, o) for o in range(5)]
LOG_P2 = [(300 + o, 2, o) for o in range(2)]


def _consumer_rows() -> list[Row]:
    rows: list[Row] = []
    # Generation 1: m0 reads p0 0..5 all in one millisecond (order = file order), p1 0..2.
    rows += [(100 + o, 0, o, "group/m0", T + 1000, 1) for o in range(6)]
    rows += [(200 + o, 1, o, "group/m0", T + 1000 + o, 1) for o in range(3)]
    # Generation 2: m0 resumes p0 at its commit (4) and re-reads 4, 5; then seeks back to 8.
    rows += [(100 + o, 0, o, "group/m0", T + 2000 + o, 2) for o in range(4, 10)]
    rows += [(108, 0, 8, "group/m0", T + 2010, 2)]
    # m1 resumes p1 at 4 although 3 was committed: offset 3 is skipped.
    rows += [(204, 1, 4, "group/m1", T + 2000, 2)]
    # m1 reads p2, for which nothing was ever committed.
    rows += [(300 + o, 2, o, "group/m1", T + 2000 + o, 2) for o in range(2)]
    # Another set reading the same records is not reprocessing.
    rows += [(100 + o, 0, o, "spark/q", T + 1500, 1) for o in range(3)]
    return rows


CONSUMER_COMMITS = [
    ("group/m0", 0, 2, T + 1001),
    ("group/m0", 0, 4, T + 1004),
    ("group/m0", 1, 3, T + 1003),
    ("group/m0", 0, 6, T + 5000),  # after generation 2 started: not the resume point
]


@pytest.fixture(scope="module")
def consumer_cell(tmp_path_factory: pytest.TempPathFactory, spark: Any) -> dict[str, Any]:
    ledger = [led(r[0], p=r[1], o=r[2], ack=T + 500) for r in LOG_P0 + LOG_P1 + LOG_P2]
    cell = write_cell(
        tmp_path_factory.mktemp("consumers"),
        ledger,
        _consumer_rows(),
        LOG_P0 + LOG_P1 + LOG_P2,
        CONSUMER_COMMITS,
        complete_history(),
    )
    return verify(spark, cell)


def test_reprocessed_total_and_by_generation(consumer_cell: dict[str, Any]) -> None:
    # group: 19 rows, 16 distinct seqs; spark: 3 rows, 3 distinct.
    assert consumer_cell["counts"]["reprocessed"] == 3
    assert consumer_cell["reprocessed_by_generation"] == [
        {"set": "group", "generation": 1, "rows": 9, "distinct": 9, "reprocessed": 0},
        {"set": "group", "generation": 2, "rows": 10, "distinct": 9, "reprocessed": 3},
        {"set": "spark", "generation": 1, "rows": 3, "distinct": 3, "reprocessed": 0},
    ]


def test_out_of_order_only_within_one_consumer_and_generation(
    consumer_cell: dict[str, Any],
) -> None:
    # Only m0's seek from 9 back to 8 in generation 2; the restart from 5 to 4 is not it.
    assert consumer_cell["counts"]["out_of_order"] == 1


def test_resumptions_exact_skipped_and_without_commit(consumer_cell: dict[str, Any]) -> None:
    assert consumer_cell["resumptions"] == [
        {
            "set": "group",
            "consumer": "group/m0",
            "generation": 2,
            "partition": 0,
            "committed": 4,
            "first_offset": 4,
            "exact": True,
            "skipped": 0,
            "reread": 2,
        },
        {
            "set": "group",
            "consumer": "group/m1",
            "generation": 2,
            "partition": 1,
            "committed": 3,
            "first_offset": 4,
            "exact": False,
            "skipped": 1,
            "reread": 0,
        },
        {
            "set": "group",
            "consumer": "group/m1",
            "generation": 2,
            "partition": 2,
            "committed": None,
            "first_offset": 0,
            "exact": None,
            "skipped": None,
            "reread": 0,
        },
    ]
    # No fault; and every record was sent before the first ack (all acked at T + 500): the
    # producer's start, no steady baseline either. A hand-built cell has no broker logs and
    # no metrics.parquet: Kafka's own figures are undecided, never 0; no producer.start with
    # a rate: the producer's schedule is unknown.
    assert set(consumer_cell["undecided"]) == {
        "ack_p99_ms_faulted",
        "ack_p99_ms_steady",
        "ack_p99_ms_recovering",
        *SCHEDULE_METRICS,
        "schedule_notes",
        "broker_errors",
        *(f"broker.{name}" for name in BROKER_FIGURES),
    }


# --- stall and unavailability --------------------------------------------------------------


def test_unseen_commit_is_not_a_skip(tmp_path: Path, spark: Any) -> None:
    """A member killed after its commit succeeded but before it logged it: the next
    generation starts past the last commit we saw, yet it skipped nothing."""
    log = [(100 + o, 0, o) for o in range(8)]
    consumed = [(100 + o, 0, o, "group/m0", T + 1000 + o, 1) for o in range(6)]
    consumed += [(100 + o, 0, o, "group/m0", T + 3000 + o, 2) for o in range(6, 8)]
    commits = [("group/m0", 0, 3, T + 1004)]  # the commit of 6 was never logged
    ledger = [led(r[0], p=0, o=r[2], ack=T + 500) for r in log]
    cell = write_cell(tmp_path, ledger, consumed, log, commits, complete_history())
    (row,) = verify(spark, cell)["resumptions"]
    assert (row["committed"], row["first_offset"], row["exact"]) == (3, 6, False)
    assert row["skipped"] == 0 and row["reread"] == 0


def _stall_data(extra_ledger: list[Row], extra_log: list[Row]) -> tuple[list[Row], ...]:
    """group is blocked from T+510 to T+5000 (a coordinator-down style gap) while records
    6..10 wait; from T+5004 to T+9000 nothing is available (must not count)."""
    ledger = [led(i, o=i, ack=T + 100 * i) for i in range(1, 11)]
    ledger += [led(11, o=11, ack=T + 9000)]
    ledger += [led(12, o=12, ack=T + 9500)]  # ok but not in the log: never available
    ledger += [led(13, "fail")]
    ledger += extra_ledger
    log = [(i, 0, i) for i in range(1, 12)] + extra_log
    consumed = [(i, 0, i, "group/m0", T + 100 * i + 10, 1) for i in range(1, 6)]
    consumed += [(i, 0, i, "group/m0", T + 4994 + i, 1) for i in range(6, 11)]
    consumed += [(11, 0, 11, "group/m0", T + 9010, 1)]
    consumed += [(i, 0, i, "spark/q", T + 100 * i + 10, 1) for i in range(1, 11)]
    consumed += [(11, 0, 11, "spark/q", T + 9010, 1)]
    return ledger, consumed, log


def test_stall_counts_only_waiting_time(tmp_path: Path, spark: Any) -> None:
    ledger, consumed, log = _stall_data([], [])
    result = verify(spark, write_cell(tmp_path, ledger, consumed, log, [], complete_history()))
    assert result["stalls_by_set"] == {"group": 4.4, "spark": 0.01}
    assert result["max_stall_s"] == 4.4
    assert result["stall_windows"][0] == {
        "set": "group",
        "start_ms": T + 600,
        "end_ms": T + 5000,
        "duration_s": 4.4,
    }
    assert result["counts"]["lost"] == 1  # seq 12
    assert "max_stall_s" not in result["undecided"]


def test_each_operation_step_gets_the_stalls_and_ack_gaps_of_its_period(
    tmp_path: Path, spark: Any
) -> None:
    """An operation (fault 1) with two steps: 2 down T+200..T+2000, 3 down T+3000..T+3500,
    the operation healed at T+8000. The group's stall T+600..T+5000 spans both periods (2.4 s
    in the first, 2.0 s in the second); the ack gap T+1000..T+9000 covers 2.0 s and 5.0 s."""
    ledger, consumed, log = _stall_data([], [])
    history = [
        *complete_history(),
        ev(T + 100, "fault.inject", fault_id=1, fault="upgrade", target="cluster"),
        ev(T + 200, "fault.inject", fault_id=2, step_of=1, fault="upgrade-step", target="b-1"),
        ev(T + 2000, "fault.heal", fault_id=2, fault="upgrade-step", target="b-1"),
        ev(T + 3000, "fault.inject", fault_id=3, step_of=1, fault="upgrade-step", target="b-2"),
        ev(T + 3500, "fault.heal", fault_id=3, fault="upgrade-step", target="b-2"),
        ev(T + 8000, "fault.heal", fault_id=1, fault="upgrade", target="cluster"),
    ]
    result = verify(spark, write_cell(tmp_path, ledger, consumed, log, [], history))
    first, second = result["operation_steps"]
    assert (first["fault_id"], first["step_of"], first["target"]) == (2, 1, "b-1")
    assert (first["start_ms"], first["end_ms"], first["down_s"]) == (T + 200, T + 3000, 1.8)
    assert first["stall_s"] == {"group": 2.4, "spark": 0.01}
    assert (second["start_ms"], second["end_ms"], second["down_s"]) == (T + 3000, T + 8000, 0.5)
    assert second["stall_s"] == {"group": 2.0, "spark": 0.0}
    [gap] = result["unavailable_windows"]
    assert (gap["start_ms"], gap["end_ms"]) == (T + 1000, T + 9000)
    assert (first["unavailable_s"], second["unavailable_s"]) == (2.0, 5.0)


def test_a_cell_without_operation_steps_has_none(tmp_path: Path, spark: Any) -> None:
    ledger, consumed, log = _stall_data([], [])
    result = verify(spark, write_cell(tmp_path, ledger, consumed, log, [], complete_history()))
    assert result.get("operation_steps") is None and result["step_stalls"] == []


def test_consuming_a_record_nobody_waited_for_is_progress(tmp_path: Path, spark: Any) -> None:
    # At T+3000 group reads seq 13, whose send failed (so no set waits for it): that is still
    # progress, and it splits the blocked window (T+600, T+5000] in two.
    ledger, consumed, log = _stall_data([], [(13, 0, 13)])
    consumed += [(13, 0, 13, "group/m0", T + 3000, 1)]
    result = verify(spark, write_cell(tmp_path, ledger, consumed, log, [], complete_history()))
    assert result["stalls_by_set"] == {"group": 2.4, "spark": 0.01}
    assert [w["end_ms"] for w in result["stall_windows"] if w["set"] == "group"][:2] == [
        T + 3000,
        T + 5000,
    ]


def test_stall_open_at_an_incomplete_drain_is_a_lower_bound(tmp_path: Path, spark: Any) -> None:
    # Seq 14 becomes available at T+9005 and is never consumed; the drain ends unfinished,
    # so the last window runs from the last progress (T+9010) to the drain's end (T+20000).
    ledger, consumed, log = _stall_data([led(14, o=14, ack=T + 9005)], [(14, 0, 14)])
    history = complete_history(end=T + 20_000, drained=False)
    result = verify(spark, write_cell(tmp_path, ledger, consumed, log, [], history))
    assert result["stalls_by_set"]["group"] == pytest.approx(10.99)
    assert result["max_stall_s"] == pytest.approx(10.99)
    assert "lower bound" in result["undecided"]["max_stall_s"]
    assert result["counts"]["lost_never_consumed"] is None
    # Not yet consumed when the drain gave up is not never consumed: per set undecided too
    # (a `lost_never_consumed.group` bound is unknown, not failed).
    assert result["lost_never_consumed_by_set"] == {"group": None, "spark": None}
    assert "drain" in result["undecided"]["lost_never_consumed_by_set"]


def test_stall_closed_window_with_incomplete_drain_stays_decided(
    tmp_path: Path, spark: Any
) -> None:
    # Seq 14 waits from T+7000; the final open window (990 ms) is not the longest one.
    ledger, consumed, log = _stall_data([led(14, o=14, ack=T + 7000)], [(14, 0, 14)])
    history = complete_history(drained=False)
    result = verify(spark, write_cell(tmp_path, ledger, consumed, log, [], history))
    assert result["stalls_by_set"]["group"] == 4.4
    assert "max_stall_s" not in result["undecided"]
    assert "lost_never_consumed" in result["undecided"]


def test_unavailable_windows(tmp_path: Path, spark: Any) -> None:
    from spark_jobs.cell_data import LEDGER_SCHEMA, read_parquet
    from spark_jobs.checks.availability import unavailable_windows

    rows: list[Row] = []
    for i in range(101):  # one send every 100 ms over [T, T+10000]
        send = T + 100 * i
        if T + 2000 <= send < T + 5000:
            rows.append((i, f"k{i}", None, None, "fail", "timed out", send, send + 30))
        else:
            rows.append((i, f"k{i}", 0, i, "ok", None, send, send + 5))
    rows.append((999, "late", 0, 999, "ok", None, T + 10_000, T + 60_000))  # acked after the end
    cell = write_cell(tmp_path, rows)
    ledger = read_parquet(spark, cell / "ledger.parquet", LEDGER_SCHEMA)
    assert ledger is not None
    assert unavailable_windows(ledger, 1000) == [
        {"start_ms": T + 1905, "end_ms": T + 5005, "duration_s": 3.1}
    ]
    assert unavailable_windows(ledger, 5000) == []
    result = verify(spark, cell)
    assert result["unavailable_s"] == 3.1
    assert result["counts"]["reprocessed"] is None


def test_earliest_rows_and_order_count_equal_their_direct_forms(spark: Any) -> None:
    """The resumption starts (hash aggregate, then structs at the earliest ts only) and the
    order count against their direct forms, on random series with ts ties, null ts and null
    offsets, and two members of one set reading one partition in one generation: the earliest row per (set, generation, partition) is the
    least (ts, offset, file row, consumer) struct, nulls first; the order count is the
    offsets lower than the previous one in (ts, file row) order per consumer."""
    import random

    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from spark_jobs.cell_data import ROW, consumer_set
    from spark_jobs.checks import consumers as cc

    rng = random.Random(7)
    consumers = ["g/m0", "g/m1", "h/m0"]
    rows = [
        (
            rng.choice(consumers),
            rng.choice([1, 2]),
            rng.choice([0, 1]),
            None if rng.random() < 0.05 else rng.randrange(30),
            None if rng.random() < 0.05 else T + rng.randrange(8),
        )
        for _ in range(400)
    ]
    schema = "consumer string, generation int, partition int, offset bigint, ts bigint"
    df = local_frame(spark, rows, schema).withColumn(ROW, F.monotonically_increasing_id())

    order = Window.partitionBy("consumer", "generation", "partition").orderBy("ts", ROW)
    back = F.col("offset") < F.lag("offset").over(order)
    expected_back = df.withColumn("back", back).filter(F.col("back")).count()
    keys = ["set", "generation", "partition"]
    expected = {
        tuple(r[k] for k in keys): (tuple(r["f"]), r["gen_max"])
        for r in df.withColumn("set", consumer_set(F.col("consumer")))
        .groupBy(*keys)
        .agg(
            F.min(F.struct("ts", "offset", ROW, "consumer")).alias("f"),
            F.max("offset").alias("gen_max"),
        )
        .collect()
    }
    assert any(f[0] is None for f, _ in expected.values())  # a null ts is the earliest
    first_rows = cc._first_rows(cc.with_set(df), keys)
    got = {tuple(r[k] for k in keys): (tuple(r["f"]), r["gen_max"]) for r in first_rows}
    assert expected_back > 0
    assert cc.out_of_order(df) == expected_back
    assert got == expected


@pytest.mark.parametrize("set_count", [40, 1])
def test_stall_frame_equals_its_definition_and_the_counted_form(spark: Any, set_count: int) -> None:
    """stall_frame on random series of 40 sets sharing one ledger (and of one set: its window
    has no partition key), against the definition interval by interval and the counted form
    (tests/unit/stall_oracle.py): records consumed before their ack, consumptions of seqs
    nobody waits for, before the start, at or after the end, never. Every interval's start,
    end, duration, final and waiting flags."""
    import random

    from spark_jobs.checks.stall import stall_frame
    from tests.unit.stall_oracle import by_definition, counted

    rng = random.Random(13)
    start, end = T + 100, T + 160
    avail = {s: T + rng.randint(60, 180) for s in range(30) if rng.random() < 0.85}
    sets = [f"s{i:02d}" for i in range(40)]
    firsts: dict[str, dict[int, int]] = {}
    for name in sets:
        chosen = rng.sample(range(30), rng.randint(0, 30))
        firsts[name] = {
            s: avail.get(s, T + rng.randint(60, 160)) + rng.randint(-15, 40) for s in chosen
        }
    assert any(f < avail.get(s, f) for fs in firsts.values() for s, f in fs.items())  # early ones

    if set_count == 1:  # the set with the most intervals; the other sets' rows stay in the input
        sets = [max(sets, key=lambda name: len(firsts[name]))]
    available = local_frame(spark, list(avail.items()), "seq bigint, av bigint")
    rows = [(name, s, f) for name, fs in firsts.items() for s, f in fs.items()]
    consumed_firsts = local_frame(spark, rows, "set string, seq bigint, fc bigint")
    frame = stall_frame(spark, available, consumed_firsts, sets, start, end).collect()
    got: dict[str, list[tuple[int, int, int, bool, bool]]] = {name: [] for name in sets}
    for r in frame:
        got[r["set"]].append(
            (r["start_ms"], r["end_ms"], r["duration_ms"], r["final"], r["waiting"])
        )
    for name in sets:
        expected = by_definition(avail, firsts[name], start, end)
        assert sorted(got[name], key=lambda i: i[1]) == expected, name
        assert counted(avail, firsts[name], start, end) == expected, name


# --- the lanes of checks (verify._Lane) ------------------------------------------------------


def test_a_lane_error_is_raised_when_joined(spark: Any) -> None:
    from spark_jobs.verify import _Lane

    def broken() -> None:
        raise ValueError("offset check broke")

    lane = _Lane(spark, "test")
    lane.start(broken)
    with pytest.raises(ValueError, match="offset check broke"):
        lane.join()
    lane.stop()


def test_stopping_a_lane_cancels_its_jobs_and_ends_its_thread(spark: Any) -> None:
    """The caller failed: the lane's running job and the ones it starts after are cancelled."""
    from tests.spark_lanes import JOBS, stop_a_busy_lane

    done, errors = stop_a_busy_lane(spark)
    assert errors and "cancel" in errors[0].lower(), errors
    assert len(done) < JOBS
    assert not spark.sparkContext.statusTracker().getActiveJobsIds()


# --- verify leaves the working directory alone (issue 25) ----------------------------------


def _verify_in(cwd: Path, run: Path) -> int:
    """`python -m harness verify RUN` in a fresh process started in `cwd`: the JVM's working
    directory is the one it starts in."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    from tests.spark_jvm import with_test_jvm

    env = with_test_jvm({**os.environ, "PYTHONPATH": str(root)})  # C1 only: tests/spark_jvm.py
    done = subprocess.run(
        [sys.executable, "-m", "harness", "verify", str(run)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode


@pytest.mark.parametrize("read_only", [False, True], ids=["writable", "read-only"])
def test_verify_writes_nothing_into_the_working_directory(tmp_path: Path, read_only: bool) -> None:
    if read_only and os.geteuid() == 0:
        pytest.skip("root writes into a 0o555 folder anyway")
    run = tmp_path / "run"
    (run / "cells").mkdir(parents=True)
    (run / "spec.yaml").write_text("name: t\nseed: 1\nproducer: {records: 3}\nexpect: {lost: 0}\n")
    history = [
        *complete_history(),
        ev(T + 10_002, "phase", phase="collect"),
        ev(T + 10_003, "recovery.end", recovered=True),
    ]
    write_cell(
        run / "cells" / "01_main",
        ledger=[led(i, o=i - 1, ack=T + 10 * i) for i in (1, 2, 3)],
        log=[(i, 0, i - 1) for i in (1, 2, 3)],
        consumed=[(i, 0, i - 1, "group/m0", T + 100 + i, 1) for i in (1, 2, 3)],
        commits=[],
        history=history,
    )
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    if read_only:
        cwd.chmod(0o555)
    try:
        code = _verify_in(cwd, run)
    finally:
        cwd.chmod(0o755)
    assert list(cwd.iterdir()) == []  # Spark's artifacts/ went to the harness's own scratch
    assert code == 0  # the same verdict as from anywhere else: pass
    assert json.loads((run / "summary.json").read_text())["verdict"] == "pass"


def test_small_cells_are_those_planning_and_holding_a_million_ledger_rows_at_most(
    tmp_path: Path,
) -> None:
    """The checks' JVM runs C1 only for small cells (spark_jobs.session.SMALL_CELLS_JVM):
    decided from what the cells plan (a run) or what their folders hold (`verify`)."""
    from harness.verdict.run_verify import small_cells

    def cell(**producer: Any) -> Cell:
        raw = {"name": "x", "producer": producer}
        (only,) = expand_cells(parse_spec(raw), "x.yaml")
        return only

    assert small_cells([cell(rate=500, duration_s=75)])  # 37,500 records
    assert small_cells([cell(rate=10_000, duration_s=100)])  # exactly 1,000,000
    assert not small_cells([cell(rate=500, duration_s=75), cell(rate=10_001, duration_s=100)])
    assert not small_cells([cell(records=5_000_000, rate=1_000_000)])
    assert not small_cells([])  # nothing to judge by: the default tiers

    folder = tmp_path / "cells" / "01_main"
    folder.mkdir(parents=True)
    pq.write_table(pa.table({"seq": pa.array(range(10), pa.int64())}), folder / "ledger.parquet")
    assert small_cells([], [folder])
    assert small_cells([], [tmp_path / "cells" / "02_missing"])  # no ledger: nothing to check
