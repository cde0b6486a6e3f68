"""A whole experiment: spec → cells → each cell run and checked → run summary (and `verify`)."""

from __future__ import annotations

import contextlib
import json
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from harness.cluster.kafka_cluster import KafkaCluster
from harness.errors import ConfigError
from harness.nemesis.schedule import PlannedFault, plan_faults
from harness.report import write_run_summary
from harness.results.layout import RunPaths
from harness.runner.cell_runner import CellRunner
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
from harness.verdict.cell_verdict import gap_ms, summarize

EXIT_FOR_VERDICT = {"pass": 0, "fail": 1, "unknown": 3}


@dataclass
class Plan:
    """Everything `run` will do, known before anything starts (`validate`, `--dry-run`)."""

    spec_path: Path
    spec: Spec
    seed: int
    seed_given: bool
    cells: list[Cell]
    schedules: dict[str, list[PlannedFault]]


def make_plan(spec_path: Path, seed: int | None = None, cells_filter: str | None = None) -> Plan:
    spec = load_spec(spec_path)
    chosen = seed if seed is not None else spec.seed
    given = chosen is not None
    seed_value = chosen if chosen is not None else choose_seed()
    cells = expand_cells(spec, str(spec_path))
    if cells_filter:
        cells = filter_cells(cells, cells_filter)
    schedules = {c.id: plan_faults(c, seed_value) for c in cells}
    return Plan(spec_path, spec, seed_value, given, cells, schedules)


def new_run_id(spec: Spec) -> str:
    return f"{datetime.now(timezone.utc).strftime('%Y%m%dT%H%M%SZ')}-{spec.name}"


class SparkChecks:
    """One Spark session for every cell's checks, started when first needed: the JVM start is
    paid once per run. Its master: $KAFKA_CHAOS_SPARK_MASTER (`--spark-master`), else
    local[2]."""

    def __init__(self) -> None:
        self._spark: Any = None

    def verify(self, cell: Cell, cell_dir: Path) -> dict[str, Any]:
        try:
            from spark_jobs.session import spark_session
            from spark_jobs.verify import verify_cell

            if self._spark is None:
                self._spark = spark_session()
            metrics = verify_cell(self._spark, cell_dir, gap_ms(cell))
        except Exception as exc:
            return summarize(cell, cell_dir, None, f"{type(exc).__name__}: {exc}")
        return summarize(cell, cell_dir, metrics)

    def close(self) -> None:
        if self._spark is not None:
            with contextlib.suppress(Exception):
                self._spark.stop()
            self._spark = None


@contextlib.contextmanager
def spark_checks() -> Iterator[SparkChecks]:
    checks = SparkChecks()
    try:
        yield checks
    finally:
        checks.close()


def run_plan(
    plan: Plan,
    out: Path,
    report: Reporter,
    on_cell_done: Callable[[dict[str, Any]], None],
    keep_cluster: bool = False,
) -> tuple[Path, dict[str, Any], KafkaCluster | None]:
    """Run every cell in turn; a cell that breaks is `unknown` and the next one still runs."""
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
    with spark_checks() as checks:
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
            )
            try:
                runner.run()
            except Exception as exc:  # in the cell's history too; its checks say `unknown`
                first_line = (str(exc).splitlines() or [""])[0]
                runner.status.lines.append(f"cell error: {type(exc).__name__}: {first_line}")
                report(runner.status)
            kept = runner.kept or kept
            summary = checks.verify(cell, cell_dir)
            summaries.append(summary)
            on_cell_done(summary)
    info = {
        "run_id": run_id,
        "spec": plan.spec.name,
        "seed": plan.seed,
        "started": started,
        "duration_s": round(time.monotonic() - t0, 1),
    }
    return run_dir, write_run_summary(run_dir, info, summaries), kept


def verify_run(run_dir: Path) -> dict[str, Any]:
    """Re-run every check of a result folder from its files alone (Jepsen's `analyze`).

    ConfigError when the folder is not a result folder or its spec.yaml does not hold its cells.
    """
    paths = RunPaths(run_dir)
    if not paths.spec.exists():
        raise ConfigError(f"{run_dir} is not a result folder: it has no spec.yaml")
    old = json.loads(paths.summary.read_text()) if paths.summary.exists() else {}
    spec = load_spec(paths.spec)
    cells = {c.id: c for c in expand_cells(spec, str(paths.spec))}
    present = paths.cell_ids()
    unknown = [c for c in present if c not in cells]
    if unknown:
        raise ConfigError(f"cells {unknown} of {run_dir} are not cells of its spec.yaml")
    summaries = []
    with spark_checks() as checks:
        for cell_id in present:
            summaries.append(checks.verify(cells[cell_id], paths.cell(cell_id).root))
    info = {k: old.get(k) for k in ("run_id", "started", "duration_s")}
    info.update(spec=spec.name, seed=spec.seed, run_id=old.get("run_id", run_dir.name))
    return write_run_summary(run_dir, info, summaries)
