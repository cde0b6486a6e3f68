"""output_duplicates, output_lost, output_aborted and the `pipeline` figures: a
consume-transform-produce pipeline's output topic against its input; the counts 0 and
`pipeline` {} in a cell that ran no pipeline.

The pipeline's members (consumer set "pipeline") read the input topic, which the other
checks already judge like any consumer set's; this one judges what they wrote. The output is
read at the end like the input's log (tables.OUTPUT): each row carries the input seq it came
from and where the member read it (input_partition, input_offset). The *visible* output rows
are those a read_committed reader sees (`committed`; read_parquet makes a null true, as for
the log): what a downstream read_committed consumer would take as the pipeline's result, so
an exactly-once pipeline is judged on them alone. All DataFrame operations; only counts and
small samples come back to Python.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from harness.results.events import PIPELINE_SET
from harness.results.metrics import Figures, PipelineFigures
from spark_jobs import history_facts as hf
from spark_jobs.cell_data import ABORTED, expected_records, visible
from spark_jobs.check import Check, combine, lower_bound
from spark_jobs.context import NO_LEDGER, CellContext

SAMPLE = 20


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
        dups = output_duplicates(output)
        parts.append({"output_duplicates_seqs_sample": sample(dups)})
        parts.append(lower_bound("output_duplicates", dups.count(), gaps))

    if ledger is None:
        undecided["output_aborted"] = NO_LEDGER
    elif not ctx.transactional:
        counts["output_aborted"] = 0  # the input has no aborted transaction to carry
    elif output is None:
        undecided["output_aborted"] = str(output_reason)
    else:
        aborted = output_aborted(ledger, output).count()
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
        lost = output_lost(ledger, log, output)
        counts["output_lost"] = lost.count()
        parts.append({"output_lost_seqs_sample": sample(lost)})

    if output_reason is not None or output is None:
        for name in ("output_records", "output_uncommitted"):
            undecided[f"pipeline.{name}"] = str(output_reason)
    else:
        figures["output_records"], figures["output_uncommitted"] = output_rows(output)
    mismatch_gaps = [r for r in (output_reason, ctx.log_reason) if r is not None]
    if mismatch_gaps or log is None or output is None:
        undecided["pipeline.origin_mismatch"] = "; ".join(mismatch_gaps)
    else:
        figures["origin_mismatch"] = origin_mismatch(output, log)
    return combine(*parts)


def visible_output(output: DataFrame) -> DataFrame:
    """The output rows a read_committed reader sees that name an input seq (a null seq names
    no input record: it can be neither a duplicate nor a record's output)."""
    return visible(output).filter(F.col("seq").isNotNull())


def output_duplicates(output: DataFrame) -> DataFrame:
    """Distinct input seqs at more than one (partition, offset) of the visible output: the
    same input record's result visible twice, an exactly-once violation (the same place read
    twice is one record, not two)."""
    places = visible_output(output).select("seq", "partition", "offset").distinct()
    return places.groupBy("seq").count().filter(F.col("count") > 1).select("seq")


def output_lost(ledger: DataFrame, log: DataFrame, output: DataFrame) -> DataFrame:
    """Distinct expected input seqs (cell_data.expected_records) that the input's final
    log shows (visible), so the pipeline could read them, yet no visible output row has: the
    pipeline dropped them. A record lost from the input is the input's `lost`, not this."""
    readable = (
        expected_records(ledger)
        .select("seq")
        .distinct()
        .join(visible(log).select("seq"), "seq", "left_semi")
    )
    return readable.join(visible_output(output).select("seq"), "seq", "left_anti")


def output_aborted(ledger: DataFrame, output: DataFrame) -> DataFrame:
    """Distinct seqs among the visible output that the ledger marks `aborted` (the input
    producer aborted their transaction): an aborted read carried downstream, Jepsen's G1a
    one hop later (the pipeline read it, then committed its result)."""
    aborted = ledger.filter(F.col("outcome") == ABORTED).select("seq").distinct()
    return visible_output(output).select("seq").distinct().join(aborted, "seq", "left_semi")


def output_rows(output: DataFrame) -> tuple[int, int]:
    """(visible output rows, rows not visible) in one pass: a transactional pipeline's
    aborted transactions leave the second kind, which no read_committed reader sees."""
    row = output.agg(
        F.coalesce(F.sum(F.when(F.col("committed"), 1).otherwise(0)), F.lit(0)).alias("shown"),
        F.coalesce(F.sum(F.when(F.col("committed"), 0).otherwise(1)), F.lit(0)).alias("hidden"),
    ).first()
    assert row is not None  # a global aggregate always has one row
    return int(row["shown"]), int(row["hidden"])


def origin_mismatch(output: DataFrame, log: DataFrame) -> int:
    """Visible output rows whose (input_partition, input_offset) is not a place where the
    input log (visible or not: a read_uncommitted member may read an aborted record) holds
    their seq: the provenance the member wrote is wrong. Only rows whose seq the log holds
    at all count (one the log lacks is the input's `lost`, not a provenance error); a null
    input place never matches, so it counts."""
    places = log.select(
        "seq",
        F.col("partition").alias("input_partition"),
        F.col("offset").alias("input_offset"),
    ).distinct()
    rows = visible_output(output).join(log.select("seq").distinct(), "seq", "left_semi")
    return rows.join(places, ["seq", "input_partition", "input_offset"], "left_anti").count()


def sample(seqs: DataFrame, n: int = SAMPLE) -> list[int]:
    """Up to n seqs, lowest first."""
    return [int(r["seq"]) for r in seqs.orderBy("seq").limit(n).collect()]


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
