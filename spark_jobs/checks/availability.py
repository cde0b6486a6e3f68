"""unavailable_s: the windows in which acknowledged writes stopped while the producer was
sending: ack gaps longer than `gap_ms` over the producer's sends."""

from __future__ import annotations

from itertools import pairwise

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from harness.results import metrics as m
from harness.results.metrics import Figures
from spark_jobs.check import Check
from spark_jobs.context import CellContext


def run(ctx: CellContext) -> Figures:
    first, last = ctx.sends
    if ctx.data.ledger is None or first is None or last is None:
        return {"undecided": {"unavailable_s": "ledger.parquet missing or empty"}}
    windows = unavailable_windows(ctx.data.ledger, ctx.gap_ms, (first, last))
    return {
        "unavailable_windows": windows,
        "unavailable_s": sum(w["end_ms"] - w["start_ms"] for w in windows) / 1000.0,
    }


def unavailable_windows(
    ledger: DataFrame, gap_ms: int, sends: tuple[int, int] | None = None
) -> list[m.Window]:
    """Gaps longer than gap_ms between consecutive points over [first send_ts, last send_ts];
    points are the ack_ts of `ok` records inside that range plus both edges. `sends` passes
    (first, last) send_ts when the caller already has them."""
    if sends is None:
        bounds = ledger.agg(F.min("send_ts").alias("lo"), F.max("send_ts").alias("hi")).first()
        if bounds is None or bounds["lo"] is None:
            return []
        sends = (int(bounds["lo"]), int(bounds["hi"]))
    lo, hi = sends
    # Ack times in buckets of gap_ms: two points of one bucket are < gap_ms apart, so a gap
    # longer than gap_ms lies between the last point of a bucket and the first of the next
    # non-empty one. One small aggregate per bucket comes back, not the series.
    acks = ledger.filter((F.col("status") == "ok") & F.col("ack_ts").between(lo, hi))
    width = max(int(gap_ms), 1)
    rows = (
        acks.groupBy(F.expr(f"(ack_ts - {lo}) div {width}").alias("b"))
        .agg(F.min("ack_ts").alias("first"), F.max("ack_ts").alias("last"))
        .collect()
    )
    spans = sorted((int(r["first"]), int(r["last"])) for r in rows)
    points = [lo, *(t for span in spans for t in span), hi]
    return [
        {"start_ms": a, "end_ms": b, "duration_s": (b - a) / 1000.0}
        for a, b in pairwise(points)
        if b - a > gap_ms
    ]


CHECK = Check(
    "availability",
    needs=("sends", "gap_ms"),
    decides=("unavailable_s", "unavailable_windows"),
    run=run,
)
