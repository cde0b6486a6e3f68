"""What a calibration record still lacks (harness.suite.calibration_debt), from hand-built
records, and the queue script's plan and exit codes (scripts/calibration_queue.py; nothing
runs: `calibrate` is replaced by a recorder of its arguments)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.suite.calibration_debt import GOAL_BURNERS, spec_debt
from harness.suite.estimate import EXPERIMENT_S, estimate_cell_s
from tests.unit.test_calibration import CELL_1, CELL_2, SPEC, make_spec

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import calibration_queue  # noqa: E402


def cal(load: int, verdicts: dict[str, list[str]]) -> dict[str, Any]:
    return {
        "load": load,
        "cells": [{"cell": cell, "verdicts": v, "bounds": []} for cell, v in verdicts.items()],
    }


def test_no_record_means_every_run_is_missing(tmp_path: Path) -> None:
    plan = make_spec(tmp_path)
    debt = spec_debt("cal", tmp_path / "cal.yaml", plan.cells, None)
    assert (debt.quiet_runs, debt.loaded_runs) == (0, 0)
    (quiet,) = debt.batches(0)
    assert quiet.args() == ["--runs", "3"]  # every cell: no --cells
    (loaded,) = debt.batches(GOAL_BURNERS)
    assert loaded.args() == ["--runs", "3", "--load", "2"]
    one_run = sum(estimate_cell_s(c.spec) for c in plan.cells)
    assert quiet.planned_s == 3 * one_run + EXPERIMENT_S
    assert debt.planned_s() == 2 * quiet.planned_s


def test_runs_are_counted_per_cell_and_batched_by_what_is_missing(tmp_path: Path) -> None:
    plan = make_spec(tmp_path)
    record = {
        "calibrations": [
            cal(0, {CELL_1: ["pass", "pass", "pass"], CELL_2: ["pass"]}),
            cal(0, {CELL_2: ["unknown"]}),
            cal(2, {CELL_1: ["pass"], CELL_2: ["fail"]}),
            cal(1, {CELL_1: ["pass"] * 3, CELL_2: ["pass"] * 3}),  # 1 burner: not the goal
        ]
    }
    debt = spec_debt("cal", tmp_path / "cal.yaml", plan.cells, record)
    by_cell = {c.cell: c for c in debt.cells}
    assert by_cell[CELL_2].quiet == ("pass", "unknown")
    # only passes count quiet; beside burners a failed run needs a fix and runs again
    assert (by_cell[CELL_1].missing_quiet, by_cell[CELL_2].missing_quiet) == (0, 2)
    assert (debt.quiet_runs, debt.loaded_runs) == (1, 0)
    assert (debt.quiet_not_passing, debt.loaded_failing) == (1, 1)
    assert [b.args() for b in debt.batches(0)] == [["--runs", "2", "--cells", CELL_2]]
    assert [b.args() for b in debt.batches(2)] == [
        ["--runs", "3", "--load", "2", "--cells", CELL_2],
        ["--runs", "2", "--load", "2", "--cells", CELL_1],
    ]


def test_a_run_beside_burners_unknown_for_another_reason_does_not_count(tmp_path: Path) -> None:
    plan = make_spec(tmp_path)
    loaded = cal(2, {CELL_1: ["unknown", "unknown", "pass"], CELL_2: ["pass"] * 3})
    loaded["cells"][0]["unknown_why"] = ["load", "faults: kill broker-1 never fired", None]
    old = cal(2, {CELL_1: ["unknown"]})  # before unknown_why: read by hand, counts
    debt = spec_debt("cal", tmp_path / "cal.yaml", plan.cells, {"calibrations": [loaded, old]})
    by_cell = {c.cell: c for c in debt.cells}
    assert by_cell[CELL_1].loaded_counted == 3 and by_cell[CELL_1].missing_loaded == 0
    assert debt.loaded_not_the_load == 1
    without_old = spec_debt("cal", tmp_path / "cal.yaml", plan.cells, {"calibrations": [loaded]})
    assert without_old.loaded_runs == 2
    assert [b.args() for b in without_old.batches(2)] == [
        ["--runs", "1", "--load", "2", "--cells", CELL_1]
    ]


def test_a_calibrated_spec_owes_nothing(tmp_path: Path) -> None:
    plan = make_spec(tmp_path)
    full = {CELL_1: ["pass"] * 3, CELL_2: ["pass"] * 3}
    record = {"calibrations": [cal(0, full), cal(2, full)]}
    debt = spec_debt("cal", tmp_path / "cal.yaml", plan.cells, record)
    assert debt.batches(0) == [] and debt.batches(2) == [] and debt.planned_s() == 0


def test_the_plan_learns_what_the_specs_own_calibrations_took(tmp_path: Path) -> None:
    plan = make_spec(tmp_path)
    one_run = sum(estimate_cell_s(c.spec) for c in plan.cells)
    both = {CELL_1: ["pass"], CELL_2: ["pass"]}

    def timed(load: int, runs: int, factor: float) -> dict[str, Any]:
        return {
            **cal(load, both),
            "runs": runs,
            "duration_s": factor * (runs * one_run + EXPERIMENT_S),
        }

    quiet_only = {"calibrations": [timed(0, 1, 2.0), cal(0, both)]}  # no duration: not counted
    debt = spec_debt("cal", tmp_path / "cal.yaml", plan.cells, quiet_only)
    assert debt.factors == (2.0, 2.0)  # beside burners borrows the quiet figure
    (loaded,) = debt.batches(GOAL_BURNERS)
    assert loaded.planned_s == pytest.approx(2.0 * (3 * one_run + EXPERIMENT_S))
    record = {"calibrations": [timed(0, 1, 2.0), timed(2, 2, 3.0), timed(1, 1, 9.0)]}
    assert spec_debt("cal", tmp_path / "cal.yaml", plan.cells, record).factors == (2.0, 3.0)
    assert spec_debt("cal", tmp_path / "cal.yaml", plan.cells, None).factors == (1.0, 1.0)


def test_cells_without_a_numeric_bound_are_not_owed(tmp_path: Path) -> None:
    text = SPEC.replace('  lost: 0\n  max_stall_s: ">= 54"\n', "").replace(
        '  stall_s.group: ">= 0.8 * faults.0.duration_s"\n  unavailable_s: "< 15.3"\n', ""
    )
    plan = make_spec(tmp_path, text)
    assert spec_debt("cal", tmp_path / "cal.yaml", plan.cells, None).cells == ()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A spec under an experiments/ folder with a record: CELL_1 done quiet, CELL_2 not."""
    folder = tmp_path / "experiments"
    (folder / "calibrations").mkdir(parents=True)
    (folder / "cal.yaml").write_text(SPEC, encoding="utf-8")
    record = {"spec": "cal", "calibrations": [cal(0, {CELL_1: ["pass"] * 3})]}
    (folder / "calibrations" / "cal.json").write_text(json.dumps(record))
    return folder / "cal.yaml"


def test_the_queue_prints_the_gap_and_lists_what_lacks_runs(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert calibration_queue.main([str(project)]) == 0
    out = capsys.readouterr().out
    assert "cal " in out and "0/3" in out and "planned machine time to close" in out
    assert calibration_queue.main([str(project), "--json"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)
    assert entry["name"] == "cal" and entry["spec"].endswith("cal.yaml")


def test_the_queue_runs_quiet_before_loaded_and_stops_at_its_budget(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls: list[list[str]] = []

    def fake_run(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        calls.append(cmd[3:])
        return subprocess.CompletedProcess(cmd, 1 if "--load" in cmd else 0)

    monkeypatch.setattr(calibration_queue.subprocess, "run", fake_run)
    out = project.parent / "out"
    assert calibration_queue.main([str(project), "--run", "--out", str(out)]) == 1  # a thin one
    assert [c[:2] for c in calls] == [["calibrate", str(project)]] * 2
    assert calls[0][2:6] == ["--runs", "3", "--cells", CELL_2]
    assert calls[1][2:6] == ["--runs", "3", "--load", "2"]
    assert all("--record" in c for c in calls)
    calls.clear()
    budget = ["--run", "--budget-minutes", "1", "--out", str(out)]
    assert calibration_queue.main([str(project), *budget]) == 3
    assert calls == [] and "would end past it" in capsys.readouterr().out


def test_a_batch_past_the_budget_is_skipped_and_the_next_that_fits_runs(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    big = project.parent / "big.yaml"  # no record: both cells owe 3 quiet runs
    big.write_text(SPEC.replace("name: cal", "name: big"), encoding="utf-8")
    small_s = calibration_queue.debt_of(project).planned_s(0)
    assert calibration_queue.debt_of(big).planned_s(0) > small_s
    calls: list[list[str]] = []

    def fake_run(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        calls.append(cmd[3:])
        return subprocess.CompletedProcess(cmd, 0)

    monkeypatch.setattr(calibration_queue.subprocess, "run", fake_run)
    budget = ["--budget-minutes", str((small_s + 1) / 60), "--out", str(project.parent / "o")]
    assert (
        calibration_queue.main([str(big), str(project), "--run", "--phase", "quiet", *budget]) == 3
    )
    assert [c[1] for c in calls] == [str(project)]  # big skipped, the small one ran
    assert "big --runs 3" in capsys.readouterr().out


def test_the_queue_names_a_missing_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert calibration_queue.main(["no/such.yaml"]) == 2
    assert "no/such.yaml: no such spec or suite file" in capsys.readouterr().err
