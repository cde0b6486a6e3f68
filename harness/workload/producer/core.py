"""The producer's one core: records seq N, N+1, … at the spec's rate, each one in the ledger.

Both ways the producer runs are this class: a thread of the runner
(harness.workload.producer.thread, when nothing acts on the producer) and a process of its
own (harness.workload.producer.member, under harness.workload.producer.supervisor, when it
is transactional or the nemesis may SIGKILL or pause it). What it reads is the spec's own
`producer` part (harness.spec.producer.ProducerSpec) and the child's Runtime; nothing is
copied field by field.

Every record's ledger lines go to the files of its incarnation `<name>`
(harness.results.producer_files): `<name>.sends.csv` before the client gets the record
(flushed: a SIGKILL never hides a record the client may have sent), one line of
`<name>.acks.csv` per delivery report (`unknown` for an error after which it may still have
been written), and with transactions `<name>.txns.csv`, each transaction's end as the
producer learnt it.

Pacing: record k of an incarnation goes when `k / rate` seconds have passed since it began
(a `producer.schedule` event says when, from which seq, and how many records are due),
handed to the client in batches of what is due (BATCH at most); sending stops at the end
(`end_ms`, else duration_s from the start; at the latest Runtime.max_s), after the spec's
records, or when the wrapper says stop. With `transactions`, records go in transactions of
`records_per_txn`; every `abort_every`-th transaction is aborted on purpose. librdkafka's
transactional errors are handled as it prescribes (harness.workload.producer.transactions);
after a fatal one the transaction is `unknown` and a new client re-initialises (which fences
the old one). The client's settings: harness.workload.producer.client_config.
"""

from __future__ import annotations

import contextlib
import logging
import math
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from confluent_kafka import KafkaError, KafkaException, Message, Producer

from harness.results import events as ev
from harness.results.history import now_ms
from harness.results.producer_files import CsvAppender, IncarnationPaths, incarnation_name
from harness.spec.producer import ProducerSpec
from harness.workload.producer.client_config import client_config
from harness.workload.producer.transactions import TXN_CALL_TIMEOUT_S, TxnFailed, txn_call
from harness.workload.records import encode_key, encode_value
from harness.workload.runtime import Runtime

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
FLUSH_TIMEOUT_S = 60.0  # the client's queue at the end
BATCH = 1000  # records handed to the client per loop turn at most
WARM_FLUSH_TIMEOUT_S = 10.0  # warm(): the workload topic's metadata
LATE_GRACE_MS = 250  # how late past the end a loop may still send records due before it
NO_END_MS = 365 * 24 * 3600 * 1000  # records only: no end of its own


class Emit(Protocol):
    """Where the core's events go: the cell's History (a thread) or the incarnation's
    events file (a process, harness.results.producer_files.ProducerEvents)."""

    def __call__(self, kind: str, **fields: Any) -> object: ...


class ErrorBursts:
    """Delivery errors summed per second into one `producer.errors` event each, for the
    runner's status line (harness.runner.status); only the thread's events reach it live."""

    def __init__(self, emit: Emit) -> None:
        self._emit = emit
        self._second = 0
        self._burst: dict[str, int] = {}

    def note(self, text: str) -> None:
        second = now_ms() // 1000
        if second != self._second:
            self.flush()
            self._second = second
        self._burst[text] = self._burst.get(text, 0) + 1

    def flush(self) -> None:
        if self._burst:
            self._emit(
                ev.PRODUCER_ERRORS,
                count=sum(self._burst.values()),
                error="; ".join(f"{n}x {e}" for e, n in self._burst.items()),
            )
            self._burst = {}


class _NoClient(Exception):
    """Stopped, or past the end, with no coordinator to re-initialise a client with."""


class ProducerCore:
    """One incarnation of the producer: its client, its pacing and its ledger lines.

    `name` is the incarnation (`p0`, `p1` after a restart); it goes on from `first_seq` and
    `first_txn`; `end_ms` is the schedule's end (kept across restarts; None: duration_s
    from the start). `errors` sums delivery errors into events; `start_fields` go into the
    `producer.start` event besides acks, rate and idempotence. librdkafka's own log lines go
    to `client_logger` (the runner's: the cell's clients.log), else to stderr (a process's
    `<name>.stderr.log`)."""

    def __init__(
        self,
        spec: ProducerSpec,
        runtime: Runtime,
        emit: Emit,
        *,
        name: str = incarnation_name(0),
        first_seq: int = 0,
        first_txn: int = 0,
        end_ms: int | None = None,
        errors: ErrorBursts | None = None,
        start_fields: Mapping[str, object] | None = None,
        client_logger: logging.Logger | None = None,
    ) -> None:
        if spec.records is None and spec.duration_s is None:
            raise ValueError("a producer needs records and/or duration_s")
        self.spec = spec
        self.runtime = runtime
        self.emit = emit
        self.name = name
        self.errors = errors
        self.start_fields = dict(start_fields or {})
        self.client_logger = client_logger
        self.paths = IncarnationPaths(runtime.directory, name)
        runtime.directory.mkdir(parents=True, exist_ok=True)
        self.sends = CsvAppender(self.paths.sends)
        self.acks = CsvAppender(self.paths.acks)
        # Transactions only: a producer without them leaves no txns file.
        self.txns = CsvAppender(self.paths.txns) if spec.transactions is not None else None
        self.first_seq = self.seq = first_seq  # the next seq to send
        self.written = first_seq  # the seq after the last sends line
        self.txn = first_txn
        self.last_seq = spec.records - 1 if spec.records is not None else None
        self._end_ms = end_ms
        self.end_ms = 0  # when sending stops (epoch ms): set as run() begins
        self._latest_ms = 0  # Runtime.max_s after run() began: never later than this
        self.acked = self.failed = 0
        self.ended = False  # the client flushed: a record without a report is unknown
        self.closed = False  # the files
        self._acks_dirty = False
        self._stopping: Callable[[], bool] = lambda: False
        self._client: Producer | None = None  # made before run() by warm()

    @property
    def attempted(self) -> int:
        """Records in the sends file (the client had them, or was about to)."""
        return self.written - self.first_seq

    # --- the client ----------------------------------------------------------------------
    def new_client(self) -> Producer:
        config = client_config(self.spec, self.runtime.bootstrap, self.name, self.client_logger)
        producer = Producer(config)
        if self.spec.transactions is not None:
            txn_call(producer, "init_transactions", self.emit, self.txn, abort_on_abortable=False)
        return producer

    def warm(self) -> None:
        """The client made before the workload (its producer id acquired, a transactional
        one's transactions initialised) and the workload topic's metadata loaded; run() then
        starts with it. It writes into no topic: a librdkafka producer keeps refreshing every
        topic it wrote to, and asking for the deleted warm-up topic makes a broker with
        auto.create.topics.enable re-create it with one partition and one replica — a partition
        that goes offline with its broker and pollutes Kafka's own figures."""
        if self._client is None:
            self._client = self.new_client()
        self._client.list_topics(self.runtime.topic, timeout=WARM_FLUSH_TIMEOUT_S)

    def report(self, err: KafkaError | None, msg: Message) -> None:
        """A delivery report: its line of the acks file."""
        if self.closed:
            return  # served while the client was torn down, after the end
        key = msg.key()
        seq = int(key[1:]) if isinstance(key, bytes) and key else -1
        part = msg.partition()
        part = part if part is not None and part >= 0 else None
        if err is None:
            offset = msg.offset()
            offset = offset if offset is not None and offset >= 0 else None
            self.acks.row(seq, part, offset, "ok", now_ms(), None)
            self.acked += 1
        else:
            status = "unknown" if err.code() in POSSIBLY_WRITTEN else "fail"
            self.acks.row(seq, part, None, status, now_ms(), err.str())
            self.failed += 1
            if self.errors is not None:
                self.errors.note(err.str())
        self._acks_dirty = True

    def poll(self, producer: Producer, timeout: float) -> None:
        """Serve delivery reports; their lines reach the file."""
        producer.poll(timeout)
        if self._acks_dirty:
            self.acks.flush()
            self._acks_dirty = False

    def send(self, producer: Producer, n: int, txn: int | None) -> None:
        """n records: their ledger lines first (flushed), then to the client."""
        seqs = range(self.seq, self.seq + n)
        ts = now_ms()
        for seq in seqs:
            self.sends.row(seq, txn, ts)
        self.sends.flush()
        self.written = self.seq + n
        for seq in seqs:
            value = encode_value(seq, self.spec.record_size)
            blocked: float | None = None
            while True:
                try:
                    producer.produce(
                        self.runtime.topic, value, key=encode_key(seq), on_delivery=self.report
                    )
                    break
                except BufferError:  # local queue full: wait for deliveries
                    blocked = time.monotonic() if blocked is None else blocked
                    self.poll(producer, 0.1)
            if blocked is not None:  # produce() itself never blocks: this is the only wait
                ms = round((time.monotonic() - blocked) * 1000)
                self.emit(ev.PRODUCER_BLOCKED, seq=seq, ms=ms)
        self.seq += n

    # --- transactions -------------------------------------------------------------------------
    def _txn_line(self, outcome: str, error: str | None) -> None:
        assert self.txns is not None  # only a transactional producer ends transactions
        self.txns.row(self.txn, outcome, now_ms(), error)
        self.txns.flush()
        self.txn += 1

    def end_txn(self, producer: Producer, commit: bool) -> Producer:
        """Commit or abort the open transaction; its outcome line; a new client if needed."""
        outcome, error = ("committed" if commit else "aborted"), None
        if not commit:
            # Abort what was written, not what is still queued: abort_transaction purges
            # undelivered records, and an abort of records no broker holds shows nothing.
            self.poll(producer, 0)
            producer.flush(TXN_CALL_TIMEOUT_S)
            self.poll(producer, 0)
        try:
            try:
                txn_call(
                    producer,
                    "commit_transaction" if commit else "abort_transaction",
                    self.emit,
                    self.txn,
                )
            except TxnFailed as failed:
                if failed.outcome != "aborted":
                    raise
                error = failed.error  # abortable: abort it, as the docs say
                txn_call(
                    producer, "abort_transaction", self.emit, self.txn, abort_on_abortable=False
                )
                outcome = "aborted"
        except TxnFailed as failed:
            outcome, error = (
                "unknown",
                failed.error if error is None else f"{error}; {failed.error}",
            )
        self._txn_line(outcome, error)
        if outcome == "unknown":
            self.emit(ev.PRODUCER_REINIT, txn=self.txn - 1)
            return self._reinit(producer)
        return producer

    def lose_txn(self, producer: Producer, error: str) -> Producer:
        """The open transaction cannot go on: its outcome is unknown; a new client."""
        self._txn_line("unknown", error)
        self.emit(ev.PRODUCER_REINIT, txn=self.txn - 1, error=error)
        return self._reinit(producer)

    def _reinit(self, old: Producer) -> Producer:
        with contextlib.suppress(KafkaException):  # a client in a fatal state refuses even this
            old.flush(0)
        del old
        while not self._stopping():
            try:
                return self.new_client()
            except TxnFailed:
                time.sleep(1)  # the coordinator may be down: try again (bounded by the end)
                if now_ms() >= self.end_ms:
                    break
        # Stopped, or past the end with no coordinator to re-initialise with: nothing more
        # to send (the ledger already says what became of every record).
        self.emit(ev.PRODUCER_END, error="no new client before the end", txn=self.txn)
        raise _NoClient

    def _abort_this(self) -> bool:
        t = self.spec.transactions
        return t is not None and t.abort_every > 0 and (self.txn + 1) % t.abort_every == 0

    # --- the loop ------------------------------------------------------------------------------
    def run(self, stopping: Callable[[], bool] = lambda: False) -> None:
        """Send until the end, the last record or `stopping()`; the files are closed after."""
        self._stopping = stopping
        s = self.spec
        started = now_ms()
        own_end = started + (int(s.duration_s * 1000) if s.duration_s is not None else NO_END_MS)
        end = self._end_ms if self._end_ms is not None else own_end
        self._latest_ms = started + int(self.runtime.max_s * 1000)
        self.end_ms = min(end, self._latest_ms)
        try:
            self.emit(
                ev.PRODUCER_START,
                acks=s.acks,
                rate=s.rate,
                idempotence=s.idempotence,
                **self.start_fields,
            )
            try:
                producer, self._client = self._client or self.new_client(), None
            except TxnFailed as failed:
                self.emit(ev.PRODUCER_END, error=failed.error, acked=0, failed=0)
                return
            self._produce(producer)
        except _NoClient:
            return
        finally:
            self.close()

    def _in_time(self, owed: int) -> bool:
        now = now_ms()
        return now < self.end_ms or (self.seq < owed and now < self.end_ms + LATE_GRACE_MS)

    def _produce(self, producer: Producer) -> None:
        s, t = self.spec, self.spec.transactions
        if self._end_ms is None and s.duration_s is not None:
            # Its own duration counts from the pacing's start, not from before the client
            # started: duration_s * rate records, the last one due just inside it.
            self.end_ms = min(now_ms() + int(s.duration_s * 1000), self._latest_ms)
        first, last = self.seq, self.last_seq
        # Records due before the end (seq first + j is due at j / rate): a loop that wakes a
        # little late still sends them, within LATE_GRACE_MS past the end; one held up longer
        # (a full buffer, a paused process) stops at the end with what it sent.
        owed = first + max(math.ceil((self.end_ms - now_ms()) / 1000 * s.rate), 0)
        planned = max((owed if last is None else min(owed, last + 1)) - first, 0)
        # The schedule as a fact of the history: the sends are measured against it.
        self.emit(
            ev.PRODUCER_SCHEDULE, first_seq=first, rate=s.rate, end_ms=self.end_ms, planned=planned
        )
        start = time.monotonic()
        in_txn = 0  # records sent in the open transaction
        while not self._stopping() and self._in_time(owed):
            if last is not None and self.seq > last:
                break
            elapsed = time.monotonic() - start
            due = min(first + int(elapsed * s.rate) + 1, owed) - self.seq
            if due <= 0:  # wait for the next record's time, not a whole interval past it
                self.poll(producer, min(0.05, max((self.seq - first) / s.rate - elapsed, 0.0)))
                continue
            n = min(due, BATCH)
            if last is not None:
                n = min(n, last + 1 - self.seq)
            if t is None:
                self.send(producer, n, None)
            else:
                n = min(n, t.records_per_txn - in_txn)
                try:
                    if in_txn == 0:
                        txn_call(
                            producer,
                            "begin_transaction",
                            self.emit,
                            self.txn,
                            abort_on_abortable=False,
                        )
                    self.send(producer, n, self.txn)
                except (TxnFailed, KafkaException) as exc:
                    # The client is in an error state (fenced, fatal): this transaction's
                    # end is unknown, a new client takes over.
                    producer = self.lose_txn(producer, str(exc))
                    in_txn = 0
                    continue
                in_txn += n
                if in_txn >= t.records_per_txn:
                    producer = self.end_txn(producer, commit=not self._abort_this())
                    in_txn = 0
            self.poll(producer, 0)
        if t is not None and in_txn > 0:
            producer = self.end_txn(producer, commit=not self._abort_this())
        remaining, fatal = self._flush(producer)
        if self.errors is not None:
            self.errors.flush()
        self.ended = True
        self.emit(
            ev.PRODUCER_END,
            attempted=self.seq - first,
            acked=self.acked,
            failed=self.failed,
            undelivered=remaining,
            **({"fatal": fatal} if fatal else {}),
        )

    def _flush(self, producer: Producer) -> tuple[int, str | None]:
        """The client's queue flushed at the end: (records still in it, the client's fatal
        error or None). A client in a fatal state - an idempotent producer whose sequence the
        brokers lost, OUT_OF_ORDER_SEQUENCE_NUMBER after every replica's power cut - makes
        flush() raise: confluent-kafka raises the KafkaError itself, which no `except` with a
        type matches (it is no BaseException), hence the bare one. The ledger then says what
        became of each record (librdkafka purged the rest: `fail`), and producer.end still
        closes the schedule (else `lost` could not be decided)."""
        try:
            remaining = producer.flush(FLUSH_TIMEOUT_S)
            self.poll(producer, 0)
            return int(remaining), None
        except:  # noqa: E722 - see the docstring: the raised object is not an exception type
            error = sys.exc_info()[1]
        try:  # noqa: SIM105 - contextlib.suppress matches by type: not this object
            self.poll(producer, 0)  # the purged records' reports
        except:  # noqa: E722 - the same fatal error again
            pass
        return len(producer), str(error)

    def close(self) -> None:
        """The files, once (a report served after this is dropped)."""
        if self.closed:
            return
        self.closed = True
        for appender in (self.sends, self.acks, self.txns):
            if appender is not None:
                appender.close()
