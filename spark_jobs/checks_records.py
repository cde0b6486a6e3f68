"""Checks on records: ledger against the final log and against what consumers saw.

All are DataFrame operations (joins, dedup, counts) so they scale to 10M-row ledgers.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

SET = "set"
COMMITTED = "committed"  # a ledger outcome: the producer's commit of the transaction succeeded


def acked_records(ledger: DataFrame) -> DataFrame:
    return ledger.filter(F.col("status") == "ok")


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


def attempted(ledger: DataFrame) -> int:
    return ledger.count()


def acked(ledger: DataFrame) -> int:
    return acked_records(ledger).count()


def ledger_totals(ledger: DataFrame) -> dict[str, int | None]:
    """attempted, acked, expected (is_expected), transactional (rows with a txn), first and
    last send_ts in one pass (None bounds when empty)."""
    row = ledger.agg(
        F.count(F.lit(1)).alias("attempted"),
        F.coalesce(F.sum(F.when(F.col("status") == "ok", 1).otherwise(0)), F.lit(0)).alias("acked"),
        F.coalesce(F.sum(F.when(is_expected(), 1).otherwise(0)), F.lit(0)).alias("expected"),
        F.count("txn").alias("transactional"),
        F.min("send_ts").alias("first_send"),
        F.max("send_ts").alias("last_send"),
    ).first()
    assert row is not None  # a global aggregate always has one row
    return {k: None if row[k] is None else int(row[k]) for k in row.asDict()}


def lost_records(ledger: DataFrame, log: DataFrame) -> DataFrame:
    """Expected in the log (`ok`, offset maybe null as with acks=0; or of a committed
    transaction) but its seq is not among the log's visible (committed) rows."""
    return (
        expected_records(ledger).select("seq").join(visible(log).select("seq"), "seq", "left_anti")
    )


def lost(ledger: DataFrame, log: DataFrame) -> int:
    return lost_records(ledger, log).count()


def duplicated_records(log: DataFrame) -> DataFrame:
    """Seqs stored at more than one (partition, offset) among the visible rows; one row per
    such seq."""
    places = visible(log).select("seq", "partition", "offset").distinct()
    return places.groupBy("seq").count().filter(F.col("count") > 1).select("seq")


def duplicated(log: DataFrame) -> int:
    return duplicated_records(log).count()


def unacked_present_records(ledger: DataFrame, log: DataFrame) -> DataFrame:
    """`fail` or `unknown` in the ledger, yet visible in the log: the producer could not know."""
    unacked = ledger.filter(F.col("status").isin("fail", "unknown")).select("seq").distinct()
    return unacked.join(visible(log).select("seq"), "seq", "left_semi")


def unacked_present(ledger: DataFrame, log: DataFrame) -> int:
    return unacked_present_records(ledger, log).count()


def sample(records: DataFrame, n: int = 20) -> list[int]:
    return [int(r["seq"]) for r in records.orderBy("seq").limit(n).collect()]
