"""The checks as values (spark_jobs.check, spark_jobs.checks): the registry's table, and a
check that raises, which undecides its own figures and the cell, never the others'."""

from __future__ import annotations

import dataclasses
import inspect
import re
from pathlib import Path
from typing import Any

import pytest

from harness.results.metrics import COUNT_NAMES, Figures
from harness.spec import expand_cells, load_spec
from harness.verdict.cell_verdict import summarize
from spark_jobs.check import MAIN, REVIEW, Check, failed, merge
from spark_jobs.checks import CHECKS
from spark_jobs.context import CellContext
from tests.unit.test_verify import T, complete_history, led, write_cell

pytestmark = pytest.mark.spark


# --- the table -----------------------------------------------------------------------------


def test_the_registry_names_each_check_once_and_what_it_needs_exists() -> None:
    names = [c.name for c in CHECKS]
    assert len(names) == len(set(names))
    keys = set(Figures.__annotations__) | set(COUNT_NAMES)
    # What a check may need: the context's properties and what its constructor sets.
    made = re.findall(r"self\.(\w+)(?:: [^=]+)? = ", inspect.getsource(CellContext.__init__))
    props = {n for n, v in vars(CellContext).items() if isinstance(v, property)}
    facts = {n for n in [*made, *props] if not n.startswith("_")}
    for check in CHECKS:
        assert set(check.needs) <= facts, (check.name, set(check.needs) - facts)
        # A figure a check decides is a count, a summary key, or a reason's name (`undecided`).
        assert check.decides, check.name
    decided = {name for c in CHECKS for name in c.decides}
    assert set(COUNT_NAMES) <= decided  # every count has a check that decides it
    reviews = [c.name for c in CHECKS if c.lane == REVIEW]
    assert "evidence" in keys and reviews == [
        "steps",
        "evidence",
        "forensics",
        "ownership",
        "machine",
    ]


def test_merging_parts_adds_counts_and_reasons_and_extends_lists() -> None:
    summary: Figures = {"counts": {"lost": None}, "undecided": {}, "resumptions": []}
    merge(summary, {"counts": {"lost": 0}, "resumptions": [_row(1)]})
    merge(summary, {"resumptions": [_row(2)], "undecided": {"poll_skip": "why"}})
    assert summary["counts"] == {"lost": 0}
    assert [r["generation"] for r in summary["resumptions"] or []] == [1, 2]
    assert summary["undecided"] == {"poll_skip": "why"}


def test_a_failed_check_undecides_exactly_its_own_figures() -> None:
    check = Check("x", needs=(), decides=("lost", "max_stall_s"), run=_broken)
    part = failed(check, ValueError("boom"))
    assert part["counts"] == {"lost": None}
    assert part["undecided"] == dict.fromkeys(
        ("lost", "max_stall_s"), "the x check failed: ValueError: boom"
    )
    assert part["failed_checks"] == {"x": "ValueError: boom"}


# --- a check that raises, on a hand-built folder ---------------------------------------------

LEDGER = [led(i, o=i, ack=T + 10 + i) for i in range(10)]
LOG = [(i, 0, i) for i in range(9)]  # seq 9 acked, never in the log: lost 1


def _broken(ctx: CellContext) -> Figures:
    raise RuntimeError("the records check broke")


def _row(generation: int) -> Any:
    return {"set": "g", "generation": generation}


def _verdict(tmp_path: Path, cell_dir: Path, metrics: Figures) -> dict[str, Any]:
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "name: failing-check\nproducer: {records: 10}\n"
        "expect: {lost: 0, nonmonotonic_send: 0, unavailable_s: '<= 100'}\n"
    )
    [cell] = expand_cells(load_spec(spec))
    return summarize(cell, cell_dir, metrics)


def test_a_check_that_raises_undecides_its_figures_and_the_cell_only(
    tmp_path: Path, spark: Any
) -> None:
    from spark_jobs.verify import verify_cell

    cell = write_cell(tmp_path / "cell", LEDGER, [], LOG, [], complete_history())
    whole = verify_cell(spark, cell)
    assert whole["counts"]["lost"] == 1 and "failed_checks" not in whole

    records = next(c for c in CHECKS if c.name == "records")
    broken = dataclasses.replace(records, run=_broken)
    checks = [broken if c is records else c for c in CHECKS]
    metrics = verify_cell(spark, cell, checks=checks)

    # Its own figures: undecided, naming the error.
    reason = "the records check failed: RuntimeError: the records check broke"
    for name in records.decides:
        assert metrics["undecided"][name] == reason, name
        if name in COUNT_NAMES:
            assert metrics["counts"][name] is None, name
    assert metrics["failed_checks"] == {"records": "RuntimeError: the records check broke"}
    # The others': computed as without the failure (a lane check, a main one, the review).
    for name in ("nonmonotonic_send", "inconsistent_offsets", "failed", "aborted_read"):
        assert metrics["counts"][name] == whole["counts"][name] == 0, name
    assert metrics["unavailable_s"] == whole["unavailable_s"] is not None
    assert metrics["ack_p99_ms"] == whole["ack_p99_ms"] is not None
    # The review still holds the tables to the history (what it could: `acked` undecided).
    assert metrics["evidence"]["disagreements"] == whole["evidence"]["disagreements"] == []
    assert "acked 10 = producer.end acked 10" in whole["evidence"]["compared"]
    assert "acked 10 = producer.end acked 10" not in metrics["evidence"]["compared"]

    # The cell: unknown, with a check that says which one failed; the others judged.
    summary = _verdict(tmp_path, cell, metrics)
    verdicts = {c["name"]: c for c in summary["checks"]}
    assert verdicts["verification"]["verdict"] == "unknown"
    assert "the records check failed" in verdicts["verification"]["detail"]
    assert verdicts["lost"]["verdict"] == "unknown"
    assert verdicts["nonmonotonic_send"]["verdict"] == "pass"
    assert verdicts["unavailable_s"]["verdict"] == "pass"
    assert summary["verdict"] == "unknown"


def test_a_lane_check_that_raises_leaves_the_main_ones(
    tmp_path: Path, spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The offsets check runs in a thread of its own: its error is its figures', too."""
    from spark_jobs.checks import offsets as offsets_module
    from spark_jobs.verify import verify_cell

    def broken(*args: Any) -> Any:
        raise ValueError("no offsets today")

    monkeypatch.setattr(offsets_module, "nonmonotonic_send", broken)
    cell = write_cell(tmp_path / "cell", LEDGER, [], LOG, [], complete_history())
    metrics = verify_cell(spark, cell)
    offsets = next(c for c in CHECKS if c.name == "offsets")
    assert offsets.lane not in (MAIN, REVIEW)
    for name in ("nonmonotonic_send", "inconsistent_offsets", "poll_skip"):
        assert metrics["counts"][name] is None
        assert metrics["undecided"][name].startswith("the offsets check failed: ValueError")
    assert metrics["counts"]["lost"] == 1 and metrics["counts"]["acked"] == 10
    assert list(metrics["failed_checks"]) == ["offsets"]
