"""The headline incident end to end, short: offsets RF 1 and the coordinator's broker down
for 25 s stall the group for most of the outage (a relative bound, resolved in the verdict);
a planned fault that finds no target is skipped and undecides the cell (`unknown`, exit 3)
although every expectation holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.experiments.cli import HERE, harness

# make test-slow (nightly): offsets RF 1 and the coordinator's broker killed, commits stopping
# while the topic keeps its leaders, is tests/integration/test_offsets_incident.py's path (both
# modes); a group cell through the CLI, test_end_to_end's; a planned fault that finds no
# coordinator skipped and the cell unknown, tests/unit/test_nemesis.py's, test_targets.py's and
# test_cell_verdict.py's; the stall bound, tests/unit/test_relative_bounds.py's.
pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.slow_lane]

EXIT_INFRA_OR_UNKNOWN = 3


def test_offsets_rf1_stalls_the_group_and_a_skipped_fault_is_unknown(tmp_path: Path) -> None:
    done = harness("run", HERE / "offsets-rf1-short.yaml", "--out", tmp_path)
    assert done.returncode == EXIT_INFRA_OR_UNKNOWN, done.stderr[-4000:]
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    (cell,) = json.loads((run_dir / "summary.json").read_text())["cells"]
    checks = {c["name"]: c for c in cell["checks"]}

    # The incident: the group made no progress for at least 20 of the 25 s outage.
    stall = checks["stall_s.group"]
    assert stall["verdict"] == "pass", stall
    assert stall["detail"].endswith("expected >= 20 (= 0.8 * faults.0.duration_s)")
    assert cell["stalls_by_set"]["group"] >= 20
    assert checks["lost_never_consumed"]["verdict"] == "pass"

    # The second kill found no coordinator: skipped, and the cell is not `pass`.
    faults = checks["faults"]
    assert faults["verdict"] == "unknown", faults
    assert "fault #1 kill skipped" in faults["detail"]
    assert "has no coordinator" in faults["detail"]
    assert cell["verdict"] == "unknown"
    history = run_dir / "cells" / cell["cell"] / "history.jsonl"
    kinds = [json.loads(line)["kind"] for line in history.read_text().splitlines()]
    assert kinds.count("fault.inject") == 1 and kinds.count("fault.skipped") == 1
