"""Per Spark consumer set: checkpoint resumption, read-twice and sink duplicates, the
data-loss stop (spark_jobs.checks_spark); read_twice and sink_duplicates summed over them."""

from __future__ import annotations

from harness.results.layout import CellPaths
from harness.results.metrics import Figures, Resumption, SparkSetFigures
from spark_jobs import checks_spark as csp
from spark_jobs.check import Check
from spark_jobs.context import NO_LEDGER, CellContext


def run(ctx: CellContext) -> Figures:
    by_set: dict[str, SparkSetFigures] = {}
    resumptions: list[Resumption] = []
    for facts in ctx.spark_sets:
        query = CellPaths(ctx.cell_dir).query(facts.name)
        read_committed = facts.name in ctx.read_committed
        figures, rows = csp.spark_set_summary(
            ctx.spark, facts, query, None, ctx.trusted_log, read_committed
        )
        by_set[facts.name] = figures
        resumptions += rows
    out: Figures = {"spark_by_set": by_set, "resumptions": resumptions}
    if ctx.spark_sets:
        out["read_twice"] = sum(s["read_twice"] for s in by_set.values())
        out["sink_duplicates"] = sum(s["sink_duplicates"] for s in by_set.values())
        if ctx.trusted_log is None:  # the same reason as `lost`: no trusted final read
            lost = NO_LEDGER if ctx.data.ledger is None else str(ctx.log_reason)
            out["undecided"] = {"consumed_then_lost": lost}
    return out


CHECK = Check(
    "spark",
    needs=("spark_sets", "trusted_log", "read_committed", "log_reason"),
    decides=("read_twice", "sink_duplicates", "consumed_then_lost", "spark_by_set"),
    run=run,
)
