"""Time-window checks: consumer stalls (no progress while records waited) and producer
unavailability (acknowledged writes stopped while the producer was sending)."""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from spark_jobs.cell_data import consumer_set

SET = "set"


def stall_frame(
    spark: SparkSession,
    available: DataFrame,
    consumed: DataFrame,
    sets: list[str],
    start_ms: int,
    end_ms: int,
) -> DataFrame:
    """Every interval between consecutive progress times of each set, with its stall.

    `available` has (seq, av): the ms at which a record became readable. Progress times of
    a set are the ts of its first consumption of each seq inside (start, end), plus `end`.
    For the interval (c_prev, c] (c_prev = start for the first), a = the earliest av of a
    record the set had not first-consumed by c_prev; the stall is c - max(c_prev, a) when
    a < c, else 0. Columns: set, start_ms, end_ms, duration_ms, final (interval ends at end).
    """
    sets_df = spark.createDataFrame([(s,) for s in sets], f"{SET} string")
    first = (
        consumed.select(consumer_set(F.col("consumer")).alias(SET), "seq", "ts")
        .groupBy(SET, "seq")
        .agg(F.min("ts").alias("fc"))
        .join(sets_df, SET, "left_semi")
    )
    start, end = F.lit(start_ms).cast("bigint"), F.lit(end_ms).cast("bigint")
    # A record is pending inside the window until the progress point it is first consumed at;
    # records first consumed after `end` (or never) are pending up to `end`.
    pending = (
        sets_df.crossJoin(available.select("seq", "av"))
        .join(first, [SET, "seq"], "left")
        .filter(F.col("fc").isNull() | (F.col("fc") > start))
        .withColumn(
            "k", F.when(F.col("fc").isNull() | (F.col("fc") >= end), end).otherwise(F.col("fc"))
        )
        .groupBy(SET, "k")
        .agg(F.min("av").alias("m"))
    )
    points = (
        first.filter((F.col("fc") > start) & (F.col("fc") < end))
        .select(SET, F.col("fc").alias("k"))
        .unionByName(sets_df.select(SET, end.alias("k")))
        .distinct()
        .join(pending, [SET, "k"], "left")
    )
    order = Window.partitionBy(SET).orderBy("k")
    # Suffix minimum written as a running minimum in descending order: Spark recomputes an
    # (current, unbounded following) frame for every row, which is quadratic.
    backwards = Window.partitionBy(SET).orderBy(F.col("k").desc())
    a = F.min("m").over(backwards.rowsBetween(Window.unboundedPreceding, Window.currentRow))
    prev = F.coalesce(F.lag("k").over(order), start)
    return (
        points.withColumn("a", a)
        .withColumn("prev", prev)
        .filter(F.col("k") > F.col("prev"))
        .select(
            SET,
            F.greatest("prev", "a").alias("start_ms"),
            F.col("k").alias("end_ms"),
            F.when(F.col("a") < F.col("k"), F.col("k") - F.greatest("prev", "a"))
            .otherwise(0)
            .alias("duration_ms"),
            (F.col("k") == end).alias("final"),
            F.col("a").isNotNull().alias("waiting"),
        )
    )


def stalls(
    spark: SparkSession,
    available: DataFrame,
    consumed: DataFrame,
    sets: list[str],
    start_ms: int,
    end_ms: int,
    top: int = 5,
) -> tuple[dict[str, float], list[dict[str, Any]], dict[str, bool]]:
    """(longest stall per set in s, the `top` longest windows per set, per set: whether its
    longest window is the final one with records still waiting at `end`)."""
    frame = stall_frame(spark, available, consumed, sets, start_ms, end_ms)
    ranked = frame.withColumn(
        "_rank",
        F.row_number().over(
            Window.partitionBy(SET).orderBy(F.col("duration_ms").desc(), F.col("start_ms"))
        ),
    )
    best = {s: 0.0 for s in sets}
    final_longest = {s: False for s in sets}
    windows: list[dict[str, Any]] = []
    for r in ranked.filter(F.col("_rank") <= top).orderBy(SET, "_rank").collect():
        name, duration = str(r[SET]), int(r["duration_ms"])
        if r["_rank"] == 1:
            best[name] = duration / 1000.0
            final_longest[name] = bool(r["final"]) and bool(r["waiting"])
        if duration > 0:
            windows.append(
                {
                    "set": name,
                    "start_ms": int(r["start_ms"]),
                    "end_ms": int(r["end_ms"]),
                    "duration_s": duration / 1000.0,
                }
            )
    return best, windows, final_longest


def unavailable_windows(
    ledger: DataFrame, gap_ms: int, sends: tuple[int, int] | None = None
) -> list[dict[str, Any]]:
    """Gaps longer than gap_ms between consecutive points over [first send_ts, last send_ts];
    points are the ack_ts of `ok` records inside that range plus both edges. `sends` passes
    (first, last) send_ts when the caller already has them."""
    if sends is None:
        bounds = ledger.agg(F.min("send_ts").alias("lo"), F.max("send_ts").alias("hi")).first()
        if bounds is None or bounds["lo"] is None:
            return []
        sends = (int(bounds["lo"]), int(bounds["hi"]))
    lo, hi = sends
    spark = ledger.sparkSession
    acks = ledger.filter((F.col("status") == "ok") & F.col("ack_ts").between(lo, hi)).select(
        F.col("ack_ts").alias("t")
    )
    edges = spark.createDataFrame([(lo,), (hi,)], "t bigint")
    # One ordered series over the whole run: a single-partition window on purpose (ack
    # times, at most one point per ms); session.py quiets Spark's warning about it.
    order = Window.orderBy("t")
    gaps = (
        acks.unionByName(edges)
        .distinct()
        .withColumn("next", F.lead("t").over(order))
        .filter((F.col("next") - F.col("t")) > gap_ms)
        .orderBy("t")
        .collect()
    )
    return [
        {
            "start_ms": int(r["t"]),
            "end_ms": int(r["next"]),
            "duration_s": (int(r["next"]) - int(r["t"])) / 1000.0,
        }
        for r in gaps
    ]
