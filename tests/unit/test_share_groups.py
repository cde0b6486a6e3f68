"""Share groups (spec `consumer: {kind: share}`): the spec's rules, the member's lines read
back as share.parquet, and the share check on a hand-built cell whose answers are known by
construction (spark_jobs/checks/share.py)."""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.admin import java_string_hash, offsets_partition_for
from harness.errors import FaultError
from harness.faults.targets import Target
from harness.results.member_files import ACKED, DELIVERED, MemberPaths, ShareLine
from harness.results.member_tables import share_tables
from harness.results.tables import SHARE
from harness.spec.load import parse_spec
from harness.spec.problems import spec_problems
from harness.spec.share_settings import share_broker_settings
from harness.workload.share.group_tool import parse_members, parse_share_lag
from tests.unit.fakes import FakeCluster
from tests.unit.test_verify import T, complete_history, ev, led, write_cell, write_rows

SPARK = pytest.mark.skipif(
    shutil.which("java") is None and not os.environ.get("JAVA_HOME"),
    reason="Spark needs a Java runtime (java on PATH or JAVA_HOME); none found",
)


def _spec(tmp_path: Path, consumer: str, cluster: str = "{version: 4.3.1}") -> Any:
    text = f"name: s\ncluster: {cluster}\nproducer: {{records: 10}}\nconsumer: {consumer}\n"
    return parse_spec(yaml.safe_load(text))


def _problems(tmp_path: Path, consumer: str, cluster: str = "{version: 4.3.1}") -> dict[str, str]:
    return dict(spec_problems(_spec(tmp_path, consumer, cluster)))


def share_start(member: str) -> dict[str, Any]:
    """A share member's `consumer.start`: group g, delivery limit 3, a 2 s lock."""
    return ev(T, "consumer.start", consumer=member, share_group="g", delivery_limit=3, lock_ms=2000)


def test_a_share_set_needs_kraft_and_kafka_4_2(tmp_path: Path) -> None:
    assert "consumer.kind" not in _problems(tmp_path, "{kind: share}")
    old = _problems(tmp_path, "{kind: share}", "{version: 3.9.2}")
    assert old["consumer.kind"] == "share groups need Kafka 4.2 or later (cluster.version 3.9.2)"
    zk = _problems(tmp_path, "{kind: share}", "{version: 3.9.2, mode: zookeeper}")
    assert zk["consumer.kind"] == "share groups need a KRaft cluster (cluster.mode: kraft)"


def test_release_and_reject_need_explicit_acks_and_owned_keys_are_refused(tmp_path: Path) -> None:
    found = _problems(
        tmp_path, "{kind: share, ack: implicit, release_every: 7, config: {group.id: x}}"
    )
    assert "need ack: explicit" in found["consumer.ack"]
    assert found["consumer.config.group.id"] == "set through consumer.group instead"


def test_the_sets_of_one_cell_agree_on_the_brokers_share_settings(tmp_path: Path) -> None:
    text = (
        "name: s\ncluster: {version: 4.3.1}\nproducer: {records: 10}\n"
        "consumers: [{kind: share, lock_ms: 5000}, {kind: share, group: g2, lock_ms: 6000}]\n"
    )
    found = dict(spec_problems(parse_spec(yaml.safe_load(text))))
    assert "disagree on lock_ms ([5000, 6000])" in found["consumers"]


def test_the_brokers_get_what_the_share_sets_ask(tmp_path: Path) -> None:
    spec = _spec(
        tmp_path, "{kind: share, lock_ms: 4000, delivery_limit: 3}", "{version: 4.3.1, brokers: 1}"
    )
    assert share_broker_settings(spec) == {
        "share.coordinator.state.topic.replication.factor": 1,
        "share.coordinator.state.topic.min.isr": 1,
        "group.share.min.record.lock.duration.ms": 1000,
        "group.share.record.lock.duration.ms": 4000,
        "group.share.max.record.lock.duration.ms": 60_000,
        "group.share.delivery.count.limit": 3,
    }
    assert share_broker_settings(_spec(tmp_path, "{kind: group}")) == {}


def test_an_explicit_member_answers_by_seq(tmp_path: Path) -> None:
    c = _spec(tmp_path, "{kind: share, release_every: 5, reject_every: 7}").consumer
    assert [c.answer(s) for s in (1, 5, 7, 35)] == ["accept", "release", "reject", "reject"]


def test_the_member_lines_read_back_as_the_share_table(tmp_path: Path) -> None:
    paths = MemberPaths(tmp_path, "share/m0")
    paths.share.write_text(
        ShareLine(DELIVERED, 3, 1, 40, 2, "", "", T).csv()
        + ShareLine(ACKED, 3, 1, 40, -1, "accept", "INVALID_RECORD_STATE", T + 5).csv()
        + "delivered,4,1,4"  # torn by a SIGKILL
    )
    rows = next(share_tables(paths)).to_pylist()
    assert rows == [
        {"consumer": "share/m0", "event": "delivered", "seq": 3, "partition": 1, "offset": 40,
         "delivery_count": 2, "ack": None, "error": None, "ts": T},
        {"consumer": "share/m0", "event": "acked", "seq": 3, "partition": 1, "offset": 40,
         "delivery_count": None, "ack": "accept", "error": "INVALID_RECORD_STATE", "ts": T + 5},
    ]  # fmt: skip


def test_the_tools_tables_are_read_by_their_headers() -> None:
    offsets = (
        "\nGROUP        TOPIC  PARTITION  START-OFFSET  LAG\n"
        "chaos-share  chaos  0          120           0\n"
        "chaos-share  chaos  1          0             7\n"
        "chaos-share  chaos  2          -             -\n"
        "chaos-share  other  0          9             0\n"
    )
    assert parse_share_lag(offsets, "chaos", {0: 120, 1: 9, 2: 5}) == {0: 0, 1: 7, 2: None}
    # a version without LAG: the end less the start offset
    older = "GROUP TOPIC PARTITION START-OFFSET\ng chaos 0 100\n"
    assert parse_share_lag(older, "chaos", {0: 130}) == {0: 30}
    members = (
        "GROUP  CONSUMER-ID  HOST         CLIENT-ID  #PARTITIONS  ASSIGNMENT\n"
        "g      7HhJx        /10.0.0.1    share/m1   0            \n"
        "g      cupg6        /10.0.0.1    share/m0   2            chaos:0,2;other:1\n"
    )
    assert parse_members(members, "chaos") == {"share/m1": set(), "share/m0": {0, 2}}


# --- the share check on a hand-built cell ---------------------------------------------------


def d(seq: int, o: int, count: int, member: str = "share/m0", ts: int = 0) -> tuple[Any, ...]:
    return (member, DELIVERED, seq, 0, o, count, None, None, T + ts)


def a(
    seq: int, o: int, ack: str, error: str | None = None, member: str = "share/m0", ts: int = 1
) -> tuple[Any, ...]:
    return (member, ACKED, seq, 0, o, None, ack, error, T + ts)


# Records 1..6 at offsets 0..5 of partition 0, limit 3:
# 1 accepted, then shown again to the same member and accepted again (a client that fetched
#   ahead: no broken promise that can be told);
# 2 delivered twice (the first member crashed), accepted by m1;
# 3 accepted, handed out again 5 s later and accepted again (a broken promise); 4 rejected: archived; 5 released three times:
# archived at the limit; 6 accepted, refused (lock expired), redelivered, accepted.
SHARE_ROWS = [
    d(1, 0, 1), a(1, 0, "accept"), d(1, 0, 2, ts=5000), a(1, 0, "accept", ts=5001),
    d(2, 1, 1), d(2, 1, 2, "share/m1", ts=5000), a(2, 1, "accept", member="share/m1", ts=5001),
    d(3, 2, 1), a(3, 2, "accept"), d(3, 2, 2, "share/m1", ts=5000),  # another member: broken
    a(3, 2, "accept", member="share/m1", ts=5001),
    d(4, 3, 1), a(4, 3, "reject"),
    d(5, 4, 1), a(5, 4, "release"), d(5, 4, 2), a(5, 4, "release"), d(5, 4, 3), a(5, 4, "release"),
    d(6, 5, 1), a(6, 5, "accept", "INVALID_RECORD_STATE"), d(6, 5, 2), a(6, 5, "accept"),
]  # fmt: skip
# What the members processed to accept (consumed rows), seq 4 and 5 never.
SHARE_CONSUMED = [
    (1, 0, 0, "share/m0", T + 10, 0),
    (2, 0, 1, "share/m0", T + 10, 0),
    (2, 0, 1, "share/m1", T + 20, 0),
    (3, 0, 2, "share/m0", T + 10, 0),
    (3, 0, 2, "share/m1", T + 20, 0),
    (6, 0, 5, "share/m0", T + 10, 0),
    (6, 0, 5, "share/m0", T + 30, 0),
]


@SPARK
@pytest.mark.spark
def test_the_share_check_counts_redeliveries_broken_promises_and_archives(
    tmp_path: Path, spark: Any
) -> None:
    from spark_jobs.verify import verify_cell

    history = [
        *complete_history(),
        *(share_start(m) for m in ("share/m0", "share/m1")),
    ]
    ledger = [led(s, o=s - 1, ack=T + s) for s in range(1, 7)]
    log = [(s, 0, s - 1) for s in range(1, 7)]
    cell = write_cell(tmp_path / "c", ledger, SHARE_CONSUMED, log, [], history)
    write_rows(cell / "share.parquet", SHARE, SHARE_ROWS)
    summary = verify_cell(spark, cell)
    figures = summary["share_by_set"]["share"]
    assert {k: figures[k] for k in ("records", "deliveries", "redelivered", "accepted")} == {
        "records": 6,
        "deliveries": 12,
        "redelivered": 5,  # 1, 2, 3, 5, 6
        "accepted": 4,  # 1, 2, 3, 6
    }
    assert figures["accepted_twice"] == 1  # 3
    assert figures["accept_taken_twice"] == 2  # 1 and 3
    assert figures["archived"] == 2 and figures["archived_by"] == {"reject": 1, "limit": 1}
    assert figures["delivery_counts"] == {"1": 1, "2": 4, "3": 1}
    assert figures["lock_expired"] == 1
    assert figures["ack_errors"] == {"INVALID_RECORD_STATE": 1}
    assert figures["lock_expired_by_ack"] == {"accept": 1}
    # 1, 2 and 3 came back 5 s after their first delivery; every other redelivery at once
    assert figures["redelivery_wait_s"] == 5.0 and figures["redelivery_wait_p50_s"] == 0.0
    # ... and that wait's own window, for the machine check (the first delivery to the next)
    assert summary["timing_windows"] == {"redelivery_wait_s.share": [[T, T + 5000]]}
    # Never ACCEPTed by the set: 4 and 5 (archived on purpose here); reprocessed leaves the
    # share set out although it processed 2, 3 and 6 twice.
    assert summary["lost_never_consumed_by_set"]["share"] == 2
    assert summary["counts"]["reprocessed"] == 0
    from harness.verdict.checks import lookup

    assert lookup("accepted_twice.share", summary) == 1
    assert lookup("redelivered.share", summary) == 5


@SPARK
@pytest.mark.spark
@pytest.mark.parametrize(("overloaded", "undecided"), [((0, 5_000), True), ((6_000, 9_000), False)])
def test_the_longest_redelivery_wait_is_undecided_when_the_machine_was_overloaded_for_it(
    tmp_path: Path, spark: Any, overloaded: tuple[int, int], undecided: bool
) -> None:
    """A maximum is one window: overloaded for half of it, the wait may be the machine's."""
    from harness.spec.expect import parse_bound
    from harness.verdict.checks import evaluate
    from spark_jobs.verify import verify_cell
    from tests.unit.test_latency_checks import write_machine

    history = [
        *complete_history(),
        share_start("share/m0"),
    ]
    ledger = [led(s, o=s - 1, ack=T + s) for s in range(1, 7)]
    cell = write_cell(tmp_path / "c", ledger, SHARE_CONSUMED[:1], [], [], history)
    rows = [r for r in SHARE_ROWS if r[0] == "share/m0"]
    write_rows(cell / "share.parquet", SHARE, rows)
    write_machine(cell, overloaded)
    summary = verify_cell(spark, cell)
    assert summary["share_by_set"]["share"]["redelivery_wait_s"] == 5.0  # the figure stands
    (check,) = evaluate({"redelivery_wait_s.share": parse_bound("< 10")}, summary)
    assert ("redelivery_wait_s.share" in summary["overloaded"]) is undecided
    assert check.verdict == ("unknown" if undecided else "pass"), check.detail
    if undecided:
        assert "machine overloaded for 5.0 s of this 5.0 s window" in check.detail


def test_a_share_group_needs_the_offsets_topic_too(tmp_path: Path) -> None:
    found = _problems(tmp_path, "{kind: share}", "{version: 4.3.1, brokers: 1}")
    assert "__consumer_offsets" in found["cluster.broker_config.offsets.topic.replication.factor"]
    fixed = "{version: 4.3.1, brokers: 1, broker_config: {offsets.topic.replication.factor: 1}}"
    assert "cluster.broker_config.offsets.topic.replication.factor" not in _problems(
        tmp_path, "{kind: share}", fixed
    )


# A Java share member's stdout, as recorded from a 4.3.1 run (and a refusal and a torn line).
JAVA_STREAM = [
    '{"timestamp":1795866824770,"name":"startup_complete","client":"java","pid":29822}',
    '{"timestamp":1795866885133,"name":"share_delivered","seq":0,"partition":1,"offset":0,"delivery_count":1}',
    '{"timestamp":1795866885439,"name":"share_consumed","seq":0,"partition":1,"offset":0}',
    '{"timestamp":1795866885528,"name":"share_acked","seq":0,"partition":1,"offset":0,"ack":"accept","error":null}',
    '{"timestamp":1795866885600,"name":"share_acked","seq":7,"partition":0,"offset":3,"ack":"release","error":"InvalidRecordStateException"}',
    "Exception in thread main",
    '{"timestamp":1795866902062,"name":"shutdown_complete"}',
]  # fmt: skip


def test_the_java_members_events_become_the_librdkafka_members_lines() -> None:
    from harness.workload.java.share import map_share_events

    rows = map_share_events(JAVA_STREAM, {"client": "java", "share_group": "g"})
    assert [line.csv() for line in rows.share] == [
        "delivered,0,1,0,1,,,1795866885133\n",
        "acked,0,1,0,-1,accept,,1795866885528\n",
        "acked,7,0,3,-1,release,InvalidRecordStateException,1795866885600\n",
    ]
    assert [tuple(c) for c in rows.consumed] == [(0, 1, 0, 1795866885439, 0)]
    assert [e["kind"] for e in rows.events] == ["consumer.start", "consumer.error", "consumer.stop"]
    assert rows.events[0]["pid"] == 29822 and rows.events[0]["share_group"] == "g"


def test_a_refused_java_ack_counts_as_an_expired_lock() -> None:
    from spark_jobs.checks.share import LOCK_EXPIRED

    assert {"INVALID_RECORD_STATE", "InvalidRecordStateException"} <= set(LOCK_EXPIRED)


def test_the_librdkafka_members_answers_become_ack_lines(tmp_path: Path) -> None:
    from confluent_kafka import KafkaError, KafkaException, TopicPartition

    from harness.spec.consumers import ShareConsumerSpec
    from harness.workload.runtime import Runtime
    from harness.workload.share.member import ShareMember

    member = ShareMember(ShareConsumerSpec(), Runtime("b", "t", tmp_path, 1.0, 0), "share/m0")
    member.sent = {(1, 5): (42, "accept"), (0, 9): (43, "release")}
    member.on_acks({TopicPartition("t", 1): {5}}, None)
    refused = KafkaException(KafkaError(KafkaError.INVALID_RECORD_STATE))
    member.on_acks({TopicPartition("t", 0): {9}}, refused)
    member.share.close()
    member.consumed.close()
    lines = MemberPaths(tmp_path, "share/m0").share.read_text().splitlines()
    assert [line.rsplit(",", 1)[0] for line in lines] == [
        "acked,42,1,5,-1,accept,",
        "acked,43,0,9,-1,release,INVALID_RECORD_STATE",
    ]
    assert member.sent == {}


@SPARK
@pytest.mark.spark
def test_an_unsettled_drain_leaves_zeros_undecided_and_positives_as_lower_bounds(
    tmp_path: Path, spark: Any
) -> None:
    from harness.verdict.checks import lookup, why_undecided
    from spark_jobs.verify import verify_cell

    history = [
        *complete_history(drained=False),
        share_start("share/m0"),
    ]
    ledger = [led(s, o=s - 1, ack=T + s) for s in range(1, 7)]
    log = [(s, 0, s - 1) for s in range(1, 7)]
    rows = [r for r in SHARE_ROWS if r[0] == "share/m0"]
    cell = write_cell(tmp_path / "c", ledger, SHARE_CONSUMED, log, [], history)
    write_rows(cell / "share.parquet", SHARE, rows)
    summary = verify_cell(spark, cell)
    # m0 alone: 1, 5 and 6 came back to it (redelivered 3), nothing handed to another member
    assert lookup("redelivered.share", summary) == 3
    assert "a lower bound" in why_undecided("redelivered.share", summary)
    assert lookup("accepted_twice.share", summary) is None
    assert "drain" in why_undecided("accepted_twice.share", summary)


def test_share_coordinator_of_names_a_share_set_the_topic_and_a_partition(tmp_path: Path) -> None:
    def problems(target: str, consumer: str = "{kind: share}") -> dict[str, str]:
        text = (
            "name: s\ncluster: {version: 4.3.1}\ntopic: {partitions: 3}\nproducer: {records: 10}\n"
            f"consumer: {consumer}\nfaults: [{{at_s: 1, kind: kill, target: '{target}'}}]\n"
        )
        return dict(spec_problems(parse_spec(yaml.safe_load(text))))

    assert "faults[0].target" not in problems("share-coordinator-of:chaos-share/chaos/2")
    found = {
        t: problems(t)["faults[0].target"]
        for t in (
            "share-coordinator-of:other/chaos/0",
            "share-coordinator-of:chaos-share/other/0",
            "share-coordinator-of:chaos-share/chaos/3",
        )
    }
    assert found == {
        "share-coordinator-of:other/chaos/0": (
            "expected one of the share groups chaos-share (got 'other')"
        ),
        "share-coordinator-of:chaos-share/other/0": "expected the spec's topic 'chaos' (got 'other')",
        "share-coordinator-of:chaos-share/chaos/3": (
            "expected a partition below topic.partitions (3) (got 3)"
        ),
    }
    grouped = problems("share-coordinator-of:chaos-group/chaos/0", "{kind: group}")
    assert grouped["faults[0].target"] == (
        "share-coordinator-of needs a share consumer set (consumer.kind: share)"
    )


def test_share_coordinator_of_resolves_to_the_state_partitions_leader() -> None:
    """The nemesis asks the cluster which broker leads the state of that share partition;
    a group id holding '/' keeps it (topic and partition are the last two parts)."""
    cluster = FakeCluster()
    cluster.coordinators["share:a/b/chaos/1"] = 2
    target = Target.parse("share-coordinator-of:a/b/chaos/1")
    assert (target.group, target.topic, target.partition) == ("a/b", "chaos", 1)
    assert target.resolve(cluster, random.Random(0)) == 2
    assert target.describe() == "share-coordinator-of:a/b/chaos/1"
    cluster.coordinators["share:a/b/chaos/1"] = None
    with pytest.raises(FaultError, match="__share_group_state partition is leaderless"):
        target.resolve(cluster, random.Random(0))


def test_the_share_state_partition_is_kafkas() -> None:
    """ShareCoordinatorService.partitionFor: Utils.abs(String.hashCode) % partitions of
    "group:topicId:partition"; jshell says "g:AAAAAAAAAAAAAAAAAAAAAA:0".hashCode() is -92982199."""
    key = "g:AAAAAAAAAAAAAAAAAAAAAA:0"
    assert java_string_hash(key) == -92982199
    assert offsets_partition_for(key, 50) == 92982199 % 50 == 49


def test_renew_needs_explicit_acks_and_the_java_client(tmp_path: Path) -> None:
    assert "consumer.renew" not in _problems(tmp_path, "{kind: share, client: java, renew: true}")
    rdkafka = _problems(tmp_path, "{kind: share, renew: true}")
    assert "renew needs client: java" in rdkafka["consumer.renew"]
    implicit = _problems(tmp_path, "{kind: share, client: java, ack: implicit, renew: true}")
    assert implicit["consumer.renew"] == "renew needs ack: explicit (KIP-1222)"


def test_a_renewing_java_member_renews_every_half_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.spec.consumers import ShareConsumerSpec
    from harness.workload.java.share import command
    from harness.workload.runtime import Runtime

    monkeypatch.setattr(
        "harness.workload.java.launch.classpath", lambda version, extra=(): f"cp-{version}"
    )
    run = Runtime("127.0.0.1:9092", "chaos", tmp_path, 600.0, 7, "4.3.1")
    paths = MemberPaths(tmp_path, "share/m0")

    def renew_ms(spec: ShareConsumerSpec) -> str:
        argv = command(spec, run, paths)
        return argv[argv.index("--renew-ms") + 1]

    assert renew_ms(ShareConsumerSpec(client="java")) == "0"
    assert renew_ms(ShareConsumerSpec(client="java", renew=True, lock_ms=3000)) == "1500"
    assert renew_ms(ShareConsumerSpec(client="java", renew=True)) == "15000"  # Kafka's 30 s


def test_a_refused_renewal_is_an_ack_line_that_counts_as_an_expired_lock() -> None:
    from harness.workload.java.share import map_share_events

    refused = (
        '{"timestamp":1795866885700,"name":"share_acked","seq":9,"partition":0,"offset":4,'
        '"ack":"renew","error":"InvalidRecordStateException"}'
    )
    rows = map_share_events([refused], {"client": "java"})
    assert [line.csv() for line in rows.share] == [
        "acked,9,0,4,-1,renew,InvalidRecordStateException,1795866885700\n"
    ]
