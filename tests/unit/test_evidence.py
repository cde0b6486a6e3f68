"""The `evidence` check: tables held to what the history says was written and read.

Hand-built histories and row counts for the rule itself (no Spark); two hand-built folders
through verify_cell and the verdict for the whole path (the issue's emptied ledger and its
duplicated seqs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.results.metrics import COUNT_NAMES
from harness.spec import expand_cells, load_spec
from harness.verdict.cell_verdict import summarize
from spark_jobs.checks.evidence import Disagreement, disagreements, undecide
from tests.unit.test_verify import T, complete_history, ev, led, verify, write_cell

END = ev(T + 9000, "producer.end", attempted=22_500, acked=22_500, failed=0, undelivered=0)
READ = ev(T + 9500, "log.read", complete=True, records=22_500, isolation="read_uncommitted")
ROWS: dict[str, int | None] = {
    "ledger": 22_500,
    "consumed": 22_500,
    "commits": 40,
    "log": 22_500,
    "output": None,
}
WRITTEN = ev(
    T + 9600,
    "tables.written",
    ledger=22_500,
    consumed=22_500,
    commits=40,
    log=22_500,
    consumed_by={"group/m0": 12_000, "group/m1": 10_500},
)
BY_CONSUMER = {"group/m0": 12_000, "group/m1": 10_500}


def reasons(
    history: list[dict[str, Any]],
    rows: dict[str, int | None] | None = None,
    acked: int | None = 22_500,
    duplicates: int = 0,
    by_consumer: dict[str, int] | None = None,
) -> list[str]:
    bad, _ = disagreements(
        history,
        {**ROWS, **(rows or {})},
        {"acked": acked},
        duplicates,
        BY_CONSUMER if by_consumer is None else by_consumer,
    )
    return [f"{d.table}: {d.reason}" for d in bad]


def test_a_folder_that_agrees_with_its_history_has_no_disagreement() -> None:
    bad, compared = disagreements([END, READ, WRITTEN], ROWS, {"acked": 22_500}, 0, BY_CONSUMER)
    assert bad == []
    assert compared == [
        "ledger 22500 rows = producer.end attempted 22500",
        "acked 22500 = producer.end acked 22500",
        "log 22500 rows = log.read records",
        "every table's rows = tables.written",
    ]


@pytest.mark.parametrize(
    ("history", "rows", "acked", "duplicates", "by_consumer", "said"),
    [
        # The emptied ledger: 0 rows, producer.end says 22,500.
        (
            [END, READ],
            {"ledger": 0},
            0,
            0,
            None,
            "ledger: ledger.parquet has 0 rows, producer.end says 22500 attempted",
        ),
        # 1,000 seqs written twice: "acked 23,500".
        (
            [END, READ],
            {"ledger": 23_500},
            23_500,
            1000,
            None,
            "ledger: 1000 seq(s) appear in the ledger twice",
        ),
        (
            [END, READ],
            None,
            22_400,
            0,
            None,
            "ledger: the ledger has 22400 records acked, producer.end says 22500",
        ),
        # Every table emptied together still disagrees with the history.
        (
            [END, READ],
            {"ledger": 0, "log": 0, "consumed": 0, "commits": 0},
            0,
            0,
            None,
            "log: log.parquet has 0 rows, log.read says 22500 read",
        ),
        (
            [END, READ, WRITTEN],
            {"commits": 0},
            22_500,
            0,
            None,
            "commits: commits.parquet has 0 rows, tables.written says 40 written",
        ),
        (
            [END, READ, WRITTEN],
            None,
            22_500,
            0,
            {"group/m0": 12_000},
            "consumed: consumed.parquet has 0 rows of group/m1, tables.written says 10500 written",
        ),
        (
            [READ],
            None,
            22_500,
            0,
            None,
            "ledger: ledger.parquet has 22500 rows, no producer.end says how many were sent",
        ),
    ],
)
def test_tables_that_disagree_with_the_history_are_named_with_both_numbers(
    history: list[dict[str, Any]],
    rows: dict[str, int | None] | None,
    acked: int,
    duplicates: int,
    by_consumer: dict[str, int] | None,
    said: str,
) -> None:
    assert said in reasons(history, rows, acked, duplicates, by_consumer)


def test_a_killed_producer_incarnation_leaves_rows_no_end_counts() -> None:
    """producer-crash: the killed incarnation said nothing; the ledger holds at least what
    the ends say, and fewer is still a disagreement."""
    launches = [ev(T, "producer.launch", producer=f"p{k}", pid=k) for k in (1, 2)]
    end = ev(T + 9000, "producer.end", attempted=12_000, acked=12_000)
    assert reasons([*launches, end, READ]) == []
    assert reasons([*launches, end, READ], {"ledger": 11_000}) == [
        "ledger: ledger.parquet has 11000 rows, producer.end says 12000 attempted"
    ]
    assert reasons([*launches, READ]) == []  # every incarnation killed: nothing said


def test_the_final_read_of_a_transactional_topic_is_held_to_its_read_uncommitted_event() -> None:
    committed = ev(T + 9501, "log.read", complete=True, records=20_000, isolation="read_committed")
    assert reasons([END, READ, committed]) == []
    incomplete = {**READ, "complete": False, "records": 5}
    assert reasons([END, incomplete]) == []  # already undecided by log.read itself


def test_a_disagreement_undecides_the_figures_its_table_feeds() -> None:
    out: dict[str, Any] = {
        "counts": dict.fromkeys(COUNT_NAMES, 0),
        "undecided": {},
        "max_stall_s": 1.0,
        "unavailable_s": 0.0,
        "stalls_by_set": {"group": 1.0},
    }
    undecide(out, [Disagreement("output", "output.parquet has 1 rows, output.read says 2")])
    assert out["counts"]["output_lost"] is None and out["counts"]["lost"] == 0
    undecide(out, [Disagreement("consumed", "consumed.parquet has 0 rows of group/m0")])
    assert out["counts"]["reprocessed"] is None and out["max_stall_s"] is None
    assert out["counts"]["acked"] == 0 and out["unavailable_s"] == 0.0
    assert out["stalls_by_set"] == {}
    undecide(out, [Disagreement("ledger", "ledger.parquet has 0 rows, producer.end says 9")])
    assert all(v is None for v in out["counts"].values()) and out["unavailable_s"] is None
    assert out["undecided"]["lost"] == "evidence: ledger.parquet has 0 rows, producer.end says 9"


def _verdict(tmp_path: Path, cell_dir: Path, metrics: dict[str, Any]) -> dict[str, Any]:
    spec = tmp_path / "spec.yaml"
    spec.write_text("name: evidence\nproducer: {records: 10}\nexpect: {lost: 0, duplicated: 0}\n")
    [cell] = expand_cells(load_spec(spec))
    return summarize(cell, cell_dir, metrics)


def test_an_emptied_ledger_is_unknown_not_pass(tmp_path: Path, spark: Any) -> None:
    """The issue's case through the checks and the verdict: before, acked 0, lost 0: pass."""
    history = [*complete_history(), ev(T + 9000, "producer.end", attempted=10, acked=10)]
    cell = write_cell(tmp_path / "cell", [], [], [(i, 0, i) for i in range(10)], [], history)
    metrics = verify(spark, cell)
    assert metrics["counts"]["lost"] is None and metrics["counts"]["acked"] is None
    assert metrics["evidence"]["disagreements"] == [
        "ledger.parquet has 0 rows, producer.end says 10 attempted",
        "the ledger has 0 records acked, producer.end says 10",
    ]
    summary = _verdict(tmp_path, cell, metrics)
    checks = {c["name"]: c for c in summary["checks"]}
    assert checks["evidence"]["verdict"] == "unknown"
    assert checks["lost"]["verdict"] == "unknown"
    assert summary["verdict"] == "unknown"


def test_duplicated_ledger_seqs_are_a_damaged_folder(tmp_path: Path, spark: Any) -> None:
    ledger = [led(i, o=i, ack=T + 10 + i) for i in range(10)]
    ledger += [led(i, o=i, ack=T + 10 + i) for i in range(3)]  # seqs 0-2 twice
    history = [*complete_history(), ev(T + 9000, "producer.end", attempted=13, acked=13)]
    cell = write_cell(tmp_path / "cell", ledger, [], [(i, 0, i) for i in range(10)], [], history)
    metrics = verify(spark, cell)
    assert "3 seq(s) appear in the ledger twice" in metrics["evidence"]["disagreements"]
    assert metrics["counts"]["duplicated"] is None


def test_a_consistent_folder_passes_evidence(tmp_path: Path, spark: Any) -> None:
    ledger = [led(i, o=i, ack=T + 10 + i) for i in range(10)]
    cell = write_cell(
        tmp_path / "cell", ledger, [], [(i, 0, i) for i in range(10)], [], complete_history()
    )
    metrics = verify(spark, cell)
    assert metrics["evidence"]["disagreements"] == []
    assert metrics["counts"]["lost"] == 0
    summary = _verdict(tmp_path, cell, metrics)
    assert {c["name"]: c["verdict"] for c in summary["checks"]}["evidence"] == "pass"
