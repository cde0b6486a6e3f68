"""`validate SPEC`: an experiment's or a suite's plan and what its cells need built."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from harness.cli.builds import print_builds
from harness.cli.explore import print_first_schedules
from harness.cli.options import SpecArg
from harness.cli.plans import is_suite, load_plan, load_suite_plan, print_plan, print_suite_plan
from harness.cli.terminal import console

if TYPE_CHECKING:
    from harness.experiment import Plan


def validate(spec: SpecArg) -> None:
    """Check a spec (or a suite) and show its cells, fault schedule and what they need built
    (missing builds are listed, exit code still 0); nothing is started."""
    if is_suite(spec):
        suite = load_suite_plan(spec, None, None)
        print_suite_plan(suite)
        print_builds(cell for e in suite.runnable for cell in e.cells)
        console.print("[green]suite is valid[/green]")
        return
    plan = load_plan(spec, None, None)
    print_plan(plan)
    print_builds(plan.cells)
    print_calibration_record(plan)
    print_first_schedules(plan)
    console.print("[green]spec is valid[/green]")


def print_calibration_record(plan: Plan) -> None:
    """The spec's calibration record in a few lines: when, and the bounds it does not back
    (thin, failed, unmeasured, or a cell the spec no longer has). Nothing without a record."""
    from harness.results.calibration_record import headline, read_record, record_path
    from harness.verdict.calibrated import calibrated_bounds, unknown_cells

    path = record_path(plan.spec_path, plan.spec.name)
    if path.is_relative_to(Path.cwd()):
        path = path.relative_to(Path.cwd())
    try:
        record = read_record(path)
    except ValueError as exc:
        console.print(f"[yellow]calibration record[/yellow]: {exc}", highlight=False)
        return
    if record is None:
        console.print(f"not calibrated: no {path}", highlight=False)
        return
    console.print(f"{headline(record)} ({path})", highlight=False)
    stale = unknown_cells(record, plan.cells)
    if stale:
        console.print(f"  [yellow]stale[/yellow]: the record names cells the spec lacks: {stale}")
    for row in calibrated_bounds(record, plan.cells):
        if row.status != "ok":
            margin = "" if row.margin is None else f", margin {row.margin * 100:.0f} %"
            console.print(
                f"  [yellow]{row.status}[/yellow]: {row.cell} {row.metric} {row.bound}{margin}",
                highlight=False,
            )
