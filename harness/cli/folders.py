"""The verbs that read result folders and start nothing: `verify` (the checks again, from the
files alone), `compare` (two runs side by side) and `index` (results/index.html)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from harness.cli.options import SparkMasterOpt, use_spark_master
from harness.cli.terminal import EXIT_INFRA, EXIT_USAGE, console, fail
from harness.errors import ConfigError, HarnessError


def compare(
    run_a: Annotated[Path, typer.Argument(help="A run folder or suite folder (the earlier).")],
    run_b: Annotated[Path, typer.Argument(help="Another (the later).")],
) -> None:
    """Two runs side by side: verdict flips and figure changes; exit 1 if a pass flipped."""
    from harness.suite.compare import compare_folders, render_comparison, summary_lines

    try:
        comparison = compare_folders(run_a, run_b)
    except ConfigError as exc:
        raise fail(EXIT_USAGE, str(exc)) from None
    out = Console(width=None if sys.stdout.isatty() else 200)
    out.print(render_comparison(comparison))
    for line in summary_lines(comparison):
        out.print(line, highlight=False)
    raise typer.Exit(comparison.exit_code)


def index(
    results_dir: Annotated[
        Path, typer.Argument(help="The results folder: suite folders and history.parquet.")
    ],
    nights: Annotated[
        int,
        typer.Option(min=1, help="A figure is flagged outside its range over this many nights."),
    ] = 7,
) -> None:
    """Write RESULTS_DIR/index.html: the latest suite run, what changed, trends, report links.
    A damaged summary.json or history.parquet is left out of the page and exits 2."""
    from harness.suite.index import write_index
    from harness.suite.index_inputs import Damage

    damaged: list[Damage] = []
    try:
        path = write_index(results_dir, nights, damaged)
    except ConfigError as exc:
        raise fail(EXIT_USAGE, str(exc)) from None
    except OSError as exc:
        raise fail(EXIT_INFRA, str(exc)) from None
    console.print(f"index: {path}", highlight=False)
    # The page is written without them; the exit code still says an input file is damaged.
    for d in damaged:
        console.print(f"[red]error:[/red] left out: {d.message}", highlight=False)
    if damaged:
        raise typer.Exit(EXIT_USAGE if any(not d.infra for d in damaged) else EXIT_INFRA)


def verify(
    results_dir: Annotated[Path, typer.Argument(help="A results/<run-id>/ folder.")],
    spark_master: SparkMasterOpt = None,
) -> None:
    """Re-run the checks of a result folder from its files alone (no cluster)."""
    use_spark_master(spark_master)
    from harness.report import render_table
    from harness.report.run_summary import TERMINAL_WIDTH
    from harness.verdict.run_verify import EXIT_FOR_VERDICT, verify_run

    try:
        summary = verify_run(results_dir)
    except ConfigError as exc:  # not a result folder, or its spec.yaml is wrong
        raise fail(EXIT_USAGE, str(exc)) from None
    except (HarnessError, OSError) as exc:  # the folder could not be read or written
        raise fail(EXIT_INFRA, str(exc)) from None
    console.print(render_table(summary["cells"]), width=min(console.width, TERMINAL_WIDTH))
    missing = summary.get("missing_cells") or []
    if missing:
        console.print(
            f"[yellow]missing cells[/yellow] (planned, no folder in {results_dir}; unknown): "
            + ", ".join(str(c) for c in missing),
            highlight=False,
        )
    console.print(f"verdict: [bold]{summary['verdict']}[/bold]")
    raise typer.Exit(EXIT_FOR_VERDICT.get(summary["verdict"], EXIT_INFRA))
