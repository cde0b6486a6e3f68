"""Explore's trials side by side and its cluster reuse, on real clusters: three trials of one
pause or isolation each, two at a time (`--parallel 2`): trials 0 and 1 run at once on two
clusters; trial 2 runs on the cluster one of them left (its history says so: `cluster.start`
with `reused` 1 and that trial as `first_cell`), on its own topic (every one of its
acknowledged records accounted for, none of an earlier trial's read again), with its own broker
logs (no line from before its start), and the explore run removes both clusters at its end."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import docker
import pytest

from harness.nodes.reaper import RUN_LABEL
from harness.results.history_reader import read_jsonl
from tests.experiments.cli import HERE, ROOT, harness_command

pytestmark = [pytest.mark.docker, pytest.mark.timeout(900)]

SPEC = HERE / "explore-reuse.yaml"
EXIT_PASS = 0


def cell_dir(trial: dict[str, object]) -> Path:
    (cell,) = (Path(str(trial["folder"])) / "cells").iterdir()
    return cell


def first_ts(events: list[dict[str, object]]) -> float:
    return min(float(str(e["ts"])) for e in events if "ts" in e)


def last_ts(events: list[dict[str, object]]) -> float:
    return max(float(str(e["ts"])) for e in events if "ts" in e)


def test_trials_run_side_by_side_and_a_third_on_a_kept_cluster(tmp_path: Path) -> None:
    out = tmp_path / "explore"
    done = subprocess.run(
        harness_command(
            "explore", SPEC, "--max-trials", "3", "--budget-cells", "3", "--seed", "3", "--out", out,
            "--parallel", "2",
        ),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )  # fmt: skip
    assert done.returncode == EXIT_PASS, done.stdout[-3000:] + done.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["budget"]["parallel"] == 2
    assert summary["budget"]["clusters"]["fresh"] == 2, summary["budget"]
    assert summary["budget"]["clusters"]["reused"] == 1, summary["budget"]
    folders = [cell_dir(t) for t in summary["trials"]]
    histories = [read_jsonl(f / "history.jsonl")[0] for f in folders]
    starts = [next(e for e in h if e["kind"] == "cluster.start") for h in histories]
    # trials 0 and 1 at once, each on a cluster of its own
    assert starts[0]["run_id"] != starts[1]["run_id"]
    assert first_ts(histories[1]) < last_ts(histories[0])
    assert not starts[0].get("reused") and not starts[1].get("reused")
    # trial 2 on the cluster one of them left, said so in its history
    assert starts[2]["reused"] == 1
    before = starts[0] if starts[2]["first_cell"] == "trial-000" else starts[1]
    assert starts[2]["first_cell"] in ("trial-000", "trial-001")
    assert starts[2]["run_id"] == before["run_id"]
    # its own records: acknowledged, none lost, none read twice (an earlier trial's records
    # carry the same sequence numbers: read again, they would be duplicates)
    for trial in folders:
        counts = json.loads((trial / "summary.json").read_text())["counts"]
        assert counts["acked"] > 0 and counts["lost"] == 0, counts
        assert counts["duplicated"] == 0, counts
    # its own broker logs: the earlier trial's start-up lines are not in them
    logs = sorted((folders[2] / "brokers").glob("*.log"))
    assert logs and all("Kafka Server started" not in p.read_text() for p in logs)
    # nothing left running: both clusters removed at the explore run's end
    engine = docker.from_env()
    for start in starts:
        label = f"{RUN_LABEL}={start['run_id']}"
        assert not engine.containers.list(all=True, filters={"label": label})
