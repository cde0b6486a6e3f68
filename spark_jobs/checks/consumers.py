"""What the consumer groups saw: reprocessed, out_of_order, the re-reads per generation, each
restart's resumption against the last commit, and the records no set consumed (reprocessing
and never-consumed over the seq blocks of spark_jobs.seq_blocks: bitsets of 64 seqs).

`consumed` frames carry the `_row` file-order column (see cell_data.read_parquet); the
processing order of a consumer is (ts, _row), because many records share one millisecond.
"""

from __future__ import annotations

from collections.abc import Collection
from functools import reduce

from pyspark.sql import Column, DataFrame, Row, Window
from pyspark.sql import functions as F

from harness.results.metrics import Figures, Resumption
from spark_jobs import seq_blocks as sb
from spark_jobs.cell_data import ROW, consumer_set
from spark_jobs.check import Check
from spark_jobs.context import NO_CONSUMED, NO_LEDGER, CellContext
from spark_jobs.local_rows import local_frame

SET = "set"


def run(ctx: CellContext) -> Figures:
    data = ctx.data
    consumed, facts, dirty = data.consumed, ctx.block_totals, ctx.dirty
    if consumed is None or facts is None or dirty is None:
        names = ("reprocessed", "out_of_order", "resumptions", "lost_never_consumed")
        return {"undecided": dict.fromkeys(names, NO_CONSUMED)}
    # Share sets are handed records, not partitions: redelivery and any order are their
    # contract (spark_jobs.checks.share counts them), not reprocessing.
    share_names = list(ctx.share_sets)
    ordered = consumed.filter(~consumer_set(F.col("consumer")).isin(share_names))
    counts: dict[str, int | None] = {
        "reprocessed": sum(n for s, n in facts["excess"].items() if s not in share_names),
        "out_of_order": out_of_order(ordered),
    }
    undecided: dict[str, str] = {}
    out: Figures = {"counts": counts, "undecided": undecided}
    out["reprocessed_by_generation"] = sb.generation_counts(consumed, dirty, ctx.detail)
    spark_names = [f.name for f in ctx.spark_sets]
    groups = ordered.filter(~consumer_set(F.col("consumer")).isin(spark_names))
    out["resumptions"] = resumptions(groups, data.commits, ctx.trusted_log, ctx.read_committed)
    if data.commits is None:
        undecided["resumptions"] = "commits.parquet missing: committed/exact unknown"
    if data.ledger is None:
        undecided["lost_never_consumed"] = NO_LEDGER
        return out
    by_set = facts["never"]
    if not by_set:
        undecided["lost_never_consumed"] = "no consumer set ran"
    elif ctx.drain_reason is not None and any(by_set.values()):
        # Records not consumed yet when the drain gave up may have come later: a positive
        # count decides nothing, for the sets that have one (a 0 stands: nothing is missing).
        out["lost_never_consumed_by_set"] = {
            s: (None if n else 0) for s, n in sorted(by_set.items())
        }
        undecided["lost_never_consumed"] = ctx.drain_reason
        undecided["lost_never_consumed_by_set"] = ctx.drain_reason
    else:
        out["lost_never_consumed_by_set"] = dict(sorted(by_set.items()))
        counts["lost_never_consumed"] = max(by_set.values())
    return out


def with_set(consumed: DataFrame) -> DataFrame:
    return consumed.withColumn(SET, consumer_set(F.col("consumer")))


def out_of_order(consumed: DataFrame) -> int:
    """Times one consumer saw a partition's offset go backwards within one generation."""
    order = Window.partitionBy("consumer", "generation", "partition").orderBy("ts", ROW)
    previous = F.lag("offset").over(order)
    backwards = consumed.withColumn("back", F.col("offset") < previous).filter(F.col("back"))
    return backwards.count()


def _latest(df: DataFrame, keys: list[str], order: list[Column]) -> DataFrame:
    window = Window.partitionBy(*keys).orderBy(*order)
    return df.withColumn("_rank", F.row_number().over(window)).filter("_rank = 1").drop("_rank")


def _first_rows(c: DataFrame, keys: list[str]) -> list[Row]:
    """Per group of `keys`: its earliest row as `f` (ts, offset, file row, consumer) and its
    highest offset `gen_max`; brought back (a few rows per generation).

    A min of a struct would make Spark sort every row (no hash aggregate for it): the
    earliest ts (null if any row lacks one: a null sorts first) comes from a hash aggregate,
    and only the rows at one of those times are compared as structs. They are picked by a
    set of times, not by a join on every key: one hash lookup of a long per row."""
    spans = c.groupBy(*keys).agg(
        F.when(F.count("ts") == F.count(F.lit(1)), F.min("ts")).alias("t0"),
        F.max("offset").alias("gen_max"),
    )
    found = spans.collect()
    if not found:
        return []
    times = sorted({int(r["t0"]) for r in found if r["t0"] is not None})
    at_start = F.col("ts").isin(times) if times else F.lit(False)
    if any(r["t0"] is None for r in found):
        at_start = at_start | F.col("ts").isNull()
    small = F.broadcast(
        local_frame(c.sparkSession, found, spans.schema).select(
            *[F.col(k).alias(f"_{k}") for k in keys], "t0", "gen_max"
        )
    )
    on = reduce(
        lambda a, b: a & b,
        [c[k].eqNullSafe(small[f"_{k}"]) for k in keys],
        c["ts"].eqNullSafe(small["t0"]),
    )
    return (
        c.filter(at_start)
        .join(small, on)
        .groupBy(*keys)
        .agg(
            F.min(F.struct("ts", "offset", ROW, "consumer")).alias("f"),
            F.max("gen_max").alias("gen_max"),
        )
        .collect()
    )


def resumption_frame(
    consumed: DataFrame,
    commits: DataFrame | None,
    log: DataFrame | None,
    read_committed: Collection[str] = (),
) -> DataFrame:
    """One row per (set, later generation, partition consumed in it); see `resumptions`."""
    c = with_set(consumed)
    spark = consumed.sparkSession
    per_gen_rows = _first_rows(c, [SET, "generation", "partition"])
    per_gen = local_frame(
        spark,
        [(r[SET], r["generation"], r["partition"], r["gen_max"]) for r in per_gen_rows],
        f"{SET} string, generation int, partition int, gen_max bigint",
    )
    first_gen: dict[str, int] = {}
    for r in per_gen_rows:
        first_gen[r[SET]] = min(first_gen.get(r[SET], 1), int(r["generation"]))
    starts = local_frame(
        spark,
        [
            (
                r[SET],
                r["generation"],
                r["partition"],
                r["f"]["consumer"],
                r["f"]["offset"],
                r["f"]["ts"],
            )
            for r in per_gen_rows
            if r["generation"] > first_gen[r[SET]]
        ],
        f"{SET} string, generation int, partition int, consumer string, first_offset bigint, "
        "first_ts bigint",
    )

    if commits is None:
        starts = starts.withColumn("committed", F.lit(None).cast("bigint"))
    else:
        cm = with_set(commits).select(
            F.col(SET).alias("c_set"),
            F.col("partition").alias("c_partition"),
            F.col("offset").alias("committed"),
            F.col("ts").alias("c_ts"),
            F.col(ROW).alias("c_row"),
        )
        on = (
            (F.col(SET) == F.col("c_set"))
            & (F.col("partition") == F.col("c_partition"))
            & (F.col("c_ts") <= F.col("first_ts"))
        )
        starts = _latest(
            starts.join(cm, on, "left"),
            [SET, "generation", "partition"],
            [F.col("c_ts").desc_nulls_last(), F.col("c_row").desc_nulls_last()],
        ).drop("c_set", "c_partition", "c_ts", "c_row")

    # Highest offset of the partition the set consumed in earlier generations.
    earlier = Window.partitionBy(SET, "partition").orderBy("generation")
    before = per_gen.withColumn(
        "max_before", F.max("gen_max").over(earlier.rowsBetween(Window.unboundedPreceding, -1))
    ).select(SET, "partition", "generation", "max_before")
    reread = (
        c.join(F.broadcast(before), [SET, "partition", "generation"])
        .groupBy(SET, "generation", "partition")
        .agg(F.sum(F.when(F.col("offset") <= F.col("max_before"), 1).otherwise(0)).alias("reread"))
    )
    # One row per (set, generation, partition): brought back once, so the skipped records'
    # lookup below does not read the consumed rows a second time.
    small = starts.join(reread, [SET, "generation", "partition"], "left")
    out = local_frame(spark, small.collect(), small.schema)

    resumed_past = out.filter(F.col("first_offset") > F.col("committed"))
    if log is None:
        out = out.withColumn("skipped", F.lit(None).cast("bigint"))
    elif resumed_past.isEmpty():
        # No partition resumed past its commit: nothing can have been skipped.
        out = out.withColumn(
            "skipped", F.when(F.col("committed").isNull(), None).otherwise(F.lit(0).cast("bigint"))
        )
    else:
        gap = resumed_past.select(SET, "generation", "partition", "committed", "first_offset")
        # A read_committed set skips only records it could see (not an aborted one).
        visible = F.col("committed") if "committed" in log.columns else F.lit(True)
        lg = log.select(
            F.col("partition").alias("lp"), F.col("offset").alias("lo"), visible.alias("vis")
        )
        rc = F.col(SET).isin(sorted(read_committed)) if read_committed else F.lit(False)
        # A record the set had already processed in an earlier generation was not skipped,
        # even if the commit covering it was never seen (a member killed after its commit
        # succeeded but before it could log it).
        seen = c.select(
            F.col(SET).alias("s_set"),
            F.col("partition").alias("s_partition"),
            F.col("offset").alias("s_offset"),
            F.col("generation").alias("s_gen"),
        )
        between = F.broadcast(gap).join(
            lg,
            (F.col("partition") == F.col("lp"))
            & (F.col("lo") >= F.col("committed"))
            & (F.col("lo") < F.col("first_offset"))
            & (F.col("vis") | ~rc),
        )
        # Only the consumed rows at offsets some gap holds (a semi join against the small
        # gaps), then which gap rows they cover: no join of all consumed rows.
        places = between.select(
            F.col(SET).alias("s_set"),
            F.col("lp").alias("s_partition"),
            F.col("lo").alias("s_offset"),
        ).distinct()
        seen_there = seen.join(
            F.broadcast(places), ["s_set", "s_partition", "s_offset"], "left_semi"
        )
        skipped = (
            between.join(
                seen_there,
                (F.col(SET) == F.col("s_set"))
                & (F.col("lp") == F.col("s_partition"))
                & (F.col("lo") == F.col("s_offset"))
                & (F.col("s_gen") < F.col("generation")),
                "left_anti",
            )
            .groupBy(SET, "generation", "partition")
            .agg(F.count(F.lit(1)).alias("skipped_rows"))
        )
        out = out.join(skipped, [SET, "generation", "partition"], "left").withColumn(
            "skipped",
            F.when(F.col("committed").isNull(), None).otherwise(
                F.coalesce("skipped_rows", F.lit(0))
            ),
        )
    return out.withColumn(
        "exact",
        F.when(F.col("committed").isNull(), None).otherwise(
            F.col("first_offset") == F.col("committed")
        ),
    )


def resumptions(
    consumed: DataFrame,
    commits: DataFrame | None,
    log: DataFrame | None,
    read_committed: Collection[str] = (),
) -> list[Resumption]:
    """For each restart/rebalance of a set: where each partition resumed vs. the last commit.

    first_offset: offset of the partition's earliest (ts, offset, row order) row in the
    generation; committed: offset of the latest commit (ts, then file order) for the partition
    by any member of the set at or before that row's ts (None if none); exact: first_offset ==
    committed; skipped: log rows with committed <= offset < first_offset that the set had
    not consumed in an earlier generation and could see (a set in `read_committed` sees only
    the log's committed rows) (0 if it did not start after the commit); reread: rows of the
    partition in the generation whose offset is <= the highest offset the set consumed of it
    in earlier generations.
    """
    frame = resumption_frame(consumed, commits, log, read_committed)
    rows = frame.orderBy(SET, "generation", "partition").collect()
    return [
        {
            "set": str(r[SET]),
            "consumer": str(r["consumer"]),
            "generation": int(r["generation"]),
            "partition": int(r["partition"]),
            "committed": None if r["committed"] is None else int(r["committed"]),
            "first_offset": int(r["first_offset"]),
            "exact": None if r["exact"] is None else bool(r["exact"]),
            "skipped": None if r["skipped"] is None else int(r["skipped"]),
            "reread": int(r["reread"] or 0),
        }
        for r in rows
    ]


CHECK = Check(
    "consumers",
    needs=(
        "block_totals",
        "dirty",
        "detail",
        "spark_sets",
        "share_sets",
        "trusted_log",
        "read_committed",
    ),
    decides=(
        "reprocessed",
        "out_of_order",
        "reprocessed_by_generation",
        "resumptions",
        "lost_never_consumed",
        "lost_never_consumed_by_set",
    ),
    run=run,
)
