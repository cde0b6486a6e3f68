"""The ledger producer as its own process, so the nemesis can SIGKILL it or pause it.

`python -m harness.workload.ledger_process --settings JSON --dir DIR --name p<k>
--first-seq N --first-txn M --end-ms EPOCH_MS`

Sends seq N, N+1, … at the settings' rate until `end-ms` (or the records are done), each
record appended to `<name>.sends.csv` before the client gets it (see
harness.results.producer_files). With `transactions`, records go in transactions of
`records_per_txn`; every `abort_every`-th transaction is aborted on purpose; the end of
each is written to `<name>.txns.csv` as the producer learnt it. librdkafka's transactional
errors (its docs: "Transactional producer API") are handled as it prescribes, each one an
event: retriable → the call again (bounded); abortable → abort, the transaction
`aborted`; fatal → the transaction `unknown`, a new client re-initialises (which fences
the old one). SIGTERM ends the open transaction and stops; the parent's death stops it too.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Message, Producer

from harness.results import events as ev
from harness.results.history import now_ms
from harness.results.producer_files import CsvAppender, IncarnationPaths, ProducerEvents
from harness.workload.ledger_producer import DEFAULT_CONFIG, POSSIBLY_WRITTEN, LedgerSettings
from harness.workload.records import encode_key, encode_value

TXN_CALL_TIMEOUT_S = 30.0  # one init/commit/abort call
TXN_CALL_ATTEMPTS = 3  # retriable errors: the call again, this many times in all
BATCH = 1000  # records handed to the client per loop turn at most


@dataclass
class TxnSettings:
    records_per_txn: int = 10
    abort_every: int = 0  # 0: never abort on purpose
    transactional_id: str = "chaos-txn"
    timeout_ms: int = 60000  # transaction.timeout.ms


@dataclass
class ProcessSettings(LedgerSettings):
    """The in-process producer's settings (records: in all, over every incarnation; the
    supervisor turns duration_s into --end-ms), plus transactions."""

    transactions: TxnSettings | None = None

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> ProcessSettings:
        raw = json.loads(text)
        txn = raw.pop("transactions", None)
        return cls(**raw, transactions=TxnSettings(**txn) if txn is not None else None)


class TxnFailed(Exception):
    """A transactional call failed for good; `outcome` is what the transaction became."""

    def __init__(self, outcome: str, error: str) -> None:
        super().__init__(error)
        self.outcome = outcome
        self.error = error


class ProducerProcess:
    def __init__(self, args: argparse.Namespace) -> None:
        self.s = ProcessSettings.from_json(args.settings)
        self.args = args
        self.paths = IncarnationPaths(args.dir, args.name)
        args.dir.mkdir(parents=True, exist_ok=True)
        self.sends = CsvAppender(self.paths.sends)
        self.acks = CsvAppender(self.paths.acks)
        self.txns = CsvAppender(self.paths.txns)
        self.event = ProducerEvents(self.paths)
        self.stopping = False
        self.seq = args.first_seq
        self.txn = args.first_txn
        self.acked = self.failed = 0
        self._acks_dirty = False

    # --- the client ----------------------------------------------------------------------
    def config(self) -> dict[str, Any]:
        conf = {
            **DEFAULT_CONFIG,
            **self.s.config,
            "bootstrap.servers": self.s.bootstrap,
            "acks": self.s.acks,
            "enable.idempotence": self.s.enable_idempotence,
            "client.id": f"ledger-{self.args.name}",
        }
        t = self.s.transactions
        if t is not None:
            conf["transactional.id"] = t.transactional_id
            conf["transaction.timeout.ms"] = t.timeout_ms
            # librdkafka refuses a message timeout past the transaction's: the harness's
            # default gives way, a message.timeout.ms the spec set stays (and is refused).
            if "message.timeout.ms" not in self.s.config:
                conf["message.timeout.ms"] = min(int(conf["message.timeout.ms"]), t.timeout_ms)
        return conf

    def new_client(self) -> Producer:
        producer = Producer(self.config())
        if self.s.transactions is not None:
            self.call(producer, "init_transactions", abort_on_abortable=False)
        return producer

    def report(self, err: KafkaError | None, msg: Message) -> None:
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
        self._acks_dirty = True

    def poll(self, producer: Producer, timeout: float) -> None:
        producer.poll(timeout)
        if self._acks_dirty:
            self.acks.flush()
            self._acks_dirty = False

    # --- transactional calls ----------------------------------------------------------------
    def call(self, producer: Producer, name: str, abort_on_abortable: bool = True) -> None:
        """A transactional call (init/begin/commit/abort) as librdkafka's docs prescribe."""
        for attempt in range(1, TXN_CALL_ATTEMPTS + 1):
            try:
                method = getattr(producer, name)
                if name == "begin_transaction":
                    method()
                else:
                    method(TXN_CALL_TIMEOUT_S)
                return
            except KafkaException as exc:
                err: KafkaError = exc.args[0]
                action = self._action(err, attempt, abort_on_abortable)
                self.event(
                    ev.PRODUCER_TXN_ERROR,
                    call=name,
                    txn=self.txn,
                    error=err.str(),
                    code=err.name(),
                    retriable=err.retriable(),
                    abortable=err.txn_requires_abort(),
                    fatal=err.fatal(),
                    action=action,
                )
                if action == "retry":
                    continue
                if action == "abort":
                    raise TxnFailed("aborted", err.str()) from exc
                raise TxnFailed("unknown", err.str()) from exc

    @staticmethod
    def _action(err: KafkaError, attempt: int, abort_on_abortable: bool) -> str:
        if err.fatal():
            return "reinit"
        if err.txn_requires_abort() and abort_on_abortable:
            return "abort"
        if err.retriable() and attempt < TXN_CALL_ATTEMPTS:
            return "retry"
        return "reinit"

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
                self.call(producer, "commit_transaction" if commit else "abort_transaction")
            except TxnFailed as failed:
                if failed.outcome != "aborted":
                    raise
                error = failed.error  # abortable: abort it, as the docs say
                self.call(producer, "abort_transaction", abort_on_abortable=False)
                outcome = "aborted"
        except TxnFailed as failed:
            outcome, error = (
                "unknown",
                failed.error if error is None else f"{error}; {failed.error}",
            )
        self.txns.row(self.txn, outcome, now_ms(), error)
        self.txns.flush()
        self.txn += 1
        if outcome == "unknown":
            self.event(ev.PRODUCER_REINIT, txn=self.txn - 1)
            return self._reinit(producer)
        return producer

    def lose_txn(self, producer: Producer, error: str) -> Producer:
        """The open transaction cannot go on: its outcome is unknown; a new client."""
        self.txns.row(self.txn, "unknown", now_ms(), error)
        self.txns.flush()
        self.txn += 1
        self.event(ev.PRODUCER_REINIT, txn=self.txn - 1, error=error)
        return self._reinit(producer)

    def _reinit(self, old: Producer) -> Producer:
        with contextlib.suppress(KafkaException):  # a client in a fatal state refuses even this
            old.flush(0)
        del old
        while not self.stopping:
            try:
                return self.new_client()
            except TxnFailed:
                time.sleep(1)  # the coordinator may be down: try again (bounded by --end-ms)
                if now_ms() >= self.args.end_ms:
                    break
        # Stopped, or past the end with no coordinator to re-initialise with: nothing more
        # to send (the ledger already says what became of every record).
        self.event(ev.PRODUCER_END, error="no new client before the end", txn=self.txn)
        raise SystemExit(0)

    # --- the loop ------------------------------------------------------------------------------
    def run(self) -> None:
        s, t = self.s, self.s.transactions
        self.event(
            ev.PRODUCER_START,
            acks=s.acks,
            rate=s.rate,
            idempotence=s.enable_idempotence,
            transactional_id=t.transactional_id if t else None,
            pid=os.getpid(),
            first_seq=self.seq,
        )
        try:
            producer = self.new_client()
        except TxnFailed as failed:
            self.event(ev.PRODUCER_END, error=failed.error, acked=0, failed=0)
            return
        start, first = time.monotonic(), self.seq
        parent = os.getppid()
        in_txn = 0  # records sent in the open transaction
        last = self.args.last_seq
        while not self.stopping and os.getppid() == parent and now_ms() < self.args.end_ms:
            if last is not None and self.seq > last:
                break
            due = first + int((time.monotonic() - start) * s.rate) + 1 - self.seq
            if due <= 0:
                self.poll(producer, min(0.05, 1 / s.rate))
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
                        self.call(producer, "begin_transaction", abort_on_abortable=False)
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
        remaining = producer.flush(s.flush_timeout_s)
        self.poll(producer, 0)
        self.event(
            ev.PRODUCER_END,
            attempted=self.seq - first,
            acked=self.acked,
            failed=self.failed,
            undelivered=remaining,
        )

    def _abort_this(self) -> bool:
        t = self.s.transactions
        return t is not None and t.abort_every > 0 and (self.txn + 1) % t.abort_every == 0

    def send(self, producer: Producer, n: int, txn: int | None) -> None:
        """n records: their ledger lines first (flushed), then to the client."""
        seqs = range(self.seq, self.seq + n)
        ts = now_ms()
        for seq in seqs:
            self.sends.row(seq, txn, ts)
        self.sends.flush()
        for seq in seqs:
            value = encode_value(seq, self.s.record_size)
            while True:
                try:
                    producer.produce(
                        self.s.topic, value, key=encode_key(seq), on_delivery=self.report
                    )
                    break
                except BufferError:  # local queue full: wait for deliveries
                    self.poll(producer, 0.1)
        self.seq += n


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--settings", required=True, help="ProcessSettings as JSON")
    parser.add_argument("--dir", type=Path, required=True)
    parser.add_argument("--name", required=True, help="p<k>: the incarnation")
    parser.add_argument("--first-seq", type=int, default=0)
    parser.add_argument("--last-seq", type=int, default=None, help="the last seq to send")
    parser.add_argument("--first-txn", type=int, default=0)
    parser.add_argument("--end-ms", type=int, required=True, help="stop sending at (epoch ms)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    proc = ProducerProcess(parse_args(sys.argv[1:] if argv is None else argv))

    def stop(signum: int, frame: object) -> None:
        proc.stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    proc.run()


if __name__ == "__main__":
    main()
