"""max_stall_s: per consumer set, the longest time records it had to read waited for it
(no progress while records waited: the `__consumer_offsets` incident), over each set's
first consumptions. Runs in a lane of its own.

An incomplete drain: a set's last window then runs to `end` and is only a lower bound. The
value is still reported; it is undecided only when, for some set, that open final window
(with records still waiting) is the set's longest, because only then is the maximum itself
uncertain."""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from harness.results import metrics as m
from harness.results.metrics import Figures
from spark_jobs import history_facts as hf
from spark_jobs import seq_blocks as sb
from spark_jobs.cell_data import expected_records
from spark_jobs.check import Check
from spark_jobs.context import NO_CONSUMED, NO_LEDGER, CellContext
from spark_jobs.local_rows import local_frame

SET = "set"


SID = "sid"  # a set's index in `sets`: an int key sorts and hashes cheaper than its name


def run(ctx: CellContext) -> Figures:
    data, sets = ctx.data, ctx.sets
    ledger, consumed = data.ledger, data.consumed
    firsts = ctx.firsts
    blocks = ctx.blocks
    if ledger is None or consumed is None or firsts is None or blocks is None:
        return {"undecided": {"max_stall_s": NO_LEDGER if ledger is None else NO_CONSUMED}}
    if not sets:
        return {"undecided": {"max_stall_s": "no consumer set ran"}}
    # Records every set must read: expected ones (`ok`, or of a committed transaction),
    # available from their ack (for a transaction's, its commit came later: an overstatement
    # of its stall by up to the transaction's length) and visible in the final log.
    ok = expected_records(ledger).filter(F.col("ack_ts").isNotNull())
    if ctx.trusted_log is not None:  # the blocks' `v` bits: seqs the trusted final log shows
        ok = ok.withColumn(sb.K, sb.block()).join(F.broadcast(blocks.select(sb.K, "v")), sb.K)
        ok = ok.filter((F.col("v").bitwiseAND(sb.bit())) != 0)
    available = ok.select("seq", F.col("ack_ts").alias("av"))

    start = hf.workload_start(data.history)
    if start is None:
        start = ctx.sends[0]
    end = hf.drain_end(data.history)
    if end is None:
        last = consumed.agg(F.max("ts").alias("t")).first()
        end = None if last is None or last["t"] is None else int(last["t"])
    if start is None or end is None or end <= start:
        return {
            "undecided": {"max_stall_s": f"no measuring window (start={start}, end={end})"},
            "stalls_by_set": dict.fromkeys(sets),
        }

    intervals = stall_frame(ctx.spark, available, firsts, sets, start, end).cache()
    steps = hf.operation_steps(data.history)
    within = stalls_within(intervals, sets, [(s.start_ms, s.end_ms) for s in steps])
    best, windows, final_longest = stalls(intervals, sets)
    out: Figures = {
        "stalls_by_set": dict(best),
        "stall_windows": windows,
        "max_stall_s": max(best.values()),
        "step_stalls": [
            {"fault_id": s.fault_id, "stall_s": w} for s, w in zip(steps, within, strict=True)
        ],
    }
    open_sets = [s for s in sets if final_longest[s]]
    if ctx.drain_reason is not None and open_sets:
        out["undecided"] = {
            "max_stall_s": f"{ctx.drain_reason}; the longest stall of {', '.join(open_sets)} "
            "is still open at the end, so the value is a lower bound"
        }
    return out


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


CHECK = Check(
    "stall",
    needs=("firsts", "blocks", "sets", "trusted_log", "sends", "drain_reason"),
    decides=("max_stall_s", "stalls_by_set", "stall_windows", "step_stalls"),
    run=run,
    lane="stall",
)
