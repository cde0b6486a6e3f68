"""The producer ledger: every record it tried, with the outcome Kafka reported (kafkatest's model)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from confluent_kafka import KafkaError, Message, Producer

from harness.common.client_log import CLIENT_LOGGER
from harness.results.history import History, now_ms
from harness.results.tables import LEDGER, write_table
from harness.workload.records import encode_key, encode_value

# Errors after which the record may still have been written: its outcome is unknown,
# not failed (a timed-out request may have been appended by the leader).
POSSIBLY_WRITTEN = {
    KafkaError._MSG_TIMED_OUT,
    KafkaError._TIMED_OUT,
    KafkaError.REQUEST_TIMED_OUT,
    KafkaError.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
    KafkaError._TRANSPORT,
    KafkaError.NETWORK_EXCEPTION,
}
# Experiments want a record's fate within the run, not librdkafka's 5 minutes; and the
# producer hashes keys over the partition count it knows, so it must learn of partitions
# added during the run (add-partitions) within seconds, not librdkafka's 5 minutes.
# The spec's producer.config overrides any of these.
METADATA_REFRESH_MS = 5000
DEFAULT_CONFIG: dict[str, Any] = {
    "linger.ms": 5,
    "message.timeout.ms": 30000,
    "topic.metadata.refresh.interval.ms": METADATA_REFRESH_MS,
}


@dataclass
class LedgerSettings:
    bootstrap: str
    topic: str
    acks: str = "all"
    enable_idempotence: bool = True
    rate: float = 500.0
    records: int | None = None
    duration_s: float | None = None
    record_size: int = 100
    config: dict[str, Any] = field(default_factory=dict)
    flush_timeout_s: float = 60.0


class LedgerProducer:
    """Sends records seq 0, 1, … at a fixed rate in a thread and keeps one ledger row each."""

    def __init__(self, settings: LedgerSettings, history: History) -> None:
        if settings.records is None and settings.duration_s is None:
            raise ValueError("a producer needs records and/or duration_s")
        self.s = settings
        self.history = history
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ledger-producer", daemon=True)
        self.send_ts: list[int] = []
        self.partition: list[int | None] = []
        self.offset: list[int | None] = []
        self.status: list[str] = []
        self.error: list[str | None] = []
        self.ack_ts: list[int | None] = []
        self.acked = 0
        self.failed = 0
        self.crashed: BaseException | None = None
        self._burst_second = 0
        self._burst: dict[str, int] = {}

    @property
    def attempted(self) -> int:
        return len(self.send_ts)

    def start(self) -> LedgerProducer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def join(self, timeout: float | None = None) -> None:
        if self._thread.ident is not None:
            self._thread.join(timeout)

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def _config(self) -> dict[str, Any]:
        return {
            **DEFAULT_CONFIG,
            **self.s.config,
            "bootstrap.servers": self.s.bootstrap,
            "acks": self.s.acks,
            "enable.idempotence": self.s.enable_idempotence,
            "logger": CLIENT_LOGGER,
        }

    def _record(self, seq: int, err: KafkaError | None, msg: Message) -> None:
        self.ack_ts[seq] = now_ms()
        part = msg.partition()
        self.partition[seq] = part if part is not None and part >= 0 else None
        if err is None:
            offset = msg.offset()
            self.offset[seq] = offset if offset is not None and offset >= 0 else None
            self.status[seq] = "ok"
            self.acked += 1
            return
        self.status[seq] = "unknown" if err.code() in POSSIBLY_WRITTEN else "fail"
        self.error[seq] = err.str()
        self.failed += 1
        self._note_error(err.str())

    def _note_error(self, text: str) -> None:
        second = now_ms() // 1000
        if second != self._burst_second:
            self._flush_burst()
            self._burst_second = second
        self._burst[text] = self._burst.get(text, 0) + 1

    def _flush_burst(self) -> None:
        if self._burst:
            self.history.append(
                "producer.errors",
                count=sum(self._burst.values()),
                error="; ".join(f"{n}x {e}" for e, n in self._burst.items()),
            )
            self._burst = {}

    def _run(self) -> None:
        try:
            self._produce()
        except BaseException as exc:  # recorded for the runner: a crashed workload is `unknown`
            self.crashed = exc
            self.history.append("producer.crash", error=repr(exc))

    def _produce(self) -> None:
        s = self.s
        producer = Producer(self._config())
        self.history.append(
            "producer.start", acks=s.acks, rate=s.rate, idempotence=s.enable_idempotence
        )
        start = time.monotonic()
        deadline = start + s.duration_s if s.duration_s is not None else float("inf")
        seq = 0
        while not self._stop.is_set() and (s.records is None or seq < s.records):
            due = start + seq / s.rate
            now = time.monotonic()
            if now >= deadline:
                break
            if due > now:
                producer.poll(min(due - now, 0.05))
                continue
            self._append_row()
            self._send(producer, seq)
            seq += 1
            producer.poll(0)
        remaining = producer.flush(s.flush_timeout_s)
        self._flush_burst()
        # Records without a delivery report by now: their fate is unknown.
        pending = [i for i, st in enumerate(self.status) if st == "pending"]
        for i in pending:
            self.status[i] = "unknown"
            self.error[i] = "no delivery report before the producer closed"
        self.history.append(
            "producer.end",
            attempted=seq,
            acked=self.acked,
            failed=self.failed,
            undelivered=remaining,
        )
        del producer

    def _append_row(self) -> None:
        self.send_ts.append(now_ms())
        self.partition.append(None)
        self.offset.append(None)
        self.status.append("pending")
        self.error.append(None)
        self.ack_ts.append(None)

    def _send(self, producer: Producer, seq: int) -> None:
        value = encode_value(seq, self.s.record_size)

        def report(err: KafkaError | None, msg: Message) -> None:
            self._record(seq, err, msg)

        while True:
            try:
                producer.produce(self.s.topic, value, key=encode_key(seq), on_delivery=report)
                return
            except BufferError:  # local queue full: wait for deliveries, keep the ledger exact
                producer.poll(0.1)

    def write(self, path: Path) -> int:
        """The ledger as Parquet (call after join())."""
        n = self.attempted
        return write_table(
            path,
            LEDGER,
            {
                "seq": list(range(n)),
                "key": [encode_key(i).decode() for i in range(n)],
                "partition": self.partition[:n],
                "offset": self.offset[:n],
                "status": ["unknown" if st == "pending" else st for st in self.status[:n]],
                "error": self.error[:n],
                "send_ts": self.send_ts[:n],
                "ack_ts": self.ack_ts[:n],
            },
        )
