"""failed and the producer's ack latency, over the run and inside / outside fault windows
(spark_jobs.checks_latency)."""

from __future__ import annotations

from harness.results.metrics import LATENCY_METRICS, Figures
from spark_jobs import checks_latency as cl
from spark_jobs.check import Check
from spark_jobs.context import NO_LEDGER, CellContext


def run(ctx: CellContext) -> Figures:
    data = ctx.data
    if data.ledger is None:
        return {"undecided": dict.fromkeys(("failed", *LATENCY_METRICS), NO_LEDGER)}
    failed = cl.failed(data.ledger)
    parts, top, undecided = cl.latency_summary(data.ledger, data.history, data.has_history)
    out: Figures = {"counts": {"failed": failed}, "ack_latency": parts, "undecided": undecided}
    out.update(top)  # type: ignore[typeddict-item]
    return out


CHECK = Check("latency", needs=(), decides=("failed", *LATENCY_METRICS, "ack_latency"), run=run)
