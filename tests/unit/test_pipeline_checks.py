"""The pipeline's output checks on hand-built cells whose answers are known by construction
(spark_jobs/checks/pipeline.py)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from harness.results import events
from harness.results.metrics import COUNT_NAMES
from harness.results.tables import OUTPUT, write_table
from harness.spec.expect import ALLOWED_METRICS, parse_bound
from harness.verdict.checks import evaluate
from spark_jobs.history_facts import output_undecided, pipeline
from tests.unit.test_txn_checks import tled
from tests.unit.test_verify import Row, T, ev, led, write_cell

pytestmark = [
    pytest.mark.spark,
    pytest.mark.skipif(
        shutil.which("java") is None and not os.environ.get("JAVA_HOME"),
        reason="Spark needs a Java runtime (java on PATH or JAVA_HOME); none found",
    ),
]

PIPELINE_COUNTS = ("output_duplicates", "output_lost", "output_aborted")
FIGURES = ("output_records", "output_uncommitted", "origin_mismatch")


def verify(spark: Any, cell: Path) -> dict[str, Any]:
    from spark_jobs.verify import verify_cell

    return verify_cell(spark, cell)


def out(seq: int | None, o: int, committed: bool = True, src: tuple[Any, Any] | None = None) -> Row:
    """An output row at (0, o); its input place is (0, seq - 1) unless `src` says."""
    p, io = src if src is not None else (0, None if seq is None else seq - 1)
    return (seq, 0, o, committed, p, io)


def write_output(root: Path, rows: list[Row]) -> None:
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in OUTPUT.names]
    write_table(root / "output.parquet", OUTPUT, dict(zip(OUTPUT.names, columns, strict=True)))


def pipeline_history(
    *,
    has_pipeline: bool = True,
    guarantee: str = "exactly-once",
    reads: dict[str, bool] | None = None,
    drained: bool = True,
    log_complete: bool = True,
    lag: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The workload, the pipeline's start and member, the drain, the input's final read and
    one output.read per isolation level (`reads`: isolation -> complete)."""
    end = T + 10_000
    start = [
        ev(
            T,
            events.PIPELINE_START,
            output="out",
            input="in",
            group="pipeline",
            guarantee=guarantee,
            members=1,
        )
    ]
    if reads is None:
        reads = {events.READ_UNCOMMITTED: True, events.READ_COMMITTED: True}
    return [
        ev(T, "phase", phase="workload"),
        *(start if has_pipeline else []),
        ev(T, "consumer.start", consumer="pipeline/m0", isolation=events.READ_COMMITTED),
        ev(end, "drain.end", complete=drained, lag=lag or {}),
        ev(end + 1, "log.read", complete=log_complete, records=0),
        *(
            ev(end + 2, events.OUTPUT_READ, topic="out", isolation=i, complete=c, records=0)
            for i, c in reads.items()
        ),
    ]


# The input: seqs 1..6 at partition 0, offsets 0..5, all acked; the pipeline read them all.
LEDGER = [led(s, o=s - 1, ack=T + s) for s in range(1, 7)]
LOG = [(s, 0, s - 1) for s in range(1, 7)]
CONSUMED = [(s, 0, s - 1, "pipeline/m0", T + 100 + s, 1) for s in range(1, 7)]
CLEAN = [out(s, s - 1) for s in range(1, 7)]


def pipeline_cell(
    root: Path,
    output: list[Row] | None = CLEAN,
    ledger: list[Row] = LEDGER,
    log: list[Row] = LOG,
    consumed: list[Row] = CONSUMED,
    **history: Any,
) -> Path:
    events_ = [
        {**e, "records": len(output)}
        if output is not None
        and e["kind"] == events.OUTPUT_READ
        and e.get("isolation") == events.READ_UNCOMMITTED
        else e
        for e in pipeline_history(**history)
    ]  # as a run writes it: the read that wrote output.parquet counts its rows
    write_cell(root, ledger, consumed, log, [], events_)
    if output is not None:
        write_output(root, output)
    return root


def counts_of(result: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(result["counts"][n] for n in PIPELINE_COUNTS)


# --- history facts ------------------------------------------------------------------------


def test_pipeline_facts_from_the_history() -> None:
    history = pipeline_history(guarantee="at-least-once")
    assert pipeline(history) == {
        "output": "out",
        "input": "in",
        "group": "pipeline",
        "guarantee": "at-least-once",
        "members": 1,
    }
    assert pipeline(pipeline_history(has_pipeline=False)) is None
    assert output_undecided(history, True) is None
    assert output_undecided(history, False) == "output.parquet missing"
    no_read = [e for e in history if e["kind"] != events.OUTPUT_READ]
    assert output_undecided(no_read, True) == "no output.read event in history.jsonl"
    partial = pipeline_history(reads={events.READ_UNCOMMITTED: True, events.READ_COMMITTED: False})
    reason = output_undecided(partial, True)
    assert reason is not None and "incomplete" in reason and "read_committed" in reason
    unsaid = pipeline_history(reads={events.READ_UNCOMMITTED: True})
    unsaid[-1].pop("complete")
    assert "complete=null" in str(output_undecided(unsaid, True))


def test_count_names_appended_last_and_bounded_like_any_count() -> None:
    assert COUNT_NAMES[-3:] == PIPELINE_COUNTS
    assert set(PIPELINE_COUNTS) <= set(ALLOWED_METRICS)
    summary = {
        "counts": {"output_duplicates": 0, "output_lost": None, "output_aborted": 2},
        "undecided": {"output_lost": "final drain incomplete"},
    }
    expect = {name: parse_bound(0) for name in PIPELINE_COUNTS}
    checks = {c.name: c for c in evaluate(expect, summary)}
    assert [checks[n].verdict for n in PIPELINE_COUNTS] == ["pass", "unknown", "fail"]
    assert "final drain incomplete" in checks["output_lost"].detail


# --- cells ---------------------------------------------------------------------------------


def test_a_clean_exactly_once_pipeline(tmp_path: Path, spark: Any) -> None:
    result = verify(spark, pipeline_cell(tmp_path))
    assert counts_of(result) == (0, 0, 0)
    assert result["pipeline"] == {
        "guarantee": "exactly-once",
        "output_records": 6,
        "output_uncommitted": 0,
        "origin_mismatch": 0,
    }
    assert result["output_duplicates_seqs_sample"] == []
    assert result["output_lost_seqs_sample"] == []
    undecided = result["undecided"]
    assert not set(PIPELINE_COUNTS) & set(undecided)
    assert not [k for k in undecided if k.startswith("pipeline")]
    # The members are an ordinary consumer set of the input.
    assert result["lost_never_consumed_by_set"] == {"pipeline": 0}
    assert result["counts"]["lost"] == 0 and result["counts"]["duplicated"] == 0


DUPLICATES = [*CLEAN, out(2, 6), out(4, 7), out(4, 8)]


def test_duplicates_count_seqs_at_more_than_one_visible_place(tmp_path: Path, spark: Any) -> None:
    # Seq 2 written twice, seq 4 three times: two seqs.
    result = verify(spark, pipeline_cell(tmp_path, DUPLICATES, guarantee="at-least-once"))
    assert counts_of(result) == (2, 0, 0)
    assert result["output_duplicates_seqs_sample"] == [2, 4]
    assert result["pipeline"] == {
        "guarantee": "at-least-once",
        "output_records": 9,
        "output_uncommitted": 0,
        "origin_mismatch": 0,
    }


def test_a_copy_left_by_an_aborted_pipeline_transaction_is_no_duplicate(
    tmp_path: Path, spark: Any
) -> None:
    result = verify(spark, pipeline_cell(tmp_path, [*CLEAN, out(3, 6, committed=False)]))
    assert counts_of(result) == (0, 0, 0)
    figures = result["pipeline"]
    assert (figures["output_records"], figures["output_uncommitted"]) == (6, 1)


def test_lost_counts_what_the_input_showed_and_the_output_does_not(
    tmp_path: Path, spark: Any
) -> None:
    # Seq 5 has no output row, seq 6 only an uncommitted one: both lost by the pipeline.
    # Seq 7 is acked but absent from the input log: the input's `lost`, not the pipeline's.
    output = [*CLEAN[:4], out(6, 5, committed=False)]
    ledger = [*LEDGER, led(7, o=6, ack=T + 7)]
    result = verify(spark, pipeline_cell(tmp_path, output, ledger=ledger))
    assert counts_of(result) == (0, 2, 0)
    assert result["output_lost_seqs_sample"] == [5, 6]
    assert result["counts"]["lost"] == 1 and result["lost_seqs_sample"] == [7]
    assert result["pipeline"]["output_uncommitted"] == 1


# Input: transaction 1 (seqs 1, 2) committed, transaction 2 (seqs 3, 4) aborted; offset 2
# holds transaction 1's marker. A read_uncommitted member carried seq 3 into the output.
TXN_LEDGER = [
    tled(1, 1, "committed", 0),
    tled(2, 1, "committed", 1),
    tled(3, 2, "aborted", 3),
    tled(4, 2, "aborted", 4),
]
TXN_LOG = [(1, 0, 0, True), (2, 0, 1, True), (3, 0, 3, False), (4, 0, 4, False)]
TXN_CONSUMED = [(s, 0, o, "pipeline/m0", T + 100 + s, 1) for s, _, o, _ in TXN_LOG]
TXN_OUTPUT = [
    out(1, 0, src=(0, 0)),
    out(2, 1, src=(0, 1)),
    out(3, 2, src=(0, 3)),  # an aborted input record, visible downstream
    out(4, 3, committed=False, src=(0, 4)),  # not visible: not counted
]


def txn_pipeline_cell(root: Path, **history: Any) -> Path:
    return pipeline_cell(
        root, TXN_OUTPUT, ledger=TXN_LEDGER, log=TXN_LOG, consumed=TXN_CONSUMED, **history
    )


def test_an_aborted_input_record_carried_to_the_output(tmp_path: Path, spark: Any) -> None:
    result = verify(spark, txn_pipeline_cell(tmp_path))
    assert counts_of(result) == (0, 0, 1)
    # Seq 3's provenance is where the log holds it, though not visibly: no mismatch.
    assert result["pipeline"] == {
        "guarantee": "exactly-once",
        "output_records": 3,
        "output_uncommitted": 1,
        "origin_mismatch": 0,
    }


def test_origin_mismatch(tmp_path: Path, spark: Any) -> None:
    output = [
        out(1, 0),
        out(2, 1, src=(0, 4)),  # the log holds seq 2 at (0, 1)
        out(3, 2, src=(None, None)),  # no provenance at all
        out(4, 3, src=(1, 3)),  # another partition
        out(5, 4, committed=False, src=(0, 0)),  # not visible: not counted
        out(5, 5),
        out(6, 6),
        out(99, 7, src=(0, 0)),  # a seq the input log lacks: not counted
    ]
    result = verify(spark, pipeline_cell(tmp_path, output))
    assert result["pipeline"]["origin_mismatch"] == 3
    assert result["pipeline"]["output_records"] == 7
    assert counts_of(result) == (0, 0, 0)


def test_an_incomplete_output_read(tmp_path: Path, spark: Any) -> None:
    partial = {events.READ_UNCOMMITTED: True, events.READ_COMMITTED: False}
    clean = verify(spark, pipeline_cell(tmp_path / "clean", reads=partial))
    counts, undecided = clean["counts"], clean["undecided"]
    assert counts_of(clean) == (None, None, 0)  # no aborted input transaction to carry
    for name in ("output_duplicates", "output_lost"):
        assert "final output read incomplete" in undecided[name], name
        assert "isolation=read_committed" in undecided[name]
    assert clean["pipeline"] == {"guarantee": "exactly-once", **dict.fromkeys(FIGURES)}
    for name in FIGURES:
        assert "incomplete" in undecided[f"pipeline.{name}"], name
    assert counts["lost"] == 0  # the input's checks stand

    # What the partial read shows is there: a count stands as a lower bound.
    dups = verify(spark, pipeline_cell(tmp_path / "dups", DUPLICATES, reads=partial))
    assert dups["counts"]["output_duplicates"] == 2
    assert "lower bound" in dups["undecided"]["output_duplicates"]
    aborted = verify(spark, txn_pipeline_cell(tmp_path / "txn", reads=partial))
    assert aborted["counts"]["output_aborted"] == 1
    assert "lower bound" in aborted["undecided"]["output_aborted"]


def test_no_output_read_or_no_output_file(tmp_path: Path, spark: Any) -> None:
    result = verify(spark, pipeline_cell(tmp_path / "a", reads={}))
    assert counts_of(result) == (None, None, 0)
    assert "no output.read event" in result["undecided"]["output_duplicates"]
    missing = verify(spark, txn_pipeline_cell(tmp_path / "b", reads={}))
    assert missing["counts"]["output_aborted"] == 1  # a lower bound: the read is unconfirmed
    result = verify(spark, pipeline_cell(tmp_path / "c", None))
    assert counts_of(result) == (None, None, 0)
    for name in ("output_duplicates", "output_lost", "pipeline.origin_mismatch"):
        assert result["undecided"][name] == "output.parquet missing", name
    assert result["pipeline"]["guarantee"] == "exactly-once"


def test_an_incomplete_drain_undecides_output_lost_only(tmp_path: Path, spark: Any) -> None:
    output = CLEAN[:4]  # 5 and 6 not (yet) written: the pipeline may not have got there
    result = verify(spark, pipeline_cell(tmp_path, output, drained=False))
    assert counts_of(result) == (0, None, 0)
    assert "final drain incomplete" in result["undecided"]["output_lost"]
    assert result["output_lost_seqs_sample"] == []
    assert result["pipeline"]["output_records"] == 4


def test_a_drain_left_behind_by_another_set_still_decides_output_lost(
    tmp_path: Path, spark: Any
) -> None:
    """The pipeline reached the input's end (its lag 0 in drain.end); a group did not."""
    lag = {"group": {"0": 3}, "pipeline": {"0": 0}}
    result = verify(spark, pipeline_cell(tmp_path / "a", CLEAN[:4], drained=False, lag=lag))
    assert counts_of(result) == (0, 2, 0)
    assert result["output_lost_seqs_sample"] == [5, 6]
    behind = {"group": {"0": 0}, "pipeline": {"0": 2}}
    result = verify(spark, pipeline_cell(tmp_path / "b", CLEAN[:4], drained=False, lag=behind))
    assert counts_of(result) == (0, None, 0)


def test_an_incomplete_input_log_undecides_output_lost_and_origin(
    tmp_path: Path, spark: Any
) -> None:
    result = verify(spark, pipeline_cell(tmp_path, log_complete=False))
    assert counts_of(result) == (0, None, 0)
    undecided = result["undecided"]
    assert "final log read incomplete" in undecided["output_lost"]
    assert "final log read incomplete" in undecided["pipeline.origin_mismatch"]
    assert result["pipeline"]["output_records"] == 6


def test_a_cell_without_a_pipeline(tmp_path: Path, spark: Any) -> None:
    # Even with an output file about (it is not read as anything's output).
    result = verify(spark, pipeline_cell(tmp_path, DUPLICATES, has_pipeline=False, reads={}))
    assert counts_of(result) == (0, 0, 0)
    assert result["pipeline"] == {}
    assert result["output_duplicates_seqs_sample"] == []
    assert result["output_lost_seqs_sample"] == []
    assert not set(PIPELINE_COUNTS) & set(result["undecided"])
    assert list(result["counts"]) == list(COUNT_NAMES)
