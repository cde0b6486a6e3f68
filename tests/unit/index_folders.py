"""Hand-built results folders for the index tests: earlier nights in history.parquet, the
latest night as a suite folder with run folders and cell reports (no Docker, no Spark)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from harness.results.layout import SuitePaths, figure_history
from harness.suite.history import append_history, history_rows
from tests.unit.suite_folders import cell_summary, write_run

FIRST_NIGHT = datetime(2026, 11, 1, 1, 0, tzinfo=timezone.utc)
Cells = dict[str, list[dict[str, Any]]]  # experiment -> cell summaries


def night(n: int) -> datetime:
    return FIRST_NIGHT + timedelta(days=n)


def run_id(n: int, suite: str = "nightly") -> str:
    return f"{night(n).strftime('%Y%m%dT%H%M%SZ')}-suite-{suite}"


def suite_summary(
    n: int, experiments: Cells, suite: str = "nightly", harness: str | None = None
) -> dict[str, Any]:
    """A suite run's summary.json content, as the suite runner writes it (the fields read)."""
    rid = run_id(n, suite)
    return {
        "suite": suite,
        "run_id": rid,
        "verdict": "pass",
        "started": night(n).isoformat(),
        "duration_s": 3723.0,
        "harness": harness,
        "experiments": [
            {
                "experiment": name,
                "run_id": f"{rid}-{name}",
                "run_dir": f"experiments/{rid}-{name}",
                "seed": 7,
                "error": None,
                "cells": cells,
            }
            for name, cells in experiments.items()
        ],
    }


def append_night(
    results: Path, n: int, experiments: Cells, suite: str = "nightly", harness: str | None = None
) -> None:
    """An earlier night: only its rows in history.parquet (its folder is gone, as in CI)."""
    summary = suite_summary(n, experiments, suite, harness)
    append_history(figure_history(results), history_rows(summary))


def write_suite_folder(
    results: Path,
    n: int,
    experiments: Cells,
    suite: str = "nightly",
    history: bool = True,
    harness: str | None = None,
) -> Path:
    """A suite folder with each experiment's run folder and a report.html per cell."""
    summary = suite_summary(n, experiments, suite, harness)
    paths = SuitePaths(results / summary["run_id"])
    paths.experiments.mkdir(parents=True)
    paths.suite.write_text(f"suite: {suite}\n")
    paths.summary.write_text(json.dumps(summary))
    paths.summary_md.write_text(f"# suite {suite}\n")
    paths.junit.write_text("<testsuites/>\n")
    for e in summary["experiments"]:
        run = write_run(paths.root / e["run_dir"], e["experiment"], e["cells"])
        (run / "summary.md").write_text(f"# {e['experiment']}\n")
        for cell in e["cells"]:
            (run / "cells" / cell["cell"] / "report.html").write_text(f"<h1>{cell['cell']}</h1>")
    if history:
        append_history(figure_history(results), history_rows(summary))
    return paths.root


def nightly_results(results: Path) -> Path:
    """Nine earlier nights in the history, then the latest night (10) as a suite folder.

    acks/01_acks=1     pass, lost 0 every night     -> fail, lost 12   (flip, lost above)
    acks/02_acks=all   stall 8-10 s on nights 3-9 (30 s on night 1, outside the 7-night
                       window)                      -> stall 30 s      (max_stall_s above)
    offsets/01_rf=1    fail, stall 40-45 s          -> pass, stall 44  (flip to pass only)
    offsets/02_rf=3    a new cell                   -> pass
    """
    for n in range(1, 10):
        stall = 30.0 if n == 1 else 8.0 + (n % 3)
        append_night(
            results,
            n,
            {
                "acks": [
                    cell_summary("01_acks=1", stalls={"group": 5.0 + n % 2}),
                    cell_summary("02_acks=all", stalls={"group": stall}),
                ],
                "offsets": [
                    cell_summary("01_rf=1", "fail", stalls={"group": 40.0 + n % 6}),
                ],
            },
        )
    return write_suite_folder(
        results,
        10,
        {
            "acks": [
                cell_summary("01_acks=1", "fail", lost=12, stalls={"group": 5.0}),
                cell_summary("02_acks=all", stalls={"group": 30.0}),
            ],
            "offsets": [
                cell_summary("01_rf=1", stalls={"group": 44.0}),
                cell_summary("02_rf=3", stalls={"group": 4.0}),
            ],
        },
    )
