"""ownership: how long each group set's partitions had no live member holding them, and per
generation the wait its assignment ended beside the records it processed again
(spark_jobs.checks_ownership, from the history alone). A review: it reads the consumers
check's reprocessed_by_generation."""

from __future__ import annotations

from harness.results.metrics import Figures
from spark_jobs import checks_ownership as co
from spark_jobs import history_facts as hf
from spark_jobs.check import REVIEW, Check
from spark_jobs.context import CellContext


def run(ctx: CellContext) -> Figures:
    history = ctx.data.history
    if not ctx.data.has_history:
        return {
            "undecided": {"ownership_by_set": "history.jsonl missing"},
            "generation_waits": None,
        }
    start, end = hf.workload_start(history), hf.drain_end(history)
    if start is None or end is None or end <= start:
        why = f"no measuring window (start={start}, end={end})"
        return {"undecided": {"ownership_by_set": why}, "generation_waits": None}
    by_set, waits = co.ownership(history, start, end)
    waits = co.with_reprocessed(waits, ctx.summary.get("reprocessed_by_generation"))
    return {"ownership_by_set": by_set, "generation_waits": waits}


CHECK = Check(
    "ownership",
    needs=("summary",),
    decides=("ownership_by_set", "generation_waits"),
    run=run,
    lane=REVIEW,
)
