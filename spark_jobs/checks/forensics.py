"""lost_where: where each lost record went (never_appended, truncated, deleted, unknown),
from the brokers' copies of the topic and the truncations the brokers logged
(spark_jobs.checks_forensics). A review: it places
the records the records check counted as `lost`, after the evidence check had its say, so
`lost_where` is undecided exactly when `lost` is (its counts add up to `lost`)."""

from __future__ import annotations

from harness.results.metrics import Figures
from spark_jobs import checks_forensics as cf
from spark_jobs.check import REVIEW, Check
from spark_jobs.context import CellContext

KEYS = ("lost_where", "lost_where_reasons", "lost_where_sample")


def run(ctx: CellContext) -> Figures:
    lost = (ctx.summary.get("counts") or {}).get("lost")
    if lost is None:
        why = (ctx.summary.get("undecided") or {}).get("lost", "lost is undecided")
        return {"lost_where": None, "undecided": {"lost_where": f"lost undecided ({why})"}}
    if lost == 0:
        return {"lost_where": dict.fromkeys(cf.PLACES, 0)}
    ledger, log = ctx.data.ledger, ctx.trusted_log
    assert ledger is not None and log is not None  # lost was decided from them
    segments = cf.segments_frame(ctx.spark, ctx.cell_dir)
    facts = cf.copy_facts(ctx.data.history, segments is not None)
    starts = {} if facts.topic is None else cf.final_starts(ctx.cell_dir, facts.topic)
    logs = cf.log_truncations(ctx.cell_dir, ctx.data.history, facts.topic)
    lost_rows = cf.lost_records(ledger, log)
    rows = cf.placed(ctx.spark, lost_rows, segments, facts, starts, logs).cache()
    try:
        out = cf.summarise(rows)
    finally:
        rows.unpersist()
    placed = sum(out["lost_where"].values())
    if placed != lost:
        reason = f"placed {placed} lost records, but lost = {lost}"
        return {"lost_where": None, "undecided": {"lost_where": reason}}
    return out  # type: ignore[return-value]


CHECK = Check("forensics", needs=("summary",), decides=KEYS, run=run, lane=REVIEW)
