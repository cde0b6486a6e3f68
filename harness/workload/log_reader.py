"""After recovery: the whole topic read from the beginning by a fresh consumer (the final read)."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field

from confluent_kafka import Consumer, KafkaError, TopicPartition

from harness.common.client_log import CLIENT_LOGGER
from harness.workload.records import decode_seq


@dataclass
class LogContents:
    seq: list[int] = field(default_factory=list)
    partition: list[int] = field(default_factory=list)
    offset: list[int] = field(default_factory=list)
    ends: dict[int, int] = field(default_factory=dict)
    complete: bool = False
    detail: str = ""


def partition_count(consumer: Consumer, topic: str, at_least: int, timeout_s: float) -> int:
    """The topic's partitions as the cluster's metadata lists them now, never fewer than
    `at_least` (the spec's count): add-partitions may have grown it during the run."""
    meta = consumer.list_topics(topic, timeout=timeout_s).topics.get(topic)
    listed = len(meta.partitions) if meta is not None and meta.error is None else 0
    return max(at_least, listed)


def end_offsets(bootstrap: str, topic: str, at_least: int, timeout_s: float = 10) -> dict[int, int]:
    """High watermark of each partition the topic has now (the end a consumer must reach)."""
    consumer = Consumer(_config(bootstrap))
    try:
        return {
            p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=timeout_s)[1]
            for p in range(partition_count(consumer, topic, at_least, timeout_s))
        }
    finally:
        consumer.close()


def read_log(bootstrap: str, topic: str, at_least: int, timeout_s: float) -> LogContents:
    """Every record of every partition the topic has now (at least `at_least`), up to the end
    offsets taken when the read starts."""
    out = LogContents()
    consumer = Consumer(_config(bootstrap))
    deadline = time.monotonic() + timeout_s
    try:
        ends: dict[int, int] = {}
        starts: list[TopicPartition] = []
        count = partition_count(consumer, topic, at_least, max(1.0, deadline - time.monotonic()))
        for p in range(count):
            low, high = consumer.get_watermark_offsets(
                TopicPartition(topic, p), timeout=max(1.0, deadline - time.monotonic())
            )
            ends[p] = high
            if high > low:
                starts.append(TopicPartition(topic, p, low))
        out.ends = ends
        consumer.assign(starts)
        position = {tp.partition: tp.offset for tp in starts}
        while any(position[p] < ends[p] for p in position):
            if time.monotonic() > deadline:
                behind = {p: ends[p] - position[p] for p in position if position[p] < ends[p]}
                out.detail = (
                    f"read timed out after {timeout_s} s; records left per partition: {behind}"
                )
                return out
            for msg in consumer.consume(1000, timeout=0.5):
                err = msg.error()
                if err is not None:
                    if err.code() != KafkaError._PARTITION_EOF:
                        out.detail = str(err)
                    continue
                part, off = msg.partition(), msg.offset()
                if part is None or off is None or off >= ends[part]:
                    continue
                position[part] = off + 1
                seq = decode_seq(msg.value())
                if seq is not None:
                    out.seq.append(seq)
                    out.partition.append(part)
                    out.offset.append(off)
        out.complete = True
        return out
    finally:
        consumer.close()


def _config(bootstrap: str) -> dict[str, object]:
    return {
        "bootstrap.servers": bootstrap,
        "group.id": f"kafka-chaos-log-{uuid.uuid4().hex[:8]}",
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "enable.partition.eof": False,
        "logger": CLIENT_LOGGER,
    }
