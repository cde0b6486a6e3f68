"""Checks of a transactional producer's records: aborted reads and torn transactions.

The ledger's `txn` and `outcome` say which transaction wrote a record and how it ended as
the producer learnt it (committed | aborted | unknown); the log's `committed` says whether a
read_committed reader sees it. A non-transactional ledger (txn null) has no aborted seq and
no transaction, so both counts are 0. All DataFrame operations; only counts, small per-set
aggregates and samples come back to Python.
"""

from __future__ import annotations

from collections.abc import Collection
from functools import reduce

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from spark_jobs.cell_data import consumer_set
from spark_jobs.checks_records import visible
from spark_jobs.local_rows import local_frame

COMMITTED, ABORTED, UNKNOWN = "committed", "aborted", "unknown"
OUTCOMES = (COMMITTED, ABORTED, UNKNOWN)
READER = "reader"
LOG_READER = "log"  # the final read of the topic, as a reader of aborted records
SAMPLE = 20


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
