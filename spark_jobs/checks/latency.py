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

`outside_overload`: each figure again over its part's records whose [send_ts, ack_ts] no
overloaded span of the machine reached (harness.results.overload_rules, the SAMPLES rule: a p99 is
its slowest 1 % of samples, and a start-up overload can hold all of them), for the figures
some of whose records it did reach. The same aggregation: each record is kept or not, and
the histogram is ranked once over all records and once over the kept ones. The machine
check decides what that leaves undecided; the verdict judges the kept records' figure.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from harness.results import events as ev
from harness.results.events import Event
from harness.results.machine import Span
from harness.results.metrics import LATENCY_METRICS, Figures, OutsideOverload
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
OVER = "overloaded"  # the record's [send_ts, ack_ts] reached an overloaded span
SCOPE = "scope"
WHOLE, OUTSIDE = "whole", "outside"  # every acked record; those taken outside overload
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
    spans = [] if ctx.machine is None else ctx.machine.spans
    parts, top, undecided, outside = latency_summary(
        data.ledger, data.history, data.has_history, spans
    )
    out: Figures = {
        "counts": {"failed": failures},
        "ack_latency": parts,
        "undecided": undecided,
        "outside_overload": outside,
    }
    out.update(top)  # type: ignore[typeddict-item]
    return out


def failed(ledger: DataFrame) -> int:
    """Records whose delivery failed for sure (`fail`; an `unknown` one may have been written)."""
    return ledger.filter(F.col("status") == "fail").count()


def _rank(p: int) -> Column:
    """ceil(total * p / 100) in integers: the rank of the p-th percentile."""
    return F.expr(f"(total * {p} + 99) div 100")


def taken_during(send_ts: Column, ack_ts: Column, spans: Sequence[Span]) -> Column:
    """Whether a record's [send_ts, ack_ts] reaches one of the [start, end) spans. One
    literal array, scanned per record in the JVM, no Python per record: a cell has a few
    spans, at most one per two sampler rows."""
    if not spans:
        return F.lit(False)
    array = F.array(*(F.struct(F.lit(a).alias("a"), F.lit(b).alias("b")) for a, b in spans))
    return F.exists(array, lambda s: (send_ts < s["b"]) & (ack_ts >= s["a"]))


def latency_by_part(
    ledger: DataFrame, periods: list[Period], recovering: list[Period] | None = None
) -> dict[str, dict[str, int]]:
    """Per part (all, faulted, recovering, steady, start): acked, p50_ms, p99_ms, max_ms,
    `periods` the fault windows, `recovering` the periods after their heals; a part without
    any acked record (with an ack_ts) is absent."""
    return latency_by_scope(ledger, periods, recovering)[WHOLE]


def latency_by_scope(
    ledger: DataFrame,
    periods: list[Period],
    recovering: list[Period] | None = None,
    spans: Sequence[Span] = (),
) -> dict[str, dict[str, dict[str, int]]]:
    """latency_by_part's figures over every acked record (WHOLE) and over those no
    overloaded span reached (OUTSIDE; the same as WHOLE without spans): scope -> part ->
    figures."""
    acked = ledger.filter(
        (F.col("status") == "ok") & F.col("ack_ts").isNotNull() & F.col("send_ts").isNotNull()
    )
    split = SendPeriods(periods, recovering or [])
    hist = (
        acked.select(
            (F.col("ack_ts") - F.col("send_ts")).alias(LATENCY),
            send_part(F.col("send_ts"), split, first_ack(acked)).alias(PART),
            taken_during(F.col("send_ts"), F.col("ack_ts"), spans).alias(OVER),
        )
        .groupBy(PART, LATENCY, OVER)
        .agg(F.count(F.lit(1)).alias("n"))
    )
    by_part = hist.unionByName(
        hist.groupBy(LATENCY, OVER)
        .agg(F.sum("n").alias("n"))
        .select(F.lit(ALL).alias(PART), LATENCY, OVER, "n")
    )
    scoped = by_part.groupBy(PART, LATENCY).agg(F.sum("n").alias("n"))
    scoped = scoped.withColumn(SCOPE, F.lit(WHOLE))
    if spans:
        kept = by_part.filter(~F.col(OVER)).drop(OVER).withColumn(SCOPE, F.lit(OUTSIDE))
        scoped = scoped.unionByName(kept)
    running = (
        Window.partitionBy(SCOPE, PART).orderBy(LATENCY).rowsBetween(Window.unboundedPreceding, 0)
    )
    ranked = scoped.withColumn("cum", F.sum("n").over(running)).withColumn(
        "total", F.sum("n").over(Window.partitionBy(SCOPE, PART))
    )
    rows = (
        ranked.groupBy(SCOPE, PART)
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
    out: dict[str, dict[str, dict[str, int]]] = {WHOLE: {}, OUTSIDE: {}}
    for r in rows:
        out[str(r[SCOPE])][str(r[PART])] = {k: int(r[k]) for k in FIGURES}
    if not spans:
        out[OUTSIDE] = out[WHOLE]
    return out


def outside_overload(
    whole: dict[str, dict[str, int]], kept: dict[str, dict[str, int]]
) -> dict[str, OutsideOverload]:
    """The summary's `outside_overload`: each TOP_LEVEL figure whose part had a record an
    overloaded span reached, over the part's other records (None: no other)."""
    out: dict[str, OutsideOverload] = {}
    for name, (part, figure) in TOP_LEVEL.items():
        if part not in whole:
            continue
        n = whole[part]["acked"]
        left = kept.get(part)
        over = n - (left["acked"] if left else 0)
        if over > 0:
            out[name] = {
                "value": left[figure] if left else None,
                "whole": whole[part][figure],
                "samples": n,
                "overloaded_samples": over,
            }
    return out


def latency_summary(
    ledger: DataFrame, history: list[Event], has_history: bool, spans: Sequence[Span] = ()
) -> tuple[
    dict[str, dict[str, int]],
    dict[str, int | None],
    dict[str, str],
    dict[str, OutsideOverload],
]:
    """(figures per part, the TOP_LEVEL figures, why each None one is undecided, the
    figures outside the machine's overloaded `spans`)."""
    split = SendPeriods.of(history)
    periods = split.faulted
    scopes = latency_by_scope(ledger, periods, split.recovering, spans)
    parts, kept = scopes[WHOLE], scopes[OUTSIDE]
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
    return parts, top, undecided, outside_overload(parts, kept)


CHECK = Check(
    "latency",
    needs=("machine",),
    decides=("failed", *LATENCY_METRICS, "ack_latency", "outside_overload"),
    run=run,
)
