"""max_stall_s: per consumer set, the longest time records it had to read waited for it
(spark_jobs.checks_stall over each set's first consumptions). Runs in a lane of its own.

An incomplete drain: a set's last window then runs to `end` and is only a lower bound. The
value is still reported; it is undecided only when, for some set, that open final window
(with records still waiting) is the set's longest, because only then is the maximum itself
uncertain."""

from __future__ import annotations

from pyspark.sql import functions as F

from harness.results.metrics import Figures
from spark_jobs import checks_records as cr
from spark_jobs import checks_stall as cs
from spark_jobs import history_facts as hf
from spark_jobs import seq_blocks as sb
from spark_jobs.check import Check
from spark_jobs.context import NO_CONSUMED, NO_LEDGER, CellContext


def run(ctx: CellContext) -> Figures:
    data, sets = ctx.data, ctx.sets
    ledger, consumed = data.ledger, data.consumed
    firsts = ctx.firsts
    blocks = ctx.blocks
    if ledger is None or consumed is None or firsts is None or blocks is None:
        return {"undecided": {"max_stall_s": NO_LEDGER if ledger is None else NO_CONSUMED}}
    if not sets:
        return {"undecided": {"max_stall_s": "no consumer set ran"}}
    # Records every set must read: expected ones (`ok`, or of a committed transaction),
    # available from their ack (for a transaction's, its commit came later: an overstatement
    # of its stall by up to the transaction's length) and visible in the final log.
    ok = cr.expected_records(ledger).filter(F.col("ack_ts").isNotNull())
    if ctx.trusted_log is not None:  # the blocks' `v` bits: seqs the trusted final log shows
        ok = ok.withColumn(sb.K, sb.block()).join(F.broadcast(blocks.select(sb.K, "v")), sb.K)
        ok = ok.filter((F.col("v").bitwiseAND(sb.bit())) != 0)
    available = ok.select("seq", F.col("ack_ts").alias("av"))

    start = hf.workload_start(data.history)
    if start is None:
        start = ctx.sends[0]
    end = hf.drain_end(data.history)
    if end is None:
        last = consumed.agg(F.max("ts").alias("t")).first()
        end = None if last is None or last["t"] is None else int(last["t"])
    if start is None or end is None or end <= start:
        return {
            "undecided": {"max_stall_s": f"no measuring window (start={start}, end={end})"},
            "stalls_by_set": dict.fromkeys(sets),
        }

    intervals = cs.stall_frame(ctx.spark, available, firsts, sets, start, end).cache()
    steps = hf.operation_steps(data.history)
    within = cs.stalls_within(intervals, sets, [(s.start_ms, s.end_ms) for s in steps])
    best, windows, final_longest = cs.stalls(intervals, sets)
    out: Figures = {
        "stalls_by_set": dict(best),
        "stall_windows": windows,
        "max_stall_s": max(best.values()),
        "step_stalls": [
            {"fault_id": s.fault_id, "stall_s": w} for s, w in zip(steps, within, strict=True)
        ],
    }
    open_sets = [s for s in sets if final_longest[s]]
    if ctx.drain_reason is not None and open_sets:
        out["undecided"] = {
            "max_stall_s": f"{ctx.drain_reason}; the longest stall of {', '.join(open_sets)} "
            "is still open at the end, so the value is a lower bound"
        }
    return out


CHECK = Check(
    "stall",
    needs=("firsts", "blocks", "sets", "trusted_log", "sends", "drain_reason"),
    decides=("max_stall_s", "stalls_by_set", "stall_windows", "step_stalls"),
    run=run,
    lane="stall",
)
