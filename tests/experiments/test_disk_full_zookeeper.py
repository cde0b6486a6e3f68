"""disk-full end to end (tests/experiments/disk-full-zookeeper.yaml): a ZooKeeper-mode leader's
only log directory fills, its log shows the storage error and Kafka's shutdown, the heal frees
the space and starts the broker again, and the cell verifies with nothing lost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.nodes.topology import DATA_DIR
from tests.experiments.cli import HERE, not_passed, run_single_cell

# Slow lane: its path in make test is tests/integration/test_disk_full.py (a directory fills,
# goes offline, the heal brings it back); ZooKeeper-mode kills in test_leader_kill.
pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.slow_lane]


def test_a_full_disk_halts_the_broker_and_the_heal_brings_it_back(tmp_path: Path) -> None:
    done, cell, cell_dir = run_single_cell(HERE / "disk-full-zookeeper.yaml", tmp_path)
    assert cell["verdict"] == "pass", not_passed(cell)
    assert done.returncode == 0, done.stderr[-3000:]
    assert cell["counts"]["lost"] == 0 and cell["counts"]["acked"] > 0
    events = [json.loads(line) for line in (cell_dir / "history.jsonl").read_text().splitlines()]
    (start,) = [e for e in events if e["kind"] == "cluster.start"]
    assert start["log_dir_size_mb"] == 32
    (inject,) = [e for e in events if e["kind"] == "fault.inject"]
    (heal,) = [e for e in events if e["kind"] == "fault.heal"]
    assert inject["fault"] == "disk-full" and inject["log_dirs"] == [DATA_DIR]
    # Kafka's answer to ENOSPC on a broker's only log directory: it halts.
    assert heal["broker_stopped"] is True and heal["restarted"] is True
    assert heal["offline_dirs"] == [DATA_DIR] and heal["storage_errors"] >= 1
    assert heal["shutdown"].startswith("Shutdown broker because all log dirs")
    assert 0 < heal["filled_mb"] <= 32 and heal["freed_mb"] == heal["filled_mb"]
    broker = heal["target"].removeprefix("broker-")
    log = (cell_dir / "brokers" / f"{broker}.log").read_text()
    assert "No space left on device" in log
    # Started again: its log shows a second start-up after the halt.
    assert log.count("started (kafka.server.KafkaServer)") == 2
