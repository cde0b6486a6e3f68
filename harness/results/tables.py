"""Arrow schemas of the result-folder tables (a contract) and their writers."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from harness.results.metrics import COUNT_NAMES
from harness.results.timings import HISTORY_COLUMNS

__all__ = [
    "COMMITS",
    "CONSUMED",
    "COUNT_NAMES",
    "FIGURE_HISTORY",
    "LEDGER",
    "LOG",
    "METRICS",
    "OUTPUT",
    "SEGMENTS",
    "SEGMENT_LOGS",
    "SHARE",
    "concat",
    "write_table",
    "write_tables",
]


LEDGER = pa.schema(
    [
        ("seq", pa.int64()),
        ("key", pa.string()),
        ("partition", pa.int32()),
        ("offset", pa.int64()),
        ("status", pa.string()),
        ("error", pa.string()),
        ("send_ts", pa.int64()),
        ("ack_ts", pa.int64()),
        # A transactional producer's: its transaction number (unique within the cell) and
        # the transaction's end as the producer learnt it, committed | aborted | unknown (a
        # commit/abort whose answer never came, or a producer killed mid-transaction). Both
        # null when the producer is not transactional.
        ("txn", pa.int64()),
        ("outcome", pa.string()),
    ]
)
CONSUMED = pa.schema(
    [
        ("seq", pa.int64()),
        ("partition", pa.int32()),
        ("offset", pa.int64()),
        ("consumer", pa.string()),
        ("ts", pa.int64()),
        ("generation", pa.int32()),
    ]
)
LOG = pa.schema(
    [
        ("seq", pa.int64()),
        ("partition", pa.int32()),
        ("offset", pa.int64()),
        # True when a read_committed reader sees the record (the final read runs twice:
        # read_uncommitted for every record, read_committed for visibility). Null, or a file
        # without the column (written before it existed), means true.
        ("committed", pa.bool_()),
    ]
)
# A pipeline's output topic (spec `pipeline:`), read at the end like the input's log: each
# record as the output holds it, with the input record it came from (written into the value
# by the pipeline member). `committed`: a read_committed reader sees it (an exactly-once
# pipeline's aborted transactions leave records only read_uncommitted sees).
OUTPUT = pa.schema(
    [
        ("seq", pa.int64()),
        ("partition", pa.int32()),
        ("offset", pa.int64()),
        ("committed", pa.bool_()),
        ("input_partition", pa.int32()),
        ("input_offset", pa.int64()),
    ]
)
# A share group's deliveries and acknowledgements (spec `consumer: {kind: share}`), one row
# each, from its members' files: `event` delivered | acked; `delivery_count` the broker's
# count on a delivery (1 the first time; null on an ack); `ack` accept | release | reject
# and `error` (null: the broker took it; else the client's error name) on an ack. An ACCEPT
# the broker took is also the record's row in consumed.parquet.
SHARE = pa.schema(
    [
        ("consumer", pa.string()),
        ("event", pa.string()),
        ("seq", pa.int64()),
        ("partition", pa.int32()),
        ("offset", pa.int64()),
        ("delivery_count", pa.int32()),
        ("ack", pa.string()),
        ("error", pa.string()),
        ("ts", pa.int64()),
    ]
)
# Broker forensics: one row per record found in a captured copy of a broker's partition
# directories (harness.cluster.segment_capture), decoded with Kafka's DumpLogSegments.
# `capture`: the copy's label (`<n>-<reason>-<node>`), `node` the broker, `ts` when it was
# copied (ms), `seq` null for a record the workload did not write, `record_ts` the batch's
# CreateTime / LogAppendTime.
SEGMENTS = pa.schema(
    [
        ("capture", pa.string()),
        ("node", pa.string()),
        ("ts", pa.int64()),
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("offset", pa.int64()),
        ("seq", pa.int64()),
        ("record_ts", pa.int64()),
    ]
)
# One row per partition of each captured copy: `reason` (heal | wipe | collect), `log_start`
# (the first segment's base offset), `log_end` (one past the last record found; null: no
# record), `records` found, `bytes` of its segment files.
SEGMENT_LOGS = pa.schema(
    [
        ("capture", pa.string()),
        ("node", pa.string()),
        ("reason", pa.string()),
        ("ts", pa.int64()),
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("log_start", pa.int64()),
        ("log_end", pa.int64()),
        ("records", pa.int64()),
        ("bytes", pa.int64()),
    ]
)
COMMITS = pa.schema(
    [
        ("consumer", pa.string()),
        ("partition", pa.int32()),
        ("offset", pa.int64()),
        ("ts", pa.int64()),
    ]
)
# Kafka's own metrics over the cell (harness.results.broker_metrics): one row per sample of a
# scrape of a Kafka node's JMX exporter, about once a second from cluster up to collect.
# `ts`: ms since the epoch when the scrape was sent (the history's clock); `node`: the
# node's name (broker-1, controller-101); `labels`: canonical `k=v,k=v`, names sorted.
# Every scrape also has one `up` row: 1 answered, 0 failed (its labels: error=<why>).
METRICS = pa.schema(
    [
        ("ts", pa.int64()),
        ("node", pa.string()),
        ("metric", pa.string()),
        ("labels", pa.string()),
        ("value", pa.float64()),
    ]
)

# results/history.parquet: one row per cell of every suite run, appended (a contract; names
# are only ever appended). Figures are null when the cell's checks left them undecided.
FIGURE_HISTORY = pa.schema(
    [
        ("suite_run", pa.string()),  # the suite run's id (its folder's name)
        ("suite", pa.string()),  # the suite's name
        ("started", pa.timestamp("ms", tz="UTC")),  # when the suite run started
        ("experiment", pa.string()),  # the experiment's name
        ("experiment_run", pa.string()),  # its run folder's name (under experiments/)
        ("cell", pa.string()),
        ("kafka_version", pa.string()),
        ("mode", pa.string()),
        ("seed", pa.int64()),
        ("verdict", pa.string()),  # pass | fail | unknown
        ("lost", pa.int64()),
        ("lost_never_consumed", pa.int64()),
        ("duplicated", pa.int64()),
        ("reprocessed", pa.int64()),
        ("max_stall_s", pa.float64()),
        ("stall_s", pa.map_(pa.string(), pa.float64())),  # consumer set -> its longest stall
        ("unavailable_s", pa.float64()),
        ("duration_s", pa.float64()),  # the cell's wall time (its history's first to last event)
        ("planned_s", pa.float64()),  # the suite's estimate for the cell
        ("params", pa.string()),  # the cell's parameters, as JSON
        # The cell's summary `timings` (harness.results.timings), seconds: t_cluster,
        # t_steady_state, t_workload, t_workload_scheduled, t_heal, t_recovery, t_drain,
        # t_collect, t_checks, t_total, t_checks_wait, t_checks_hidden, t_collect_behind,
        # t_warm_up; null
        # for a cell whose summary has none.
        *((column, pa.float64()) for column in HISTORY_COLUMNS.values()),
        # Each ordered bound of the cell's expectations -> its margin in this run
        # (harness.verdict.margin: signed, relative; null when its figure was undecided).
        ("margins", pa.map_(pa.string(), pa.float64())),
        # The flip's confirmation by a re-run (harness.results.flips): confirmed | flaky |
        # unconfirmed; null when the cell did not flip or flips were not confirmed.
        ("confirmation", pa.string()),
        # The commit the suite run's harness was checked out at (harness._version.revision;
        # `-dirty`: its code differed); null outside a clone and in rows written before.
        ("harness", pa.string()),
    ]
)


def write_table(path: Path, schema: pa.Schema, columns: Mapping[str, Sequence[Any]]) -> int:
    """Write columns (name -> values, None for null) as Parquet with exactly `schema`.

    A column of the schema the caller does not give is all null (so a writer that predates
    an appended column keeps working); a name the schema does not have is an error."""
    unknown = [name for name in columns if name not in schema.names]
    if unknown:
        raise ValueError(f"column(s) {', '.join(unknown)} not in the schema {schema.names}")
    rows = len(next(iter(columns.values()))) if columns else 0
    table = pa.table(
        {
            f.name: pa.array(columns[f.name], type=f.type)
            if f.name in columns
            else pa.nulls(rows, type=f.type)
            for f in schema
        },
        schema=schema,
    )
    pq.write_table(table, path)
    return int(table.num_rows)


# pyarrow's default: write_table of one whole table cut its row groups at this many rows.
ROW_GROUP_ROWS = 1024 * 1024


def write_tables(path: Path, schema: pa.Schema, tables: Iterable[pa.Table]) -> int:
    """Tables with exactly `schema`, one after the other, as one Parquet file laid out as
    write_table lays out their concatenation, holding about a row group at a time (a run's
    millions of rows never all in memory)."""
    rows = 0
    pending: list[pa.Table] = []
    pending_rows = 0
    with pq.ParquetWriter(path, schema) as writer:
        for table in tables:
            rows += table.num_rows
            pending.append(table)
            pending_rows += table.num_rows
            if pending_rows >= ROW_GROUP_ROWS:
                whole = pa.concat_tables(pending)
                cut = pending_rows - pending_rows % ROW_GROUP_ROWS
                writer.write_table(whole.slice(0, cut), row_group_size=ROW_GROUP_ROWS)
                pending, pending_rows = [whole.slice(cut)], pending_rows - cut
        if pending_rows or rows == 0:
            rest = pa.concat_tables(pending) if pending else schema.empty_table()
            writer.write_table(rest, row_group_size=ROW_GROUP_ROWS)
    return rows


def counted(
    tables: Iterable[pa.Table], by: Counter[str], column: str = "consumer"
) -> Iterator[pa.Table]:
    """The tables as they come, counting their rows per value of `column` into `by` (the
    consumed rows per consumer that `tables.written` records)."""
    for table in tables:
        for item in pc.value_counts(table.column(column)).to_pylist():
            by[str(item["values"])] += int(item["counts"])
        yield table


def concat(schema: pa.Schema, tables: Iterable[pa.Table]) -> pa.Table:
    """Tables with `schema` as one (empty when there are none)."""
    return pa.concat_tables([schema.empty_table(), *tables])
