"""`validate SPEC`: an experiment's or a suite's plan and what its cells need built."""

from __future__ import annotations

from harness.cli.builds import print_builds
from harness.cli.options import SpecArg
from harness.cli.plans import is_suite, load_plan, load_suite_plan, print_plan, print_suite_plan
from harness.cli.terminal import console


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
    console.print("[green]spec is valid[/green]")
