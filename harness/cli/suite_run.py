"""The suite-running path: `run SUITE` (all of it, or one shard) and `merge-shards`, and
the suite's result table and exit code both end with."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from harness.cli.builds import refuse_unbuilt
from harness.cli.plans import load_suite_plan, print_suite_plan
from harness.cli.progress import CellProgress
from harness.cli.terminal import (
    EXIT_INFRA,
    EXIT_INTERRUPTED,
    EXIT_PASS,
    EXIT_USAGE,
    console,
    fail,
)
from harness.errors import ConfigError
from harness.results.flips import CONFIRM_FLIPS

if TYPE_CHECKING:
    from harness.experiment import Plan
    from harness.suite.runner import SuiteResult


def run_suite_file(
    path: Path,
    seed: int | None,
    out: Path,
    cells: str | None,
    keep_cluster: bool,
    dry_run: bool,
    shard: str | None,
    confirm_flips: int = CONFIRM_FLIPS,
) -> None:
    """`run SUITE`: every experiment of the suite (or of its shard) under one Spark session;
    a flipped cell is run again up to `confirm_flips` times (harness.suite.confirm)."""
    if keep_cluster:
        raise fail(EXIT_USAGE, "--keep-cluster keeps one experiment's cluster; not for a suite")
    plan = load_suite_plan(path, seed, cells, shard)
    print_suite_plan(plan)
    if plan.shard is not None and not plan.mine:  # more shards than experiments
        console.print(f"shard {plan.shard}: no experiment falls to it; nothing to run")
        return
    if dry_run:
        return
    refuse_unbuilt(cell for e in plan.runnable for cell in e.cells)
    from harness.experiment import run_plan
    from harness.suite.runner import run_suite
    from harness.verdict.run_verify import small_cells, spark_checks

    def say(line: str) -> None:
        console.print(f"[bold magenta]suite[/bold magenta] {line}", highlight=False)

    # One Spark session for every experiment's checks.
    small = small_cells(cell for e in plan.runnable for cell in e.cells)
    with spark_checks(small=small) as checks:

        def run_one(
            plan: Plan, folder: Path, cell_done: Callable[[dict[str, Any]], None]
        ) -> tuple[Path, dict[str, Any]]:
            run_dir, summary, _ = run_plan(plan, folder, CellProgress(), cell_done, checks=checks)
            return run_dir, summary

        try:
            result = run_suite(plan, out, run_one, say, confirm=confirm_flips)
        except KeyboardInterrupt:
            console.print("[yellow]interrupted[/yellow]: consumers stopped, cluster removed")
            raise typer.Exit(EXIT_INTERRUPTED) from None
    end_suite(result, shard=plan.shard is not None)


def end_suite(result: SuiteResult, shard: bool = False) -> None:
    """Print a suite run's (or merge's) result and exit with `run`'s code for its verdict."""
    from harness.verdict.run_verify import EXIT_FOR_VERDICT

    print_suite_result(result.summary)
    verdict = result.summary["verdict"]
    console.print(f"results: {result.folder}  verdict: [bold]{verdict}[/bold]")
    code = EXIT_FOR_VERDICT.get(verdict, EXIT_INFRA)
    if result.history is not None:
        console.print(f"history: appended to {result.history}")
    elif shard:
        console.print("history, index: not written by a shard (merge-shards writes them)")
        raise typer.Exit(code)
    else:
        console.print(f"[red]history not appended[/red]: {result.history_error}", highlight=False)
        code = EXIT_INFRA if code == EXIT_PASS else code
    if result.index is not None:
        console.print(f"index: {result.index}")
    else:
        console.print(f"[yellow]index not written[/yellow]: {result.index_error}", highlight=False)
    raise typer.Exit(code)


def print_suite_result(summary: dict[str, Any]) -> None:
    from harness.report.run_summary import overhead_line
    from harness.report.suite_summary import all_cells, cell_counts, format_duration
    from harness.results.timings import sum_timings

    cells = all_cells(summary.get("experiments") or [])
    table = Table(
        title=f"suite {summary.get('suite')}",
        caption=overhead_line(sum_timings(cells)),
        caption_justify="left",
    )
    columns = ("experiment", "verdict", "cells", "pass", "fail", "unknown", "flaky", "duration")
    for column in columns:
        table.add_column(column, justify="left" if column in ("experiment", "verdict") else "right")
    for e in summary.get("experiments") or []:
        counts = cell_counts(e)
        table.add_row(
            str(e.get("experiment")),
            str(e.get("verdict")),
            str(len(e.get("cells") or [])),
            *(str(counts[v]) for v in ("pass", "fail", "unknown", "flaky")),
            format_duration(e.get("duration_s")),
        )
    console.print(table)
    for flaky in summary.get("flaky") or []:
        console.print(
            f"[yellow]flaky[/yellow] (fails nothing): {flaky.get('experiment')} {flaky.get('cell')}",
            highlight=False,
        )


def merge_shards_command(
    folders: Annotated[
        list[Path], typer.Argument(help="The shard folders of one run (run SUITE --shard K/N).")
    ],
    out: Annotated[
        Path, typer.Option(help="The results folder the merged suite folder goes in.")
    ] = Path("results"),
) -> None:
    """Join the shards of one suite run into one suite folder (summary, JUnit), append the
    history and write the index; a shard that is missing or unfinished leaves its cells
    unknown. Exit codes as `run`."""
    from harness.suite.runner import merge_shards

    try:
        result = merge_shards(folders, out)
    except ConfigError as exc:  # not shards of one run, or a count or path out of bounds
        raise fail(EXIT_USAGE, str(exc)) from None
    except OSError as exc:  # --out (or a shard) could not be written or read
        raise fail(EXIT_INFRA, f"merging into {out}: {exc}") from None
    for line in result.summary.get("shards") or []:
        state = (
            "empty (no experiment fell to it)"
            if line.get("empty")
            else "finished"
            if line.get("finished")
            else "[red]did not report[/red]"
        )
        console.print(
            f"shard {line['index']}/{line['count']} {line.get('folder') or '-'}: {state}",
            highlight=False,
        )
    end_suite(result)
