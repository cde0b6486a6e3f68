"""read_twice, sink_duplicates and each Spark consumer set's figures (checkpoint resumption,
the data-loss stop), from its checkpoint, sink and history; read_twice and sink_duplicates
summed over the sets.

Facts used (all in the cell folder): `spark.resume` events (what the checkpoint held when a
start began: the last committed batch C and the planned-but-uncommitted batch it re-runs),
the checkpoint's offset log (end offsets of every batch), the file sink's commit log (which
batch wrote which file) and the files on disk, and `spark.query.failed` events.

- resumption, per later start g and partition p: `committed` = end offset of batch C in the
  offset log (the initial offsets when nothing was committed); `first_offset` = lowest offset
  of p the sink holds from the batches g committed (C+1 .. the next start's C); `exact` =
  equal; `skipped` = log records of p in [committed, first_offset) (for a read_committed
  query, committed ones); `reread` = records of p in
  the re-run batch's offset range (read before the kill and again after it).
- read_twice = the sum of `reread`; sink_duplicates = rows the sink holds (through its commit
  log) minus distinct seqs; raw_duplicates the same over every file on disk, orphan rows
  included (what a reader ignoring the commit log would see); torn_files = orphans a kill
  left without a footer (unreadable, so not in raw_duplicates).
- data_loss_stop = 1 when the query stopped with Spark's Kafka data-loss error, else 0.
- consumed_then_lost = rows the sink holds whose record the final log no longer has: what
  the query read before Kafka lost it (truncation after an unclean election); None without
  a trusted final log.
"""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from harness.results.checkpoint import (
    Checkpoint,
    Offsets,
    SinkFile,
    orphan_files,
    readable,
    sink_files,
)
from harness.results.layout import CellPaths, QueryPaths
from harness.results.metrics import Figures, Resumption, SparkSetFigures
from spark_jobs import seq_blocks as sb
from spark_jobs.cell_data import visible
from spark_jobs.check import Check
from spark_jobs.context import NO_LEDGER, CellContext
from spark_jobs.history_facts import SparkSetFacts
from spark_jobs.local_rows import local_frame

SINK_COLUMNS = {"seq": "bigint", "partition": "int", "offset": "bigint"}


def run(ctx: CellContext) -> Figures:
    by_set: dict[str, SparkSetFigures] = {}
    resumptions: list[Resumption] = []
    for facts in ctx.spark_sets:
        query = CellPaths(ctx.cell_dir).query(facts.name)
        read_committed = facts.name in ctx.read_committed
        figures, rows = spark_set_summary(
            ctx.spark, facts, query, None, ctx.trusted_log, read_committed
        )
        by_set[facts.name] = figures
        resumptions += rows
    out: Figures = {"spark_by_set": by_set, "resumptions": resumptions}
    if ctx.spark_sets:
        out["read_twice"] = sum(s["read_twice"] for s in by_set.values())
        out["sink_duplicates"] = sum(s["sink_duplicates"] for s in by_set.values())
        if ctx.trusted_log is None:  # the same reason as `lost`: no trusted final read
            lost = NO_LEDGER if ctx.data.ledger is None else str(ctx.log_reason)
            out["undecided"] = {"consumed_then_lost": lost}
    return out


def _read_files(spark: SparkSession, files: list[Path]) -> DataFrame:
    schema = T.StructType(
        [
            T.StructField("seq", T.LongType()),
            T.StructField("partition", T.IntegerType()),
            T.StructField("offset", T.LongType()),
            T.StructField("file", T.StringType()),
        ]
    )
    if not files:
        return local_frame(spark, [], schema)
    df = spark.read.parquet(*[str(f) for f in files])
    return df.select(
        *[F.col(c).cast(t).alias(c) for c, t in SINK_COLUMNS.items()],
        F.substring_index(F.input_file_name(), "/", -1).alias("file"),
    )


def sink_rows(spark: SparkSession, sink: Path, files: list[SinkFile]) -> DataFrame:
    """Rows the sink holds through its commit log (`files`), each with the batch that
    committed it."""
    mapping = local_frame(
        spark, [(f.local(sink).name, f.batch) for f in files], "file string, batch bigint"
    )
    rows = _read_files(spark, [f.local(sink) for f in files])
    return rows.join(F.broadcast(mapping), "file").drop("file")


def raw_rows(
    spark: SparkSession, sink: Path, files: list[SinkFile], orphans: list[Path]
) -> DataFrame:
    """Every row in the folder's files, committed or not (orphans cut short by a kill,
    with no footer to read, are left out)."""
    return _read_files(spark, [f.local(sink) for f in files] + orphans).drop("file")


def _rows_and_duplicates(rows: DataFrame) -> tuple[int, int]:
    """(rows, rows minus distinct seqs) in one pass, distinct seqs counted as bits of 64-seq
    blocks (seq_blocks: a map-side aggregate per block instead of a shuffle of every seq). A
    row without a seq counts as a row and no seq (so as a duplicate), as in a
    count_distinct."""
    per_block = rows.groupBy(sb.block().alias(sb.K)).agg(
        F.count(F.lit(1)).alias("n"), F.bit_or(sb.bit()).alias("m")
    )
    r = per_block.agg(
        F.coalesce(F.sum("n"), F.lit(0)).alias("n"),
        F.coalesce(F.expr("sum(bit_count(m))"), F.lit(0)).alias("d"),
    ).first()
    return (0, 0) if r is None else (int(r["n"]), int(r["n"]) - int(r["d"]))


def _consumed_then_lost(delivered: DataFrame, log: DataFrame, duplicates: int) -> int:
    """Delivered rows whose seq the log does not hold. Without duplicates in the sink each
    row is one seq: the bits delivered and not in the log, per 64-seq block (no shuffle of
    every seq); otherwise (a row without a seq counts as a duplicate) a row may count
    twice, and the rows are joined."""
    if duplicates:
        return delivered.join(log.select("seq"), "seq", "left_anti").count()
    return sb.bits_not_in(delivered, log)


def _count_in(log: DataFrame, partition: int, low: int, high: int) -> int:
    if high <= low:
        return 0
    return log.filter(
        (F.col("partition") == partition) & (F.col("offset") >= low) & (F.col("offset") < high)
    ).count()


def resumption_rows(
    facts: SparkSetFacts,
    checkpoint: Checkpoint,
    delivered: DataFrame,
    log: DataFrame | None,
) -> list[Resumption]:
    """One row per (later start, partition it delivered or should have delivered from)."""
    planned = checkpoint.planned()
    initial = checkpoint.initial() or {}
    last_committed = max(checkpoint.committed(), default=-1)
    starts = facts.resumes
    out: list[Resumption] = []
    for i, resume in enumerate(starts):
        if i == 0:
            continue  # the first start resumes nothing
        c = resume.get("committed_batch")
        c = -1 if c is None else int(c)
        nxt = starts[i + 1].get("committed_batch") if i + 1 < len(starts) else last_committed
        nxt = -1 if nxt is None else int(nxt)
        if nxt <= c:
            continue  # killed before it committed a batch: it resumed nothing observable
        committed: Offsets = planned[c].end if c >= 0 and c in planned else initial
        until: Offsets = planned[nxt].end if nxt in planned else {}
        rerun = resume.get("rerun_batch")
        rerun_range = checkpoint.batch_range(int(rerun)) if rerun is not None else None
        firsts = {
            int(r["partition"]): int(r["first"])
            for r in delivered.filter((F.col("batch") > c) & (F.col("batch") <= nxt))
            .groupBy("partition")
            .agg(F.min("offset").alias("first"))
            .collect()
        }
        for p in sorted(set(committed) | set(firsts)):
            start = committed.get(p)
            if p not in firsts and until.get(p, start) == start:
                continue  # no records in this partition while it ran
            first = firsts.get(p)
            reread = 0
            if rerun_range is not None:
                low, high = rerun_range[0].get(p, 0), rerun_range[1].get(p, 0)
                reread = max(0, high - low)
            skipped: int | None = None
            if start is not None and log is not None:
                end = first if first is not None else until.get(p, start)
                skipped = _count_in(log, p, start, end)
            out.append(
                {
                    "set": facts.name,
                    "consumer": facts.consumer,
                    "generation": int(resume["generation"]),
                    "partition": p,
                    "committed": start,
                    "first_offset": first,
                    "exact": None if start is None or first is None else first == start,
                    "skipped": skipped,
                    "reread": reread,
                }
            )
    return out


def spark_set_summary(
    spark: SparkSession,
    facts: SparkSetFacts,
    query: QueryPaths,
    topic: str | None,
    log: DataFrame | None,
    read_committed: bool = False,
) -> tuple[SparkSetFigures, list[Resumption]]:
    """(per-set figures, resumption rows) of one Spark consumer set; a read_committed query
    skips only the log's committed rows (consumed_then_lost looks at every row: an aborted
    record is still in the log)."""
    checkpoint = Checkpoint(query.checkpoint, topic)
    sink = query.sink
    files = sink_files(sink)
    delivered = sink_rows(spark, sink, files).cache()
    try:
        seen = visible(log) if read_committed and log is not None else log
        rows = resumption_rows(facts, checkpoint, delivered, seen)
        orphans = orphan_files(sink, files)
        whole = [p for p in orphans if readable(p)]
        raw = raw_rows(spark, sink, files, whole)
        failure = facts.failure
        held, duplicates = _rows_and_duplicates(delivered)
        on_disk, raw_duplicates = _rows_and_duplicates(raw)
        summary: SparkSetFigures = {
            "starts": len(facts.resumes),
            "batches": len(checkpoint.committed()),
            "sink_rows": held,
            "sink_duplicates": duplicates,
            "orphan_files": len(orphans),
            "torn_files": len(orphans) - len(whole),
            "raw_rows": on_disk,
            "raw_duplicates": raw_duplicates,
            "read_twice": sum(r["reread"] for r in rows),
            "data_loss_stop": 1 if failure is not None and failure.get("data_loss") else 0,
            "consumed_then_lost": None
            if log is None
            else _consumed_then_lost(delivered, log, duplicates),
            "query_error": None if failure is None else str(failure.get("error", ""))[:500],
        }
    finally:
        delivered.unpersist()
    return summary, rows


CHECK = Check(
    "spark",
    needs=("spark_sets", "trusted_log", "read_committed", "log_reason"),
    decides=("read_twice", "sink_duplicates", "consumed_then_lost", "spark_by_set"),
    run=run,
)
