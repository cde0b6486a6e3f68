"""Checks on records: ledger against the final log and against what consumers saw.

All are DataFrame operations (joins, dedup, counts) so they scale to 10M-row ledgers.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from spark_jobs.cell_data import consumer_set

SET = "set"


def acked_records(ledger: DataFrame) -> DataFrame:
    return ledger.filter(F.col("status") == "ok")


def attempted(ledger: DataFrame) -> int:
    return ledger.count()


def acked(ledger: DataFrame) -> int:
    return acked_records(ledger).count()


def ledger_totals(ledger: DataFrame) -> dict[str, int | None]:
    """attempted, acked, first and last send_ts in one pass (None bounds when empty)."""
    row = ledger.agg(
        F.count(F.lit(1)).alias("attempted"),
        F.coalesce(F.sum(F.when(F.col("status") == "ok", 1).otherwise(0)), F.lit(0)).alias("acked"),
        F.min("send_ts").alias("first_send"),
        F.max("send_ts").alias("last_send"),
    ).first()
    assert row is not None  # a global aggregate always has one row
    return {k: None if row[k] is None else int(row[k]) for k in row.asDict()}


def lost_records(ledger: DataFrame, log: DataFrame) -> DataFrame:
    """`ok` in the ledger (offset may be null, as with acks=0) but its seq is not in the log."""
    return acked_records(ledger).select("seq").join(log.select("seq"), "seq", "left_anti")


def lost(ledger: DataFrame, log: DataFrame) -> int:
    return lost_records(ledger, log).count()


def duplicated_records(log: DataFrame) -> DataFrame:
    """Seqs stored at more than one (partition, offset); one row per such seq."""
    places = log.select("seq", "partition", "offset").distinct()
    return places.groupBy("seq").count().filter(F.col("count") > 1).select("seq")


def duplicated(log: DataFrame) -> int:
    return duplicated_records(log).count()


def unacked_present_records(ledger: DataFrame, log: DataFrame) -> DataFrame:
    """`fail` or `unknown` in the ledger, yet in the log: the producer could not know."""
    unacked = ledger.filter(F.col("status").isin("fail", "unknown")).select("seq").distinct()
    return unacked.join(log.select("seq"), "seq", "left_semi")


def unacked_present(ledger: DataFrame, log: DataFrame) -> int:
    return unacked_present_records(ledger, log).count()


def lost_never_consumed_by_set(
    ledger: DataFrame, consumed: DataFrame, sets: list[str], acked_total: int | None = None
) -> dict[str, int]:
    """Per consumer set: `ok` seqs the set never consumed (a set that read nothing misses all)."""
    ok = acked_records(ledger).select("seq").distinct()
    total = ok.count() if acked_total is None else acked_total
    seen = (
        consumed.select(consumer_set(F.col("consumer")).alias(SET), "seq")
        .distinct()
        .join(ok, "seq", "left_semi")
        .groupBy(SET)
        .count()
    )
    seen_by_set = {str(r[SET]): int(r["count"]) for r in seen.collect()}
    return {s: total - seen_by_set.get(s, 0) for s in sorted(sets)}


def sample(records: DataFrame, n: int = 20) -> list[int]:
    return [int(r["seq"]) for r in records.orderBy("seq").limit(n).collect()]
