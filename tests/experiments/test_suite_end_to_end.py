"""A tiny suite of two experiments through the CLI against real clusters, run as the nightly
workflow runs it: two shards, then `merge-shards` — one suite folder holding each experiment's
run folder, one summary / JUnit, the history appended once, `verify` and `compare` on it."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.experiments.cli import HERE, harness

# make test-slow (nightly): its small-kill KRaft 3.9.2 cell is test_end_to_end's, through `run`
# and `verify`; shards, merge-shards, history, index and compare are tests/unit/test_suite_*.py's
# on hand-built run folders (through the CLI too), and the nightly's own shards and merge.
pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.slow_lane]

EXIT_FOR_VERDICT = {"pass": 0, "fail": 1, "unknown": 3}
SUITE = HERE / "tiny-suite.yaml"


def test_tiny_suite_in_two_shards_end_to_end(tmp_path: Path) -> None:
    planned = harness("validate", SUITE)
    assert planned.returncode == 0, planned.stderr[-4000:]
    assert "left out (cannot exist): cluster.version=4.3.1" in planned.stderr  # the ZooKeeper one

    shards, results = tmp_path / "shards", tmp_path / "results"
    for k in (1, 2):
        part = harness("run", SUITE, "--shard", f"{k}/2", "--out", shards)
        assert "history, index: not written by a shard" in part.stderr, part.stderr[-4000:]
    folders = sorted(p for p in shards.iterdir() if p.is_dir())
    assert [p.name.rsplit("-", 1)[-1] for p in folders] == ["1of2", "2of2"]
    assert not (shards / "history.parquet").exists()

    merged = harness("merge-shards", *folders, "--out", results)
    (folder,) = [p for p in results.iterdir() if p.is_dir()]
    summary = json.loads((folder / "summary.json").read_text())
    assert merged.returncode == EXIT_FOR_VERDICT[summary["verdict"]], merged.stderr[-4000:]
    assert [s["finished"] for s in summary["shards"]] == [True, True]
    kill, restart = summary["experiments"]
    assert (kill["experiment"], kill["shard"]) == ("small-kill", 1)
    assert (restart["experiment"], restart["shard"]) == ("small-restart-zk", 2)
    kill_cells = {c["cell"]: c for c in kill["cells"]}
    assert list(kill_cells) == ["01_version=3.9.2", "02_version=4.3.1"]
    assert [c["params"]["version"] for c in kill_cells.values()] == ["3.9.2", "4.3.1"]
    (zk_cell,) = restart["cells"]
    assert zk_cell["cell"] == "01_version=3.9.2" and zk_cell["params"]["mode"] == "zookeeper"
    assert restart["impossible"][0]["params"] == {"cluster.version": "4.3.1"}
    # small-kill's KRaft 3.9.2 cell is test_end_to_end's cell: it must pass here too
    assert kill_cells["01_version=3.9.2"]["verdict"] == "pass", kill_cells
    assert zk_cell["verdict"] == "pass", zk_cell

    for e in (kill, restart):  # run folders copied in, each verifies on its own
        run_dir = folder / e["run_dir"]
        assert sorted(p.name for p in (run_dir / "cells").iterdir()) == [
            c["cell"] for c in e["cells"]
        ]
        assert harness("verify", run_dir).returncode == EXIT_FOR_VERDICT[e["verdict"]]
    for name in ("suite.yaml", "summary.md", "junit.xml"):
        assert (folder / name).is_file(), name
    junit = ET.parse(folder / "junit.xml").getroot()
    suites = {s.get("name"): len(s.findall("testcase")) for s in junit.findall("testsuite")}
    assert suites == {"small-kill": 2, "small-restart-zk": 1}

    history = pq.read_table(results / "history.parquet").to_pylist()
    assert [(r["experiment"], r["cell"]) for r in history] == [
        ("small-kill", "01_version=3.9.2"),
        ("small-kill", "02_version=4.3.1"),
        ("small-restart-zk", "01_version=3.9.2"),
    ]
    assert {r["suite_run"] for r in history} == {folder.name}
    assert (results / "index.html").is_file()

    same = harness("compare", folder, folder)
    assert same.returncode == 0, same.stdout[-4000:]
    assert "0 verdict flip(s)" in same.stdout
