"""Explore's cluster reuse on a real cluster: two trials of one pause or isolation each; the
second runs on the first one's cluster (its history says so: `cluster.start` with `reused` 1
and the first trial as `first_cell`), on its own topic (every one of its acknowledged records
accounted for, none of the first trial's read again), with its own broker logs (no line from
before its start), and the explore run removes the cluster at its end."""

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


def test_a_second_trial_runs_on_the_first_ones_cluster(tmp_path: Path) -> None:
    out = tmp_path / "explore"
    done = subprocess.run(
        harness_command(
            "explore", SPEC, "--max-trials", 2, "--budget-cells", 2, "--seed", 3, "--out", out,
        ),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )  # fmt: skip
    assert done.returncode == EXIT_PASS, done.stdout[-3000:] + done.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["budget"]["clusters"]["fresh"] == 1, summary["budget"]
    assert summary["budget"]["clusters"]["reused"] == 1, summary["budget"]
    first, second = (cell_dir(t) for t in summary["trials"])
    events, _ = read_jsonl(second / "history.jsonl")
    starts = [e for e in events if e["kind"] == "cluster.start"]
    assert len(starts) == 1 and starts[0]["reused"] == 1
    assert starts[0]["first_cell"] == "trial-000"
    first_events, _ = read_jsonl(first / "history.jsonl")
    assert not any(e.get("reused") for e in first_events if e["kind"] == "cluster.start")
    # its own records: acknowledged, none lost, none read twice (the first trial's records
    # carry the same sequence numbers: read again, they would be duplicates)
    for trial in (first, second):
        counts = json.loads((trial / "summary.json").read_text())["counts"]
        assert counts["acked"] > 0 and counts["lost"] == 0, counts
        assert counts["duplicated"] == 0, counts
    # its own broker logs: the first trial's start-up lines are not in them
    logs = sorted((second / "brokers").glob("*.log"))
    assert logs and all("Kafka Server started" not in p.read_text() for p in logs)
    # nothing left running: the one cluster removed at the explore run's end
    assert (
        starts[0]["run_id"]
        == next(e for e in first_events if e["kind"] == "cluster.start")["run_id"]
    )
    label = f"{RUN_LABEL}={starts[0]['run_id']}"
    assert not docker.from_env().containers.list(all=True, filters={"label": label})
