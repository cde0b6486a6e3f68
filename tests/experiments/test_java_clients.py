"""Kafka's Java clients end to end: the Java ledger producer and two Java groups (Kafka's
VerifiableConsumer, committing after processing and auto-committing) through a leader kill
and SIGKILLed members (tests/experiments/java-kill.yaml)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.experiments.cli import HERE, not_passed, run_single_cell

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_java_producer_and_groups_lose_nothing_and_resume_exactly(tmp_path: Path) -> None:
    done, cell, cell_dir = run_single_cell(HERE / "java-kill.yaml", tmp_path)
    assert cell["verdict"] == "pass", not_passed(cell)
    assert done.returncode == 0, done.stderr[-4000:]
    counts = cell["counts"]
    assert counts["lost"] == 0 and counts["duplicated"] == 0
    assert counts["acked"] == counts["attempted"] > 0
    history = [json.loads(x) for x in (cell_dir / "history.jsonl").read_text().splitlines()]
    starts = [e for e in history if e["kind"] == "producer.start"]
    assert [s.get("client") for s in starts] == ["java"]
    # Every member that came back resumed where its group had committed, skipping nothing.
    # A SIGKILL can land between a commit Kafka took and the JVM printing it: the member then
    # resumes past the last commit the folder saw, over records it had consumed (measured in a
    # clean clone: committed 171, first offset 172, skipped 0). So: at or past it, none skipped.
    resumed = [r for r in cell["resumptions"] if r["committed"] is not None]
    assert resumed and any(r["exact"] for r in resumed), resumed
    assert all(r["skipped"] == 0 and r["first_offset"] >= r["committed"] for r in resumed), resumed
    # Both crashed members were restarted (a second consumer.start each, the JVM's pid).
    for member in ("group/m0", "group2/m0"):
        launches = [e for e in history if e["kind"] == "consumer.start" and e["consumer"] == member]
        assert len(launches) == 2 and launches[0]["pid"] != launches[1]["pid"], launches
    # The auto-committing member read again what it had processed since its last commit.
    again = [g for g in cell["reprocessed_by_generation"] if g["set"] == "group2"]
    assert sum(g["reprocessed"] for g in again) >= 1, again
