"""`compare RUN_A RUN_B` on hand-built run and suite folders: flips, figure changes, exit codes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from harness.cli import app
from harness.cli.terminal import EXIT_FAIL, EXIT_PASS, EXIT_USAGE
from harness.errors import ConfigError
from harness.results.layout import SuitePaths
from harness.suite.compare import changed, compare_folders, load_run
from tests.unit.suite_folders import cell_summary, write_run

runner = CliRunner()


def write_suite(folder: Path, experiments: dict[str, list[dict[str, Any]]]) -> Path:
    """A suite folder: summary.json with each experiment's cells, and their run folders."""
    paths = SuitePaths(folder)
    paths.experiments.mkdir(parents=True)
    paths.suite.write_text("suite: s\n")
    records = []
    for name, cells in experiments.items():
        write_run(paths.experiments / f"X-{name}", name, cells)
        records.append({"experiment": name, "run_dir": f"experiments/X-{name}", "cells": cells})
    summary = {"suite": "s", "run_id": folder.name, "verdict": "pass", "experiments": records}
    paths.summary.write_text(json.dumps(summary))
    return folder


def test_the_same_run_twice_changes_nothing(tmp_path: Path) -> None:
    run = write_run(tmp_path / "a", "acks", [cell_summary("01_main")])
    c = compare_folders(run, run)
    assert not c.flips and not c.changed and c.exit_code == 0
    assert [(r.experiment, r.cell, r.verdict_a, r.verdict_b) for r in c.rows] == [
        ("acks", "01_main", "pass", "pass")
    ]


def test_a_flip_from_pass_exits_1_a_flip_to_pass_0(tmp_path: Path) -> None:
    a = write_run(tmp_path / "a", "acks", [cell_summary("01"), cell_summary("02", "fail", lost=3)])
    b = write_run(tmp_path / "b", "acks", [cell_summary("01", "fail", lost=9), cell_summary("02")])
    c = compare_folders(a, b)
    assert [r.cell for r in c.flips] == ["01", "02"]
    assert [r.cell for r in c.flipped_from_pass] == ["01"] and c.exit_code == 1
    assert compare_folders(b, a).exit_code == 1  # 02 flips from pass the other way round
    only_up = write_run(tmp_path / "c", "acks", [cell_summary("01"), cell_summary("02")])
    assert compare_folders(a, only_up).exit_code == 0  # fail -> pass is good news


def test_pass_to_unknown_is_a_flip_from_pass(tmp_path: Path) -> None:
    a = write_run(tmp_path / "a", "e", [cell_summary("01")])
    b = write_run(tmp_path / "b", "e", [cell_summary("01", "unknown", lost=None)])
    c = compare_folders(a, b)
    assert c.exit_code == 1 and c.flipped_from_pass[0].changes["lost"] == (0, None)


def test_figure_changes_counts_exact_times_with_tolerance(tmp_path: Path) -> None:
    a = write_run(
        tmp_path / "a",
        "e",
        [cell_summary("01", lost=0, stalls={"group": 10.0, "spark": 3.0}, unavailable_s=8.0)],
    )
    b = write_run(
        tmp_path / "b",
        "e",
        [cell_summary("01", lost=1, stalls={"group": 11.0, "spark": 30.0}, unavailable_s=None)],
    )
    (row,) = compare_folders(a, b).rows
    assert row.changes == {
        "lost": (0, 1),
        "max_stall_s": (10.0, 30.0),
        "unavailable_s": (8.0, None),
        "stall_s.spark": (3.0, 30.0),
    }  # stall_s.group 10 -> 11 is within max(1 s, 25 %)
    assert not row.flipped


def test_a_count_an_older_summary_predates_is_not_a_change(tmp_path: Path) -> None:
    old = cell_summary("01", lost=0)
    assert "aborted_read" not in old["counts"]  # as if written before the count existed
    new = cell_summary("01", lost=0)
    new["counts"]["aborted_read"] = 0
    a = write_run(tmp_path / "a", "e", [old])
    b = write_run(tmp_path / "b", "e", [new])
    (row,) = compare_folders(a, b).rows
    assert row.changes == {}
    new["counts"]["aborted_read"] = 2  # still no baseline to compare with
    (row,) = compare_folders(a, write_run(tmp_path / "c", "e", [new])).rows
    assert row.changes == {}


@pytest.mark.parametrize(
    ("name", "a", "b", "expected"),
    [
        ("lost", 0, 0, False),
        ("lost", 0, 1, True),
        ("max_stall_s", 0.2, 1.1, False),  # under 1 s
        ("max_stall_s", 0.2, 1.3, True),
        ("stall_s.group", 100.0, 120.0, False),  # under 25 %
        ("stall_s.group", 100.0, 140.0, True),
        ("unavailable_s", None, None, False),
        ("unavailable_s", None, 0.0, True),
    ],
)
def test_changed(name: str, a: float | None, b: float | None, expected: bool) -> None:
    assert changed(name, a, b) is expected


def test_cells_only_in_one_run_are_listed_not_flips(tmp_path: Path) -> None:
    a = write_run(tmp_path / "a", "e", [cell_summary("01"), cell_summary("02")])
    b = write_run(tmp_path / "b", "e", [cell_summary("02"), cell_summary("03", "fail")])
    c = compare_folders(a, b)
    assert [r.cell for r in c.only_a] == ["01"] and [r.cell for r in c.only_b] == ["03"]
    assert not c.flips and c.exit_code == 0


def test_suite_folders_match_by_experiment_and_cell(tmp_path: Path) -> None:
    a = write_suite(tmp_path / "a", {"acks": [cell_summary("01")], "offsets": [cell_summary("01")]})
    b = write_suite(
        tmp_path / "b", {"acks": [cell_summary("01")], "offsets": [cell_summary("01", "fail")]}
    )
    assert load_run(a).kind == "suite"
    c = compare_folders(a, b)
    assert [(r.experiment, r.cell) for r in c.flipped_from_pass] == [("offsets", "01")]
    # A suite against one experiment's run folder (e.g. inside it): the shared cells compare.
    single = write_run(tmp_path / "single", "acks", [cell_summary("01", "fail")])
    c = compare_folders(a, single)
    assert [(r.experiment, r.cell) for r in c.flipped_from_pass] == [("acks", "01")]
    assert [r.experiment for r in c.only_a] == ["offsets"]


def test_not_a_run_folder_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such folder"):
        load_run(tmp_path / "missing")
    with pytest.raises(ConfigError, match=r"has no summary\.json"):
        load_run(tmp_path)
    (tmp_path / "spec.yaml").write_text("name: x\n")
    with pytest.raises(ConfigError, match=r"spec\.yaml but no summary\.json"):
        load_run(tmp_path)
    (tmp_path / "summary.json").write_text("{not json")
    with pytest.raises(ConfigError, match="cannot be read as JSON"):
        load_run(tmp_path)
    (tmp_path / "summary.json").write_text('{"run_id": "x"}')
    with pytest.raises(ConfigError, match="no cells"):
        load_run(tmp_path)


def test_cli_compare_exit_codes_and_output(tmp_path: Path) -> None:
    a = write_run(tmp_path / "a", "acks", [cell_summary("01"), cell_summary("02")])
    b = write_run(tmp_path / "b", "acks", [cell_summary("01", "fail", lost=4), cell_summary("02")])
    result = runner.invoke(app, ["compare", str(a), str(a)])
    assert result.exit_code == EXIT_PASS, result.output
    assert "0 verdict flip(s)" in result.output
    result = runner.invoke(app, ["compare", str(a), str(b)])
    assert result.exit_code == EXIT_FAIL, result.output
    assert "flipped from pass: acks 01 (pass → fail)" in result.output
    assert "lost 0 → 4" in result.output
    assert runner.invoke(app, ["compare", str(b), str(a)]).exit_code == EXIT_PASS
    result = runner.invoke(app, ["compare", str(a), str(tmp_path)])
    assert result.exit_code == EXIT_USAGE
    assert "is not a run folder" in result.output


def test_compare_and_history_load_no_run_side() -> None:
    """`compare` runs on a CI box without Docker: it reads folders only."""
    import subprocess
    import sys

    code = (
        "import sys, harness.suite.compare, harness.suite.history; "
        "print(sorted(m for m in ('docker', 'testcontainers', 'confluent_kafka', 'pyspark', "
        "'harness.cluster', 'harness.experiment') if m in sys.modules))"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"
