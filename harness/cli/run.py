"""`run SPEC`: an experiment's cells against real clusters, then checks, verdicts and reports
(a suite file goes to harness.cli.suite_run)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer

from harness.cli.builds import refuse_unbuilt
from harness.cli.options import SEED_MAX, SparkMasterOpt, SpecArg, use_spark_master
from harness.cli.plans import is_suite, load_plan, print_plan
from harness.cli.progress import CellProgress
from harness.cli.suite_run import run_suite_file
from harness.cli.terminal import EXIT_INFRA, EXIT_INTERRUPTED, EXIT_USAGE, console, fail
from harness.errors import HarnessError
from harness.results.flips import CONFIRM_FLIPS

KEEP_CLUSTER_MAX_S = 3600
MAX_CONFIRM_FLIPS = 10


def run(
    spec: SpecArg,
    seed: Annotated[
        int | None,
        typer.Option(min=0, max=SEED_MAX, help="Seed for cells and the fault schedule."),
    ] = None,
    out: Annotated[Path, typer.Option(help="Where results/<run-id>/ goes.")] = Path("results"),
    cells: Annotated[
        str | None, typer.Option(help="Only cells whose id matches (comma list, globs).")
    ] = None,
    keep_cluster: Annotated[
        bool, typer.Option(help="Keep the last cell's cluster up until Ctrl-C (at most an hour).")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show cells and schedule, start nothing.")
    ] = False,
    shard: Annotated[
        str | None,
        typer.Option(
            help="Suites only: run part K of N (K/N), whole experiments; join the parts with "
            "merge-shards."
        ),
    ] = None,
    confirm_flips: Annotated[
        int | None,
        typer.Option(
            min=0,
            max=MAX_CONFIRM_FLIPS,
            help="Suites only: run a cell whose verdict flipped into or out of fail against "
            "its previous run (history.parquet) again with the same seed, up to N times; a "
            "flip a re-run contradicts is flaky and fails nothing. Default 1; 0: never.",
        ),
    ] = None,
    spark_master: SparkMasterOpt = None,
) -> None:
    """Run an experiment (or a suite): every cell against a real cluster, then checks, verdicts
    and reports."""
    use_spark_master(spark_master)
    if is_suite(spec):
        confirm = CONFIRM_FLIPS if confirm_flips is None else confirm_flips
        run_suite_file(spec, seed, out, cells, keep_cluster, dry_run, shard, confirm)
        return
    if shard is not None:
        raise fail(EXIT_USAGE, f"--shard splits a suite; {spec} is an experiment file")
    if confirm_flips is not None:
        raise fail(EXIT_USAGE, f"--confirm-flips is for a suite; {spec} is an experiment file")
    plan = load_plan(spec, seed, cells)
    print_plan(plan)
    if dry_run:
        return
    refuse_unbuilt(plan.cells)
    from harness.experiment import EXIT_FOR_VERDICT, run_plan
    from harness.report import render_table
    from harness.report.run_summary import TERMINAL_WIDTH

    def cell_done(summary: dict[str, Any]) -> None:
        console.print(f"  {summary['cell']} verdict [bold]{summary['verdict']}[/bold]")

    try:
        run_dir, summary, kept = run_plan(plan, out, CellProgress(), cell_done, keep_cluster)
    except HarnessError as exc:
        raise fail(EXIT_INFRA, str(exc)) from None
    except KeyboardInterrupt:  # the cell has already stopped its consumers and its cluster
        console.print("[yellow]interrupted[/yellow]: consumers stopped, cluster removed")
        raise typer.Exit(EXIT_INTERRUPTED) from None
    console.print(render_table(summary["cells"]), width=min(console.width, TERMINAL_WIDTH))
    console.print(f"results: {run_dir}  verdict: [bold]{summary['verdict']}[/bold]")
    if kept is not None:
        console.print(f"cluster kept at {kept.bootstrap_servers}; Ctrl-C removes it")
        try:
            time.sleep(KEEP_CLUSTER_MAX_S)
        except KeyboardInterrupt:
            pass
        finally:
            kept.close()
    raise typer.Exit(EXIT_FOR_VERDICT.get(summary["verdict"], EXIT_INFRA))
