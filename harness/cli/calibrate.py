"""`calibrate SPEC`: each cell run N times with the spec's seed (one schedule: what varies is
the noise), optionally beside K CPU burners, then every bound's figures, spread, margin and a
bound with 30 % margin (harness.verdict.calibration) in a table and calibration.json."""

from __future__ import annotations

import json
import os
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from harness._version import revision
from harness.cli.builds import refuse_unbuilt
from harness.cli.options import SparkMasterOpt, use_spark_master
from harness.cli.plans import is_suite, load_plan, print_plan
from harness.cli.progress import CellProgress
from harness.cli.terminal import EXIT_INFRA, EXIT_INTERRUPTED, EXIT_USAGE, console, fail
from harness.common.agreement import agreed

if TYPE_CHECKING:
    from collections.abc import Sequence

    from harness.experiment import Plan
    from harness.spec import Cell

RUNS_MAX, LOAD_MAX = 100, 64
BURNER_CAP_MAX_S = 86400.0
# calibration.json's status -> the exit code (docs/cli.md).
EXIT_FOR_STATUS = {"ok": 0, "thin": 1, "failed": 1, "undecided": 3}


def load_average() -> list[float] | None:
    """The machine's 1, 5 and 15 min load averages (/proc/loadavg), None where there are none."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def burner_cap_s(plan: Plan, runs: int) -> float:
    """How long the burners may live: three times the runs' planned time, plus 10 min."""
    from harness.suite.estimate import estimate_cell_s, estimate_experiment_s

    planned = estimate_experiment_s([estimate_cell_s(c.spec) for c in plan.cells])
    return min(BURNER_CAP_MAX_S, 3 * runs * planned + 600)


def run_calibration(plan: Plan, folder: Path, runs: int) -> list[dict[str, Any]]:
    """Run the plan `runs` times into `folder` (one Spark session for all); each run's folder
    (or error), verdict, load averages and duration. Ctrl-C goes through."""
    from harness.experiment import run_plan
    from harness.verdict.run_verify import small_cells, spark_checks

    def cell_done(summary: dict[str, Any]) -> None:
        console.print(f"  {summary['cell']} verdict [bold]{summary['verdict']}[/bold]")

    records: list[dict[str, Any]] = []
    with spark_checks(small=small_cells(plan.cells)) as checks:
        for n in range(1, runs + 1):
            console.print(f"[bold magenta]calibrate[/bold magenta] run {n}/{runs}")
            record: dict[str, Any] = {"run": n, "folder": None, "verdict": "unknown"}
            record["loadavg_start"] = load_average()
            t0 = time.monotonic()
            try:
                run_dir, summary, _ = run_plan(
                    plan, folder, CellProgress(), cell_done, checks=checks
                )
            except Exception as exc:  # an hour of runs is not lost to one: its cells undecided
                first = (str(exc).splitlines() or [""])[0]
                record["error"] = f"{type(exc).__name__}: {first}"
            else:
                record["folder"], record["verdict"] = str(run_dir), summary.get("verdict")
            record["loadavg_end"] = load_average()
            record["duration_s"] = round(time.monotonic() - t0, 1)
            records.append(record)
    return records


def record_calibration(spec: Path, name: str, doc: dict[str, Any]) -> None:
    """Merge `doc` into the spec's calibration record (harness.results.calibration_record)."""
    from harness.results.calibration_record import merged, read_record, record_path, write_record

    path = record_path(spec, name)
    try:
        write_record(path, merged(read_record(path), doc))
    except (OSError, ValueError) as exc:
        raise fail(EXIT_INFRA, f"{path}: {exc}") from None
    console.print(f"recorded: {path}", highlight=False)


def earlier_runs(plan: Plan, folders: list[Path]) -> list[dict[str, Any]]:
    """The run_folders entries of runs `harness run` already made of this spec (`--from`):
    each folder's verdict, seed and the highest load its cells' machine samplers saw."""
    from harness.results.layout import RunPaths

    records: list[dict[str, Any]] = []
    for n, folder in enumerate(folders, start=1):
        try:
            summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise fail(
                EXIT_USAGE, f"--from {folder}: not a finished run's folder ({exc})"
            ) from None
        if not isinstance(summary, dict) or summary.get("spec") != plan.spec.name:
            got = summary.get("spec") if isinstance(summary, dict) else None
            raise fail(EXIT_USAGE, f"--from {folder}: a run of {got!r}, not of {plan.spec.name!r}")
        loads = []
        for cell in plan.cells:
            try:
                cell_summary = json.loads(RunPaths(folder).cell(cell.id).summary.read_text())
            except (OSError, ValueError):
                continue
            load = (cell_summary.get("machine") or {}).get("load1_max")
            if isinstance(load, (int, float)):
                loads.append(float(load))
        records.append(
            {
                "run": n,
                "folder": str(folder),
                "verdict": summary.get("verdict", "unknown"),
                "seed": summary.get("seed"),
                "started": summary.get("started"),
                "load1_max": max(loads, default=None),
                "duration_s": summary.get("duration_s"),
                "harness": summary.get("harness"),
            }
        )
    return records


def calibrate(
    spec: Annotated[Path, typer.Argument(help="Experiment file (YAML).")],
    runs: Annotated[
        int, typer.Option(min=1, max=RUNS_MAX, help="Runs of every selected cell.")
    ] = 3,
    load: Annotated[
        int,
        typer.Option(
            min=0, max=LOAD_MAX, help="CPU burners (one busy process each) beside the runs."
        ),
    ] = 0,
    cells: Annotated[
        str | None, typer.Option(help="Only cells whose id matches (comma list, globs).")
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            help="The calibration's folder: its run folders and calibration.json "
            "(default results/<UTC start>-calibrate-<spec name>)."
        ),
    ] = None,
    spark_master: SparkMasterOpt = None,
    record: Annotated[
        bool,
        typer.Option(
            "--record",
            help="Also add the figures to the spec's calibration record "
            "(experiments/calibrations/<spec name>.json), which the docs cite.",
        ),
    ] = False,
    from_runs: Annotated[
        list[Path] | None,
        typer.Option(
            "--from",
            help="Judge run folders `harness run` already made of this spec (e.g. make "
            "chaos-run's) instead of running: one run per folder, no burners; repeat the "
            "option for each folder (--from A --from B).",
        ),
    ] = None,
) -> None:
    """Run each cell N times with the spec's seed and say how far every bound of `expect:`
    sits from its figures; suggest bounds with 30 % margin."""
    use_spark_master(spark_master)
    if is_suite(spec):
        raise fail(EXIT_USAGE, f"calibrate runs one experiment; {spec} is a suite file")
    if from_runs and load:
        raise fail(EXIT_USAGE, "--from judges runs already made; --load cannot apply to them")
    plan = load_plan(spec, None, cells)
    from harness.verdict.calibration import has_numeric_bound

    if not any(has_numeric_bound(c) for c in plan.cells):
        raise fail(EXIT_USAGE, f"{spec}: no selected cell has a numeric bound to calibrate")
    started = datetime.now(timezone.utc)
    folder = out or Path("results") / (
        f"{started.strftime('%Y%m%dT%H%M%SZ')}-calibrate-{plan.spec.name}"
    )
    if from_runs:
        records = earlier_runs(plan, from_runs)
        info = {
            "spec": plan.spec.name,
            "file": str(spec),
            "seed": agreed(r["seed"] for r in records),
            "runs": len(records),
            "load": 0,
            "cells_filter": cells,
            # the runs' own start, so that judging the same folders again records nothing new
            "started": min((str(r["started"]) for r in records if r["started"]), default=None)
            or started.isoformat(timespec="seconds"),
            "from_runs": True,
            "duration_s": 0.0,
            # the code that ran and judged the runs, when they agree on one
            "harness": agreed(r["harness"] for r in records),
            "run_folders": records,
        }
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise fail(EXIT_INFRA, f"{folder}: {exc}") from None
        finish(spec, plan.spec.name, info, plan.cells, folder, record)
    print_plan(plan)
    refuse_unbuilt(plan.cells)
    console.print(
        f"calibrating: {len(plan.cells)} cell(s) x {runs} run(s), seed {plan.seed}, "
        f"{load} CPU burner(s); folder {folder}",
        highlight=False,
    )
    from harness.common.burners import cpu_burners

    t0 = time.monotonic()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with cpu_burners(load, burner_cap_s(plan, runs)):
            records = run_calibration(plan, folder, runs)
    except KeyboardInterrupt:  # the cell has stopped its consumers and its cluster
        console.print("[yellow]interrupted[/yellow]: runs and burners stopped, cluster removed")
        raise typer.Exit(EXIT_INTERRUPTED) from None
    except OSError as exc:
        raise fail(EXIT_INFRA, f"{folder}: {exc}") from None
    info = {
        "spec": plan.spec.name,
        "file": str(spec),
        "seed": plan.seed,
        "runs": runs,
        "load": load,
        "cells_filter": cells,
        "started": started.isoformat(timespec="seconds"),
        "duration_s": round(time.monotonic() - t0, 1),
        "harness": revision(),  # the code that ran and judged these runs
        "run_folders": records,
    }
    finish(spec, plan.spec.name, info, plan.cells, folder, record)


def finish(
    spec: Path, name: str, info: dict[str, Any], cells: Sequence[Cell], folder: Path, record: bool
) -> NoReturn:
    """calibration.json from the runs `info` lists, printed, written into `folder` (and the
    record); exits with the calibration's status."""
    from harness.verdict.calibration import calibration

    records = info["run_folders"]
    folders = [Path(r["folder"]) if r["folder"] else r.get("error", "") for r in records]
    doc = calibration(info, cells, folders)
    from harness.cli.calibration_table import print_calibration
    from harness.results.layout import CALIBRATION

    try:
        (folder / CALIBRATION).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        raise fail(EXIT_INFRA, f"{folder / CALIBRATION}: {exc}") from None
    print_calibration(doc)
    console.print(f"written: {folder / CALIBRATION}", highlight=False)
    if record:
        record_calibration(spec, name, doc)
    raise typer.Exit(EXIT_FOR_STATUS.get(doc["status"], EXIT_INFRA))
