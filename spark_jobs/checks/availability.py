"""unavailable_s: the ack gaps longer than `gap_ms` over the producer's sends
(spark_jobs.checks_stall.unavailable_windows)."""

from __future__ import annotations

from harness.results.metrics import Figures
from spark_jobs import checks_stall as cs
from spark_jobs.check import Check
from spark_jobs.context import CellContext


def run(ctx: CellContext) -> Figures:
    first, last = ctx.sends
    if ctx.data.ledger is None or first is None or last is None:
        return {"undecided": {"unavailable_s": "ledger.parquet missing or empty"}}
    windows = cs.unavailable_windows(ctx.data.ledger, ctx.gap_ms, (first, last))
    return {
        "unavailable_windows": windows,
        "unavailable_s": sum(w["end_ms"] - w["start_ms"] for w in windows) / 1000.0,
    }


CHECK = Check(
    "availability",
    needs=("sends", "gap_ms"),
    decides=("unavailable_s", "unavailable_windows"),
    run=run,
)
