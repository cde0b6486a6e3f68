"""The producer ledger: every record it tried, with the outcome Kafka reported (kafkatest's model).

The ledger streams to disk as the records go: each send and each delivery report is a line
of the sends and acks files of incarnation `p0` (harness.results.producer_files, the shapes
the producer process writes), so a run of millions of records keeps counters in memory,
not a row per record; `write` joins the files into ledger.parquet at the end.
"""

from __future__ import annotations

import csv
import io
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import pyarrow as pa
from confluent_kafka import KafkaError, Message, Producer

from harness.common.client_log import CLIENT_LOGGER
from harness.results.history import History, now_ms
from harness.results.ledger_join import ledger_tables, write_ledger
from harness.results.producer_files import IncarnationPaths, incarnation_name
from harness.results.tables import LEDGER, concat
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


# A record still without a delivery report once the client is closed (its fate unknown).
UNREPORTED = "no delivery report before the producer closed"
FILE_BUFFER = 1 << 20  # bytes of ledger lines buffered before a write


class LedgerProducer:
    """Sends records seq 0, 1, … at a fixed rate in a thread; one ledger row each, on disk.

    `directory` gets the sends and acks files (the cell's `producer/`); without one they go
    to a temporary folder removed with the object."""

    def __init__(
        self, settings: LedgerSettings, history: History, directory: Path | None = None
    ) -> None:
        if settings.records is None and settings.duration_s is None:
            raise ValueError("a producer needs records and/or duration_s")
        self.s = settings
        self.history = history
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ledger-producer", daemon=True)
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        if directory is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="ledger-producer-")
            directory = Path(self._tmp.name)
        directory.mkdir(parents=True, exist_ok=True)
        self.files = IncarnationPaths(directory, incarnation_name(0))
        # Binary buffered files: their writes and flushes are thread-safe, so the runner's
        # thread may flush while the producer's thread appends.
        self._sends: IO[bytes] = self.files.sends.open("wb", buffering=FILE_BUFFER)
        self._acks: IO[bytes] = self.files.acks.open("wb", buffering=FILE_BUFFER)
        self._files_lock = threading.Lock()
        self._closed = False  # the files
        self._ended = False  # the client closed: records without a report are unknown
        self._attempted = 0
        self.acked = 0
        self.failed = 0
        self.crashed: BaseException | None = None
        self._burst_second = 0
        self._burst: dict[str, int] = {}

    @property
    def attempted(self) -> int:
        return self._attempted

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
        ts = now_ms()
        part = msg.partition()
        partition = part if part is not None and part >= 0 else None
        if err is None:
            offset = msg.offset()
            offset = offset if offset is not None and offset >= 0 else None
            self._ack_line(seq, partition, offset, "ok", ts, None)
            self.acked += 1
            return
        status = "unknown" if err.code() in POSSIBLY_WRITTEN else "fail"
        self._ack_line(seq, partition, None, status, ts, err.str())
        self.failed += 1
        self._note_error(err.str())

    def _ack_line(
        self,
        seq: int,
        partition: int | None,
        offset: int | None,
        status: str,
        ts: int,
        error: str | None,
    ) -> None:
        """One line of the acks file (harness.results.producer_files.ACKS_CSV)."""
        if self._closed:
            return  # a report served while the client was torn down, after the end
        if error is None and partition is not None and offset is not None:
            self._acks.write(b"%d,%d,%d,%s,%d,\n" % (seq, partition, offset, status.encode(), ts))
            return
        text = io.StringIO()  # an error text may hold commas and quotes: CSV quoting
        csv.writer(text, lineterminator="\n").writerow(
            ["" if v is None else v for v in (seq, partition, offset, status, ts, error)]
        )
        self._acks.write(text.getvalue().encode())

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
        finally:
            self._close_files()

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
            self._sends.write(b"%d,,%d\n" % (seq, now_ms()))  # before the client has it
            self._attempted += 1
            self._send(producer, seq)
            seq += 1
            producer.poll(0)
        remaining = producer.flush(s.flush_timeout_s)
        self._flush_burst()
        # Records without a delivery report by now: their fate is unknown.
        self._ended = True
        self.history.append(
            "producer.end",
            attempted=seq,
            acked=self.acked,
            failed=self.failed,
            undelivered=remaining,
        )
        del producer

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

    def _flush_files(self) -> None:
        with self._files_lock:
            if not self._closed:
                self._sends.flush()
                self._acks.flush()

    def _close_files(self) -> None:
        with self._files_lock:
            self._closed = True
            self._sends.close()
            self._acks.close()

    def _unreported(self) -> tuple[str, str | None]:
        """Status and error of a record without a report: pending while the client may still
        report it; unknown after, with why when the client closed (not when it crashed)."""
        if self._ended:
            return "unknown", UNREPORTED
        return ("pending" if self.running else "unknown"), None

    def ledger(self) -> pa.Table:
        """The ledger so far as a table (LEDGER): from the files, for tests and tools."""
        self._flush_files()
        status, error = self._unreported()
        return concat(LEDGER, ledger_tables([self.files], error, status))

    @property
    def status(self) -> list[str]:
        """Each record's status so far, by seq (reads the files: a test's convenience)."""
        return self.ledger().column("status").to_pylist()  # type: ignore[no-any-return]

    @property
    def partition(self) -> list[int | None]:
        """Each record's partition so far, by seq (reads the files: a test's convenience)."""
        return self.ledger().column("partition").to_pylist()  # type: ignore[no-any-return]

    def write(self, path: Path) -> int:
        """The ledger as Parquet (call after join()), joined from the files."""
        if self._thread.ident is None:
            self._close_files()  # never started: nothing will write to them
        self._flush_files()
        error = UNREPORTED if self._ended else None
        return write_ledger(path, [self.files], unreported_error=error)
