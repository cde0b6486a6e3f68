"""inconsistent_offsets, poll_skip, nonmonotonic_send, after Jepsen's Kafka checker: readers
that disagree about what an offset holds, consumers that skipped records, and sends whose
offsets went backwards. Needs nothing the other checks share: it runs in a lane of its own.

All DataFrame operations (joins and aggregates; the one range join broadcasts a small
aggregate): only counts, per-set sums and samples come back to Python.
"""

from __future__ import annotations

from collections.abc import Collection
from functools import reduce

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from harness.results.metrics import Figures, PlaceSample
from spark_jobs.cell_data import consumer_set
from spark_jobs.check import Check, combine, lower_bound
from spark_jobs.context import NO_CONSUMED, NO_LEDGER, CellContext
from spark_jobs.seq_blocks import BLOCK, bit, block

SET = "set"
SAMPLE = 20
_PLACE = ["partition", "offset"]
# Bits of block `ob` (offsets 64 ob + i) strictly between lo and hi. The bits below hi are
# the complement of -1 shifted, not (1 << n) - 1: for n = 63 that subtraction overflows a
# long, which ANSI SQL (Spark 4's default) raises instead of wrapping.
_INSIDE = f"""
  (CASE WHEN lo < ob * {BLOCK} THEN -1L
        WHEN lo - ob * {BLOCK} >= {BLOCK - 1} THEN 0L
        ELSE shiftleft(-1L, cast(lo - ob * {BLOCK} + 1 AS INT)) END)
  & (CASE WHEN hi >= (ob + 1) * {BLOCK} THEN -1L
          WHEN hi <= ob * {BLOCK} THEN 0L
          ELSE ~shiftleft(-1L, cast(hi - ob * {BLOCK} AS INT)) END)
"""


def run(ctx: CellContext) -> Figures:
    data = ctx.data
    ledger, consumed, log = data.ledger, data.consumed, data.log
    counts: dict[str, int | None] = {}
    undecided: dict[str, str] = {}
    parts: list[Figures] = [{"counts": counts, "undecided": undecided}]
    if ledger is None:
        undecided["nonmonotonic_send"] = NO_LEDGER
    else:
        counts["nonmonotonic_send"] = nonmonotonic_send(ledger)

    gaps = [] if ctx.log_reason is None else [ctx.log_reason]
    gaps += [
        f"{name}.parquet missing"
        for name, df in (("ledger", ledger), ("consumed", consumed))
        if df is None
    ]
    if ledger is None and consumed is None and log is None:
        undecided["inconsistent_offsets"] = "; ".join(gaps)
    else:
        found, sample = inconsistent_offsets(ledger, consumed, log)
        parts.append({"inconsistent_offsets_sample": sample})
        parts.append(lower_bound("inconsistent_offsets", found, gaps))

    if consumed is None:
        undecided["poll_skip"] = NO_CONSUMED
    elif ctx.log_reason is not None or log is None:
        undecided["poll_skip"] = str(ctx.log_reason)
    else:
        # A share set is handed records, not partitions: one member seeing offsets 3 and 9 of
        # a partition skipped nothing (another member had 4-8).
        shares = list(ctx.share_sets)
        readers = consumed.filter(~consumer_set(F.col("consumer")).isin(shares))
        sets = [s for s in ctx.sets if s not in shares]
        skipped, by_set = poll_skip(readers, log, ctx.read_committed, sets)
        counts["poll_skip"] = skipped
        parts.append({"poll_skip_by_set": by_set})
    return combine(*parts)


def _places(frames: list[DataFrame]) -> DataFrame:
    """(partition, offset, seq) of every row of the frames that has a place."""
    union = reduce(DataFrame.unionByName, [f.select(*_PLACE, "seq") for f in frames])
    placed = F.col("partition").isNotNull() & F.col("offset").isNotNull()
    return union.filter(placed & F.col("seq").isNotNull())


def inconsistent_offsets(
    ledger: DataFrame | None, consumed: DataFrame | None, log: DataFrame | None
) -> tuple[int, list[PlaceSample]]:
    """(distinct (partition, offset) at which more than one distinct seq was seen, up to
    SAMPLE of them as {partition, offset, seqs}) over: ledger rows `ok` with an offset,
    every consumed row, every log row (committed or not). None of the frames: (0, [])."""
    frames: list[DataFrame] = []
    if ledger is not None:
        frames.append(ledger.filter(F.col("status") == "ok"))
    frames += [f for f in (consumed, log) if f is not None]
    if not frames:
        return 0, []
    places = _places(frames)
    # More than one distinct seq = lowest != highest: one aggregate, no distinct first. The
    # places are nearly all distinct within a file, so an aggregate before the shuffle
    # (Spark's default) only hashes and spills: shuffled first, the cell's check took 18 s
    # instead of 24-36 s at 10 M rows (benchmarks/verify_throughput.py's cell).
    bad = (
        places.repartition(*_PLACE)
        .groupBy(*_PLACE)
        .agg(F.min("seq").alias("low"), F.max("seq").alias("high"))
        .filter(F.col("low") != F.col("high"))
    )
    count = bad.count()
    if count == 0:
        return 0, []
    first = bad.orderBy(*_PLACE).limit(SAMPLE).select(*_PLACE)
    rows = (
        places.join(F.broadcast(first), _PLACE)
        .groupBy(*_PLACE)
        .agg(F.sort_array(F.collect_set("seq")).alias("seqs"))
        .orderBy(*_PLACE)
        .collect()
    )
    sample: list[PlaceSample] = [
        {
            "partition": int(r["partition"]),
            "offset": int(r["offset"]),
            "seqs": [int(s) for s in r["seqs"]],
        }
        for r in rows
    ]
    return count, sample


def _read_committed(read_committed: Collection[str]) -> Column:
    return F.col(SET).isin(sorted(read_committed)) if read_committed else F.lit(False)


def poll_skip_frame(
    consumed: DataFrame, log: DataFrame, read_committed: Collection[str]
) -> DataFrame:
    """Per (set, consumer, generation, partition) with something between its lowest (lo) and
    highest (hi) consumed offset: `skipped` = log records at lo < offset < hi the reader
    should have seen (visible, for a read_committed set; any, otherwise) whose offset it
    did not consume in that generation. Log records are counted per distinct offset.

    Offsets as bitsets of 64 per (partition, block) (as seq_blocks does for seqs): the log's
    visible and present offsets, each reader's consumed ones; skipped = bits the reader
    should have seen, inside its range, that it does not have. No join per record."""
    keys = ["consumer", "generation", "partition"]
    c = consumed.filter(F.col("offset").isNotNull()).select(*keys, "offset")
    ranges = (
        c.groupBy(*keys)
        .agg(F.min("offset").alias("lo"), F.max("offset").alias("hi"))
        .filter(F.col("hi") - F.col("lo") > 1)
        .withColumn(SET, consumer_set(F.col("consumer")))
        .withColumn("rc", _read_committed(read_committed))
    )
    mine = c.groupBy(*keys, block("offset").alias("ob")).agg(F.bit_or(bit("offset")).alias("mine"))
    committed = F.col("committed") if "committed" in log.columns else F.lit(True)
    present = log.filter(F.col("offset").isNotNull()).select(
        "partition",
        block("offset").alias("ob"),
        bit("offset").alias("b"),
        F.coalesce(committed, F.lit(True)).alias("vis"),
    )
    log_blocks = present.groupBy("partition", "ob").agg(
        F.bit_or("b").alias("any"),
        F.bit_or(F.when(F.col("vis"), F.col("b")).otherwise(0)).alias("seen"),
    )
    # Every log block inside some reader's range (a small broadcast side, a range condition).
    spans = F.broadcast(
        ranges.select(
            *keys,
            SET,
            "lo",
            "hi",
            "rc",
            block("lo").alias("ob_lo"),
            block("hi").alias("ob_hi"),
        )
    )
    inside = log_blocks.join(
        spans,
        (log_blocks["partition"] == spans["partition"])
        & (log_blocks["ob"] >= spans["ob_lo"])
        & (log_blocks["ob"] <= spans["ob_hi"]),
    ).select(
        spans["consumer"],
        spans["generation"],
        spans["partition"],
        SET,
        "lo",
        "hi",
        "ob",
        F.when(F.col("rc"), F.col("seen")).otherwise(F.col("any")).alias("should"),
    )
    missed = (
        inside.join(mine, [*keys, "ob"], "left")
        .select(
            SET,
            *keys,
            "lo",
            "hi",
            F.expr(f"bit_count(should & ~coalesce(mine, 0L) & ({_INSIDE}))").alias("n"),
        )
        .groupBy(SET, *keys, "lo", "hi")
        .agg(F.sum("n").alias("skipped"))
    )
    return missed.filter(F.col("skipped") > 0)


def poll_skip(
    consumed: DataFrame, log: DataFrame, read_committed: Collection[str], sets: Collection[str]
) -> tuple[int, dict[str, int]]:
    """(skipped records summed, the sum per consumer set; every set in `sets` listed)."""
    rows = (
        poll_skip_frame(consumed, log, read_committed)
        .groupBy(SET)
        .agg(F.sum("skipped").alias("n"))
        .collect()
    )
    by_set = dict.fromkeys(sorted(sets), 0)
    by_set.update({str(r[SET]): int(r["n"]) for r in rows})
    return sum(by_set.values()), dict(sorted(by_set.items()))


def nonmonotonic_send(ledger: DataFrame) -> int:
    """Ledger rows with an offset whose offset is lower than the highest offset of any lower
    seq (seq = send order) in the same partition."""
    earlier = (
        Window.partitionBy("partition").orderBy("seq").rowsBetween(Window.unboundedPreceding, -1)
    )
    placed = ledger.filter(F.col("partition").isNotNull() & F.col("offset").isNotNull())
    return (
        placed.select("offset", F.max("offset").over(earlier).alias("before"))
        .filter(F.col("offset") < F.col("before"))
        .count()
    )


CHECK = Check(
    "offsets",
    needs=("log_reason", "read_committed", "sets", "share_sets"),
    decides=(
        "nonmonotonic_send",
        "inconsistent_offsets",
        "poll_skip",
        "inconsistent_offsets_sample",
        "poll_skip_by_set",
    ),
    run=run,
    lane="offsets",
)
