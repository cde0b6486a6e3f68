"""aborted_read and torn_transaction: a transactional producer's records against what
consumers and the final log show; both 0 without a transactional row.

The ledger's `txn` and `outcome` say which transaction wrote a record and how it ended as
the producer learnt it (committed | aborted | unknown); the log's `committed` says whether a
read_committed reader sees it. All DataFrame operations; only counts, small per-set
aggregates and samples come back to Python.
"""

from __future__ import annotations

from collections.abc import Collection
from functools import reduce

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from harness.results.metrics import Figures
from spark_jobs.cell_data import ABORTED, COMMITTED, UNKNOWN, consumer_set, visible
from spark_jobs.check import Check, combine, lower_bound
from spark_jobs.context import NO_LEDGER, CellContext
from spark_jobs.local_rows import local_frame

OUTCOMES = (COMMITTED, ABORTED, UNKNOWN)
READER = "reader"
LOG_READER = "log"  # the final read of the topic, as a reader of aborted records
SAMPLE = 20


def run(ctx: CellContext) -> Figures:
    data, sets = ctx.data, ctx.sets
    ledger, log = data.ledger, data.log
    if ledger is None:
        return {"undecided": dict.fromkeys(("aborted_read", "torn_transaction"), NO_LEDGER)}
    if not ctx.transactional:
        return {
            "counts": {"aborted_read": 0, "torn_transaction": 0},
            "aborted_consumed_by_set": dict.fromkeys(sets, 0),
        }
    undecided: dict[str, str] = {}
    out: Figures = {"undecided": undecided, "transactions": transactions(ledger)}
    if data.consumed is not None:
        counted = aborted_consumed_by_set(ledger, data.consumed, sets)
        by_set: dict[str, int | None] = dict(counted)
        if ctx.drain_reason is not None:
            # A set that never reached the end may not have come to them yet: a count
            # stands as a lower bound, a zero says nothing.
            by_set = {k: v if v > 0 else None for k, v in counted.items()}
            undecided["aborted_consumed"] = f"{ctx.drain_reason}: per-set counts are lower bounds"
        out["aborted_consumed_by_set"] = by_set
    pairs = aborted_reads(ledger, data.consumed, log, ctx.read_committed)
    found, out["aborted_read_by_set"], out["aborted_read_seqs_sample"] = aborted_read_summary(pairs)
    gaps = [] if ctx.log_reason is None else [ctx.log_reason]
    if data.consumed is None and ctx.read_committed:
        gaps.append("consumed.parquet missing")
    torn: Figures = {}
    if ctx.log_reason is not None or log is None:
        torn = {"undecided": {"torn_transaction": str(ctx.log_reason)}}
    else:
        count, sample = torn_summary(torn_transactions(ledger, log))
        torn = {"counts": {"torn_transaction": count}, "torn_transactions_sample": sample}
    return combine(out, lower_bound("aborted_read", found, gaps), torn)


def transactions(ledger: DataFrame) -> dict[str, int]:
    """Transactions (distinct txn) per outcome; a txn whose outcome is null counts as
    unknown. {} when the ledger has no transactional row."""
    rows = (
        ledger.filter(F.col("txn").isNotNull())
        .select("txn", F.coalesce(F.col("outcome"), F.lit(UNKNOWN)).alias("outcome"))
        .distinct()
        .groupBy("outcome")
        .count()
        .collect()
    )
    if not rows:
        return {}
    found = {str(r["outcome"]): int(r["count"]) for r in rows}
    return {**dict.fromkeys(OUTCOMES, 0), **found}


def aborted_reads(
    ledger: DataFrame,
    consumed: DataFrame | None,
    log: DataFrame | None,
    read_committed: Collection[str],
) -> DataFrame:
    """Distinct (reader, seq): a seq of a transaction the producer aborted, consumed by a
    read_committed consumer set (reader = the set), or visible to the final read_committed
    read of the log (reader = "log")."""
    aborted = ledger.filter(F.col("outcome") == ABORTED).select("seq").distinct()
    readers: list[DataFrame] = []
    if consumed is not None and read_committed:
        by_set = consumed.select(consumer_set(F.col("consumer")).alias(READER), "seq")
        readers.append(by_set.filter(F.col(READER).isin(sorted(read_committed))))
    if log is not None:
        readers.append(visible(log).select(F.lit(LOG_READER).alias(READER), "seq"))
    if not readers:
        return local_frame(ledger.sparkSession, [], f"{READER} string, seq bigint")
    union = reduce(DataFrame.unionByName, readers)
    return union.join(aborted, "seq", "left_semi").select(READER, "seq").distinct()


def aborted_read_summary(pairs: DataFrame) -> tuple[int, dict[str, int], list[int]]:
    """(count of pairs, count per reader, up to SAMPLE distinct seqs, lowest first)."""
    by_reader = {str(r[READER]): int(r["count"]) for r in pairs.groupBy(READER).count().collect()}
    seqs = pairs.select("seq").distinct().orderBy("seq").limit(SAMPLE).collect()
    return sum(by_reader.values()), dict(sorted(by_reader.items())), [int(r["seq"]) for r in seqs]


def torn_transactions(ledger: DataFrame, log: DataFrame) -> DataFrame:
    """One row (txn) per transaction partly visible: 0 < its distinct seqs among the log's
    visible rows < its distinct seqs in the ledger."""
    written = ledger.filter(F.col("txn").isNotNull()).select("txn", "seq").distinct()
    sizes = written.groupBy("txn").agg(F.count(F.lit(1)).alias("size"))
    seen = (
        written.join(visible(log).select("seq").distinct(), "seq", "left_semi")
        .groupBy("txn")
        .agg(F.count(F.lit(1)).alias("seen"))
    )
    return sizes.join(seen, "txn").filter(F.col("seen") < F.col("size")).select("txn")


def torn_summary(torn: DataFrame) -> tuple[int, list[int]]:
    """(count, up to SAMPLE txn numbers, lowest first)."""
    sample = [int(r["txn"]) for r in torn.orderBy("txn").limit(SAMPLE).collect()]
    return (len(sample) if len(sample) < SAMPLE else torn.count()), sample


def aborted_consumed_by_set(
    ledger: DataFrame, consumed: DataFrame, sets: Collection[str]
) -> dict[str, int]:
    """Per consumer set, whatever its isolation level: distinct seqs of aborted transactions
    it consumed. Not an anomaly for a read_uncommitted reader (that is what it asks for), but
    what its application then treats as data: Spark's source is read_uncommitted unless told."""
    aborted = ledger.filter(F.col("outcome") == ABORTED).select("seq").distinct()
    rows = (
        consumed.select(consumer_set(F.col("consumer")).alias(READER), "seq")
        .distinct()
        .join(aborted, "seq", "left_semi")
        .groupBy(READER)
        .count()
        .collect()
    )
    found = {str(r[READER]): int(r["count"]) for r in rows}
    return {s: found.get(s, 0) for s in sorted(sets)}


CHECK = Check(
    "transactions",
    needs=("transactional", "sets", "read_committed", "log_reason", "drain_reason"),
    decides=(
        "aborted_read",
        "torn_transaction",
        "transactions",
        "aborted_consumed",
        "aborted_consumed_by_set",
        "aborted_read_by_set",
        "aborted_read_seqs_sample",
        "torn_transactions_sample",
    ),
    run=run,
)
