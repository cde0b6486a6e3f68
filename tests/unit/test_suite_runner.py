"""The suite runner with a fake experiment runner (hand-built run folders, no Docker)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from harness.results.layout import SuitePaths
from harness.suite.plan import SuitePlan, make_suite_plan
from harness.suite.runner import run_suite
from tests.unit.suite_folders import FakeRunner
from tests.unit.test_suite_plan import VERSIONS, make_tree


def plan(tmp_path: Path) -> SuitePlan:
    """plain (2 cells), modes (5: its zookeeper x 4.3.1 cell cannot exist), pinned-zk (1: 3.9.2)."""
    suite = make_tree(
        tmp_path / "tree",
        f"experiments: [exp/plain.yaml, exp/modes.yaml, exp/pinned-zk.yaml]\nseed: 9\n"
        f"axes: {{{VERSIONS}}}\n",
    )
    return make_suite_plan(suite)


def run(tmp_path: Path, fake: FakeRunner, history: bool = True) -> tuple[object, list[str]]:
    said: list[str] = []
    result = run_suite(plan(tmp_path), tmp_path / "results", fake, said.append, history)
    return result, said


def test_one_folder_holding_each_experiments_run_folder_and_summaries(tmp_path: Path) -> None:
    fake = FakeRunner()
    result, _ = run(tmp_path, fake)
    folder = result.folder  # type: ignore[attr-defined]
    paths = SuitePaths(folder)
    assert folder.parent == tmp_path / "results" and folder.name.endswith("-suite-s")
    for p in (paths.suite, paths.summary, paths.summary_md, paths.junit):
        assert p.is_file(), p
    runs = sorted(p.name for p in paths.experiments.iterdir())
    assert runs == [
        "20260101T000000Z-modes",
        "20260101T000000Z-pinned-zk",
        "20260101T000000Z-plain",
    ]
    assert [(name, len(cells), seed) for name, cells, seed in fake.calls] == [
        ("plain", 2, 9),
        ("modes", 5, 9),
        ("pinned-zk", 1, 9),
    ]
    summary = json.loads(paths.summary.read_text())
    assert summary["suite"] == "s" and summary["verdict"] == "pass" and summary["seed"] == 9
    assert summary["axes"] == {"cluster.version": ["3.9.2", "4.3.1"]}
    exps = {e["experiment"]: e for e in summary["experiments"]}
    assert exps["plain"]["run_dir"] == "experiments/20260101T000000Z-plain"
    assert exps["plain"]["added"] == {"cluster.version": ["3.9.2", "4.3.1"]}
    assert len(exps["modes"]["cells"]) == 5 and exps["modes"]["impossible"] == [
        {
            "params": {
                "cluster.mode": "zookeeper",
                "producer.acks": "all",
                "cluster.version": "4.3.1",
            },
            "reason": exps["modes"]["impossible"][0]["reason"],
        }
    ]
    assert set(exps["plain"]["planned_by_cell"]) == {"01_version=3.9.2", "02_version=4.3.1"}
    assert summary["planned_s"] > 0 and summary["duration_s"] is not None
    planned = yaml.safe_load(paths.suite.read_text())
    assert planned["experiments"][0]["cells"] == [
        "01_version=3.9.2",
        "02_version=4.3.1",
    ]
    md = paths.summary_md.read_text()
    assert "# suite s — pass" in md and "Cells that cannot exist" in md and "## modes — pass" in md


def test_junit_has_one_testsuite_per_experiment_and_a_testcase_per_cell(tmp_path: Path) -> None:
    fake = FakeRunner({"modes/03_mode=kraft_acks=all_version=3.9.2": "fail"})
    result, _ = run(tmp_path, fake)
    root = ET.parse(SuitePaths(result.folder).junit).getroot()  # type: ignore[attr-defined]
    assert root.tag == "testsuites" and root.get("name") == "s"
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("8", "1", "0")
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["plain", "modes", "pinned-zk"]
    assert [len(s.findall("testcase")) for s in suites] == [2, 5, 1]
    failed = [c for c in suites[1].findall("testcase") if c.find("failure") is not None]
    assert [c.get("name") for c in failed] == ["03_mode=kraft_acks=all_version=3.9.2"]
    assert failed[0].get("classname") == "modes"


def test_verdict_is_the_worst_cell(tmp_path: Path) -> None:
    result, _ = run(tmp_path / "a", FakeRunner({"plain/02_version=4.3.1": "unknown"}))
    assert result.summary["verdict"] == "unknown"  # type: ignore[attr-defined]
    result, _ = run(
        tmp_path / "b",
        FakeRunner({"plain/02_version=4.3.1": "unknown", "pinned-zk/01_version=3.9.2": "fail"}),
    )
    assert result.summary["verdict"] == "fail"  # type: ignore[attr-defined]
    exps = {e["experiment"]: e["verdict"] for e in result.summary["experiments"]}  # type: ignore[attr-defined]
    assert exps == {"plain": "unknown", "modes": "pass", "pinned-zk": "fail"}


def test_an_experiment_that_breaks_is_unknown_and_the_suite_goes_on(tmp_path: Path) -> None:
    fake = FakeRunner(raise_in={"modes"}, cells_before_raise=2)
    result, said = run(tmp_path, fake)
    summary = result.summary  # type: ignore[attr-defined]
    assert [name for name, _, _ in fake.calls] == ["plain", "modes", "pinned-zk"]
    modes = summary["experiments"][1]
    assert modes["error"] == "RuntimeError: spark session died in modes"
    verdicts = [c["verdict"] for c in modes["cells"]]
    assert verdicts == ["pass", "pass", "unknown", "unknown", "unknown"]  # done cells kept
    stub = modes["cells"][2]
    assert (
        stub["checks"][0]["name"] == "run" and "spark session died" in stub["checks"][0]["detail"]
    )
    assert stub["params"]["version"] == "3.9.2" and stub["params"]["mode"] == "kraft"
    assert modes["run_dir"] is None
    assert summary["verdict"] == "unknown"
    assert summary["experiments"][2]["verdict"] == "pass"
    assert any("modes: error: RuntimeError" in line for line in said)
    junit = ET.parse(SuitePaths(result.folder).junit).getroot()  # type: ignore[attr-defined]
    assert junit.get("errors") == "3"


def test_progress_across_experiments(tmp_path: Path) -> None:
    _, said = run(tmp_path, FakeRunner())
    starts = [line for line in said if line.startswith("[") and "cell(s), planned" in line]
    assert [s.split("]")[0] + "]" for s in starts] == ["[1/3]", "[2/3]", "[3/3]"]
    assert "suite: 0/8 cells done" in starts[0] and "suite: 2/8 cells done" in starts[1]
    assert "planned left" in starts[0]
    cells = [line for line in said if "cells]" in line]
    assert cells[0].startswith("[1/8 cells] plain 01_version=3.9.2 verdict pass")
    assert cells[-1].startswith("[8/8 cells] pinned-zk")


def test_history_appended_beside_the_results(tmp_path: Path) -> None:
    result, _ = run(tmp_path, FakeRunner())
    history = tmp_path / "results" / "history.parquet"
    assert result.history == history  # type: ignore[attr-defined]
    table = pq.read_table(history)
    assert table.num_rows == 8
    assert set(table.column("kafka_version").to_pylist()) == {"3.9.2", "4.3.1"}
    assert set(table.column("suite_run").to_pylist()) == {result.folder.name}  # type: ignore[attr-defined]
    # A second suite run into the same results folder appends.
    said: list[str] = []
    run_suite(plan(tmp_path / "again"), tmp_path / "results", FakeRunner(), said.append)
    assert pq.read_table(history).num_rows == 16


def test_history_failure_is_reported_not_raised(tmp_path: Path) -> None:
    (tmp_path / "results" / "history.parquet").mkdir(parents=True)  # a folder: cannot be read
    result, _ = run(tmp_path, FakeRunner())
    assert result.history is None and "history.parquet" in result.history_error  # type: ignore[attr-defined]
    assert SuitePaths(result.folder).summary.is_file()  # type: ignore[attr-defined]


def test_no_history_when_asked(tmp_path: Path) -> None:
    result, _ = run(tmp_path, FakeRunner(), history=False)
    assert result.history is None and not (tmp_path / "results" / "history.parquet").exists()  # type: ignore[attr-defined]


def test_ctrl_c_writes_the_summary_of_what_ran_and_propagates(tmp_path: Path) -> None:
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path, FakeRunner(interrupt_in="modes"))
    (folder,) = (tmp_path / "results").iterdir()
    summary = json.loads(SuitePaths(folder).summary.read_text())
    assert [e["experiment"] for e in summary["experiments"]] == ["plain", "modes"]
    assert summary["experiments"][1]["error"] == "interrupted (Ctrl-C)"
    assert not (tmp_path / "results" / "history.parquet").exists()


def test_left_out_experiments_are_listed_not_run(tmp_path: Path) -> None:
    suite = make_tree(
        tmp_path / "tree",
        "experiments: [exp/pinned-zk.yaml, exp/plain.yaml]\naxes: {cluster.version: [4.3.1]}\n",
    )
    fake = FakeRunner()
    said: list[str] = []
    result = run_suite(make_suite_plan(suite), tmp_path / "results", fake, said.append)
    assert [name for name, _, _ in fake.calls] == ["plain"]
    (left,) = result.summary["left_out"]
    assert left["experiment"] == "pinned-zk" and "no cell can exist" in left["reason"]
    assert left["impossible"][0]["params"] == {"cluster.version": "4.3.1"}
    assert "pinned-zk" in SuitePaths(result.folder).summary_md.read_text()
