"""Load one cell's collected data as DataFrames typed exactly as the contracts say, and what
their columns mean to every check: which ledger rows the log must hold, which log rows a
read_committed reader sees."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from harness.errors import ConfigError
from harness.results.consumers import SEPARATOR
from harness.results.events import Event
from harness.results.history import is_event_time
from harness.results.layout import CellPaths, ResultFolderError, require_regular
from harness.results.tables import COMMITS, CONSUMED, LEDGER, LOG, OUTPUT, SEGMENTS, SHARE

# Contract columns (harness.results.tables, the one definition) as Spark SQL types; extra
# columns in a file are ignored.
_SPARK_TYPES = {
    pa.int64(): "bigint",
    pa.int32(): "int",
    pa.string(): "string",
    pa.bool_(): "boolean",
}
# Columns appended to a contract after result folders were written without them: a file may
# lack one. Its value when missing (None: null); a non-null default also replaces nulls.
# Every other column is required.
APPENDED_COLUMNS: dict[str, bool | None] = {
    "txn": None,  # ledger: not a transactional producer
    "outcome": None,  # ledger
    "committed": True,  # log (and output): visible to read_committed
}


def _spark_columns(schema: pa.Schema) -> dict[str, str]:
    return {f.name: _SPARK_TYPES[f.type] for f in schema}


LEDGER_SCHEMA = _spark_columns(LEDGER)
CONSUMED_SCHEMA = _spark_columns(CONSUMED)
LOG_SCHEMA = _spark_columns(LOG)
COMMITS_SCHEMA = _spark_columns(COMMITS)
OUTPUT_SCHEMA = _spark_columns(OUTPUT)
SHARE_SCHEMA = _spark_columns(SHARE)  # a share group's deliveries and acks (checks.share)
SEGMENTS_SCHEMA = _spark_columns(SEGMENTS)  # broker forensics (spark_jobs.checks.forensics)

ROW = "_row"  # file order = processing order; ties on ts are broken by it


def consumer_set(consumer: Column) -> Column:
    """`group/m0` -> `group`: harness.results.consumers.set_of as a Spark column."""
    return F.substring_index(consumer, SEPARATOR, 1)


# A ledger row's `outcome`: how its transaction ended as the producer learnt it.
COMMITTED, ABORTED, UNKNOWN = "committed", "aborted", "unknown"


def is_expected() -> Column:
    """A ledger row whose record the log must hold: `ok` and not in a transaction, or in a
    transaction the producer committed (null txn/outcome: a non-transactional producer)."""
    return (F.col("txn").isNull() & (F.col("status") == "ok")) | (F.col("outcome") == COMMITTED)


def expected_records(ledger: DataFrame) -> DataFrame:
    return ledger.filter(is_expected())


def visible(log: DataFrame) -> DataFrame:
    """The log rows a read_committed reader sees (`committed`; read_parquet makes a null or
    a missing column true, so for a non-transactional cell that is every row)."""
    return log.filter(F.col("committed")) if "committed" in log.columns else log


@dataclass
class CellData:
    """A cell's files; None means the file is missing (empty files give empty frames)."""

    ledger: DataFrame | None
    consumed: DataFrame | None
    log: DataFrame | None
    commits: DataFrame | None
    # A pipeline's output topic (output.parquet); None too in a cell without a pipeline.
    output: DataFrame | None = None
    # A share group's deliveries and acknowledgements (share.parquet); None without one.
    share: DataFrame | None = None
    history: list[Event] = field(default_factory=list)
    has_history: bool = False

    def frames(self) -> list[DataFrame]:
        every = (self.ledger, self.consumed, self.log, self.commits, self.output, self.share)
        return [df for df in every if df is not None]


def read_parquet(
    spark: SparkSession, path: Path, schema: dict[str, str], row_index: bool = False
) -> DataFrame | None:
    """Read one contract file; a missing or zero-byte file is None, a wrong one an error (a FIFO
    or device too: Spark would wait on it forever)."""
    _regular(path, directory_ok=True)
    if not path.exists() or (path.is_file() and path.stat().st_size == 0):
        return None
    df = spark.read.parquet(str(path))
    missing = [n for n in schema if n not in df.columns and n not in APPENDED_COLUMNS]
    if missing:
        raise ConfigError(f"{path}: missing column(s) {', '.join(missing)}; expected {schema}")
    df = df.select(*[_column(df, name, kind).alias(name) for name, kind in schema.items()])
    if row_index:
        # One file read in order: ids grow with the row position (used only for ordering).
        df = df.withColumn(ROW, F.monotonically_increasing_id())
    return df


def _column(df: DataFrame, name: str, kind: str) -> Column:
    default = F.lit(APPENDED_COLUMNS.get(name)).cast(kind)
    if name not in df.columns:
        return default
    column = F.col(name).cast(kind)
    return column if APPENDED_COLUMNS.get(name) is None else F.coalesce(column, default)


def _regular(path: Path, directory_ok: bool = False) -> None:
    """require_regular, as the ConfigError the checks raise for a wrong file."""
    try:
        require_regular(path, directory_ok)
    except ResultFolderError as exc:
        raise ConfigError(str(exc)) from None


def read_history(path: Path) -> list[Event] | None:
    _regular(path)  # a FIFO in its place would block the read forever
    if not path.exists():
        return None
    events: list[Event] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{path}:{number}: not a JSON object: {exc}") from exc
        if not isinstance(event, dict) or "kind" not in event or "ts" not in event:
            raise ConfigError(f"{path}:{number}: an event needs 'ts' and 'kind'")
        if not is_event_time(event["ts"]):
            raise ConfigError(
                f"{path}:{number}: 'ts' must be ms since the epoch, not {event['ts']!r:.40}"
            )
        events.append(event)
    return events


def read_cell(spark: SparkSession, cell_dir: Path) -> CellData:
    paths = CellPaths(cell_dir)
    history = read_history(paths.history)
    return CellData(
        ledger=read_parquet(spark, paths.ledger, LEDGER_SCHEMA),
        consumed=read_parquet(spark, paths.consumed, CONSUMED_SCHEMA, True),
        log=read_parquet(spark, paths.log, LOG_SCHEMA),
        commits=read_parquet(spark, paths.commits, COMMITS_SCHEMA, True),
        output=read_parquet(spark, paths.output, OUTPUT_SCHEMA),
        share=read_parquet(spark, paths.share, SHARE_SCHEMA, True),
        history=history or [],
        has_history=history is not None,
    )
