"""The librdkafka producer's schedule and waits as history facts (harness.workload.producer
.core): `producer.schedule` when its pacing starts, `producer.blocked` when its local queue
was full (produce() itself never blocks), with a stand-in client."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.results import events as ev
from harness.spec.producer import ProducerSpec
from harness.workload.producer import core as producer_core
from harness.workload.producer.core import ProducerCore
from harness.workload.runtime import Runtime


class FullQueueClient:
    """Refuses the first `full` produce() calls (BufferError), then takes every record."""

    def __init__(self, full: int) -> None:
        self.full = full
        self.produced: list[bytes] = []

    def produce(self, topic: str, value: bytes, key: bytes, on_delivery: Any) -> None:
        if self.full > 0:
            self.full -= 1
            raise BufferError("Local: Queue full")
        self.produced.append(key)

    def poll(self, timeout: float) -> int:
        return 0

    def flush(self, timeout: float) -> int:
        return 0


def run_core(tmp_path: Path, client: FullQueueClient, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    events: list[tuple[str, dict[str, Any]]] = []
    spec = ProducerSpec(rate=1000, records=5)
    runtime = Runtime("127.0.0.1:1", "chaos", tmp_path, max_s=30.0, seed=0)
    core = ProducerCore(spec, runtime, lambda kind, **f: events.append((kind, f)))
    monkeypatch.setattr(core, "new_client", lambda: client)
    core.run()
    return events


def test_the_pacing_start_is_a_schedule_event_with_the_records_planned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events = run_core(tmp_path, FullQueueClient(0), monkeypatch)
    schedule = [f for kind, f in events if kind == ev.PRODUCER_SCHEDULE]
    assert len(schedule) == 1
    assert schedule[0]["first_seq"] == 0 and schedule[0]["rate"] == 1000
    assert schedule[0]["planned"] == 5  # the spec's records, well before the end
    assert not [kind for kind, _ in events if kind == ev.PRODUCER_BLOCKED]


def test_a_full_local_queue_is_time_blocked_in_the_client(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ticks = iter(range(0, 10**6, 50))  # every monotonic read 50 ms later
    monkeypatch.setattr(producer_core.time, "monotonic", lambda: next(ticks) / 1000)
    client = FullQueueClient(2)
    events = run_core(tmp_path, client, monkeypatch)
    blocked = [f for kind, f in events if kind == ev.PRODUCER_BLOCKED]
    # Seq 0 refused twice: its wait started at the first refusal, ended after the second.
    assert blocked == [{"seq": 0, "ms": 50}]
    assert len(client.produced) == 5


class FatalAtFlushClient(FullQueueClient):
    """Takes every record, then fails at flush() as a client in a fatal state does (the real
    one raises a KafkaError, which is no exception type; a stand-in can only raise one)."""

    def flush(self, timeout: float) -> int:
        raise RuntimeError("KafkaError{FATAL,code=OUT_OF_ORDER_SEQUENCE_NUMBER}")

    def __len__(self) -> int:
        return 2  # still queued when it failed


def test_a_fatal_client_at_the_end_still_closes_the_schedule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every replica's power cut loses the idempotent producer's sequence: librdkafka's flush
    fails fatally. producer.end must still come (with `fatal`), or `lost` cannot be decided."""
    events = run_core(tmp_path, FatalAtFlushClient(0), monkeypatch)
    (end,) = [f for kind, f in events if kind == ev.PRODUCER_END]
    assert end["attempted"] == 5 and end["undelivered"] == 2
    assert "OUT_OF_ORDER_SEQUENCE_NUMBER" in end["fatal"]
