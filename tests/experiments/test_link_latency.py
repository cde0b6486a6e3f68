"""A spec written from the docs alone: latency on every broker's client links. The acks sent
while it was on show the delay (`ack_p99_ms_faulted` >= it) and are slower than the others;
each heal removed every toxic it placed, and the history names the level."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.experiments.cli import HERE, not_passed, run_single_cell

# make test-slow (nightly): latency on client links through Toxiproxy, made through the registry
# as the nemesis makes it and healed leaving no toxic, is tests/integration/test_link_faults.py's;
# a cell through the CLI, test_end_to_end's; the faulted acks' figures, tests/unit/test_latency_checks.py's.
pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.slow_lane]


def test_latency_on_every_client_link_shows_in_the_faulted_acks_only(tmp_path: Path) -> None:
    done, cell, cell_dir = run_single_cell(HERE / "latency-everywhere.yaml", tmp_path)
    assert done.returncode == 0, f"{not_passed(cell)}\n{done.stderr[-3000:]}"
    assert cell["verdict"] == "pass"
    summary = json.loads((cell_dir / "summary.json").read_text())
    # The same run's baseline: the faulted acks are the slower ones (not a bound on either).
    assert summary["ack_p99_ms_faulted"] >= 800
    assert summary["ack_p99_ms_faulted"] > summary["ack_p99_ms_steady"]
    assert summary["ack_latency"]["start"]["acked"] >= 1  # the producer's start is set apart
    events = [json.loads(line) for line in (cell_dir / "history.jsonl").read_text().splitlines()]
    starts = [e for e in events if e["kind"] == "cluster.start"]
    assert starts and starts[0]["link_proxies"] is True
    heals = [e for e in events if e["kind"] == "fault.heal" and e["fault"] == "latency"]
    assert sorted(e["target"] for e in heals) == ["broker-1", "broker-2", "broker-3"]
    assert all((e["toxics_removed"], e["toxics_gone"]) == (2, 0) for e in heals)
    assert all(e["level"] == "+800 ms clients" for e in heals)
