"""The collect-time readers as they were before the columnar ones (commit 7e69f0a), kept
verbatim as the reference the columnar readers must equal, and as the "old" side of
benchmarks/collect_memory.py. They hold Python objects per record: never use them in the
harness."""

from __future__ import annotations

import csv
import io
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from confluent_kafka import KafkaError, Message, Producer

from harness.results import history as history_module
from harness.results.history import History
from harness.results.member_files import COMMITS_CSV, CONSUMED_CSV, MemberPaths
from harness.results.producer_files import ACKS_CSV, SENDS_CSV, TXNS_CSV, incarnations
from harness.results.tables import COMMITS, CONSUMED, LEDGER, write_table
from harness.workload.producer.core import POSSIBLY_WRITTEN
from harness.workload.records import encode_key, encode_value


# --- harness.results.member_files ------------------------------------------------------------
def _columns(line: str, columns: tuple[str, ...]) -> dict[str, int] | None:
    parts = line.split(",")
    if len(parts) != len(columns):
        return None
    try:
        return {name: int(value) for name, value in zip(columns, parts, strict=True)}
    except ValueError:
        return None


def _complete_lines(path: Path, start: int) -> tuple[list[str], int]:
    if not path.exists():
        return [], start
    with path.open("rb") as f:
        f.seek(start)
        data = f.read()
    end = data.rfind(b"\n")
    if end < 0:
        return [], start
    return data[: end + 1].decode().splitlines(), start + end + 1


def whole_lines(path: Path) -> list[str]:
    return _complete_lines(path, 0)[0]


def read_consumed(paths: MemberPaths) -> list[dict[str, int]]:
    lines, _ = _complete_lines(paths.consumed, 0)
    rows = (_columns(line, CONSUMED_CSV) for line in lines)
    return [row for row in rows if row is not None]


def read_commits(paths: MemberPaths) -> list[dict[str, int]]:
    lines, _ = _complete_lines(paths.commits, 0)
    rows = (_columns(line, COMMITS_CSV) for line in lines)
    return [row for row in rows if row is not None]


# --- harness.workload.group.supervisor.GroupSupervisor.collected --------------------------------
def empty_columns(schema: Any) -> dict[str, list[Any]]:
    return {name: [] for name in schema.names}


def collected(
    directory: Path, names: list[str]
) -> tuple[dict[str, list[Any]], dict[str, list[Any]]]:
    consumed = empty_columns(CONSUMED)
    commits = empty_columns(COMMITS)
    for name in names:
        paths = MemberPaths(directory, name)
        for row in read_consumed(paths):
            _append(consumed, {**row, "consumer": name})
        for commit in read_commits(paths):
            _append(commits, {**commit, "consumer": name})
    return consumed, commits


def _append(columns: dict[str, list[Any]], row: dict[str, Any]) -> None:
    for key, values in columns.items():
        values.append(row[key])


# --- harness.results.producer_files.read_rows, producer_supervisor.ledger_columns -------------
def read_rows(path: Path, columns: tuple[str, ...]) -> Iterator[dict[str, str]]:
    for line in whole_lines(path):
        if not line:
            continue
        values = next(csv.reader(io.StringIO(line)))
        if len(values) == len(columns):
            yield dict(zip(columns, values, strict=True))


def last_numbers(directory: Path) -> tuple[int, int]:
    last_seq = last_txn = -1
    for inc in incarnations(directory):
        for row in read_rows(inc.sends, SENDS_CSV):
            last_seq = max(last_seq, int(row["seq"]))
            if row["txn"]:
                last_txn = max(last_txn, int(row["txn"]))
        for row in read_rows(inc.txns, TXNS_CSV):
            last_txn = max(last_txn, int(row["txn"]))
    return last_seq, last_txn


def ledger_columns(directory: Path) -> dict[str, list[Any]]:
    sends: dict[int, tuple[int | None, int]] = {}
    acks: dict[int, dict[str, str]] = {}
    outcomes: dict[int, str] = {}
    for inc in incarnations(directory):
        for row in read_rows(inc.sends, SENDS_CSV):
            sends[int(row["seq"])] = (int(row["txn"]) if row["txn"] else None, int(row["send_ts"]))
        for row in read_rows(inc.acks, ACKS_CSV):
            acks[int(row["seq"])] = row
        for row in read_rows(inc.txns, TXNS_CSV):
            outcomes[int(row["txn"])] = row["outcome"]
    cols: dict[str, list[Any]] = {name: [] for name in LEDGER.names}
    for seq in sorted(sends):
        txn, send_ts = sends[seq]
        ack = acks.get(seq)
        cols["seq"].append(seq)
        cols["key"].append(encode_key(seq).decode())
        cols["txn"].append(txn)
        cols["send_ts"].append(send_ts)
        cols["outcome"].append(None if txn is None else outcomes.get(txn, "unknown"))
        if ack is None:
            cols["partition"].append(None)
            cols["offset"].append(None)
            cols["status"].append("unknown")
            cols["error"].append("no delivery report before the producer ended")
            cols["ack_ts"].append(None)
            continue
        cols["partition"].append(int(ack["partition"]) if ack["partition"] else None)
        cols["offset"].append(int(ack["offset"]) if ack["offset"] else None)
        cols["status"].append(ack["status"])
        cols["error"].append(ack["error"] or None)
        cols["ack_ts"].append(int(ack["ack_ts"]))
    return cols


# --- harness.workload.ledger_producer.LedgerProducer (its ledger kept in lists) --------------
@dataclass
class LedgerSettings:
    """Its settings (the spec's producer part copied field by field, as it was then)."""

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


class LegacyLedgerProducer:
    def __init__(self, settings: LedgerSettings, history: History) -> None:
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

    def start(self) -> LegacyLedgerProducer:
        self._thread.start()
        return self

    def join(self, timeout: float | None = None) -> None:
        if self._thread.ident is not None:
            self._thread.join(timeout)

    def _record(self, seq: int, err: KafkaError | None, msg: Message) -> None:
        self.ack_ts[seq] = history_module.now_ms()
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

    def _run(self) -> None:
        try:
            self._produce()
        except BaseException as exc:
            self.crashed = exc
            self.history.append("producer.crash", error=repr(exc))

    def _produce(self) -> None:
        s = self.s
        producer = Producer({"bootstrap.servers": s.bootstrap})
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
        producer.flush(s.flush_timeout_s)
        pending = [i for i, st in enumerate(self.status) if st == "pending"]
        for i in pending:
            self.status[i] = "unknown"
            self.error[i] = "no delivery report before the producer closed"
        del producer

    def _append_row(self) -> None:
        self.send_ts.append(history_module.now_ms())
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
            except BufferError:
                producer.poll(0.1)

    def write(self, path: Path) -> int:
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
