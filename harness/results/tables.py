"""Arrow schemas of the result-folder tables (a contract) and their writers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from harness.results.metrics import COUNT_NAMES

__all__ = ["COMMITS", "CONSUMED", "COUNT_NAMES", "LEDGER", "LOG", "empty_columns", "write_table"]


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
LOG = pa.schema([("seq", pa.int64()), ("partition", pa.int32()), ("offset", pa.int64())])
COMMITS = pa.schema(
    [
        ("consumer", pa.string()),
        ("partition", pa.int32()),
        ("offset", pa.int64()),
        ("ts", pa.int64()),
    ]
)


def empty_columns(schema: pa.Schema) -> dict[str, list[Any]]:
    """One empty list per column of a table contract, to be filled row by row."""
    return {name: [] for name in schema.names}


def write_table(path: Path, schema: pa.Schema, columns: Mapping[str, Sequence[Any]]) -> int:
    """Write columns (name -> values, None for null) as Parquet with exactly `schema`."""
    table = pa.table(
        {f.name: pa.array(columns[f.name], type=f.type) for f in schema}, schema=schema
    )
    pq.write_table(table, path)
    return int(table.num_rows)
