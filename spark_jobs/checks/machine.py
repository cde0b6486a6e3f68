"""machine: how loaded the machine was during the cell, and which timing figures that leaves
undecided (a review: it reads the stall windows the stall check merged).

From `machine.parquet` (harness.results.machine): the summary's `machine` (scheduling lag
p50 / p99 / max, seconds overloaded, load and steal highs, throttled seconds) and
`overloaded`: timing figure -> why the machine, not Kafka, may have made it, each figure by
its own rule (harness.results.overload_rules.RULES), over the windows it knows, those other checks
recorded under `timing_windows` (a maximum's own), and the latency check's
`outside_overload` (the ack figures' samples). The figures themselves stand; the verdict
reads `overloaded` and judges those figures `unknown`. A cell without the table (from before
the sampler) has neither key: nothing is excused."""

from __future__ import annotations

from harness.results.machine import (
    machine_summary,
)
from harness.results.metrics import Figures
from harness.results.overload_rules import (
    figure_windows,
    overloaded_figures,
    recorded_windows,
)
from harness.results.windows import fault_windows
from spark_jobs import history_facts as hf
from spark_jobs.check import REVIEW, Check
from spark_jobs.context import CellContext


def run(ctx: CellContext) -> Figures:
    machine = ctx.machine
    if machine is None or machine.ts_ms.size == 0:
        return {}
    out: Figures = {"machine": machine_summary(machine)}
    history = ctx.data.history
    first, last = ctx.sends
    start = hf.workload_start(history) or first
    end = hf.drain_end(history) or last
    if start is None or end is None or end <= start:
        return out
    faults = [
        (w.start_ms, end if w.end_ms is None else w.end_ms)
        for w in fault_windows(history)
        if not w.consumer_crash
    ]
    windows = figure_windows(
        (start, end), faults, ctx.summary.get("stall_windows") or [], sorted(ctx.sets)
    )
    windows.update(recorded_windows(ctx.summary.get("timing_windows") or {}))
    sampled = ctx.summary.get("outside_overload") or {}
    out["overloaded"] = overloaded_figures(machine, windows, sampled)
    return out


CHECK = Check(
    "machine",
    needs=("summary", "sets", "sends", "machine"),
    decides=("machine", "overloaded"),
    run=run,
    lane=REVIEW,
)
