"""Hand-built run folders and a fake experiment runner for the suite tests (no Docker)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.experiment import Plan
from harness.results.layout import RunPaths


def cell_summary(
    cell: str,
    verdict: str = "pass",
    *,
    lost: int | None = 0,
    duplicated: int | None = 0,
    reprocessed: int | None = 0,
    stalls: dict[str, float | None] | None = None,
    unavailable_s: float | None = 1.0,
    version: str = "3.9.2",
    mode: str = "kraft",
    duration_s: float | None = 60.0,
) -> dict[str, Any]:
    """A cell's summary.json as the checks write it (the fields the suite reads)."""
    stalls = {"group": 5.0} if stalls is None else stalls
    decided = [v for v in stalls.values() if v is not None]
    checks = [{"name": "run", "verdict": "pass", "detail": "ran"}]
    if verdict != "pass":
        checks.append({"name": "lost", "verdict": verdict, "detail": f"lost = {lost}"})
    return {
        "cell": cell,
        "params": {"mode": mode, "version": version},
        "verdict": verdict,
        "counts": {
            "attempted": 100,
            "acked": 100,
            "lost": lost,
            "lost_never_consumed": 0,
            "duplicated": duplicated,
            "reprocessed": reprocessed,
            "unacked_present": 0,
            "out_of_order": 0,
            "failed": 0,
        },
        "max_stall_s": max(decided) if decided else None,
        "unavailable_s": unavailable_s,
        "stalls_by_set": stalls,
        "checks": checks,
        "duration_s": duration_s,
    }


def write_run(folder: Path, spec: str, cells: list[dict[str, Any]]) -> Path:
    """An experiment's run folder: spec.yaml, summary.json, cells/<id>/summary.json."""
    paths = RunPaths(folder)
    paths.cells.mkdir(parents=True)
    paths.spec.write_text(f"name: {spec}\nproducer: {{records: 10}}\n")
    verdicts = {c["verdict"] for c in cells}
    verdict = "fail" if "fail" in verdicts else "unknown" if "unknown" in verdicts else "pass"
    summary = {"run_id": folder.name, "spec": spec, "seed": 1, "verdict": verdict, "cells": cells}
    paths.summary.write_text(json.dumps(summary))
    for c in cells:
        paths.cell(c["cell"]).root.mkdir()
        paths.cell(c["cell"]).summary.write_text(json.dumps(c))
    return folder


CellDone = Callable[[dict[str, Any]], None]


class FakeRunner:
    """Stands in for `run_plan`: writes a hand-built run folder per experiment.

    verdicts: `<experiment>/<cell id>` -> verdict (default pass), or a list of verdicts, one
    per time the cell runs (a re-run of a flipped cell takes the next; the last one repeats);
    `raise_in`: experiments whose run raises after `cells_before_raise` cells (a broken Spark
    session, a full disk …). A second run of an experiment into the same folder gets `-2`.
    """

    def __init__(
        self,
        verdicts: dict[str, str | list[str]] | None = None,
        raise_in: set[str] | None = None,
        cells_before_raise: int = 0,
        interrupt_in: str | None = None,
    ) -> None:
        self.verdicts = verdicts or {}
        self.raise_in = raise_in or set()
        self.cells_before_raise = cells_before_raise
        self.interrupt_in = interrupt_in
        self.calls: list[tuple[str, list[str], int]] = []  # (experiment, cell ids, seed)
        self.runs: dict[str, int] = {}  # `<experiment>/<cell id>` -> times it ran

    def __call__(self, plan: Plan, out: Path, cell_done: CellDone) -> tuple[Path, dict[str, Any]]:
        name = plan.spec.name
        self.calls.append((name, [c.id for c in plan.cells], plan.seed))
        if name == self.interrupt_in:
            raise KeyboardInterrupt
        summaries = []
        for i, cell in enumerate(plan.cells):
            if name in self.raise_in and i == self.cells_before_raise:
                raise RuntimeError(f"spark session died in {name}\nsecond line")
            key = f"{name}/{cell.id}"
            given = self.verdicts.get(key, "pass")
            n = self.runs[key] = self.runs.get(key, 0) + 1
            verdict = given if isinstance(given, str) else given[min(n, len(given)) - 1]
            summary = cell_summary(
                cell.id,
                verdict,
                lost=0 if verdict == "pass" else 7,
                version=cell.spec.cluster.version,
                mode=cell.spec.cluster.mode,
            )
            summaries.append(summary)
            cell_done(summary)
        run_dir, k = out / f"20260101T000000Z-{name}", 2
        while run_dir.exists():
            run_dir, k = out / f"20260101T000000Z-{name}-{k}", k + 1
        run_dir = write_run(run_dir, name, summaries)
        summary = json.loads(RunPaths(run_dir).summary.read_text())
        return run_dir, summary
