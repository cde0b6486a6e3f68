"""Small real-Kafka clients for the cluster tests (the ledger producer comes with experiments)."""

from __future__ import annotations

import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TypeVar

from confluent_kafka import (
    Consumer,
    KafkaError,
    KafkaException,
    Message,
    Producer,
    TopicPartition,
)
from tenacity import RetryError, retry, retry_if_result, stop_after_delay, wait_fixed

T = TypeVar("T")


def wait_until(
    check: Callable[[], T | None], timeout_s: float, what: str, every_s: float = 0.5
) -> T:
    """Poll `check` until it returns something truthy; fail naming `what` (bounded, never a timing assertion)."""

    @retry(
        stop=stop_after_delay(timeout_s),
        wait=wait_fixed(every_s),
        retry=retry_if_result(lambda r: not r),
    )
    def attempt() -> T | None:
        try:
            return check()
        except Exception:
            return None

    try:
        result = attempt()
    except RetryError:
        raise AssertionError(f"timed out after {timeout_s} s waiting for: {what}") from None
    assert result
    return result


@dataclass
class ProduceResult:
    acked: dict[int, tuple[int, int]] = field(default_factory=dict)  # seq -> (partition, offset)
    failed: dict[int, str] = field(default_factory=dict)


def produce(
    bootstrap: str,
    topic: str,
    count: int,
    acks: str = "all",
    per_second: float | None = None,
    stop: threading.Event | None = None,
    result: ProduceResult | None = None,
) -> ProduceResult:
    """Send `count` records whose value is their sequence number; keep every outcome.

    Pass `result` to watch the acknowledgements from another thread while it runs.
    """
    result = result if result is not None else ProduceResult()
    producer = Producer(
        {"bootstrap.servers": bootstrap, "acks": acks, "message.timeout.ms": 60000, "linger.ms": 5}
    )

    def on_delivery(err: KafkaError | None, msg: Message) -> None:
        seq = int(msg.value() or b"-1")
        if err is None:
            result.acked[seq] = (msg.partition() or 0, msg.offset() or 0)
        else:
            result.failed[seq] = str(err)

    for seq in range(count):
        if stop is not None and stop.is_set():
            break
        while True:
            try:
                producer.produce(
                    topic, str(seq).encode(), key=str(seq).encode(), on_delivery=on_delivery
                )
                break
            except BufferError:
                producer.poll(0.1)
        producer.poll(0)
        if per_second:
            time.sleep(1 / per_second)
    producer.flush(90)
    return result


@contextmanager
def producing(bootstrap: str, topic: str, per_second: float) -> Iterator[ProduceResult]:
    """acks=all writes from a background thread for as long as the block runs; then stopped
    and joined (bounded), whatever the block raised."""
    sent, stop = ProduceResult(), threading.Event()
    writer = threading.Thread(
        target=produce,
        args=(bootstrap, topic, 1_000_000),
        kwargs={"acks": "all", "per_second": per_second, "stop": stop, "result": sent},
    )
    writer.start()
    try:
        yield sent
    finally:
        stop.set()
        writer.join(120)


def read_all(
    bootstrap: str, topic: str, partitions: int, timeout_s: float = 60, at_least: int = 0
) -> dict[int, list[int]]:
    """Every record of the topic, read from the beginning without a group: seq -> offsets.

    `at_least`: records known to be there (acked). Right after a partition heals, the
    broker that was cut off may still answer with its stale view (old leader, old high
    watermark); the end offsets are asked again until they cover that many records. A broker
    that has just come back may not know the topic yet (`_UNKNOWN_PARTITION` for its end
    offsets): that too is asked again, within the same deadline.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            seen = _read_to_end(bootstrap, topic, partitions, max(1.0, deadline - time.monotonic()))
        except KafkaException as err:
            if time.monotonic() >= deadline:
                raise
            _log_retry(err)
            time.sleep(1)
            continue
        if sum(len(offsets) for offsets in seen.values()) >= at_least:
            return seen
        assert time.monotonic() < deadline, (
            f"read_all saw {len(seen)} records, fewer than the {at_least} acked, within {timeout_s} s"
        )
        time.sleep(1)


def _log_retry(err: KafkaException) -> None:
    print(f"read_all: asking again after {err}", file=sys.stderr)


def _read_to_end(
    bootstrap: str, topic: str, partitions: int, timeout_s: float
) -> dict[int, list[int]]:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"reader-{uuid.uuid4().hex[:6]}",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    try:
        ends = {
            p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=20)[1]
            for p in range(partitions)
        }
        consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        seen: dict[int, list[int]] = {}
        done = {p for p, end in ends.items() if end == 0}
        deadline = time.monotonic() + timeout_s
        while len(done) < partitions and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None or msg.error():
                continue
            seen.setdefault(int(msg.value() or b"-1"), []).append(msg.offset() or 0)
            if (msg.offset() or 0) + 1 >= ends[msg.partition() or 0]:
                done.add(msg.partition() or 0)
        assert len(done) == partitions, (
            f"read_all did not reach the end offsets {ends} within {timeout_s} s"
        )
        return seen
    finally:
        consumer.close()


def try_commit(bootstrap: str, group: str, topic: str, offset: int, timeout_s: float = 15) -> str:
    """Commit one offset for `group`; 'ok', the error text, or 'timeout' (bounded, never hangs)."""
    outcome: list[str] = []

    def on_commit(err: KafkaError | None, _parts: list[TopicPartition]) -> None:
        outcome.append("ok" if err is None else str(err))

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "enable.auto.commit": False,
            "on_commit": on_commit,
            "socket.timeout.ms": 10000,
        }
    )
    try:
        consumer.commit(offsets=[TopicPartition(topic, 0, offset)], asynchronous=True)
        deadline = time.monotonic() + timeout_s
        while not outcome and time.monotonic() < deadline:
            consumer.poll(0.2)
        return outcome[0] if outcome else "timeout"
    finally:
        consumer.close()
