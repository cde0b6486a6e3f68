"""A run of two cells: each cell's `timings` are its share of the run's wall time (the first
cell's checks ran behind the second cell's cluster start), so they add up to it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.experiments.cli import HERE, harness

# Slow lane: its path in make test is test_end_to_end (a real cell's timings) and the unit
# tests of the checks behind the next cell (test_checks_behind, test_cell_phases, test_timings).
pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.slow_lane]


def test_two_cells_timings_add_up_to_the_runs_wall_time(tmp_path: Path) -> None:
    done = harness("run", HERE / "two-cells.yaml", "--out", tmp_path)
    assert done.returncode == 0, done.stderr[-4000:]
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    run = json.loads((run_dir / "summary.json").read_text())
    first, second = (c["timings"] for c in run["cells"])
    # The first cell's checks ran while the second cell's cluster started: hidden, and any
    # wait for them (or for the Spark session) is the second cell's checks-wait.
    # So did its collect-behind (the copies decoded, the cluster removed); the last cell's
    # ran at once, inside its collect.
    assert first["collect_behind"] > 0 and second["collect_behind"] == 0.0
    assert first["checks"] > 0
    assert first["checks_hidden"] == pytest.approx(first["checks"] + first["collect_behind"])
    assert second["checks_hidden"] == 0.0 and second["checks"] > 0
    for t in (first, second):
        assert t["workload_scheduled"] == 3.0  # 600 records at 200/s
        phases = sum(
            t[k] for k in ("cluster", "checks_wait", "steady_state", "warm_up", "workload")
        )
        phases += sum(t[k] for k in ("heal", "recovery", "drain", "collect", "collect_behind"))
        assert phases <= t["total"] - t["checks"] + t["checks_hidden"] + 0.01
    # The second cell warmed up beside the first cell's checks, counting windows after them.
    assert first["warm_up"] > 0 and second["warm_up"] > 0
    assert run["timings"]["total"] == pytest.approx(first["total"] + second["total"], abs=0.01)
    assert run["timings"]["total"] == pytest.approx(run["duration_s"], abs=1.0)
    assert "harness overhead:" in done.stderr  # the CLI's console writes to stderr
