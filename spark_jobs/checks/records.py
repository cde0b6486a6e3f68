"""attempted, acked, lost, unacked_present, duplicated: the ledger against the final log,
over the seq blocks of spark_jobs.seq_blocks (which rows the log must hold and which it
shows: spark_jobs.cell_data.is_expected and visible). All DataFrame operations, so they
scale to 10M-row ledgers."""

from __future__ import annotations

from pyspark.sql import DataFrame

from harness.results.metrics import Figures
from spark_jobs import seq_blocks as sb
from spark_jobs.check import Check
from spark_jobs.context import NO_LEDGER, CellContext


def run(ctx: CellContext) -> Figures:
    counts: dict[str, int | None] = {}
    undecided: dict[str, str] = {}
    out: Figures = {"counts": counts, "undecided": undecided}
    log, totals, blocks = ctx.trusted_log, ctx.ledger_totals, ctx.blocks
    facts = ctx.block_totals
    if totals is None:
        for name in ("attempted", "acked", "lost", "unacked_present"):
            undecided[name] = NO_LEDGER
    else:
        counts["attempted"], counts["acked"] = totals["attempted"], totals["acked"]
        if log is None or facts is None or blocks is None:
            undecided["lost"] = undecided["unacked_present"] = str(ctx.log_reason)
        else:
            counts["lost"] = facts["lost"]
            out["lost_seqs_sample"] = sb.lowest_seqs(blocks, "e & ~v") if facts["lost"] else []
            counts["unacked_present"] = facts["unacked_present"]
    if log is None or facts is None or blocks is None:
        undecided["duplicated"] = str(ctx.log_reason)
    elif facts["dup_blocks"] == 0:
        counts["duplicated"] = 0
    else:
        dups = sb.duplicated(blocks, log).cache()
        try:
            counts["duplicated"] = dups.count()
            out["duplicated_seqs_sample"] = sample(dups)
        finally:
            dups.unpersist()
    return out


def sample(records: DataFrame, n: int = 20) -> list[int]:
    return [int(r["seq"]) for r in records.orderBy("seq").limit(n).collect()]


CHECK = Check(
    "records",
    needs=("trusted_log", "ledger_totals", "blocks", "block_totals"),
    decides=(
        "attempted",
        "acked",
        "lost",
        "unacked_present",
        "duplicated",
        "lost_seqs_sample",
        "duplicated_seqs_sample",
    ),
    run=run,
)
