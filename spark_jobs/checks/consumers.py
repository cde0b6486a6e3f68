"""What the consumer groups saw: reprocessed, out_of_order, the re-reads per generation, each
restart's resumption against the last commit, and the records no set consumed
(spark_jobs.checks_consumers over the seq blocks)."""

from __future__ import annotations

from pyspark.sql import functions as F

from harness.results.metrics import Figures
from spark_jobs import checks_consumers as cc
from spark_jobs import seq_blocks as sb
from spark_jobs.cell_data import consumer_set
from spark_jobs.check import Check
from spark_jobs.context import NO_CONSUMED, NO_LEDGER, CellContext


def run(ctx: CellContext) -> Figures:
    data = ctx.data
    consumed, facts, dirty = data.consumed, ctx.block_totals, ctx.dirty
    if consumed is None or facts is None or dirty is None:
        names = ("reprocessed", "out_of_order", "resumptions", "lost_never_consumed")
        return {"undecided": dict.fromkeys(names, NO_CONSUMED)}
    counts: dict[str, int | None] = {
        "reprocessed": sum(facts["excess"].values()),
        "out_of_order": cc.out_of_order(consumed),
    }
    undecided: dict[str, str] = {}
    out: Figures = {"counts": counts, "undecided": undecided}
    out["reprocessed_by_generation"] = sb.generation_counts(consumed, dirty, ctx.detail)
    spark_names = [f.name for f in ctx.spark_sets]
    groups = consumed.filter(~consumer_set(F.col("consumer")).isin(spark_names))
    out["resumptions"] = cc.resumptions(groups, data.commits, ctx.trusted_log, ctx.read_committed)
    if data.commits is None:
        undecided["resumptions"] = "commits.parquet missing: committed/exact unknown"
    if data.ledger is None:
        undecided["lost_never_consumed"] = NO_LEDGER
        return out
    by_set = facts["never"]
    out["lost_never_consumed_by_set"] = dict(sorted(by_set.items()))
    if ctx.drain_reason is not None:
        undecided["lost_never_consumed"] = ctx.drain_reason
    elif not by_set:
        undecided["lost_never_consumed"] = "no consumer set ran"
    else:
        counts["lost_never_consumed"] = max(by_set.values())
    return out


CHECK = Check(
    "consumers",
    needs=("block_totals", "dirty", "detail", "spark_sets", "trusted_log", "read_committed"),
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
