"""failed and the producer's ack latency, over the run and inside / outside fault windows,
from the ledger.

Latency = ack_ts - send_ts of `ok` records, in ms. Percentiles are nearest-rank: the p-th is
the smallest latency that at least p % of the records do not exceed, so it is a latency some
record really had, and exact. It is computed from the histogram of latencies (one row per
distinct ms value), so a 10 M-row ledger costs one aggregation, not a sort of its rows.

A record is `faulted` when it was sent while a fault window was open (fault.inject up to the
fault.heal of the same fault_id, harness.results.windows; a window never healed stays open);
else `start` when it was sent before the run's first ack (the producer's own start-up:
connections, metadata, its producer id; measured at 0.8-2 s on a loaded machine, which alone
made the baseline's p99); `steady` otherwise: the same run's baseline. Consumer crashes are
not faults of the producer's path and do not count.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from harness.results import events as ev
from harness.results.events import Event
from harness.results.metrics import LATENCY_METRICS, Figures
from harness.results.windows import fault_windows
from spark_jobs.check import Check
from spark_jobs.context import NO_LEDGER, CellContext

LATENCY = "latency_ms"
PART = "part"
ALL, FAULTED, STEADY, START = "all", "faulted", "steady", "start"
PARTS = (ALL, FAULTED, STEADY, START)
PERCENTILES = (50, 99)
FIGURES = ("acked", *(f"p{p}_ms" for p in PERCENTILES), "max_ms")
# Summary figure -> (part, figure of that part).
TOP_LEVEL = {
    "ack_p50_ms": (ALL, "p50_ms"),
    "ack_p99_ms": (ALL, "p99_ms"),
    "ack_max_ms": (ALL, "max_ms"),
    "ack_p99_ms_faulted": (FAULTED, "p99_ms"),
    "ack_p99_ms_steady": (STEADY, "p99_ms"),
}
Period = tuple[int, int | None]  # [start, end) in ms; end None: never healed


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


def fault_periods(history: list[Event]) -> list[Period]:
    """The windows of faults done to the cluster, in time order."""
    return [(w.start_ms, w.end_ms) for w in fault_windows(history) if not w.consumer_crash]


def sent_during(send_ts: Column, periods: list[Period]) -> Column:
    """Whether send_ts falls in any [start, end) period."""
    inside = F.lit(False)
    for start, end in periods:
        after = send_ts >= F.lit(start)
        inside = inside | (after if end is None else after & (send_ts < F.lit(end)))
    return inside


def _rank(p: int) -> Column:
    """ceil(total * p / 100) in integers: the rank of the p-th percentile."""
    return F.expr(f"(total * {p} + 99) div 100")


def latency_by_part(ledger: DataFrame, periods: list[Period]) -> dict[str, dict[str, int]]:
    """Per part (all, faulted, steady, start): acked, p50_ms, p99_ms, max_ms; a part without
    any acked record (with an ack_ts) is absent."""
    acked = ledger.filter(
        (F.col("status") == "ok") & F.col("ack_ts").isNotNull() & F.col("send_ts").isNotNull()
    )
    first_ack = acked.agg(F.min("ack_ts")).first()
    started = (
        F.lit(True)
        if first_ack is None or first_ack[0] is None
        else (F.col("send_ts") >= F.lit(int(first_ack[0])))
    )
    hist = (
        acked.select(
            (F.col("ack_ts") - F.col("send_ts")).alias(LATENCY),
            F.when(sent_during(F.col("send_ts"), periods), FAULTED)
            .when(~started, START)
            .otherwise(STEADY)
            .alias(PART),
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
    periods = fault_periods(history)
    parts = latency_by_part(ledger, periods)
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
        STEADY: "every acked record was sent during a fault window or before the first ack",
    }
    if not has_history:
        why[FAULTED] = why[STEADY] = "history.jsonl missing: fault windows unknown"
    undecided = {
        name: why[ALL] if ALL not in parts else why[part]
        for name, (part, _) in TOP_LEVEL.items()
        if top[name] is None
    }
    return parts, top, undecided


CHECK = Check("latency", needs=(), decides=("failed", *LATENCY_METRICS, "ack_latency"), run=run)
