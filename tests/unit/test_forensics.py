"""Broker forensics without Docker: DumpLogSegments' output of both versions parsed (real
output, tests/unit/data/dump_log), which heals copy which broker and when, what the history
says about the copies, and the expectations `lost_where.<place>`."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cluster.segment_capture import Capture
from harness.faults.kill import KillFault
from harness.faults.partition import PartitionFault
from harness.faults.pause import PauseFault
from harness.faults.stop import StopFault
from harness.results.tables import SEGMENT_LOGS, SEGMENTS
from harness.runner.dump_log import DumpedFile, DumpedRecord, dump_class, parse_dump
from harness.runner.segment_tables import tabulate
from harness.spec.expect import ALLOWED_METRICS, metric_problem, parse_bound
from harness.verdict.checks import evaluate
from spark_jobs.checks.forensics import copy_facts
from tests.unit.fakes import FakeCluster

DATA = Path(__file__).parent / "data" / "dump_log"


@pytest.mark.parametrize("version", ["3.9.2", "4.3.1"])
def test_the_dump_of_both_versions_gives_every_record_with_its_seq(version: str) -> None:
    items = list(parse_dump((DATA / f"dump-log-{version}.txt").read_text().splitlines()))
    files = [i for i in items if isinstance(i, DumpedFile)]
    records = [i for i in items if isinstance(i, DumpedRecord)]
    assert [(f.file.split("/")[-2], f.base_offset) for f in files] == [
        ("chaos-0", 0),
        ("chaos-1", 0),
    ]
    # The probe wrote seqs 0..5 alternately into partitions 0 and 1 (3.9's log4j lines skipped).
    assert [(r.file.split("/")[-2], r.offset, r.seq) for r in records] == [
        ("chaos-0", 0, 0),
        ("chaos-0", 1, 2),
        ("chaos-0", 2, 4),
        ("chaos-1", 0, 1),
        ("chaos-1", 1, 3),
        ("chaos-1", 2, 5),
    ]
    assert all(r.timestamp > 1_700_000_000_000 for r in records)


def test_the_tool_moved_in_4_3() -> None:
    assert dump_class("3.9.2") == "kafka.tools.DumpLogSegments"
    assert dump_class("4.2.2") == "kafka.tools.DumpLogSegments"
    assert dump_class("4.3.1") == "org.apache.kafka.tools.DumpLogSegments"
    assert dump_class("4.4.0") == "org.apache.kafka.tools.DumpLogSegments"


def test_a_record_without_a_payload_seq_is_read_from_its_key_or_left_null() -> None:
    lines = [
        "Dumping /segments/01-heal-broker-1/chaos-0/00000000000000000007.log",
        "Log starting offset: 7",
        "| offset: 7 LogAppendTime: 1795580183935 keySize: 3 valueSize: 4 sequence: -1 "
        "headerKeys: [] key: k42 payload: abcd",
        "| offset: 8 CreateTime: 1795580183935 keySize: -1 valueSize: 6 sequence: 3 "
        "headerKeys: [] endTxnMarker: COMMIT coordinatorEpoch: 0",
        "| offset: 9 CreateTime: 1795580183935 keySize: -1 valueSize: 4 sequence: -1 "
        "headerKeys: [] payload: abcd",
    ]
    records = [i for i in parse_dump(lines) if isinstance(i, DumpedRecord)]
    assert [(r.offset, r.seq) for r in records] == [(7, 42), (8, None), (9, None)]


def test_only_the_first_payload_and_ascii_digits_give_a_seq() -> None:
    """The value is what follows the line's first ` payload: `; a later one (inside the
    value) is not read, and digits beyond ASCII are no seq (they were not ours)."""
    head = "| offset: 3 CreateTime: 1795580183935 keySize: 3 valueSize: 64 sequence: -1 "
    lines = [
        "Dumping /segments/01-heal-broker-1/chaos-0/00000000000000000000.log",
        head + "headerKeys: [] key: k7 payload: abc payload: 00000000000000000042|x",
        head + "headerKeys: [] key: kz payload: " + "\u0663" * 20 + "|x",
        head + "headerKeys: [] key: k9 payload: 0000000000000000004",
        head + "headerKeys: [] key: k1 payload: 00000000000000000042",
    ]
    records = [i for i in parse_dump(lines) if isinstance(i, DumpedRecord)]
    assert [r.seq for r in records] == [7, None, 9, 42]


def test_tabulate_writes_each_copys_records_and_partition_ranges(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    root = tmp_path / "segments"
    (root / "01-heal-broker-1" / "chaos-0").mkdir(parents=True)
    (root / "01-heal-broker-1" / "chaos-0" / "00000000000000000000.log").write_bytes(b"x" * 208)
    captures = [Capture("01-heal-broker-1", "broker-1", "heal", 1000, True)]
    text = (
        (DATA / "dump-log-4.3.1.txt")
        .read_text()
        .replace("/var/lib/kafka/data/", "/segments/01-heal-broker-1/")
    )
    n = tabulate(text.splitlines(), captures, tmp_path / "s.parquet", tmp_path / "l.parquet", root)
    assert n == 6
    seg = pq.read_table(tmp_path / "s.parquet")
    assert seg.schema == SEGMENTS
    assert seg.column("seq").to_pylist() == [0, 2, 4, 1, 3, 5]
    logs = pq.read_table(tmp_path / "l.parquet")
    assert logs.schema == SEGMENT_LOGS
    (row,) = logs.to_pylist()  # only chaos-0 was copied into the folder
    assert (row["log_start"], row["log_end"], row["records"], row["bytes"]) == (0, 3, 3, 208)


# --- which heals copy which broker, and in what state ----------------------------------------
def test_a_kill_heal_copies_the_stopped_broker_before_it_starts() -> None:
    c = FakeCluster()
    f = KillFault(c, 2).inject()
    f.heal()
    assert c.captures == [("broker-2", "heal", "kill", "exited", "")]
    assert c.nodes[1].state == "running"


def test_a_pause_heal_copies_the_frozen_broker_and_stop_too() -> None:
    c = FakeCluster()
    PauseFault(c, 1).inject().heal()
    StopFault(c, 3).inject().heal()
    assert c.captures == [
        ("broker-1", "heal", "pause", "paused", ""),
        ("broker-3", "heal", "stop", "exited", ""),
    ]


def test_an_isolate_heal_copies_the_cut_off_broker_only() -> None:
    c = FakeCluster()
    PartitionFault.isolate(c, 2).inject().heal()
    assert [x[:3] for x in c.captures] == [("broker-2", "heal", "partition")]


def test_a_wipe_copies_the_set_aside_disk_at_inject() -> None:
    c = FakeCluster(mode="zookeeper")
    c.nodes[0].is_controller = False  # the fake's brokers are combined nodes in every mode
    f = KillFault(c, 1, wipe=True).inject()
    assert c.captures == [("broker-1", "wipe", "kill", "exited", ".wiped")]
    f.heal()
    assert c.captures[-1] == ("broker-1", "heal", "kill", "exited", "")


def test_zookeeper_is_never_copied() -> None:
    c = FakeCluster(mode="zookeeper")
    KillFault(c, "zookeeper").inject().heal()
    assert c.captures == []


# --- what the history says about the copies --------------------------------------------------
def _history(*extra: dict[str, object]) -> list[dict[str, object]]:
    return [
        {"ts": 1, "kind": "partition.state", "topic": "chaos", "partition": 0},
        {
            "ts": 2,
            "kind": "segments.captured",
            "label": "01-heal-broker-1",
            "node": "broker-1",
            "reason": "heal",
            "complete": True,
            "fault_id": 1,
        },
        *extra,
        {"ts": 9, "kind": "segments.decoded", "complete": True},
    ]


def test_copy_facts_name_the_topic_and_nothing_blocks_a_whole_set_of_copies() -> None:
    facts = copy_facts(_history(), has_segments=True)
    assert facts.topic == "chaos"
    assert facts.blockers == []
    assert facts.labels == {"01-heal-broker-1": "heal"}


def test_a_failed_copy_or_an_uncopied_wipe_blocks_never_appended() -> None:
    failed = {
        "ts": 3,
        "kind": "segments.captured",
        "label": "02-heal-broker-2",
        "node": "broker-2",
        "reason": "heal",
        "complete": False,
        "error": "boom",
    }
    wipe = {"ts": 4, "kind": "fault.inject", "fault_id": 7, "wipe": True, "target": "broker-3"}
    facts = copy_facts(_history(failed, wipe), has_segments=True)
    assert facts.blockers == [
        "copy 02-heal-broker-2 of broker-2 failed: boom",
        "broker-3's disk was wiped with no copy taken first",
    ]


def test_no_decoding_blocks_everything() -> None:
    facts = copy_facts(_history()[:-1], has_segments=False)
    assert facts.blockers == ["no segments.decoded event: the brokers' logs were never copied"]


# --- expectations on a summary section ---------------------------------------------------------
def test_lost_where_places_are_metrics_and_are_looked_up_in_their_section() -> None:
    assert "lost_where.truncated" in ALLOWED_METRICS
    assert metric_problem("lost_where.truncated", parse_bound(">= 1"), []) is None
    assert metric_problem("lost_where.elsewhere", parse_bound(">= 1"), []) is not None
    summary = {
        "counts": {"lost": 3},
        "lost_where": {
            "never_appended": 0,
            "truncated": 3,
            "deleted": 0,
            "unsynced": 0,
            "corrupted": 0,
            "unknown": 0,
        },
    }
    (check,) = evaluate({"lost_where.truncated": parse_bound(">= 1")}, summary)  # type: ignore[arg-type]
    assert (check.verdict, check.detail) == ("pass", "lost_where.truncated = 3, expected >= 1")
    undecided = {"lost_where": None, "undecided": {"lost_where": "lost undecided (x)"}}
    (check,) = evaluate({"lost_where.unknown": parse_bound(0)}, undecided)  # type: ignore[arg-type]
    assert check.verdict == "unknown" and "lost undecided (x)" in check.detail


def test_the_report_shows_a_logged_truncation_as_the_evidence() -> None:
    from harness.report.lost_where import lost_where_section

    summary = {
        "lost_where": {"never_appended": 0, "truncated": 2, "deleted": 0, "unsynced": 0, "corrupted": 0, "unknown": 0},
        "lost_where_sample": [
            {"seq": 1, "where": "truncated", "partition": 0, "offset": 1, "broker": "broker-1",
             "capture": "01-heal-broker-1", "capture_ts": 1795581289676, "evidence": "copy"},
            {"seq": 9, "where": "truncated", "partition": 0, "offset": 9, "broker": "broker-1",
             "capture": None, "capture_ts": None, "evidence": "log",
             "log_ts": 1795581301304, "truncated_to": 5},
        ],
    }  # fmt: skip
    section = lost_where_section(summary)
    assert section is not None
    copy, log = section["examples"]
    assert (copy["evidence"], copy["captured"], copy["logged"]) == (
        "copy",
        "2026-11-25 04:34:49.676",
        "",
    )
    assert (log["evidence"], log["captured"], log["logged"]) == (
        "log",
        "",
        "truncated to 5 at 2026-11-25 04:35:01.304",
    )


def test_the_damaged_segments_are_read_from_fault_discarded() -> None:
    from spark_jobs.checks.forensics import Damage, damages

    history = [
        {"ts": 1, "kind": "topic.create", "topic": "my-topic"},
        {"ts": 5, "kind": "fault.discarded", "fault": "power-loss", "discarded": {
            "broker-1": {"segments": ["__consumer_offsets-48/00000000000000000000.log",
                                      "my-topic-0/00000000000000000042.log"]},
            "broker-2": {"segments": []}}},
        {"ts": 9, "kind": "fault.discarded", "fault": "corrupt", "discarded": {
            "broker-3": {"file": "my-topic-1/00000000000000000007.log", "offsets": [9]}}},
        {"ts": 12, "kind": "fault.discarded", "fault": "someday", "discarded": {"x": {}}},
    ]  # fmt: skip
    assert damages(history, "my-topic") == (  # type: ignore[arg-type]
        Damage("unsynced", 5, "broker-1", 0, 42),
        Damage("corrupted", 9, "broker-3", 1, 7),
    )
    assert damages(history, "topic") == ()  # type: ignore[arg-type]
    assert damages(history, None) == ()  # type: ignore[arg-type]
