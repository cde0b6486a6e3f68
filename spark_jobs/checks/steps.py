"""operation_steps: what each step of an operation cost the workload (a review).

An operation that works node by node (an upgrade) writes each node's window with `step_of`;
the question an operator asks is per step: how long did writes stop and the group stall
while this node went. From the history's step windows, the availability check's ack gaps
and the stall check's `step_stalls`; a figure another check left undecided stays None."""

from __future__ import annotations

from harness.results.metrics import Figures, OperationStep
from spark_jobs import history_facts as hf
from spark_jobs.check import REVIEW, Check
from spark_jobs.context import CellContext


def overlap_ms(windows: list[tuple[int, int]], start: int, end: int) -> int:
    """How much of [start, end) the windows cover (they do not overlap each other)."""
    return sum(max(0, min(b, end) - max(a, start)) for a, b in windows)


def run(ctx: CellContext) -> Figures:
    steps = hf.operation_steps(ctx.data.history)
    if not steps:
        return {}
    gaps = ctx.summary.get("unavailable_windows")
    stalls = {s["fault_id"]: s["stall_s"] for s in ctx.summary.get("step_stalls") or []}
    out: list[OperationStep] = []
    for s in steps:
        unavailable = (
            None
            if gaps is None
            else overlap_ms([(w["start_ms"], w["end_ms"]) for w in gaps], s.start_ms, s.end_ms)
            / 1000.0
        )
        out.append(
            {
                "fault_id": s.fault_id,
                "step_of": s.step_of,
                "fault": s.fault,
                "target": s.target,
                "phase": s.phase,
                "start_ms": s.start_ms,
                "end_ms": s.end_ms,
                "down_s": None if s.down_ms is None else s.down_ms / 1000.0,
                "unavailable_s": unavailable,
                "stall_s": stalls.get(s.fault_id),
            }
        )
    return {"operation_steps": out}


CHECK = Check("steps", needs=("summary",), decides=("operation_steps",), run=run, lane=REVIEW)
