"""aborted_read and torn_transaction (spark_jobs.checks_txn); both 0 without a transactional
row."""

from __future__ import annotations

from harness.results.metrics import Figures
from spark_jobs import checks_txn as ct
from spark_jobs.check import Check, combine, lower_bound
from spark_jobs.context import NO_LEDGER, CellContext


def run(ctx: CellContext) -> Figures:
    data, sets = ctx.data, ctx.sets
    ledger, log = data.ledger, data.log
    if ledger is None:
        return {"undecided": dict.fromkeys(("aborted_read", "torn_transaction"), NO_LEDGER)}
    if not ctx.transactional:
        return {
            "counts": {"aborted_read": 0, "torn_transaction": 0},
            "aborted_consumed_by_set": dict.fromkeys(sets, 0),
        }
    undecided: dict[str, str] = {}
    out: Figures = {"undecided": undecided, "transactions": ct.transactions(ledger)}
    if data.consumed is not None:
        counted = ct.aborted_consumed_by_set(ledger, data.consumed, sets)
        by_set: dict[str, int | None] = dict(counted)
        if ctx.drain_reason is not None:
            # A set that never reached the end may not have come to them yet: a count
            # stands as a lower bound, a zero says nothing.
            by_set = {k: v if v > 0 else None for k, v in counted.items()}
            undecided["aborted_consumed"] = f"{ctx.drain_reason}: per-set counts are lower bounds"
        out["aborted_consumed_by_set"] = by_set
    pairs = ct.aborted_reads(ledger, data.consumed, log, ctx.read_committed)
    found, out["aborted_read_by_set"], out["aborted_read_seqs_sample"] = ct.aborted_read_summary(
        pairs
    )
    gaps = [] if ctx.log_reason is None else [ctx.log_reason]
    if data.consumed is None and ctx.read_committed:
        gaps.append("consumed.parquet missing")
    torn: Figures = {}
    if ctx.log_reason is not None or log is None:
        torn = {"undecided": {"torn_transaction": str(ctx.log_reason)}}
    else:
        count, sample = ct.torn_summary(ct.torn_transactions(ledger, log))
        torn = {"counts": {"torn_transaction": count}, "torn_transactions_sample": sample}
    return combine(out, lower_bound("aborted_read", found, gaps), torn)


CHECK = Check(
    "transactions",
    needs=("transactional", "sets", "read_committed", "log_reason", "drain_reason"),
    decides=(
        "aborted_read",
        "torn_transaction",
        "transactions",
        "aborted_consumed",
        "aborted_consumed_by_set",
        "aborted_read_by_set",
        "aborted_read_seqs_sample",
        "torn_transactions_sample",
    ),
    run=run,
)
