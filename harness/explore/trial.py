"""A schedule run as an ordinary cell: the cell's spec with the drawn `faults:`, one plan of
one cell through the plan runner (harness.experiment.run_plan) into its own run folder, so
every check, report and `verify` works on it. The only part of explore that starts clusters.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.experiment import Plan, run_plan
from harness.explore.generator import with_faults
from harness.explore.search import RunTrial, TrialRun
from harness.explore.states import cell_states
from harness.nemesis.schedule import plan_faults
from harness.results.layout import RunPaths
from harness.runner.status import Reporter
from harness.spec import Cell
from harness.spec.explore_roles import Entry
from harness.verdict.run_verify import SparkChecks


def plan_runner(
    spec_path: Path,
    seed: int,
    out: Path,
    report: Reporter,
    checks: SparkChecks | None,
    on_cell_done: Callable[[dict[str, Any]], None] = lambda summary: None,
) -> RunTrial:
    """A RunTrial that runs each schedule under `out/<label>/` with the explore seed; a
    cell that breaks is `unknown` (its error kept), never a violation."""

    def run(cell: Cell, faults: list[Entry], label: str) -> TrialRun:
        spec = with_faults(cell.spec, faults)
        one = Cell(cell.id, cell.params, spec)
        plan = Plan(spec_path, spec, seed, True, [one], {one.id: plan_faults(one, seed)})
        folder = out / label
        try:
            folder.mkdir(parents=True, exist_ok=True)
            run_dir, _, _ = run_plan(plan, folder, report, on_cell_done, checks=checks)
            cell_dir = RunPaths(run_dir).cell(one.id)
            summary = json.loads(cell_dir.summary.read_text())
        except Exception as exc:  # one trial lost, not the exploration
            first = (str(exc).splitlines() or [""])[0]
            return TrialRun([], "unknown", None, f"{type(exc).__name__}: {first}")
        found = [c for c in summary.get("checks") or [] if isinstance(c, dict)]
        return TrialRun(
            [{k: str(c.get(k, "")) for k in ("name", "verdict", "detail")} for c in found],
            str(summary.get("verdict", "unknown")),
            str(run_dir),
            reached=tuple(cell_states(cell_dir.root)),
        )

    return run
