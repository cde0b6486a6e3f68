"""After recovery: the whole topic read from the beginning by a fresh consumer (the final read)."""

from __future__ import annotations

import hashlib
import time
import uuid
from dataclasses import dataclass, field

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

from harness.common.client_log import CLIENT_LOGGER
from harness.workload.records import decode_origin, decode_seq


@dataclass
class LogContents:
    seq: list[int] = field(default_factory=list)
    partition: list[int] = field(default_factory=list)
    offset: list[int] = field(default_factory=list)
    # A pipeline's output (read_log(origin=True)): the input record each came from.
    input_partition: list[int | None] = field(default_factory=list)
    input_offset: list[int | None] = field(default_factory=list)
    # Each record's value digest (read_log always keeps it): a command pipeline's output is
    # matched to the input record whose value it copies (copied_from).
    digest: list[bytes] = field(default_factory=list)
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


def _watermarks(consumer: Consumer, tp: TopicPartition, deadline: float) -> tuple[int, int]:
    """Low and high watermark; a partition briefly unknown or leaderless (its only broker
    fenced for a moment on a loaded machine) is asked again every second until `deadline`."""
    while True:
        try:
            low, high = consumer.get_watermark_offsets(
                tp, timeout=max(1.0, deadline - time.monotonic())
            )
            return int(low), int(high)
        except KafkaException:
            if time.monotonic() + 1 > deadline:
                raise
            time.sleep(1)


def read_log(
    bootstrap: str,
    topic: str,
    at_least: int,
    timeout_s: float,
    isolation: str = "read_uncommitted",
    origin: bool = False,
) -> LogContents:
    """Every record of every partition the topic has now (at least `at_least`), up to the end
    offsets taken when the read starts.

    read_uncommitted sees every record, aborted transactions' too; read_committed only what
    a read_committed reader may see, and only up to the last stable offset (a transaction
    still open holds it back: those partitions are named in `detail`). A partition is read
    when the position passes its end or the client reports its end (end-of-partition):
    transaction markers take offsets no record is delivered at. `origin`: the topic is a
    pipeline's output; each record's input partition and offset are decoded too.
    """
    out = LogContents()
    consumer = Consumer({**_config(bootstrap), "isolation.level": isolation})
    deadline = time.monotonic() + timeout_s
    try:
        ends: dict[int, int] = {}
        starts: list[TopicPartition] = []
        count = partition_count(consumer, topic, at_least, max(1.0, deadline - time.monotonic()))
        for p in range(count):
            low, high = _watermarks(consumer, TopicPartition(topic, p), deadline)
            ends[p] = high
            if high > low:
                starts.append(TopicPartition(topic, p, low))
        out.ends = ends
        consumer.assign(starts)
        position = {tp.partition: tp.offset for tp in starts}
        stable: dict[int, int] = {}  # partition -> where the client said it ended
        while any(position[p] < ends[p] and p not in stable for p in position):
            if time.monotonic() > deadline:
                behind = {
                    p: ends[p] - position[p]
                    for p in position
                    if position[p] < ends[p] and p not in stable
                }
                out.detail = (
                    f"read timed out after {timeout_s} s; records left per partition: {behind}"
                )
                return out
            for msg in consumer.consume(1000, timeout=0.5):
                err = msg.error()
                part, off = msg.partition(), msg.offset()
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF and part in position:
                        stable[part] = off if off is not None else position[part]
                    else:
                        out.detail = str(err)
                    continue
                if part is None or off is None or off >= ends[part]:
                    continue
                position[part] = off + 1
                seq = decode_seq(msg.value())
                if seq is not None:
                    out.seq.append(seq)
                    out.partition.append(part)
                    out.offset.append(off)
                    out.digest.append(value_digest(msg.value()))
                    if origin:
                        came = decode_origin(msg.value())
                        out.input_partition.append(None if came is None else came[0])
                        out.input_offset.append(None if came is None else came[1])
        held = {p: (stable[p], ends[p]) for p in stable if stable[p] < ends[p]}
        if held and isolation == "read_committed":
            out.detail = (
                "open transactions held the last stable offset below the end: "
                + ", ".join(
                    f"partition {p} at {lso} of {end}" for p, (lso, end) in sorted(held.items())
                )
            )
        out.complete = True
        return out
    finally:
        consumer.close()


def value_digest(value: bytes | None) -> bytes:
    return hashlib.blake2b(value or b"", digest_size=8).digest()


def copied_from(
    output: LogContents, source: LogContents | None
) -> tuple[list[int | None], list[int | None]]:
    """(input partition, input offset) per output record: the first place in `source` (the
    input's final read) holding its seq with the same value, byte for byte; None for a
    record whose value is no input record's (or with no input read)."""
    places: dict[tuple[int, bytes], tuple[int, int]] = {}
    if source is not None:
        rows = zip(source.seq, source.digest, source.partition, source.offset, strict=True)
        for seq, digest, part, off in rows:
            places.setdefault((seq, digest), (part, off))
    found = [places.get(key) for key in zip(output.seq, output.digest, strict=True)]
    return [None if f is None else f[0] for f in found], [
        None if f is None else f[1] for f in found
    ]


def _config(bootstrap: str) -> dict[str, object]:
    return {
        "bootstrap.servers": bootstrap,
        "group.id": f"kafka-chaos-log-{uuid.uuid4().hex[:8]}",
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "enable.partition.eof": True,
        "logger": CLIENT_LOGGER,
    }
