"""A consumer process's files (harness.results.member_files) read as Arrow tables, for the runner.

Chunk by chunk (harness.results.csv_tables): a soak test's millions of lines never become
Python objects, while the workload runs (ConsumedTail) or at collect (consumed.parquet,
commits.parquet). Apart from member_files so that the member processes do not load pyarrow.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from harness.results.csv_tables import CsvColumns, parse_chunk, read_chunks, whole_chunks
from harness.results.member_files import COMMITS_CSV, CONSUMED_CSV, SHARE_CSV, MemberPaths
from harness.results.tables import COMMITS, CONSUMED, SHARE

# Every field an integer, split on commas (a line with a wrong field is dropped).
CONSUMED_COLUMNS = CsvColumns(CONSUMED_CSV, ints=frozenset(CONSUMED_CSV))
COMMITS_COLUMNS = CsvColumns(COMMITS_CSV, ints=frozenset(COMMITS_CSV))
SHARE_COLUMNS = CsvColumns(
    SHARE_CSV,
    ints=frozenset({"seq", "partition", "offset", "delivery_count", "ts"}),
    nullable=frozenset({"ack", "error"}),
)


@dataclass
class ConsumedTail:
    """Follows one member's consumed file: counts and the highest offset per partition (what
    it keeps does not grow with the records; each poll reads what was added, in chunks)."""

    paths: MemberPaths
    position: int = 0
    rows: int = 0
    max_offset: dict[int, int] = field(default_factory=dict)

    def poll(self) -> None:
        for chunk, position in whole_chunks(self.paths.consumed, self.position):
            self.position = position
            table = parse_chunk(chunk, CONSUMED_COLUMNS)
            self.rows += table.num_rows
            highest = table.group_by("partition").aggregate([("offset", "max")])
            for partition, offset in zip(
                highest.column("partition").to_pylist(),
                highest.column("offset_max").to_pylist(),
                strict=True,
            ):
                if offset > self.max_offset.get(partition, -1):
                    self.max_offset[partition] = offset


def consumed_tables(paths: MemberPaths) -> Iterator[pa.Table]:
    """Every record the member processed (CONSUMED), in its processing order, a chunk of
    its file at a time; torn and foreign lines dropped."""
    consumer = pa.scalar(paths.consumer, pa.string())
    for t in read_chunks(paths.consumed, CONSUMED_COLUMNS):
        yield pa.table(
            {
                "seq": t.column("seq"),
                "partition": t.column("partition").cast(pa.int32()),
                "offset": t.column("offset"),
                "consumer": pa.repeat(consumer, t.num_rows),
                "ts": t.column("ts"),
                "generation": t.column("generation").cast(pa.int32()),
            },
            schema=CONSUMED,
        )


def commits_tables(paths: MemberPaths) -> Iterator[pa.Table]:
    """Every commit the member saw succeed (COMMITS), in order; torn lines dropped."""
    consumer = pa.scalar(paths.consumer, pa.string())
    for t in read_chunks(paths.commits, COMMITS_COLUMNS):
        yield pa.table(
            {
                "consumer": pa.repeat(consumer, t.num_rows),
                "partition": t.column("partition").cast(pa.int32()),
                "offset": t.column("offset"),
                "ts": t.column("ts"),
            },
            schema=COMMITS,
        )


def share_tables(paths: MemberPaths) -> Iterator[pa.Table]:
    """A share member's deliveries and acknowledgements (SHARE), in order; torn lines
    dropped. An empty ack or error is null; a delivery count of -1 (an ack's) too."""
    consumer = pa.scalar(paths.consumer, pa.string())
    for t in read_chunks(paths.share, SHARE_COLUMNS):
        count = t.column("delivery_count")
        yield pa.table(
            {
                "consumer": pa.repeat(consumer, t.num_rows),
                "event": t.column("event"),
                "seq": t.column("seq"),
                "partition": t.column("partition").cast(pa.int32()),
                "offset": t.column("offset"),
                "delivery_count": pc.if_else(
                    pc.less(count, 0), pa.scalar(None, pa.int64()), count
                ).cast(pa.int32()),
                "ack": t.column("ack"),
                "error": t.column("error"),
                "ts": t.column("ts"),
            },
            schema=SHARE,
        )
