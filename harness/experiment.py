"""A whole experiment: spec → cells → each cell run and checked → run summary.

`verify` (harness.verdict.run_verify) is re-exported for callers of the run side."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from harness._version import revision
from harness.cluster.kafka_cluster import KafkaCluster
from harness.nemesis.schedule import PlannedFault, plan_faults
from harness.report import write_run_summary
from harness.runner.cell_runner import CellRunner, Parts
from harness.runner.status import Reporter
from harness.spec import (
    Cell,
    Spec,
    choose_seed,
    expand_cells,
    filter_cells,
    load_spec,
    spec_to_yaml,
)
from harness.verdict.checks_behind import ChecksBehind
from harness.verdict.run_verify import (
    EXIT_FOR_VERDICT,
    SparkChecks,
    small_cells,
    spark_checks,
    verify_run,
)


@dataclass
class Plan:
    """Everything `run` will do, known before anything starts (`validate`, `--dry-run`)."""

    spec_path: Path
    spec: Spec
    seed: int
    seed_given: bool
    cells: list[Cell]
    schedules: dict[str, list[PlannedFault]]
    cells_filter: str | None = None  # `--cells`: recorded in the run summary beside the plan


def make_plan(spec_path: Path, seed: int | None = None, cells_filter: str | None = None) -> Plan:
    spec = load_spec(spec_path)
    chosen = seed if seed is not None else spec.seed
    given = chosen is not None
    seed_value = chosen if chosen is not None else choose_seed()
    cells = expand_cells(spec, str(spec_path))
    if cells_filter:
        cells = filter_cells(cells, cells_filter)
    schedules = {c.id: plan_faults(c, seed_value) for c in cells}
    return Plan(spec_path, spec, seed_value, given, cells, schedules, cells_filter or None)


def new_run_id(spec: Spec) -> str:
    return f"{datetime.now(timezone.utc).strftime('%Y%m%dT%H%M%SZ')}-{spec.name}"


def run_plan(
    plan: Plan,
    out: Path,
    report: Reporter,
    on_cell_done: Callable[[dict[str, Any]], None],
    keep_cluster: bool = False,
    checks: SparkChecks | None = None,
    parts: Parts | None = None,
) -> tuple[Path, dict[str, Any], KafkaCluster | None]:
    """Run every cell in turn; a cell that breaks is `unknown` and the next one still runs.

    The checks' Spark session starts while the first cluster does (`checks`: a suite's, kept
    across its experiments); a cell's collect-behind and checks run while the next cell's
    cluster starts, and each cell waits for both after its steady state
    (harness.verdict.checks_behind)."""
    run_id = new_run_id(plan.spec)
    while (out / run_id).exists():  # two runs of one spec started in the same second
        run_id = f"{new_run_id(plan.spec)}-{uuid.uuid4().hex[:4]}"
    run_dir = out / run_id
    (run_dir / "cells").mkdir(parents=True)
    (run_dir / "spec.yaml").write_text(spec_to_yaml(plan.spec, plan.seed), encoding="utf-8")
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    t0 = time.monotonic()
    summaries: list[dict[str, Any]] = []
    kept: KafkaCluster | None = None
    with spark_checks(checks, small=small_cells(plan.cells)) as spark:
        spark.warm_up()

        def done(summary: dict[str, Any]) -> None:
            summaries.append(summary)
            on_cell_done(summary)

        behind = ChecksBehind(spark, done)
        runner: CellRunner | None = None
        try:
            for i, cell in enumerate(plan.cells):
                cell_dir = run_dir / "cells" / cell.id
                last = i == len(plan.cells) - 1
                runner = CellRunner(
                    cell,
                    plan.schedules[cell.id],
                    plan.seed,
                    cell_dir,
                    run_id,
                    report,
                    keep_cluster=keep_cluster and last,
                    checks_ready=behind.barrier,
                    checks_idle=behind.idle,
                    collect_behind=not last,
                    parts=parts,
                )
                try:
                    runner.run()
                except Exception as exc:  # in the cell's history too; its checks say `unknown`
                    first_line = (str(exc).splitlines() or [""])[0]
                    runner.status.lines.append(f"cell error: {type(exc).__name__}: {first_line}")
                    report(runner.status)
                kept = runner.kept or kept
                behind.run(cell, cell_dir, last, before=runner.behind)
        finally:
            behind.drain()
            if runner is not None and runner.behind is not None:
                runner.behind()  # never handed over (Ctrl-C): its cluster and history still go
            # Up to the last cell's checks: stopping the Spark session after them (~2 s) is
            # no cell's and not the run's work (a suite's session goes on).
            duration_s = round(time.monotonic() - t0, 1)
    info = {
        "run_id": run_id,
        "spec": plan.spec.name,
        "seed": plan.seed,
        "started": started,
        "duration_s": duration_s,
        "harness": revision(),  # the commit that ran and judged it (None: not a clone)
        # What the run meant to hold: `verify` judges the folder against it (a `--cells` or
        # suite run holds a subset of its spec's cells on purpose).
        "planned_cells": [c.id for c in plan.cells],
        "cells_filter": plan.cells_filter,
    }
    return run_dir, write_run_summary(run_dir, info, summaries), kept


__all__ = ["EXIT_FOR_VERDICT", "Plan", "make_plan", "new_run_id", "run_plan", "verify_run"]
