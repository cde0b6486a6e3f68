"""output_duplicates, output_lost, output_aborted and the `pipeline` figures
(spark_jobs.checks_pipeline); the counts 0 and `pipeline` {} in a cell that ran no pipeline."""

from __future__ import annotations

from harness.results.events import PIPELINE_SET
from harness.results.metrics import Figures, PipelineFigures
from spark_jobs import checks_pipeline as cp
from spark_jobs import history_facts as hf
from spark_jobs.check import Check, combine, lower_bound
from spark_jobs.context import NO_LEDGER, CellContext


def run(ctx: CellContext) -> Figures:
    data = ctx.data
    started = hf.pipeline(data.history)
    if started is None:
        return {"counts": {"output_duplicates": 0, "output_lost": 0, "output_aborted": 0}}
    ledger, log, output = data.ledger, data.log, data.output
    output_reason = hf.output_undecided(data.history, output is not None)
    if output_reason is not None:
        output_reason += ctx.history_note
    figures: PipelineFigures = {
        "guarantee": started.get("guarantee"),
        "output_records": None,
        "output_uncommitted": None,
        "origin_mismatch": None,
    }
    counts: dict[str, int | None] = {}
    undecided: dict[str, str] = {}
    parts: list[Figures] = [{"counts": counts, "undecided": undecided, "pipeline": figures}]
    # What a partial read of the output shows is still there: a seq at two visible places,
    # or an aborted seq visible, stands as a lower bound; a zero says nothing.
    gaps = [] if output_reason is None else [output_reason]

    if output is None:
        undecided["output_duplicates"] = str(output_reason)
    else:
        dups = cp.output_duplicates(output)
        parts.append({"output_duplicates_seqs_sample": cp.sample(dups)})
        parts.append(lower_bound("output_duplicates", dups.count(), gaps))

    if ledger is None:
        undecided["output_aborted"] = NO_LEDGER
    elif not ctx.transactional:
        counts["output_aborted"] = 0  # the input has no aborted transaction to carry
    elif output is None:
        undecided["output_aborted"] = str(output_reason)
    else:
        aborted = cp.output_aborted(ledger, output).count()
        parts.append(lower_bound("output_aborted", aborted, gaps))

    # A record missing from the output is lost only if the whole output was read, the input
    # log shows the record and the pipeline reached the input's end: no lower bound.
    drain_reason = ctx.drain_reason
    if hf.set_drained(data.history, PIPELINE_SET):
        drain_reason = None  # the pipeline got to the end; another set was behind
    lost_gaps = [] if ledger is not None else [NO_LEDGER]
    lost_gaps += [r for r in (output_reason, ctx.log_reason, drain_reason) if r is not None]
    if lost_gaps or ledger is None or log is None or output is None:
        undecided["output_lost"] = "; ".join(lost_gaps)
    else:
        lost = cp.output_lost(ledger, log, output)
        counts["output_lost"] = lost.count()
        parts.append({"output_lost_seqs_sample": cp.sample(lost)})

    if output_reason is not None or output is None:
        for name in ("output_records", "output_uncommitted"):
            undecided[f"pipeline.{name}"] = str(output_reason)
    else:
        figures["output_records"], figures["output_uncommitted"] = cp.output_rows(output)
    mismatch_gaps = [r for r in (output_reason, ctx.log_reason) if r is not None]
    if mismatch_gaps or log is None or output is None:
        undecided["pipeline.origin_mismatch"] = "; ".join(mismatch_gaps)
    else:
        figures["origin_mismatch"] = cp.origin_mismatch(output, log)
    return combine(*parts)


CHECK = Check(
    "pipeline",
    needs=("transactional", "log_reason", "drain_reason", "history_note"),
    decides=(
        "output_duplicates",
        "output_lost",
        "output_aborted",
        "pipeline",
        "output_duplicates_seqs_sample",
        "output_lost_seqs_sample",
    ),
    run=run,
)
