"""failed and the producer's ack latency, over the run and by the part of the run each
record was sent in, from the ledger.

Latency = ack_ts - send_ts of `ok` records, in ms. Percentiles are nearest-rank: the p-th is
the smallest latency that at least p % of the records do not exceed, so it is a latency some
record really had, and exact. It is computed from the histogram of latencies (one row per
distinct ms value), so a 10 M-row ledger costs one aggregation, not a sort of its rows.

The parts (spark_jobs.send_parts): `faulted` (sent while a fault window was open),
`recovering` (sent after a heal until every partition had a leader and its full ISR again:
leaders moving, followers catching up; harness.results.recovery), `start` (sent before the
run's first ack: the producer's own start-up, connections, metadata, its producer id;
measured at 0.8-2 s on a loaded machine, which alone made the baseline's p99) and `steady`
(the rest: the same run's baseline, which the seconds after a heal no longer inflate).
Consumer crashes are not faults of the producer's path and do not count.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from harness.results import events as ev
from harness.results.events import Event
from harness.results.metrics import LATENCY_METRICS, Figures
from harness.results.recovery import Period
from spark_jobs.check import Check
from spark_jobs.context import NO_LEDGER, CellContext
from spark_jobs.send_parts import (
    ALL,
    FAULTED,
    RECOVERING,
    STEADY,
    SendPeriods,
    first_ack,
    send_part,
)

LATENCY = "latency_ms"
PART = "part"
PERCENTILES = (50, 99)
FIGURES = ("acked", *(f"p{p}_ms" for p in PERCENTILES), "max_ms")
# Summary figure -> (part, figure of that part).
TOP_LEVEL = {
    "ack_p50_ms": (ALL, "p50_ms"),
    "ack_p99_ms": (ALL, "p99_ms"),
    "ack_max_ms": (ALL, "max_ms"),
    "ack_p99_ms_faulted": (FAULTED, "p99_ms"),
    "ack_p99_ms_steady": (STEADY, "p99_ms"),
    "ack_p99_ms_recovering": (RECOVERING, "p99_ms"),
}


def run(ctx: CellContext) -> Figures:
    data = ctx.data
    if data.ledger is None:
        return {"undecided": dict.fromkeys(("failed", *LATENCY_METRICS), NO_LEDGER)}
    failures = failed(data.ledger)
    parts, top, undecided = latency_summary(data.ledger, data.history, data.has_history)
    out: Figures = {"counts": {"failed": failures}, "ack_latency": parts, "undecided": undecided}
    out.update(top)  # type: ignore[typeddict-item]
    return out


def failed(ledger: DataFrame) -> int:
    """Records whose delivery failed for sure (`fail`; an `unknown` one may have been written)."""
    return ledger.filter(F.col("status") == "fail").count()


def _rank(p: int) -> Column:
    """ceil(total * p / 100) in integers: the rank of the p-th percentile."""
    return F.expr(f"(total * {p} + 99) div 100")


def latency_by_part(
    ledger: DataFrame, periods: list[Period], recovering: list[Period] | None = None
) -> dict[str, dict[str, int]]:
    """Per part (all, faulted, recovering, steady, start): acked, p50_ms, p99_ms, max_ms,
    `periods` the fault windows, `recovering` the periods after their heals; a part without
    any acked record (with an ack_ts) is absent."""
    acked = ledger.filter(
        (F.col("status") == "ok") & F.col("ack_ts").isNotNull() & F.col("send_ts").isNotNull()
    )
    split = SendPeriods(periods, recovering or [])
    hist = (
        acked.select(
            (F.col("ack_ts") - F.col("send_ts")).alias(LATENCY),
            send_part(F.col("send_ts"), split, first_ack(acked)).alias(PART),
        )
        .groupBy(PART, LATENCY)
        .agg(F.count(F.lit(1)).alias("n"))
    )
    both = hist.unionByName(
        hist.groupBy(LATENCY)
        .agg(F.sum("n").alias("n"))
        .select(F.lit(ALL).alias(PART), LATENCY, "n")
    )
    running = Window.partitionBy(PART).orderBy(LATENCY).rowsBetween(Window.unboundedPreceding, 0)
    ranked = both.withColumn("cum", F.sum("n").over(running)).withColumn(
        "total", F.sum("n").over(Window.partitionBy(PART))
    )
    rows = (
        ranked.groupBy(PART)
        .agg(
            F.max("total").alias("acked"),
            *(
                F.min(F.when(F.col("cum") >= _rank(p), F.col(LATENCY))).alias(f"p{p}_ms")
                for p in PERCENTILES
            ),
            F.max(LATENCY).alias("max_ms"),
        )
        .collect()
    )
    return {str(r[PART]): {k: int(r[k]) for k in FIGURES} for r in rows}


def latency_summary(
    ledger: DataFrame, history: list[Event], has_history: bool
) -> tuple[dict[str, dict[str, int]], dict[str, int | None], dict[str, str]]:
    """(figures per part, the TOP_LEVEL figures, why each None one is undecided)."""
    split = SendPeriods.of(history)
    periods = split.faulted
    parts = latency_by_part(ledger, periods, split.recovering)
    if not has_history:  # the fault windows are unknown, so is the split
        parts = {k: v for k, v in parts.items() if k == ALL}
    top: dict[str, int | None] = {
        name: parts[part][figure] if part in parts else None
        for name, (part, figure) in TOP_LEVEL.items()
    }
    why = {
        ALL: "no acked record with an ack_ts: no ack latency",
        FAULTED: f"no acked record was sent during the {len(periods)} fault window(s)"
        if periods
        else f"no {ev.FAULT_INJECT} in history.jsonl: nothing was sent during a fault",
        STEADY: "every acked record was sent during a fault window, while the cluster"
        " recovered after one, or before the first ack",
        RECOVERING: f"no acked record was sent while the cluster recovered after the"
        f" {len(split.recovering)} heal(s) that left it short of leaders or in-sync replicas"
        if split.recovering
        else "no heal left a partition without a leader or its full ISR: no recovery to measure",
    }
    if not has_history:
        why[FAULTED] = why[STEADY] = why[RECOVERING] = (
            "history.jsonl missing: fault windows unknown"
        )
    undecided = {
        name: why[ALL] if ALL not in parts else why[part]
        for name, (part, _) in TOP_LEVEL.items()
        if top[name] is None
    }
    return parts, top, undecided


CHECK = Check("latency", needs=(), decides=("failed", *LATENCY_METRICS, "ack_latency"), run=run)
