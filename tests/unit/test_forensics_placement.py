"""The placement rule of broker forensics on hand-built tables (answers known by
construction): the ledger acknowledged seqs 1-8 in partition 0 at offsets 1-8; the final
log holds 1, 2 (so 3-8 are lost); the copies: a deposed leader's copy at heal holds 3 and 4,
a copy before a wipe holds 5, the final copies start at offset 6 (6 was deleted by
retention), and 7 and 8 are in no copy."""

from __future__ import annotations

from typing import Any

import pytest

from spark_jobs.broker_truncations import Truncation
from spark_jobs.checks.forensics import (
    CLOCK_SKEWED,
    IN_FINAL_COPY,
    LOG_CLOCK_TOLERANCE_MS,
    CopyFacts,
    Damage,
    LogTruncations,
    log_truncations,
    lost_records,
    placed,
    summarise,
)
from spark_jobs.local_rows import local_frame

pytestmark = pytest.mark.spark

LEDGER = (
    "seq bigint, partition int, offset bigint, status string, txn bigint, outcome string, "
    "ack_ts bigint"
)
SEGMENTS = (
    "capture string, node string, ts bigint, topic string, partition int, offset bigint, "
    "seq bigint, record_ts bigint"
)
LABELS = {"01-heal-broker-1": "heal", "02-wipe-broker-2": "wipe", "03-collect-broker-3": "collect"}


def _tables(spark: Any, extra_segments: list[tuple[Any, ...]] = ()) -> tuple[Any, Any, Any]:  # type: ignore[assignment]
    ledger = local_frame(
        spark,
        [(s, 0, s, "ok", None, None, s * 10) for s in range(1, 9)]
        + [(9, 0, None, "fail", None, None, None)],
        LEDGER,
    )
    log = local_frame(spark, [(1, True), (2, True)], "seq bigint, committed boolean")
    rows = [
        ("01-heal-broker-1", "broker-1", 100, "chaos", 0, 3, 3, 1),
        ("01-heal-broker-1", "broker-1", 100, "chaos", 0, 4, 4, 1),
        ("01-heal-broker-1", "broker-1", 100, "other", 0, 7, 7, 1),  # another topic: ignored
        ("02-wipe-broker-2", "broker-2", 200, "chaos", 0, 5, 5, 1),
        ("03-collect-broker-3", "broker-3", 300, "chaos", 0, 6, 1, 1),
        *extra_segments,
    ]
    return ledger, log, local_frame(spark, rows, SEGMENTS)


def _place(spark: Any, facts: CopyFacts, segments: Any = None, **kw: Any) -> dict[str, Any]:
    ledger, log, segs = _tables(spark, **kw)
    rows = placed(
        spark, lost_records(ledger, log), segs if segments is None else segments, facts, {0: 6}
    )
    return summarise(rows)


def test_each_lost_record_is_placed(spark: Any) -> None:
    out = _place(spark, CopyFacts("chaos", [], LABELS))
    # 3, 4: in the heal copy; 5: in the wipe copy only; 6-8: in no copy, not below 6.
    assert out["lost_where"] == {
        "never_appended": 3,
        "truncated": 2,
        "deleted": 1,
        "unsynced": 0,
        "corrupted": 0,
        "unknown": 0,
    }
    by_seq = {s["seq"]: s for s in out["lost_where_sample"]}
    assert {k: v["where"] for k, v in by_seq.items()} == {
        3: "truncated",
        4: "truncated",
        5: "deleted",
        6: "never_appended",
        7: "never_appended",
        8: "never_appended",
    }
    assert by_seq[3] | {} == {
        "seq": 3,
        "where": "truncated",
        "partition": 0,
        "offset": 3,
        "broker": "broker-1",
        "capture": "01-heal-broker-1",
        "capture_ts": 100,
        "evidence": "copy",
    }
    assert by_seq[7]["broker"] is None and by_seq[7]["offset"] == 7  # where it was acked


def test_below_the_final_log_start_is_deleted(spark: Any) -> None:
    ledger, log, segs = _tables(spark)
    rows = placed(spark, lost_records(ledger, log), segs, CopyFacts("chaos", [], LABELS), {0: 8})
    out = summarise(rows)
    where = {s["seq"]: s["where"] for s in out["lost_where_sample"]}
    assert where[6] == where[7] == "deleted" and where[8] == "never_appended"


def test_a_failed_copy_makes_records_in_no_copy_unknown(spark: Any) -> None:
    blocked = "copy 04-heal-broker-2 of broker-2 failed: boom"
    out = _place(spark, CopyFacts("chaos", [blocked], LABELS))
    assert out["lost_where"] == {
        "never_appended": 0,
        "truncated": 2,
        "deleted": 1,
        "unsynced": 0,
        "corrupted": 0,
        "unknown": 3,
    }
    ((reason, n),) = out["lost_where_reasons"].items()
    assert n == 3 and reason.startswith(blocked + ", and no broker logged a truncation")


def test_a_record_in_a_final_copy_but_not_in_the_final_read_is_unknown(spark: Any) -> None:
    extra = [("03-collect-broker-3", "broker-3", 300, "chaos", 0, 8, 8, 1)]
    out = _place(spark, CopyFacts("chaos", [], LABELS), extra_segments=extra)
    assert out["lost_where"]["unknown"] == 1
    assert out["lost_where_reasons"] == {IN_FINAL_COPY: 1}


def test_without_copies_every_lost_record_is_unknown(spark: Any) -> None:
    ledger, log, _ = _tables(spark)
    facts = CopyFacts("chaos", ["no segments.decoded event: never copied"], {})
    out = summarise(placed(spark, lost_records(ledger, log), None, facts, {}))
    assert out["lost_where"] == {
        "never_appended": 0,
        "truncated": 0,
        "deleted": 0,
        "unsynced": 0,
        "corrupted": 0,
        "unknown": 6,
    }
    ((reason, n),) = out["lost_where_reasons"].items()
    assert n == 6 and reason.startswith("no segments.decoded event: never copied, and no broker")


def test_records_acked_after_a_running_brokers_copy_are_unknown(spark: Any) -> None:
    out = _place(spark, CopyFacts("chaos", [], LABELS, open_copy=(70, "01-heal-broker-1")))
    where = {s["seq"]: s["where"] for s in out["lost_where_sample"]}
    assert where[6] == "never_appended" and where[7] == where[8] == "unknown"
    ((reason, n),) = out["lost_where_reasons"].items()
    assert n == 2 and "after copy 01-heal-broker-1 of a broker still running" in reason


def _cut(offset: int, ts: int, partition: int = 0, broker: str = "broker-1") -> Truncation:
    return Truncation(broker, ts, "chaos", partition, offset, f"... Truncating to offset {offset}")


def test_a_logged_truncation_places_what_no_copy_holds(spark: Any) -> None:
    # 7 and 8 were acknowledged (at 70, 80) after broker-1's copy at heal (at 65); broker-1
    # logged a truncation of chaos-0 to offset 7 at 5000: both truncated, evidence the log.
    facts = CopyFacts("chaos", [], LABELS, open_copy=(65, "01-heal-broker-1"))
    ledger, log, segs = _tables(spark)
    logs = LogTruncations([_cut(7, 5000)])
    out = summarise(placed(spark, lost_records(ledger, log), segs, facts, {0: 6}, logs))
    assert out["lost_where"] == {
        "never_appended": 1,
        "truncated": 4,
        "deleted": 1,
        "unsynced": 0,
        "corrupted": 0,
        "unknown": 0,
    }
    by_seq = {s["seq"]: s for s in out["lost_where_sample"]}
    assert by_seq[3]["evidence"] == "copy" and by_seq[6]["evidence"] is None
    assert by_seq[8] == {
        "seq": 8,
        "where": "truncated",
        "partition": 0,
        "offset": 8,
        "broker": "broker-1",
        "capture": None,
        "capture_ts": None,
        "evidence": "log",
        "log_ts": 5000,
        "truncated_to": 7,
    }


def test_a_logged_truncation_by_the_broker_that_rejoined_wins_over_an_earlier_follower_s(
    spark: Any,
) -> None:
    # broker-2, a follower of the old leader, truncated chaos-0 to 7 first (at 4000); broker-1,
    # copied before it rejoined, at 5000: it held what it acknowledged alone, so it is named.
    rejoined = frozenset({"broker-1"})
    facts = CopyFacts("chaos", [], LABELS, open_copy=(65, "01-heal-broker-1"), rejoined=rejoined)
    ledger, log, segs = _tables(spark)
    logs = LogTruncations([_cut(7, 4000, broker="broker-2"), _cut(7, 5000)])
    out = summarise(placed(spark, lost_records(ledger, log), segs, facts, {0: 6}, logs))
    by_seq = {s["seq"]: s for s in out["lost_where_sample"]}
    assert (by_seq[8]["broker"], by_seq[8]["log_ts"]) == ("broker-1", 5000)
    # Without a broker that rejoined, the first truncation in time is taken, as before.
    facts = CopyFacts("chaos", [], LABELS, open_copy=(65, "01-heal-broker-1"))
    out = summarise(placed(spark, lost_records(ledger, log), segs, facts, {0: 6}, logs))
    by_seq = {s["seq"]: s for s in out["lost_where_sample"]}
    assert (by_seq[8]["broker"], by_seq[8]["log_ts"]) == ("broker-2", 4000)


def test_a_logged_truncation_above_the_offset_or_before_the_ack_places_nothing(
    spark: Any,
) -> None:
    facts = CopyFacts("chaos", [], LABELS, open_copy=(65, "01-heal-broker-1"))
    ledger, log, segs = _tables(spark)
    early = 70 - LOG_CLOCK_TOLERANCE_MS - 1  # before 7's ack, beyond the clock tolerance
    logs = LogTruncations([_cut(8, 5000), _cut(0, early), _cut(0, 5000, partition=1)])
    out = summarise(placed(spark, lost_records(ledger, log), segs, facts, {0: 6}, logs))
    where = {s["seq"]: (s["where"], s["evidence"]) for s in out["lost_where_sample"]}
    # 8: truncated to 8 (at or below 8), after its ack; 7: the only cut at or below 7 of
    # partition 0 came before it was acknowledged.
    assert where[8] == ("truncated", "log") and where[7] == ("unknown", None)


def test_within_the_clock_tolerance_a_logged_truncation_counts(spark: Any) -> None:
    facts = CopyFacts("chaos", [], LABELS, open_copy=(65, "01-heal-broker-1"))
    ledger, log, segs = _tables(spark)
    logs = LogTruncations([_cut(7, 80 - LOG_CLOCK_TOLERANCE_MS)])
    out = summarise(placed(spark, lost_records(ledger, log), segs, facts, {0: 6}, logs))
    assert out["lost_where"]["truncated"] == 4 and out["lost_where"]["unknown"] == 0


def test_unused_broker_logs_say_why_in_the_unknowns_reason(spark: Any) -> None:
    facts = CopyFacts("chaos", [], LABELS, open_copy=(65, "01-heal-broker-1"))
    ledger, log, segs = _tables(spark)
    logs = LogTruncations([], CLOCK_SKEWED)
    out = summarise(placed(spark, lost_records(ledger, log), segs, facts, {0: 6}, logs))
    ((reason, n),) = out["lost_where_reasons"].items()
    assert n == 2 and reason.endswith(f"({CLOCK_SKEWED})")


def test_a_clock_skew_fault_turns_the_log_rule_off(tmp_path: Any) -> None:
    (tmp_path / "brokers").mkdir()
    (tmp_path / "brokers" / "1.log").write_text(
        "[2026-11-25 04:35:01,304] INFO [UnifiedLog partition=chaos-0, dir=/d] "
        "Truncating to offset 831 (kafka.log.UnifiedLog)\n"
    )
    (cut,) = log_truncations(tmp_path, [], "chaos").found
    assert (cut.broker, cut.partition, cut.offset) == ("broker-1", 0, 831)
    skew = [{"kind": "fault.inject", "fault": "clock-skew", "target": "broker-2"}]
    assert log_truncations(tmp_path, skew, "chaos") == LogTruncations([], CLOCK_SKEWED)  # type: ignore[arg-type]


def test_a_power_loss_places_what_it_dropped_as_unsynced(spark: Any) -> None:
    # plfs dropped chaos-0's segment from base 6 on broker-1 and broker-2 at 75: 6 and 7 were
    # acknowledged (at 60, 70) before the cut, 8 (at 80) after it; 3 and 4 are in the heal
    # copy, which was taken after the cut (they survived it): truncated still.
    cut = (Damage("unsynced", 75, "broker-1", 0, 6), Damage("unsynced", 75, "broker-2", 0, 6))
    other = Damage("unsynced", 75, "broker-3", 1, 0)  # another partition: no record of it
    out = _place(spark, CopyFacts("chaos", [], LABELS, damaged=(*cut, other)))
    assert out["lost_where"] == {"never_appended": 1, "truncated": 2, "deleted": 1, "unsynced": 2, "corrupted": 0, "unknown": 0}  # fmt: skip
    by_seq = {s["seq"]: s for s in out["lost_where_sample"]}
    assert by_seq[3]["where"] == "truncated" and by_seq[8]["where"] == "never_appended"
    assert by_seq[6] | {} == {
        "seq": 6,
        "where": "unsynced",
        "partition": 0,
        "offset": 6,
        "broker": "broker-1,broker-2",
        "capture": None,
        "capture_ts": None,
        "evidence": "plfs",
    }


def test_a_damaged_segment_places_its_records_as_corrupted_even_in_a_heal_copy(
    spark: Any,
) -> None:
    # broker-1's chaos-0 segment from base 4 damaged at 90: 4 (in its heal copy: the decoder
    # read past the bad batch, Kafka's recovery did not), 6, 7, 8; 3 is below the segment.
    facts = CopyFacts("chaos", [], LABELS, damaged=(Damage("corrupted", 90, "broker-1", 0, 4),))
    out = _place(spark, facts)
    where = {s["seq"]: s["where"] for s in out["lost_where_sample"]}
    assert where == {3: "truncated", 4: "corrupted", 5: "corrupted", 6: "corrupted",
                     7: "corrupted", 8: "corrupted"}  # fmt: skip
    assert out["lost_where"]["corrupted"] == 5
    assert {s["broker"] for s in out["lost_where_sample"] if s["where"] == "corrupted"} == {
        "broker-1"
    }


def test_the_sample_names_only_the_brokers_of_the_damage_that_placed_the_record(
    spark: Any,
) -> None:
    # broker-1 lost chaos-0's unsynced bytes from base 6 at 75; broker-2's segment from base 7
    # was damaged at 90: 7 is covered by both and corrupted wins, naming broker-2 alone.
    damaged = (Damage("unsynced", 75, "broker-1", 0, 6), Damage("corrupted", 90, "broker-2", 0, 7))
    out = _place(spark, CopyFacts("chaos", [], LABELS, damaged=damaged))
    by_seq = {s["seq"]: (s["where"], s["broker"]) for s in out["lost_where_sample"]}
    assert by_seq[6] == ("unsynced", "broker-1")
    assert by_seq[7] == by_seq[8] == ("corrupted", "broker-2")
