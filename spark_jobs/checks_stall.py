"""Time-window checks: consumer stalls (no progress while records waited) and producer
unavailability (acknowledged writes stopped while the producer was sending)."""

from __future__ import annotations

from itertools import pairwise

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from harness.results import metrics as m
from spark_jobs.local_rows import local_frame

SET = "set"


SID = "sid"  # a set's index in `sets`: an int key sorts and hashes cheaper than its name


def paired(sets_df: DataFrame, available: DataFrame, firsts: DataFrame) -> DataFrame:
    """(sid, av, fc) for every available record and every set (fc null when the set never
    consumed it), and for every first consumption of a record that is not available (av
    null): a full join, so one pass over the consumptions gives both. Keyed (seq, sid): the
    seq first, so that the sort before the merge compares the seqs' prefixes, not a set key
    equal in nearly every row (stall 10.6 s against 11.7-12.0 s keyed by (set name, seq),
    10 M-row cell, docs/benchmarks.md)."""
    return (
        F.broadcast(sets_df.select(SID))
        .crossJoin(available.select("seq", "av"))
        .join(firsts.select("seq", SID, "fc"), ["seq", SID], "full")
        .select(SID, "av", "fc")
    )


def stall_frame(
    spark: SparkSession,
    available: DataFrame,
    firsts: DataFrame,
    sets: list[str],
    start_ms: int,
    end_ms: int,
) -> DataFrame:
    """Every interval between consecutive progress times of each set, with its stall.

    `available` has (seq, av): the ms at which a record became readable; `firsts` (set,
    seq, fc): each set's first consumption of each seq. Progress times of a set are its fc
    values inside (start, end), plus `end`.
    For the interval (c_prev, c] (c_prev = start for the first), a = the earliest av of a
    record the set had not first-consumed by c_prev; the stall is c - max(c_prev, a) when
    a < c, else 0. Columns: set, start_ms, end_ms, duration_ms, final (interval ends at end).
    """
    sets_df = local_frame(spark, list(enumerate(sets)), f"{SID} int, {SET} string")
    # Only the sets asked for, each by its index (an inner join with the small list).
    first = firsts.select(SET, "seq", "fc").join(F.broadcast(sets_df), SET).drop(SET)
    start, end = F.lit(start_ms).cast("bigint"), F.lit(end_ms).cast("bigint")
    # A record is pending inside the window until the progress point it is first consumed at;
    # records first consumed after `end` (or never) are pending up to `end`. Every first
    # consumption inside the window is a progress point, whether a record waited for it or
    # not (m null): the keys of one aggregate. Shuffled before it is aggregated: the keys
    # (about one per ms) are spread over the join's partitions, so an aggregate before the
    # shuffle merges almost nothing.
    points = (
        paired(sets_df, available, first)
        .filter(F.col("fc").isNull() | (F.col("fc") > start))
        .withColumn(
            "k", F.when(F.col("fc").isNull() | (F.col("fc") >= end), end).otherwise(F.col("fc"))
        )
        .select(SID, "k", "av")
        .unionByName(sets_df.select(SID, end.alias("k"), F.lit(None).cast("bigint").alias("av")))
        .repartition("k", SID)
        .groupBy("k", SID)
        .agg(F.min("av").alias("m"))
    )
    # Suffix minimum written as a running minimum in descending order: Spark recomputes an
    # (current, unbounded following) frame for every row, which is quadratic. The previous
    # point is the next one in that order: one sort of the series, not two. One set: no
    # partition key, so that the sort's prefix is the time itself (each set is one window
    # partition, one task, either way).
    by_set = Window.partitionBy(SID) if len(sets) > 1 else Window
    backwards = by_set.orderBy(F.col("k").desc())
    a = F.min("m").over(backwards.rowsBetween(Window.unboundedPreceding, Window.currentRow))
    prev = F.coalesce(F.lead("k").over(backwards), start)
    return (
        points.withColumn("a", a)
        .withColumn("prev", prev)
        .filter(F.col("k") > F.col("prev"))
        .join(F.broadcast(sets_df), SID)
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
    stall_intervals: DataFrame, sets: list[str], top: int = 5
) -> tuple[dict[str, float], list[m.StallWindow], dict[str, bool]]:
    """Of `stall_frame`'s intervals: (longest stall per set in s, the `top` longest windows
    per set, per set: whether its longest window is the final one with records still waiting
    at `end`)."""
    # The frame is one row per progress point (about one per ms of the run): cached, and
    # each set's longest few taken with an ordered limit (no sort of the whole series).
    frame = stall_intervals if stall_intervals.is_cached else stall_intervals.cache()
    best = {s: 0.0 for s in sets}
    final_longest = {s: False for s in sets}
    windows: list[m.StallWindow] = []
    try:
        for name in sets:
            longest = (
                frame.filter(F.col(SET) == name)
                .orderBy(F.col("duration_ms").desc(), "start_ms", "end_ms")
                .limit(top)
                .collect()
            )
            for rank, r in enumerate(longest):
                duration = int(r["duration_ms"])
                if rank == 0:
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
    finally:
        frame.unpersist()
    return best, windows, final_longest


def stalls_within(
    stall_intervals: DataFrame, sets: list[str], periods: list[tuple[int, int]]
) -> list[dict[str, float]]:
    """Per period [a, b): each set's longest stall overlapping it, counted inside it (s).

    An interval's stall is its last `duration_ms` (from when the earliest waiting record
    became available to the progress point that ended it)."""
    stalled = stall_intervals.filter(F.col("duration_ms") > 0).select(
        SET, (F.col("end_ms") - F.col("duration_ms")).alias("s"), F.col("end_ms").alias("e")
    )
    out: list[dict[str, float]] = []
    for a, b in periods:
        inside = F.least(F.col("e"), F.lit(b)) - F.greatest(F.col("s"), F.lit(a))
        rows = (
            stalled.filter((F.col("s") < b) & (F.col("e") > a))
            .groupBy(SET)
            .agg(F.max(inside).alias("m"))
            .collect()
        )
        longest = {str(r[SET]): int(r["m"]) / 1000.0 for r in rows}
        out.append({name: longest.get(name, 0.0) for name in sets})
    return out


def unavailable_windows(
    ledger: DataFrame, gap_ms: int, sends: tuple[int, int] | None = None
) -> list[m.Window]:
    """Gaps longer than gap_ms between consecutive points over [first send_ts, last send_ts];
    points are the ack_ts of `ok` records inside that range plus both edges. `sends` passes
    (first, last) send_ts when the caller already has them."""
    if sends is None:
        bounds = ledger.agg(F.min("send_ts").alias("lo"), F.max("send_ts").alias("hi")).first()
        if bounds is None or bounds["lo"] is None:
            return []
        sends = (int(bounds["lo"]), int(bounds["hi"]))
    lo, hi = sends
    # Ack times in buckets of gap_ms: two points of one bucket are < gap_ms apart, so a gap
    # longer than gap_ms lies between the last point of a bucket and the first of the next
    # non-empty one. One small aggregate per bucket comes back, not the series.
    acks = ledger.filter((F.col("status") == "ok") & F.col("ack_ts").between(lo, hi))
    width = max(int(gap_ms), 1)
    rows = (
        acks.groupBy(F.expr(f"(ack_ts - {lo}) div {width}").alias("b"))
        .agg(F.min("ack_ts").alias("first"), F.max("ack_ts").alias("last"))
        .collect()
    )
    spans = sorted((int(r["first"]), int(r["last"])) for r in rows)
    points = [lo, *(t for span in spans for t in span), hi]
    return [
        {"start_ms": a, "end_ms": b, "duration_s": (b - a) / 1000.0}
        for a, b in pairwise(points)
        if b - a > gap_ms
    ]
