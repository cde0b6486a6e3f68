"""The partition watch against a real cluster: a killed follower of a one-partition RF 3
topic leaves the ISR and rejoins it after the heal, and the history, the summary's `isr`
section and the report show it (isr-follower-kill.yaml, one short cell)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.experiments.cli import HERE, not_passed, run_single_cell

# make test-slow (nightly): a cell with a broker killed mid-run, its partition watch and Kafka's
# view in the summary, is test_broker_metrics's path (the watch runs in every cell); the ISR
# figures from partition.state events, tests/unit/test_isr.py's.
pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.slow_lane]


def test_a_killed_follower_leaves_the_isr_and_rejoins_it(tmp_path: Path) -> None:
    done, cell, cell_dir = run_single_cell(HERE / "isr-follower-kill.yaml", tmp_path)
    assert done.returncode == 0, f"{not_passed(cell)}\n{done.stderr[-3000:]}"
    history = [json.loads(line) for line in (cell_dir / "history.jsonl").read_text().splitlines()]
    (inject,) = [e for e in history if e["kind"] == "fault.inject"]
    killed = int(str(inject["target"]).rsplit("-", 1)[1])  # "broker-<id>"
    states = [e for e in history if e["kind"] == "partition.state"]
    seen = [(round((e["ts"] - inject["ts"]) / 1000, 1), e["leader"], e["isr"]) for e in states]
    print(f"killed broker {killed}; partition 0 (s after the kill, leader, isr): {seen}")
    print(f"summary isr: {cell['isr']}")

    assert all(e["topic"] == "chaos" and e["partition"] == 0 for e in states)
    assert all(e["replicas"] and sorted(e["replicas"]) == [1, 2, 3] for e in states)
    assert len(states[0]["isr"]) == 3  # the first poll: a full ISR
    shrunk = next(i for i, e in enumerate(states) if len(e["isr"]) == 2)
    assert killed not in states[shrunk]["isr"] and states[shrunk]["ts"] > inject["ts"]
    assert any(len(e["isr"]) == 3 for e in states[shrunk:])  # back after the heal
    assert len(states[-1]["isr"]) == 3
    leaders = {e["leader"] for e in states}
    assert len(leaders) == 1 and killed not in leaders  # a follower was killed, not the leader
    (end,) = [e for e in history if e["kind"] == "partition.watch_end"]
    assert end["changes"] == len(states) and end["polls"] > 10

    isr = cell["isr"]
    assert isr["isr_shrinks"] >= 1 and isr["isr_expands"] >= 1
    assert isr["min_isr_size"] == 2 and isr["under_replicated_s"] > 0
    assert "<h2>ISR of the topic</h2>" in (cell_dir / "report.html").read_text()
