"""Kafka's verifiable clients' events (and our Java clients', which print the same) as the
harness's rows, on event streams recorded from real runs (tests/unit/data/java_events:
java-kill, a Java run with a paused leader, delivery.timeout.ms 3 s and a SIGKILLed
member, Kafka 3.9.2)."""

from __future__ import annotations

import json
from pathlib import Path

from harness.results import events as ev
from harness.workload.java.events import ConsumerMapper, map_producer, record_seq, send_status
from harness.workload.java.follow import Follower, seal

DATA = Path(__file__).parent / "data" / "java_events"


def lines(name: str) -> list[str]:
    return (DATA / name).read_text().splitlines()


def events_named(stream: list[str], name: str) -> list[dict[str, object]]:
    return [e for e in map(json.loads, stream) if e["name"] == name]


def mapper() -> ConsumerMapper:
    counter = iter(range(1, 100))
    return ConsumerMapper(
        next_generation=lambda: next(counter),
        start_fields=lambda: {"pid": 42, "isolation": "read_uncommitted"},
    )


def test_producer_sends_acks_and_errors_become_ledger_rows_in_stream_order() -> None:
    stream = lines("ledger_producer_errors.jsonl")
    rows = map_producer(stream, {"acks": "1", "rate": 200.0, "idempotence": False})
    sends = events_named(stream, "producer_send")
    assert rows.sends == [(e["seq"], None, e["timestamp"]) for e in sends]
    ok = [r for r in rows.acks if r[3] == "ok"]
    assert [(r[0], r[1], r[2]) for r in ok] == [
        (1546, 1, 504),
        (1549, 1, 505),
        (1550, 2, 493),
        (1552, 2, 494),
        (1553, 2, 495),
    ]
    # Out of order: expired batches of partition 0 (seq 946..953) report after later seqs.
    failed = [r for r in rows.acks if r[3] != "ok"]
    assert [r[0] for r in failed] == [953, 951, 950, 949, 946]
    assert {r[3] for r in failed} == {"unknown"}  # a timeout may come after the write
    assert all(r[1] is None and r[2] is None for r in failed)
    assert str(failed[0][5]).startswith("TimeoutException: Expiring 1 record(s) for chaos-0")
    start, end = rows.events
    assert start["kind"] == ev.PRODUCER_START and start["client"] == "java"
    assert start["acks"] == "1" and start["first_seq"] == 0 and start["pid"] == 5739
    assert end["kind"] == ev.PRODUCER_END
    assert (end["attempted"], end["acked"], end["failed"]) == (4859, 4431, 428)


def test_an_error_that_proves_the_record_was_not_written_is_a_failure() -> None:
    refused = {"name": "producer_send_error", "exception": "o.a.k.c.e.RecordTooLargeException"}
    assert send_status(refused) == "fail"
    assert send_status(
        {**refused, "exception": "org.apache.kafka.common.errors.NetworkException"}
    ) == ("unknown")
    assert send_status({"name": "producer_send_error"}) == "unknown"


def test_the_seq_comes_from_the_event_or_from_the_value_verifiable_producer_style() -> None:
    assert record_seq({"seq": 7, "value": "00000000000000000009|"}) == 7
    assert record_seq({"value": "00000000000000000009|xx"}) == 9
    assert record_seq({"value": "12"}) == 12  # VerifiableProducer: a counter
    assert record_seq({"value": "3.12"}) == 12  # with --value-prefix 3
    assert record_seq({"value": "hello"}) is None
    assert record_seq({"key": "k1"}) is None


def test_verifiable_consumer_records_are_consumed_rows_in_the_latest_generation() -> None:
    stream = lines("verifiable_consumer.jsonl")
    rows = mapper().map(stream)
    records = events_named(stream, "record_data")
    assert len(rows.consumed) == len(records) == 14
    assert [(r.seq, r.partition, r.offset, r.ts) for r in rows.consumed] == [
        (int(str(e["key"])[1:]), e["partition"], e["offset"], e["timestamp"]) for e in records
    ]
    assert {r.generation for r in rows.consumed[:-1]} == {1}
    assert rows.consumed[-1].generation == 2  # after the second partitions_assigned
    kinds = [e["kind"] for e in rows.events]
    assert kinds == [
        ev.CONSUMER_START,
        ev.CONSUMER_ASSIGN,
        ev.CONSUMER_REVOKE,
        ev.CONSUMER_ASSIGN,
        ev.CONSUMER_REVOKE,
        ev.CONSUMER_STOP,
    ]
    assert rows.events[0]["pid"] == 42 and rows.events[0]["isolation"] == "read_uncommitted"
    assert rows.events[1]["partitions"] == [0, 1] and rows.events[1]["generation"] == 1
    assert [(c.partition, c.offset) for c in rows.commits] == [
        (0, 751),
        (1, 701),
        (0, 989),
        (1, 954),
    ]


def test_auto_commits_reported_by_the_interceptor_are_commit_rows() -> None:
    stream = lines("verifiable_consumer_auto.jsonl")
    rows = mapper().map(stream)
    # The first auto-commit, before any assignment, commits nothing: no rows.
    assert [(c.partition, c.offset) for c in rows.commits] == [
        (0, 0),
        (1, 0),
        (2, 0),
        (0, 35),
        (1, 36),
        (2, 72),
        (0, 1016),
        (1, 1618),
        (2, 1589),
    ]
    assert rows.consumed == []


def test_a_member_that_commits_before_processing_commits_before_its_rows() -> None:
    stream = lines("group_member_before_process.jsonl")
    m = mapper()
    rows = m.map(stream)
    first_commit = rows.commits[0]
    assert (first_commit.partition, first_commit.offset) == (2, 26)
    assert first_commit.ts <= min(r.ts for r in rows.consumed)
    # The restarted JVM (a second startup_complete, its own pid) joins as generation 2.
    starts = [e for e in rows.events if e["kind"] == ev.CONSUMER_START]
    assert [s["pid"] for s in starts] == [5696, 5943]  # our member prints its own pid
    assert m.generation == 2


def test_a_line_that_is_not_an_event_is_an_error_event_not_a_row() -> None:
    rows = mapper().map(['{"timestamp": 1, "name": "record_da', "Bad data can't be written"])
    assert rows.consumed == [] and rows.commits == []
    assert [e["kind"] for e in rows.events] == [ev.CONSUMER_ERROR, ev.CONSUMER_ERROR]


def test_the_follower_reads_whole_lines_once_and_seal_drops_a_torn_one(tmp_path: Path) -> None:
    source = tmp_path / "m.java.jsonl"
    seen: list[str] = []
    follower = Follower(source, seen.extend)
    follower.poll()  # no file yet
    source.write_text('{"a": 1}\n{"b": ')
    follower.poll()
    assert seen == ['{"a": 1}']
    seal(source)  # the JVM was SIGKILLed mid-line: its fragment goes
    with source.open("a") as f:
        f.write('{"c": 3}\n')
    follower.poll()
    follower.poll()
    assert seen == ['{"a": 1}', '{"c": 3}']


def test_kafkas_verifiable_producer_events_map_too() -> None:
    """A real VerifiableProducer stream (Kafka 3.9.2, acks=1, retries 0, --value-prefix 3,
    the leader of t/0 killed mid-run): its values are `<prefix>.<counter>`, its exception
    names carry Java's "class " prefix, and it prints no send events (no sends rows)."""
    stream = lines("verifiable_producer.jsonl")
    rows = map_producer(stream, {})
    assert rows.sends == []
    ok = [r for r in rows.acks if r[3] == "ok"]
    assert [(r[0], r[1], r[2]) for r in ok[:2]] == [(0, 0, 0), (1, 0, 1)]
    assert ok[-1][:3] == (2122, 1, 2)  # later sticky batches go to partition 1
    failed = [r for r in rows.acks if r[3] != "ok"]
    assert [r[0] for r in failed] == list(range(1014, 1027))
    # A broken connection to the dying leader: it may have appended the batch.
    assert {r[3] for r in failed} == {"unknown"}
    assert all(str(r[5]).startswith("NetworkException: Disconnected from node 2") for r in failed)
    assert [e["kind"] for e in rows.events] == [ev.PRODUCER_START, ev.PRODUCER_END]


def test_the_schedule_and_the_time_blocked_in_send_become_producer_events() -> None:
    stream = [
        '{"timestamp":100,"name":"producer_schedule","first_seq":0,"rate":50.0,'
        '"end_ms":60100,"planned":3000}',
        '{"timestamp":150,"name":"producer_send_blocked","seq":7,"blocked_ms":1200}',
        '{"timestamp":900,"name":"shutdown_complete","attempted":5,"acked":5,"failed":0,'
        '"blocked_ms":1204}',
    ]
    schedule, blocked, end = map_producer(stream, {}).events
    assert schedule == {
        "ts": 100,
        "kind": ev.PRODUCER_SCHEDULE,
        "first_seq": 0,
        "rate": 50.0,
        "end_ms": 60100,
        "planned": 3000,
    }
    assert blocked == {"ts": 150, "kind": ev.PRODUCER_BLOCKED, "seq": 7, "ms": 1200}
    assert end["kind"] == ev.PRODUCER_END and end["blocked_ms"] == 1204
