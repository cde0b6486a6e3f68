"""Checks of a consume-transform-produce pipeline: its output topic against its input.

The pipeline's members (consumer set "pipeline") read the input topic, which the other
checks already judge like any consumer set's; these judge what they wrote. The output is
read at the end like the input's log (tables.OUTPUT): each row carries the input seq it came
from and where the member read it (input_partition, input_offset). The *visible* output rows
are those a read_committed reader sees (`committed`; read_parquet makes a null true, as for
the log): what a downstream read_committed consumer would take as the pipeline's result, so
an exactly-once pipeline is judged on them alone. All DataFrame operations; only counts and
small samples come back to Python.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from spark_jobs.checks_records import expected_records, visible
from spark_jobs.checks_txn import ABORTED

SAMPLE = 20


def visible_output(output: DataFrame) -> DataFrame:
    """The output rows a read_committed reader sees that name an input seq (a null seq names
    no input record: it can be neither a duplicate nor a record's output)."""
    return visible(output).filter(F.col("seq").isNotNull())


def output_duplicates(output: DataFrame) -> DataFrame:
    """Distinct input seqs at more than one (partition, offset) of the visible output: the
    same input record's result visible twice, an exactly-once violation (the same place read
    twice is one record, not two)."""
    places = visible_output(output).select("seq", "partition", "offset").distinct()
    return places.groupBy("seq").count().filter(F.col("count") > 1).select("seq")


def output_lost(ledger: DataFrame, log: DataFrame, output: DataFrame) -> DataFrame:
    """Distinct expected input seqs (checks_records.expected_records) that the input's final
    log shows (visible), so the pipeline could read them, yet no visible output row has: the
    pipeline dropped them. A record lost from the input is the input's `lost`, not this."""
    readable = (
        expected_records(ledger)
        .select("seq")
        .distinct()
        .join(visible(log).select("seq"), "seq", "left_semi")
    )
    return readable.join(visible_output(output).select("seq"), "seq", "left_anti")


def output_aborted(ledger: DataFrame, output: DataFrame) -> DataFrame:
    """Distinct seqs among the visible output that the ledger marks `aborted` (the input
    producer aborted their transaction): an aborted read carried downstream, Jepsen's G1a
    one hop later (the pipeline read it, then committed its result)."""
    aborted = ledger.filter(F.col("outcome") == ABORTED).select("seq").distinct()
    return visible_output(output).select("seq").distinct().join(aborted, "seq", "left_semi")


def output_rows(output: DataFrame) -> tuple[int, int]:
    """(visible output rows, rows not visible) in one pass: a transactional pipeline's
    aborted transactions leave the second kind, which no read_committed reader sees."""
    row = output.agg(
        F.coalesce(F.sum(F.when(F.col("committed"), 1).otherwise(0)), F.lit(0)).alias("shown"),
        F.coalesce(F.sum(F.when(F.col("committed"), 0).otherwise(1)), F.lit(0)).alias("hidden"),
    ).first()
    assert row is not None  # a global aggregate always has one row
    return int(row["shown"]), int(row["hidden"])


def origin_mismatch(output: DataFrame, log: DataFrame) -> int:
    """Visible output rows whose (input_partition, input_offset) is not a place where the
    input log (visible or not: a read_uncommitted member may read an aborted record) holds
    their seq: the provenance the member wrote is wrong. Only rows whose seq the log holds
    at all count (one the log lacks is the input's `lost`, not a provenance error); a null
    input place never matches, so it counts."""
    places = log.select(
        "seq",
        F.col("partition").alias("input_partition"),
        F.col("offset").alias("input_offset"),
    ).distinct()
    rows = visible_output(output).join(log.select("seq").distinct(), "seq", "left_semi")
    return rows.join(places, ["seq", "input_partition", "input_offset"], "left_anti").count()


def sample(seqs: DataFrame, n: int = SAMPLE) -> list[int]:
    """Up to n seqs, lowest first."""
    return [int(r["seq"]) for r in seqs.orderBy("seq").limit(n).collect()]
