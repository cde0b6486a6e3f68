"""Small frames of rows the driver holds (a few per generation, set or partition), built in the
JVM from an Arrow table.

`SparkSession.createDataFrame(list, schema)` parallelizes pickled rows that PySpark re-pickles
in a Python worker (`RDD._pickled`): every job that read such a frame ran a Python task per
slice, ~3.4 s of the workers' CPU per verify of a small cell (of ~8.5 s in all, 2026-11-27),
and 0.4-1 s of waiting per job on a loaded machine. From an Arrow table the frame is a local
relation in the JVM; its rows, column types and nullability are the same.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType


def local_frame(
    spark: SparkSession, rows: Iterable[Sequence[Any]], schema: str | StructType
) -> DataFrame:
    """`spark.createDataFrame(rows, schema)` without a Python worker: `rows` are tuples (or
    Rows) in the schema's column order, `schema` a StructType or a DDL string
    ("a int, b string")."""
    struct = schema if isinstance(schema, StructType) else StructType.fromDDL(schema)
    if not isinstance(struct, StructType):  # a DDL string of one type, not of columns
        raise TypeError(f"local_frame: {schema!r} is not a schema of columns")
    arrow = to_arrow_schema(struct)
    tuples = [tuple(r) for r in rows]
    for r in tuples:
        if len(r) != len(arrow):
            raise ValueError(f"local_frame: row {r!r} does not have {len(arrow)} columns")
    columns = [pa.array([r[i] for r in tuples], type=f.type) for i, f in enumerate(arrow)]
    return spark.createDataFrame(pa.Table.from_arrays(columns, schema=arrow), struct)
