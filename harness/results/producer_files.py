"""The files a producer process appends to as it works, and their reader.

The producer runs as its own process when it can be SIGKILLed or paused (a transactional
producer, or a spec with producer faults). Each incarnation `p<k>` (k = 0, then one more
per restart) writes to `<cell>/producer/`:

- `p<k>.sends.csv`  `seq,txn,send_ts`: written and flushed *before* the records are handed
  to the client, so a record the client may have sent is never missing from the ledger;
- `p<k>.acks.csv`   `seq,partition,offset,status,ack_ts,error`: one delivery report each;
- `p<k>.txns.csv`   `txn,outcome,ts,error`: how each transaction ended, as the producer
  learnt it (`committed`, `aborted`, `unknown`); a producer without transactions has none;
- `p<k>.events.jsonl`, `p<k>.stderr.log`.

A record sent without a delivery report is `unknown`; a transaction without an end line is
`unknown` (the producer died, or no answer came). Lines torn by a SIGKILL are dropped.
The producer as a thread of the runner (harness.workload.producer.thread) writes the sends
and acks files of one incarnation `p0` alike (both are harness.workload.producer.core), so
that no run keeps its ledger in memory.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pyarrow as pa
import pyarrow.compute as pc

from harness.results.csv_tables import CsvColumns, read_chunks
from harness.results.history import now_ms
from harness.results.member_files import open_for_append

PRODUCER_DIR = "producer"
SENDS_CSV = ("seq", "txn", "send_ts")
ACKS_CSV = ("seq", "partition", "offset", "status", "ack_ts", "error")
TXNS_CSV = ("txn", "outcome", "ts", "error")
OUTCOMES = ("committed", "aborted", "unknown")
# How each file's fields are read (harness.results.csv_tables).
SENDS = CsvColumns(
    SENDS_CSV, ints=frozenset({"seq", "txn", "send_ts"}), nullable=frozenset({"txn"}), quoted=True
)
ACKS = CsvColumns(
    ACKS_CSV,
    ints=frozenset({"seq", "partition", "offset", "ack_ts"}),
    nullable=frozenset({"partition", "offset", "error"}),
    quoted=True,
)
TXNS = CsvColumns(TXNS_CSV, ints=frozenset({"txn"}), quoted=True)
UNREPORTED = "no delivery report before the producer ended"


@dataclass(frozen=True)
class IncarnationPaths:
    """The files of one producer process (`p0`, `p1` after a restart, ...)."""

    directory: Path
    name: str

    @property
    def sends(self) -> Path:
        return self.directory / f"{self.name}.sends.csv"

    @property
    def acks(self) -> Path:
        return self.directory / f"{self.name}.acks.csv"

    @property
    def txns(self) -> Path:
        return self.directory / f"{self.name}.txns.csv"

    @property
    def events(self) -> Path:
        return self.directory / f"{self.name}.events.jsonl"

    @property
    def stderr(self) -> Path:
        return self.directory / f"{self.name}.stderr.log"


def incarnation_name(index: int) -> str:
    return f"p{index}"


class CsvAppender:
    """Rows appended as CSV lines (quoted when needed: error texts hold commas)."""

    def __init__(self, path: Path) -> None:
        self._file: IO[str] = open_for_append(path)
        self._writer = csv.writer(self._file, lineterminator="\n")

    def row(self, *values: object) -> None:
        self._writer.writerow(["" if v is None else v for v in values])

    def flush(self) -> None:
        self._file.flush()

    def close(self) -> None:
        self._file.close()


class ProducerEvents:
    """The process's own events (JSON lines, flushed one by one) for the cell's history."""

    def __init__(self, paths: IncarnationPaths) -> None:
        self.producer = paths.name
        self._file = open_for_append(paths.events)

    def __call__(self, kind: str, **fields: Any) -> None:
        record = {"ts": now_ms(), "kind": kind, "producer": self.producer, **fields}
        self._file.write(json.dumps(record) + "\n")
        self._file.flush()


def incarnations(directory: Path) -> list[IncarnationPaths]:
    """Every incarnation that left a sends file, in start order."""
    found = sorted(
        (int(p.name[1:].split(".", 1)[0]), p.name.split(".", 1)[0])
        for p in directory.glob("p*.sends.csv")
        if p.name[1:].split(".", 1)[0].isdigit()
    )
    return [IncarnationPaths(directory, name) for _, name in found]


def last_numbers(directory: Path) -> tuple[int, int]:
    """The highest seq sent and transaction begun so far (-1 when none), read chunk by chunk."""
    last_seq = last_txn = -1
    for inc in incarnations(directory):
        for sends in read_chunks(inc.sends, SENDS):
            last_seq = max(last_seq, _max(sends.column("seq")))
            last_txn = max(last_txn, _max(sends.column("txn")))
        for txns in read_chunks(inc.txns, TXNS):
            last_txn = max(last_txn, _max(txns.column("txn")))
    return last_seq, last_txn


def _max(column: pa.ChunkedArray) -> int:
    value = pc.max(column).as_py()
    return -1 if value is None else int(value)
