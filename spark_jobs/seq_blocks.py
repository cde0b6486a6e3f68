"""Record facts as bitsets of 64 seqs: the set algebra of the record checks without a
shuffle per record.

Lost, never consumed, reprocessed and duplicated ask which seqs are in one set and not in
another. Joined or grouped by seq, a 10 M-record cell makes Spark shuffle and hash one key
per record, which spills in a 1 GiB driver (most of verify's time). Here every source row
becomes (block = seq div 64, bit = 1 << seq mod 64) and one aggregation ORs the bits per
block: map-side aggregation folds each block where its rows lie (the ledger is in seq order,
consumers nearly so), the shuffle carries one row per block, and every set operation is a
bitwise one on those rows. Exact: a block's bits are its seqs. Where bits cannot tell (a
seq read at two places, or consumed twice), only the blocks that show it are looked at row
by row.

Block columns (one row per block `k`): `e` expected in the log, `u` unacked (fail or
unknown), `v` visible in the final log, `vr` visible log rows, `l` in the ledger and `lr`
ledger rows (more rows than bits: a seq in the ledger twice, a damaged folder); per consumer
set i (in the order given) `c<i>` consumed by the set and `r<i>` its consumed rows.
"""

from __future__ import annotations

from functools import reduce
from typing import TypedDict

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from harness.results.metrics import GenerationRows
from spark_jobs.cell_data import ROW, consumer_set, is_expected, visible
from spark_jobs.local_rows import local_frame

BLOCK = 64
K = "k"
SET = "set"


def block(seq: str = "seq") -> Column:
    """The block of a seq: floor(seq / 64), for negative seqs too."""
    return F.expr(f"({seq} - pmod({seq}, {BLOCK})) div {BLOCK}")


def bit(seq: str = "seq") -> Column:
    """The seq's bit in its block."""
    return F.expr(f"shiftleft(1L, cast(pmod({seq}, {BLOCK}) as int))")


def set_columns(sets: list[str]) -> list[tuple[str, str]]:
    """(mask column, rows column) of each consumer set, in order."""
    return [(f"c{i}", f"r{i}") for i in range(len(sets))]


def block_facts(
    ledger: DataFrame | None, log: DataFrame | None, consumed: DataFrame | None, sets: list[str]
) -> DataFrame:
    """One row per block with any row in the sources (see the module doc); a missing source
    leaves its columns 0."""
    per_set = set_columns(sets)
    names = ["e", "u", "v", "vr", "l", "lr", *[c for pair in per_set for c in pair]]

    def row(df: DataFrame, **given: Column) -> DataFrame:
        cols = [given.get(n, F.lit(0)).cast("bigint").alias(n) for n in names]
        return df.filter(F.col("seq").isNotNull()).select(block().alias(K), *cols)

    parts: list[DataFrame] = []
    if ledger is not None:
        unacked = F.col("status").isin("fail", "unknown")
        parts.append(
            row(
                ledger,
                e=F.when(is_expected(), bit()).otherwise(0),
                u=F.when(unacked, bit()).otherwise(0),
                l=bit(),
                lr=F.lit(1),
            )
        )
    if log is not None:
        parts.append(row(visible(log), v=bit(), vr=F.lit(1)))
    if consumed is not None and sets:
        name = consumer_set(F.col("consumer"))
        given = {}
        for s, (mask, rows) in zip(sets, per_set, strict=True):
            given[mask] = F.when(name == s, bit()).otherwise(0)
            given[rows] = F.when(name == s, 1).otherwise(0)
        parts.append(row(consumed, **given))
    if not parts:
        raise ValueError("block_facts needs at least one source")
    union = reduce(DataFrame.unionByName, parts)
    sums = {"vr", "lr", *[rows for _, rows in per_set]}
    return union.groupBy(K).agg(*[(F.sum(n) if n in sums else F.bit_or(n)).alias(n) for n in names])


def count_of(expr: str) -> Column:
    """Seqs whose bits the mask expression sets, summed over blocks."""
    return F.coalesce(F.expr(f"sum(bit_count({expr}))"), F.lit(0))


class BlockTotals(TypedDict):
    """seq_blocks.totals: counts over every block, and per consumer set."""

    lost: int
    unacked_present: int
    dup_blocks: int
    ledger_duplicates: int
    never: dict[str, int]
    excess: dict[str, int]


def totals(blocks: DataFrame, sets: list[str]) -> BlockTotals:
    """lost, unacked_present, the duplicated-suspect blocks count, the ledger's rows beyond
    its distinct seqs (`ledger_duplicates`), reprocessed, and per set
    never (expected seqs it never consumed) and excess (its rows minus its distinct seqs),
    in one pass over the blocks."""
    per_set = set_columns(sets)
    aggs = [
        count_of("e & ~v").alias("lost"),
        count_of("u & v").alias("unacked_present"),
        F.coalesce(F.sum(F.when(F.expr("vr > bit_count(v)"), 1)), F.lit(0)).alias("dup_blocks"),
        F.coalesce(F.expr("sum(lr - bit_count(l))"), F.lit(0)).alias("ledger_duplicates"),
    ]
    for mask, rows in per_set:
        aggs.append(count_of(f"e & ~{mask}").alias(f"never_{mask}"))
        aggs.append(F.coalesce(F.expr(f"sum({rows} - bit_count({mask}))"), F.lit(0)).alias(rows))
    row = blocks.agg(*aggs).first()
    assert row is not None  # a global aggregate has one row
    return {
        "lost": int(row["lost"]),
        "unacked_present": int(row["unacked_present"]),
        "dup_blocks": int(row["dup_blocks"]),
        "ledger_duplicates": int(row["ledger_duplicates"]),
        "never": {s: int(row[f"never_{m}"]) for s, (m, _) in zip(sets, per_set, strict=True)},
        "excess": {s: int(row[r]) for s, (_, r) in zip(sets, per_set, strict=True)},
    }


def bits_not_in(rows: DataFrame, other: DataFrame) -> int:
    """Distinct seqs of `rows` that `other` does not hold: bits of one, not of the other,
    per block (one map-side aggregate, no shuffle of every seq)."""
    mine = rows.filter(F.col("seq").isNotNull()).select(
        block().alias(K), bit().alias("a"), F.lit(0).cast("bigint").alias("o")
    )
    theirs = other.filter(F.col("seq").isNotNull()).select(
        block().alias(K), F.lit(0).cast("bigint").alias("a"), bit().alias("o")
    )
    per_block = (
        mine.unionByName(theirs).groupBy(K).agg(F.bit_or("a").alias("a"), F.bit_or("o").alias("o"))
    )
    row = per_block.agg(count_of("a & ~o").alias("n")).first()
    return 0 if row is None else int(row["n"])


def lowest_seqs(blocks: DataFrame, expr: str, n: int = 20) -> list[int]:
    """The n lowest seqs whose bits the mask expression sets (the blocks come back to Python
    only as far as n seqs reach)."""
    hits = (
        blocks.select(K, F.expr(expr).alias("m"))
        .filter(F.col("m") != 0)
        .orderBy(K)
        .limit(n)
        .collect()
    )
    out: list[int] = []
    for r in hits:
        mask, base = int(r["m"]) & (2**64 - 1), int(r[K]) * BLOCK
        out += [base + i for i in range(BLOCK) if mask >> i & 1]
        if len(out) >= n:
            break
    return out[:n]


def duplicated(blocks: DataFrame, log: DataFrame) -> DataFrame:
    """One row (seq) per seq stored at more than one (partition, offset) of the visible log:
    only the blocks whose visible rows outnumber their seqs are grouped by seq."""
    suspects = blocks.filter(F.expr("vr > bit_count(v)")).select(K)
    rows = visible(log).select("seq", "partition", "offset").withColumn(K, block())
    return (
        rows.join(F.broadcast(suspects), K, "left_semi")
        .groupBy("seq")
        .agg(F.count_distinct("partition", "offset").alias("places"))
        .filter(F.col("places") > 1)
        .select("seq")
    )


def dirty_blocks(blocks: DataFrame, sets: list[str]) -> DataFrame:
    """(set, k): blocks in which the set consumed some seq more than once."""
    parts = [
        blocks.filter(F.expr(f"{rows} > bit_count({mask})")).select(F.lit(s).alias(SET), K)
        for s, (mask, rows) in zip(sets, set_columns(sets), strict=True)
    ]
    if not parts:
        return local_frame(blocks.sparkSession, [], f"{SET} string, {K} bigint")
    return reduce(DataFrame.unionByName, parts)


def _consumptions(consumed: DataFrame) -> DataFrame:
    return consumed.filter(F.col("seq").isNotNull()).select(
        consumer_set(F.col("consumer")).alias(SET),
        "seq",
        "ts",
        "offset",
        ROW,
        "generation",
        block().alias(K),
    )


def dirty_firsts(consumed: DataFrame, dirty: DataFrame) -> DataFrame:
    """(set, seq, fc, generation) of the seqs in the dirty blocks (see first_consumptions):
    small unless a set consumed most records twice; callers that need it twice cache it."""
    return _dirty_firsts(_consumptions(consumed), F.broadcast(dirty.select(SET, K)))


def _dirty_firsts(c: DataFrame, marked: DataFrame) -> DataFrame:
    first = F.min(F.struct("ts", "offset", ROW, "generation")).alias("f")
    return (
        c.join(marked, [SET, K], "left_semi")
        .groupBy(SET, "seq")
        .agg(first)
        .select(SET, "seq", F.col("f.ts").alias("fc"), F.col("f.generation").alias("generation"))
    )


def first_consumptions(
    consumed: DataFrame, dirty: DataFrame, detail: DataFrame | None = None
) -> DataFrame:
    """(set, seq, fc, generation): each set's first consumption of each seq it consumed (by
    ts, offset, file row). In a block the set consumed no seq of twice, every row is one;
    only the dirty blocks' rows are grouped by seq (`detail`: dirty_firsts, if at hand)."""
    c = _consumptions(consumed)
    marked = F.broadcast(dirty.select(SET, K))
    clean = c.join(marked, [SET, K], "left_anti").select(
        SET, "seq", F.col("ts").alias("fc"), "generation"
    )
    return clean.unionByName(_dirty_firsts(c, marked) if detail is None else detail)


def generation_counts(
    consumed: DataFrame, dirty: DataFrame, detail: DataFrame | None = None
) -> list[GenerationRows]:
    """Per (set, generation): rows, distinct seqs, and rows that were not the set's first
    consumption of their seq (earlier generation, or earlier in the same one).

    First consumptions counted without listing them: in a clean block (see
    first_consumptions) every row is one, so the per-block row counts give them; only the
    dirty blocks' rows are grouped by seq (`detail`: dirty_firsts, if at hand)."""
    c = consumed.filter(F.col("seq").isNotNull()).select(
        consumer_set(F.col("consumer")).alias(SET), "generation", block().alias(K), bit().alias("b")
    )
    # One row per (set, generation, block): small, and read twice below.
    per_block = (
        c.groupBy(SET, "generation", K)
        .agg(F.count(F.lit(1)).alias("n"), F.bit_or("b").alias("m"))
        .cache()
    )
    try:
        marked = F.broadcast(dirty.select(SET, K))
        sizes = per_block.groupBy(SET, "generation").agg(
            F.sum("n").alias("rows"), F.expr("sum(bit_count(m))").alias("distinct")
        )
        clean = (
            per_block.join(marked, [SET, K], "left_anti")
            .groupBy(SET, "generation")
            .agg(F.sum("n").alias("clean"))
        )
        detail_counts = (
            (dirty_firsts(consumed, dirty) if detail is None else detail)
            .groupBy(SET, "generation")
            .agg(F.count(F.lit(1)).alias("detail"))
        )
        rows = (
            sizes.join(clean, [SET, "generation"], "left")
            .join(detail_counts, [SET, "generation"], "left")
            .orderBy(SET, "generation")
            .collect()
        )
    finally:
        per_block.unpersist()
    return [
        {
            "set": str(r[SET]),
            "generation": int(r["generation"]),
            "rows": int(r["rows"]),
            "distinct": int(r["distinct"]),
            "reprocessed": int(r["rows"]) - int(r["clean"] or 0) - int(r["detail"] or 0),
        }
        for r in rows
    ]
