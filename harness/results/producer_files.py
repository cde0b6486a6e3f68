"""The files a producer process appends to as it works, and their reader.

The producer runs as its own process when it can be SIGKILLed or paused (a transactional
producer, or a spec with producer faults). Each incarnation `p<k>` (k = 0, then one more
per restart) writes to `<cell>/producer/`:

- `p<k>.sends.csv`  `seq,txn,send_ts`: written and flushed *before* the records are handed
  to the client, so a record the client may have sent is never missing from the ledger;
- `p<k>.acks.csv`   `seq,partition,offset,status,ack_ts,error`: one delivery report each;
- `p<k>.txns.csv`   `txn,outcome,ts,error`: how each transaction ended, as the producer
  learnt it (`committed`, `aborted`, `unknown`);
- `p<k>.events.jsonl`, `p<k>.stderr.log`.

A record sent without a delivery report is `unknown`; a transaction without an end line is
`unknown` (the producer died, or no answer came). Lines torn by a SIGKILL are dropped.
The in-process producer (harness.workload.ledger_producer) writes the sends and acks files
of one incarnation `p0` alike, so that no run keeps its ledger in memory.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from harness.results.csv_tables import CsvColumns, read_chunks, read_table
from harness.results.history import now_ms
from harness.results.member_files import open_for_append
from harness.results.tables import LEDGER, ROW_GROUP_ROWS, write_tables

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


def write_ledger(
    path: Path, incs: Sequence[IncarnationPaths], unreported_error: str | None = UNREPORTED
) -> int:
    """The LEDGER table of these incarnations' files as Parquet (see `ledger_tables`)."""
    return write_tables(path, LEDGER, ledger_tables(incs, unreported_error))


def ledger_tables(
    incs: Sequence[IncarnationPaths],
    unreported_error: str | None = UNREPORTED,
    unreported_status: str = "unknown",
    rows: int = ROW_GROUP_ROWS,
) -> Iterator[pa.Table]:
    """The LEDGER rows of every record sent, by seq, `rows` at a time: its send line joined
    with its delivery report and its transaction's end line (the last line of each seq and
    transaction counts, as a restart may repeat one). A record without a report has
    `unreported_status` and `unreported_error`; a transaction without an end, outcome
    `unknown`. Columnar: the files' columns and a few index arrays, no object per record."""
    sends = _read_all(incs, "sends", SENDS)
    acks = _read_all(incs, "acks", ACKS)
    txns = _read_all(incs, "txns", TXNS)
    send_rows = _last_of_each(_numpy(sends.column("seq")))
    seqs = _numpy(sends.column("seq"))[send_rows]
    ack_rows = _rows_of(_numpy(acks.column("seq")), seqs)
    txn = sends.column("txn").take(send_rows)
    # A null txn (not transactional) is looked up as -1, which no transaction has.
    txn_rows = _rows_of(_numpy(txns.column("txn")), _numpy(pc.fill_null(txn, -1)))
    unreported = pa.scalar(unreported_error, pa.string())
    for start in range(0, len(seqs), rows):
        part = slice(start, start + rows)
        seq = pa.array(seqs[part], pa.int64())
        ack = acks.take(_masked(ack_rows[part]))
        reported = pc.is_valid(ack.column("seq"))
        ended = txns.column("outcome").take(_masked(txn_rows[part]))
        row_txn = txn[start : start + rows]
        yield pa.table(
            {
                "seq": seq,
                "key": pc.binary_join_element_wise("k", pc.cast(seq, pa.string()), ""),
                "partition": pc.cast(ack.column("partition"), pa.int32()),
                "offset": ack.column("offset"),
                "status": pc.fill_null(ack.column("status"), unreported_status),
                "error": pc.if_else(reported, ack.column("error"), unreported),
                "send_ts": sends.column("send_ts").take(send_rows[part]),
                "ack_ts": ack.column("ack_ts"),
                "txn": row_txn,
                "outcome": pc.if_else(
                    pc.is_valid(row_txn),
                    pc.fill_null(ended, "unknown"),
                    pa.scalar(None, pa.string()),
                ),
            },
            schema=LEDGER,
        )


def _read_all(incs: Sequence[IncarnationPaths], kind: str, columns: CsvColumns) -> pa.Table:
    """One kind of file of every incarnation, in incarnation and file order."""
    tables = [read_table(getattr(inc, kind), columns) for inc in incs]
    return pa.concat_tables([columns.schema.empty_table(), *tables]).combine_chunks()


def _numpy(column: pa.ChunkedArray) -> npt.NDArray[np.int64]:
    return np.asarray(column.to_numpy(), dtype=np.int64)


def _last_of_each(keys: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Row numbers of the last row of each key, by key (a dict's last write wins, sorted)."""
    if len(keys) < 2 or bool(np.all(keys[1:] > keys[:-1])):
        return np.arange(len(keys), dtype=np.int64)  # the usual file: ascending already
    order = np.argsort(keys, kind="stable")  # equal keys stay in file order
    ordered = keys[order]
    last = np.ones(len(keys), dtype=bool)
    last[:-1] = ordered[1:] != ordered[:-1]
    return np.asarray(order[last], dtype=np.int64)


def _rows_of(keys: npt.NDArray[np.int64], wanted: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """For each wanted key, the row of its last occurrence in `keys`; -1 where none."""
    rows = _last_of_each(keys)
    if len(rows) == 0:
        return np.full(len(wanted), -1, dtype=np.int64)
    ordered = keys[rows]
    at = np.minimum(np.searchsorted(ordered, wanted), len(rows) - 1)
    return np.where(ordered[at] == wanted, rows[at], -1)


def _masked(rows: npt.NDArray[np.int64]) -> pa.Array:
    """Row numbers for `take`, null (a null row) where -1."""
    return pa.array(rows, pa.int64(), mask=rows < 0)
