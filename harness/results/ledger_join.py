"""ledger.parquet from the producer's files (harness.results.producer_files), in bounded memory.

Every record sent is one LEDGER row: its send line joined with its delivery report and its
transaction's end line; of a seq (or transaction) written more than once — a restart may
repeat one — the last line counts, as it did when the files were read into dicts. A
record without a report has the caller's `unreported` status and error; a transaction
without an end line, outcome `unknown`.

However long the run: the sends and acks files are read chunk by chunk, their rows dealt
into buckets of BUCKET_SEQS consecutive seqs (held in memory while there are few, spilled
to Arrow IPC files in a scratch folder beside the files past SPILL_ROWS), and each bucket
is joined alone (numpy: stable sort, searchsorted) into LEDGER rows in seq order. Only
the transactions' ends, one row per transaction, are held whole.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from harness.results.csv_tables import CsvColumns, read_chunks
from harness.results.producer_files import ACKS, SENDS, TXNS, UNREPORTED, IncarnationPaths
from harness.results.tables import LEDGER, write_tables

BUCKET_SEQS = 1 << 18  # seqs joined at a time
SPILL_ROWS = 1 << 20  # rows of one kind held in memory before they go to the scratch folder

Rows = npt.NDArray[np.int64]


def write_ledger(
    path: Path, incs: Sequence[IncarnationPaths], unreported_error: str | None = UNREPORTED
) -> int:
    """The ledger of these incarnations' files as Parquet (`ledger_tables`); its row count."""
    return write_tables(path, LEDGER, ledger_tables(incs, unreported_error))


def ledger_tables(
    incs: Sequence[IncarnationPaths],
    unreported_error: str | None = UNREPORTED,
    unreported_status: str = "unknown",
) -> Iterator[pa.Table]:
    """LEDGER rows of every record sent, in seq order, a bucket of seqs at a time."""
    if not incs:
        return
    txns = pa.concat_tables(
        [TXNS.schema.empty_table(), *(t for inc in incs for t in read_chunks(inc.txns, TXNS))]
    ).combine_chunks()
    ends = _Index(_numpy(txns.column("txn")))
    with tempfile.TemporaryDirectory(prefix=".ledger-join-", dir=incs[0].directory) as scratch:
        sends = _Buckets(SENDS, Path(scratch) / "sends")
        acks = _Buckets(ACKS, Path(scratch) / "acks")
        try:
            for inc in incs:
                for table in read_chunks(inc.sends, SENDS):
                    sends.add(table)
            for inc in incs:
                for table in read_chunks(inc.acks, ACKS):
                    acks.add(table)
            for bucket in sorted(sends.buckets()):
                yield _join(
                    sends.take(bucket),
                    acks.take(bucket),
                    txns.column("outcome"),
                    ends,
                    unreported_status,
                    unreported_error,
                )
        finally:
            sends.close()
            acks.close()


def _join(
    sends: pa.Table,
    acks: pa.Table,
    outcomes: pa.ChunkedArray,
    ends: _Index,
    unreported_status: str,
    unreported_error: str | None,
) -> pa.Table:
    """The LEDGER rows of one bucket's sends (by seq) with their reports and outcomes."""
    sent = _Index(_numpy(sends.column("seq")))
    seq = pa.array(sent.keys, pa.int64())
    ack = acks.take(_masked(_Index(_numpy(acks.column("seq"))).rows_of(sent.keys)))
    txn = sends.column("txn").take(sent.rows)
    # A null txn (not transactional) is looked up as -1, which no transaction has.
    ended = outcomes.take(_masked(ends.rows_of(_numpy(pc.fill_null(txn, -1)))))
    none = pa.scalar(None, pa.string())
    return pa.table(
        {
            "seq": seq,
            "key": pc.binary_join_element_wise("k", pc.cast(seq, pa.string()), ""),
            "partition": pc.cast(ack.column("partition"), pa.int32()),
            "offset": ack.column("offset"),
            "status": pc.fill_null(ack.column("status"), unreported_status),
            "error": pc.if_else(
                pc.is_valid(ack.column("seq")),
                ack.column("error"),
                pa.scalar(unreported_error, pa.string()),
            ),
            "send_ts": sends.column("send_ts").take(sent.rows),
            "ack_ts": ack.column("ack_ts"),
            "txn": txn,
            "outcome": pc.if_else(pc.is_valid(txn), pc.fill_null(ended, "unknown"), none),
        },
        schema=LEDGER,
    )


class _Index:
    """The last row of each key (a dict's last write wins), by key."""

    def __init__(self, keys: Rows) -> None:
        if len(keys) < 2 or bool(np.all(keys[1:] > keys[:-1])):
            self.rows: Rows = np.arange(len(keys), dtype=np.int64)  # ascending already
        else:
            order = np.argsort(keys, kind="stable")  # equal keys stay in file order
            ordered = keys[order]
            last = np.ones(len(keys), dtype=bool)
            last[:-1] = ordered[1:] != ordered[:-1]
            self.rows = np.asarray(order[last], dtype=np.int64)
        self.keys: Rows = keys[self.rows]

    def rows_of(self, wanted: Rows) -> Rows:
        """The row of each wanted key; -1 where it has none."""
        if len(self.rows) == 0:
            return np.full(len(wanted), -1, dtype=np.int64)
        at = np.minimum(np.searchsorted(self.keys, wanted), len(self.rows) - 1)
        return np.where(self.keys[at] == wanted, self.rows[at], -1)


class _Buckets:
    """One kind of file's rows dealt by seq range, in file order within each; spilled to
    Arrow IPC files in `scratch` when more than SPILL_ROWS are held."""

    def __init__(self, columns: CsvColumns, scratch: Path) -> None:
        self.schema = columns.schema
        self.scratch = scratch
        self.held: dict[int, list[pa.Table]] = {}
        self.held_rows = 0
        self.spilled: dict[int, pa.ipc.RecordBatchStreamWriter] = {}

    def add(self, table: pa.Table) -> None:
        if table.num_rows == 0:
            return
        of = _numpy(table.column("seq")) // BUCKET_SEQS
        if of[0] == of[-1] and bool(np.all(of == of[0])):
            self.held.setdefault(int(of[0]), []).append(table)
        else:
            for bucket in np.unique(of):
                self.held.setdefault(int(bucket), []).append(table.filter(pa.array(of == bucket)))
        self.held_rows += table.num_rows
        if self.held_rows > SPILL_ROWS:
            self._spill()

    def _spill(self) -> None:
        self.scratch.mkdir(exist_ok=True)
        for bucket, tables in self.held.items():
            writer = self.spilled.get(bucket)
            if writer is None:
                writer = pa.ipc.new_stream(str(self._path(bucket)), self.schema)
                self.spilled[bucket] = writer
            for table in tables:
                writer.write_table(table)
        self.held, self.held_rows = {}, 0

    def _path(self, bucket: int) -> Path:
        return self.scratch / f"{bucket}.arrow"

    def buckets(self) -> set[int]:
        return set(self.held) | set(self.spilled)

    def take(self, bucket: int) -> pa.Table:
        """A bucket's rows in file order (what was spilled came first), let go of here."""
        tables = []
        writer = self.spilled.pop(bucket, None)
        if writer is not None:
            writer.close()
            path = self._path(bucket)
            with pa.OSFile(str(path)) as f:
                tables.append(pa.ipc.open_stream(f).read_all())
            path.unlink()
        tables += self.held.pop(bucket, [])
        return pa.concat_tables([self.schema.empty_table(), *tables]).combine_chunks()

    def close(self) -> None:
        for writer in self.spilled.values():
            writer.close()
        self.spilled = {}


def _numpy(column: pa.ChunkedArray) -> Rows:
    return np.asarray(column.to_numpy(), dtype=np.int64)


def _masked(rows: Rows) -> pa.Array:
    """Row numbers for `take`, null (a null row) where -1."""
    return pa.array(rows, pa.int64(), mask=rows < 0)
