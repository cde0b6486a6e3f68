"""The truncation lines of the brokers' logs, as 3.9.2 (log4j 1) and 4.3.1 (log4j 2) write
them (copied from real cells: an isolated acks=1 leader truncating after the cut healed)."""

from __future__ import annotations

from pathlib import Path

from spark_jobs.broker_truncations import Truncation, parse_line, read_truncations, truncations

V392 = """\
[2026-11-25 04:35:01,303] INFO [ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Truncating partition chaos-0 with TruncationState(offset=831, completed=true) due to leader epoch and offset EpochEndOffset(errorCode=0, partition=0, leaderEpoch=0, endOffset=831) (kafka.server.ReplicaFetcherThread)
[2026-11-25 04:35:01,304] INFO [UnifiedLog partition=chaos-0, dir=/var/lib/kafka/data] Truncating to offset 831 (kafka.log.UnifiedLog)
[2026-11-25 04:34:20,837] INFO [ReplicaFetcher replicaId=1, leaderId=2, fetcherId=0] Truncating partition __kafka_chaos_ready-0 with TruncationState(offset=0, completed=true) due to local high watermark 0 (kafka.server.ReplicaFetcherThread)
[2026-11-25 04:34:20,837] INFO [UnifiedLog partition=__kafka_chaos_ready-0, dir=/var/lib/kafka/data] Truncating to 0 has no effect as the largest offset in the log is -1 (kafka.log.UnifiedLog)
"""
V431 = """\
[2026-11-25 04:36:32,077] INFO [ReplicaFetcher replicaId=1, leaderId=3, fetcherId=0] Truncating partition chaos-0 with TruncationState(offset=167, completed=true) due to leader epoch and offset EpochEndOffset(errorCode=0, partition=0, leaderEpoch=0, endOffset=167) (kafka.server.ReplicaFetcherThread)
[2026-11-25 04:36:32,079] INFO [UnifiedLog partition=chaos-0, dir=/var/lib/kafka/data] Truncating to offset 167 (org.apache.kafka.storage.internals.log.UnifiedLog)
[2026-11-25 04:36:01,373] INFO [UnifiedLog partition=chaos-1, dir=/var/lib/kafka/data] Truncating to 0 has no effect as the largest offset in the log is -1 (org.apache.kafka.storage.internals.log.UnifiedLog)
"""
# 2026-11-25 04:35:01.304 UTC
TS_392 = 1795581301304


def test_only_the_effective_truncation_of_3_9_2_is_read() -> None:
    (cut,) = truncations(V392.splitlines(), "broker-1")
    assert cut == Truncation("broker-1", TS_392, "chaos", 0, 831, V392.splitlines()[1])


def test_only_the_effective_truncation_of_4_3_1_is_read() -> None:
    (cut,) = truncations(V431.splitlines(), "broker-2")
    assert (cut.broker, cut.ts, cut.topic, cut.partition, cut.offset) == (
        "broker-2",
        TS_392 + 90_775,  # 04:36:32,079
        "chaos",
        0,
        167,
    )


def test_a_topic_with_dashes_and_the_pre_3_0_prefix() -> None:
    line = "[2026-11-25 04:35:01,304] INFO [Log partition=my-topic-12, dir=/d] Truncating to offset 5 (kafka.log.Log)"
    cut = parse_line(line, "broker-3")
    assert cut is not None and (cut.topic, cut.partition, cut.offset) == ("my-topic", 12, 5)
    assert parse_line("Truncating to offset 5 in some other sentence", "broker-3") is None


def test_the_cells_broker_logs_by_node_in_time_order(tmp_path: Path) -> None:
    (tmp_path / "1.log").write_text(V392)
    (tmp_path / "2.log").write_text(V431)
    (tmp_path / "1001.log").write_text("[2026-11-25 04:34:00,000] INFO controller up\n")
    found = read_truncations(tmp_path, "chaos")
    assert [(t.broker, t.offset) for t in found] == [("broker-1", 831), ("broker-2", 167)]
    assert read_truncations(tmp_path, "chaos", frozenset({"broker-1"}))[0].broker == "broker-2"
    assert read_truncations(tmp_path, "other") == []
    assert read_truncations(tmp_path / "missing", "chaos") == []
