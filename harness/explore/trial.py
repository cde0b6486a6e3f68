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
from harness.explore.cluster_pool import ClusterPool, shared_capabilities
from harness.explore.generator import with_faults
from harness.explore.search import RunTrial, TrialRun
from harness.explore.states import states_of
from harness.nemesis.schedule import plan_faults
from harness.results import events as ev
from harness.results.history_reader import read_jsonl
from harness.results.layout import RunPaths
from harness.runner.cell_runner import Parts
from harness.runner.status import Reporter
from harness.spec import Cell, Spec
from harness.spec.explore_roles import Entry
from harness.verdict.run_verify import SparkChecks


def injected_faults(events: list[dict[str, Any]] | None) -> int | None:
    """How many faults the cell's history shows injected (None: it could not be read)."""
    if events is None:
        return None
    return sum(1 for e in events if e.get("kind") in (ev.FAULT_INJECT, ev.CONSUMER_CRASH))


def _events(history: Path) -> list[dict[str, Any]] | None:
    try:
        return read_jsonl(history)[0]
    except Exception:  # a history that cannot be read says nothing, either way
        return None


def plan_runner(
    spec_path: Path,
    seed: int,
    out: Path,
    report: Reporter,
    checks: SparkChecks | None,
    on_cell_done: Callable[[dict[str, Any]], None] = lambda summary: None,
    pool: ClusterPool | None = None,
) -> RunTrial:
    """A RunTrial that runs each schedule under `out/<label>/` with the explore seed; a
    cell that breaks is `unknown` (its error kept), never a violation. With a `pool`, a
    trial runs on the cluster the one before left when it may (harness.explore.cluster_pool)."""

    shared: dict[str, Spec] = {}  # each cell's spec with the capabilities its trials share

    def run(cell: Cell, faults: list[Entry], label: str) -> TrialRun:
        if pool is not None and pool.enabled and cell.id not in shared:
            shared[cell.id] = shared_capabilities(cell.spec)
        spec = with_faults(shared.get(cell.id, cell.spec), faults)
        one = Cell(cell.id, cell.params, spec)
        plan = Plan(spec_path, spec, seed, True, [one], {one.id: plan_faults(one, seed)})
        folder = out / label
        parts = None if pool is None else Parts(cluster=pool.factory(spec, label))
        try:
            folder.mkdir(parents=True, exist_ok=True)
            run_dir, _, kept = run_plan(
                plan,
                folder,
                report,
                on_cell_done,
                keep_cluster=pool is not None and pool.enabled,
                checks=checks,
                parts=parts,
            )
            if pool is not None:
                pool.keep(kept, faults, label)
            cell_dir = RunPaths(run_dir).cell(one.id)
            summary = json.loads(cell_dir.summary.read_text())
        except Exception as exc:  # one trial lost, not the exploration
            first = (str(exc).splitlines() or [""])[0]
            return TrialRun([], "unknown", None, f"{type(exc).__name__}: {first}")
        found = [c for c in summary.get("checks") or [] if isinstance(c, dict)]
        events = _events(cell_dir.history)  # read once: the states and the faults injected
        return TrialRun(
            [{k: str(c.get(k, "")) for k in ("name", "verdict", "detail")} for c in found],
            str(summary.get("verdict", "unknown")),
            str(run_dir),
            reached=tuple(states_of(events or [], summary)),
            injected=injected_faults(events),
        )

    return run
