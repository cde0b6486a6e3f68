"""A tiny suite through the CLI against real clusters: one suite folder, each experiment's run
folder inside, one summary / JUnit for the suite, the history appended, `compare` on it."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pyarrow.parquet as pq

from tests.experiments.cli import HERE, harness

EXIT_FOR_VERDICT = {"pass": 0, "fail": 1, "unknown": 3}


def test_tiny_suite_end_to_end(tmp_path: Path) -> None:
    planned = harness("validate", HERE / "tiny-suite.yaml")
    assert planned.returncode == 0, planned.stderr[-4000:]
    assert (
        "left out (cannot exist): cluster.mode=zookeeper, cluster.version=4.3.1" in planned.stderr
    )

    done = harness("run", HERE / "tiny-suite.yaml", "--out", tmp_path)
    (folder,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    summary = json.loads((folder / "summary.json").read_text())
    assert done.returncode == EXIT_FOR_VERDICT[summary["verdict"]], done.stderr[-4000:]
    (experiment,) = summary["experiments"]
    cells = {c["cell"]: c for c in experiment["cells"]}
    assert list(cells) == [
        "01_mode=kraft_version=3.9.2",
        "02_mode=kraft_version=4.3.1",
        "03_mode=zookeeper_version=3.9.2",
    ]
    assert cells["01_mode=kraft_version=3.9.2"]["verdict"] == "pass"  # = test_end_to_end's cell
    assert [c["params"]["version"] for c in cells.values()] == ["3.9.2", "4.3.1", "3.9.2"]
    run_dir = folder / experiment["run_dir"]
    assert sorted(p.name for p in (run_dir / "cells").iterdir()) == list(cells)
    for name in ("suite.yaml", "summary.md", "junit.xml"):
        assert (folder / name).is_file(), name
    junit = ET.parse(folder / "junit.xml").getroot()
    (suite,) = junit.findall("testsuite")
    assert suite.get("name") == "small-kill" and len(suite.findall("testcase")) == 3

    history = pq.read_table(tmp_path / "history.parquet").to_pylist()
    assert [r["cell"] for r in history] == list(cells)
    assert {r["suite_run"] for r in history} == {folder.name}

    # The experiment's folder inside verifies on its own; the suite compares with itself.
    assert harness("verify", run_dir).returncode == EXIT_FOR_VERDICT[experiment["verdict"]]
    same = harness("compare", folder, folder)
    assert same.returncode == 0, same.stdout[-4000:]
    assert "0 verdict flip(s)" in same.stdout
