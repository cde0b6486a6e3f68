"""Command line: `python -m harness …` (also installed as `kafka-chaos`).

Exit codes (a contract): 0 every verdict pass; 1 some verdict fail; 2 bad spec or
usage; 3 infrastructure error or a verdict `unknown`. `run` and `validate` take an experiment
file or a suite file (a top-level `suite:` key: harness.suite); `compare` exits 1 when a
verdict flipped from pass; `index` writes results/index.html; `run SUITE --shard K/N` runs a
part of a suite and `merge-shards` joins the parts (harness.suite.shards).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from harness.errors import ConfigError, HarnessError

if TYPE_CHECKING:  # the run side (docker) loads only for `run` and `cleanup`
    from harness.experiment import Plan
    from harness.runner.status import Status
    from harness.spec import Cell
    from harness.suite.plan import SuitePlan
    from harness.suite.runner import SuiteResult

app = typer.Typer(
    add_completion=False, no_args_is_help=True, help="Chaos experiments on real Kafka clusters."
)
# Not a terminal (CI, a log file): wide enough that the results table keeps its columns.
console = Console(stderr=True, width=None if sys.stderr.isatty() else 200)

EXIT_PASS, EXIT_FAIL, EXIT_USAGE, EXIT_INFRA = 0, 1, 2, 3
EXIT_INTERRUPTED = 130  # Ctrl-C, as shells report it
KEEP_CLUSTER_MAX_S = 3600
SEED_MAX = 2**63 - 1  # harness.spec.models.MAX_SEED (not imported: the CLI loads lazily)
SpecArg = Annotated[Path, typer.Argument(help="Experiment file or suite file (YAML).")]


def _version(value: bool) -> None:
    if value:
        from harness._version import __version__

        typer.echo(f"kafka-chaos {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Chaos experiments on real Kafka clusters."""


def _fail(code: int, message: str) -> typer.Exit:
    # escaped: a message quotes what the user wrote, and `[/x]` in it is not rich markup
    console.print(f"[red]error:[/red] {escape(message)}", highlight=False)
    return typer.Exit(code)


def _plan(spec: Path, seed: int | None, cells: str | None) -> Any:
    from harness.experiment import make_plan

    try:
        return make_plan(spec, seed, cells)
    except ConfigError as exc:
        raise _fail(EXIT_USAGE, str(exc)) from None


def _print_plan(plan: Any) -> None:
    from harness.faults.registry import is_operation

    seed_note = "" if plan.seed_given else " (chosen; pass --seed to repeat)"
    console.print(
        f"[bold]{plan.spec.name}[/bold]: {len(plan.cells)} cell(s), seed {plan.seed}{seed_note}"
    )
    for cell in plan.cells:
        table = Table(title=f"cell {cell.id}", title_justify="left", show_edge=False)
        for col in ("at_s", "kind", "target", "duration_s", "options"):
            table.add_column(col)
        for f in plan.schedules[cell.id]:
            dur = (
                "once"
                if is_operation(f.kind)
                else "until heal"
                if f.duration_s is None
                else f"{f.duration_s:g}"
            )
            given = ", ".join(f"{k}={v}" for k, v in f.given().items())
            table.add_row(
                f"{f.at_s:g}" + (f" after step {f.after_step}" if f.after_step else ""),
                f.kind,
                escape(f.target or "-"),
                dur,
                escape(given + (" optional" if f.optional else "")),
            )
        if cell.params:  # values as the spec wrote them: `[/x]` is not markup
            console.print(escape("  " + ", ".join(f"{k}={v}" for k, v in cell.params.items())))
        console.print(table if plan.schedules[cell.id] else "  (no faults)")
    from harness.spec import excluded_combinations

    for params in excluded_combinations(plan.spec):
        shown = escape(", ".join(f"{k}={v}" for k, v in params.items()))
        console.print(f"  [dim]excluded by matrix.exclude: {shown}[/dim]")


def _is_suite(path: Path) -> bool:
    from harness.suite.model import is_suite_file

    return is_suite_file(path)


def _suite_plan(
    path: Path, seed: int | None, cells: str | None, shard: str | None = None
) -> SuitePlan:
    from harness.suite.plan import make_suite_plan
    from harness.suite.shards import Shard

    try:
        return make_suite_plan(path, seed, cells, Shard.parse(shard) if shard else None)
    except ConfigError as exc:
        raise _fail(EXIT_USAGE, str(exc)) from None


def _print_suite_plan(plan: SuitePlan) -> None:
    from harness.report.suite_summary import format_duration, params_text

    suite = plan.suite
    seed_note = "" if plan.seed_given else " (chosen; pass --seed to repeat)"
    console.print(
        f"[bold]suite {suite.name}[/bold] ({suite.shown(suite.path)}): "
        f"{len(plan.mine)} experiment file(s), {plan.cell_count} cell(s), "
        f"planned {format_duration(plan.planned_s)}; seed {plan.seed}{seed_note} "
        "for experiments without their own",
        highlight=False,
    )
    for axis in suite.axes:
        shown = ", ".join(str(v) for v in axis.values)
        how = (
            " (listed: docker/versions.txt + docker/versions-extra.txt)" if axis.listed else ""
        ) + ("; replaces an experiment's own axis" if axis.replace else "")
        console.print(escape(f"  axis {axis.key}: {shown}{how}"), highlight=False)
    if plan.shard is not None:
        console.print(
            f"shard {plan.shard}: {len(plan.mine)} of {len(plan.experiments)} experiment file(s), "
            f"planned {format_duration(plan.planned_s)} of "
            f"{format_duration(plan.total_planned_s)} (whole experiments, longest first onto "
            "the least planned shard)",
            highlight=False,
        )
    for i, e in enumerate(plan.mine, start=1):
        head = (
            f"[{i}] {e.name}  {e.file}: {len(e.cells)} cell(s), "
            f"planned {format_duration(e.planned_s)}, seed {e.plan.seed}"
        )
        console.print(f"[bold]{head}[/bold]", highlight=False)
        if e.cells:
            table = Table(show_edge=False, box=None, padding=(0, 2))
            table.add_column("cell")
            table.add_column("planned", justify="right")
            for cell in e.cells:
                table.add_row(cell.id, format_duration(e.estimates[cell.id]))
            console.print(table, highlight=False)
        for key, values in e.added.items():
            added = escape(f"  + {key}: {', '.join(str(v) for v in values)}")
            console.print(added, highlight=False)
        for key, values in e.replaced.items():
            shown = escape(f"  ~ {key}: {', '.join(str(v) for v in values)} (replaces its own)")
            console.print(shown, highlight=False)
        for key, why in e.kept.items():
            console.print(f"  [dim]{escape(f'{key} not added: {why}')}[/dim]", highlight=False)
        for item in e.impossible:
            console.print(
                "  [yellow]left out (cannot exist)[/yellow]: "
                + escape(f"{params_text(item.params)} — {item.reason}"),
                highlight=False,
            )
        for params in e.excluded:
            shown = escape(params_text(params))
            console.print(f"  [dim]excluded by matrix.exclude: {shown}[/dim]")
        if e.left_out:
            console.print(
                f"  [yellow]left out[/yellow]: {escape(str(e.left_out))}", highlight=False
            )
    console.print(
        f"total: {plan.cell_count} cell(s) in {len(plan.runnable)} experiment(s), "
        f"planned {format_duration(plan.planned_s)} "
        "(estimate per cell: cluster start + steady state + workload + settle)",
        highlight=False,
    )


SparkMasterOpt = Annotated[
    str | None,
    typer.Option(
        "--spark-master",
        help="Spark master URL the checks run on (e.g. spark://host:7077); default "
        "$KAFKA_CHAOS_SPARK_MASTER, else local[2]. Its executors must reach the result "
        "folder by the same path.",
    ),
]


def _use_spark_master(url: str | None) -> None:
    """The checks' session reads the master from the environment (spark_jobs.session), so a
    suite's every experiment and the one session of the run use it."""
    if url is None:
        return
    if not (url.startswith("local") or url == "yarn" or "://" in url):
        raise _fail(
            EXIT_USAGE, f"--spark-master {url!r}: expected local[N] or a URL like spark://host:7077"
        )
    import os

    from spark_jobs.session import MASTER_ENV

    os.environ[MASTER_ENV] = url


@app.command()
def validate(spec: SpecArg) -> None:
    """Check a spec (or a suite) and show its cells, fault schedule and what they need built
    (missing builds are listed, exit code still 0); nothing is started."""
    if _is_suite(spec):
        suite = _suite_plan(spec, None, None)
        _print_suite_plan(suite)
        _print_builds(cell for e in suite.runnable for cell in e.cells)
        console.print("[green]suite is valid[/green]")
        return
    plan = _plan(spec, None, None)
    _print_plan(plan)
    _print_builds(plan.cells)
    console.print("[green]spec is valid[/green]")


def _print_builds(cells: Iterable[Cell]) -> None:
    """What the cells need built (broker images, Java and Spark jars, the Toxiproxy server)
    and whether this machine has each; missing ones with the commands that build them. The
    spec stays valid: `run` is what refuses (exit 3)."""
    from harness.suite import builds

    needs = builds.cells_need(cells)
    console.print("[bold]needs built[/bold] (on this machine):", highlight=False)
    commands = False  # the lines after "N missing; build them …" are its commands
    for line in builds.builds_listing(needs, builds.local_probes()):
        commands = commands or not line.startswith(" ")
        style = "yellow" if commands or line.endswith("MISSING") else None
        console.print(escape(line), style=style, highlight=False)


@app.command()
def incidents(
    markdown: Annotated[
        bool,
        typer.Option(
            "--markdown", help="The catalogue table of docs/incidents.md (Markdown) on stdout."
        ),
    ] = False,
) -> None:
    """The incident catalogue: each claim, what our runs measured, what makes it safe."""
    from harness.report.catalogue import catalogue
    from harness.report.catalogue import markdown as as_markdown

    root = Path(__file__).resolve().parents[1]
    try:
        entries = catalogue(root)
    except ConfigError as exc:
        raise _fail(EXIT_USAGE, str(exc)) from None
    if markdown:
        sys.stdout.write(as_markdown(entries))
        return
    out = Console(width=None if sys.stdout.isatty() else 160)
    for e in entries:
        out.rule(f"[bold]{e.name}[/bold]  {e.file}", align="left")
        out.print(f"[bold]claim[/bold]     {e.claim}", highlight=False)
        out.print(f"[bold]measured[/bold]  {e.measured or '-'}", highlight=False)
        out.print(f"[bold]safe[/bold]      {e.safe or '-'}", highlight=False)


class _Progress:
    """One status line per cell, refreshed in place; faults printed as they happen."""

    def __init__(self) -> None:
        self.last = 0.0
        self.phase = ""

    def __call__(self, s: Status) -> None:
        for line in s.lines:
            console.print(f"  [yellow]{s.cell}[/yellow] {line}", highlight=False)
        s.lines.clear()
        now = time.monotonic()
        if s.phase != self.phase or now - self.last > 5:
            self.phase, self.last = s.phase, now
            console.print(
                f"  {s.cell} [cyan]{s.phase:<12}[/cyan] sent {s.attempted} acked {s.acked} "
                f"failed {s.failed} consumed {s.consumed}",
                highlight=False,
            )


@app.command()
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
    spark_master: SparkMasterOpt = None,
) -> None:
    """Run an experiment (or a suite): every cell against a real cluster, then checks, verdicts
    and reports."""
    _use_spark_master(spark_master)
    if _is_suite(spec):
        _run_suite(spec, seed, out, cells, keep_cluster, dry_run, shard)
        return
    if shard is not None:
        raise _fail(EXIT_USAGE, f"--shard splits a suite; {spec} is an experiment file")
    plan = _plan(spec, seed, cells)
    _print_plan(plan)
    if dry_run:
        return
    _refuse_unbuilt(plan.cells)
    from harness.experiment import EXIT_FOR_VERDICT, run_plan
    from harness.report import render_table
    from harness.report.run_summary import TERMINAL_WIDTH

    def cell_done(summary: dict[str, Any]) -> None:
        console.print(f"  {summary['cell']} verdict [bold]{summary['verdict']}[/bold]")

    try:
        run_dir, summary, kept = run_plan(plan, out, _Progress(), cell_done, keep_cluster)
    except HarnessError as exc:
        raise _fail(EXIT_INFRA, str(exc)) from None
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


def _refuse_unbuilt(cells: Iterable[Cell]) -> None:
    """Exit 3 before anything starts when something the cells need is not built (a broker
    image, Java or Spark jars, the Toxiproxy server), naming the commands that build it."""
    from harness.suite import builds

    missing = builds.missing_builds(builds.cells_need(cells), builds.local_probes())
    if missing:
        raise _fail(EXIT_INFRA, "\n".join(missing))


def _run_suite(
    path: Path,
    seed: int | None,
    out: Path,
    cells: str | None,
    keep_cluster: bool,
    dry_run: bool,
    shard: str | None,
) -> None:
    if keep_cluster:
        raise _fail(EXIT_USAGE, "--keep-cluster keeps one experiment's cluster; not for a suite")
    plan = _suite_plan(path, seed, cells, shard)
    _print_suite_plan(plan)
    if plan.shard is not None and not plan.mine:  # more shards than experiments
        console.print(f"shard {plan.shard}: no experiment falls to it; nothing to run")
        return
    if dry_run:
        return
    _refuse_unbuilt(cell for e in plan.runnable for cell in e.cells)
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
            run_dir, summary, _ = run_plan(plan, folder, _Progress(), cell_done, checks=checks)
            return run_dir, summary

        try:
            result = run_suite(plan, out, run_one, say)
        except KeyboardInterrupt:
            console.print("[yellow]interrupted[/yellow]: consumers stopped, cluster removed")
            raise typer.Exit(EXIT_INTERRUPTED) from None
    _end_suite(result, shard=plan.shard is not None)


def _end_suite(result: SuiteResult, shard: bool = False) -> None:
    """Print a suite run's (or merge's) result and exit with `run`'s code for its verdict."""
    from harness.verdict.run_verify import EXIT_FOR_VERDICT

    _print_suite_result(result.summary)
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


def _print_suite_result(summary: dict[str, Any]) -> None:
    from harness.report.run_summary import overhead_line
    from harness.report.suite_summary import all_cells, format_duration
    from harness.results.timings import sum_timings

    cells = all_cells(summary.get("experiments") or [])
    table = Table(
        title=f"suite {summary.get('suite')}",
        caption=overhead_line(sum_timings(cells)),
        caption_justify="left",
    )
    for column in ("experiment", "verdict", "cells", "pass", "fail", "unknown", "duration"):
        table.add_column(column, justify="left" if column in ("experiment", "verdict") else "right")
    for e in summary.get("experiments") or []:
        verdicts = [str(c.get("verdict")) for c in e.get("cells") or []]
        table.add_row(
            str(e.get("experiment")),
            str(e.get("verdict")),
            str(len(verdicts)),
            *(str(verdicts.count(v)) for v in ("pass", "fail", "unknown")),
            format_duration(e.get("duration_s")),
        )
    console.print(table)


@app.command("merge-shards")
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
        raise _fail(EXIT_USAGE, str(exc)) from None
    except OSError as exc:  # --out (or a shard) could not be written or read
        raise _fail(EXIT_INFRA, f"merging into {out}: {exc}") from None
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
    _end_suite(result)


@app.command()
def compare(
    run_a: Annotated[Path, typer.Argument(help="A run folder or suite folder (the earlier).")],
    run_b: Annotated[Path, typer.Argument(help="Another (the later).")],
) -> None:
    """Two runs side by side: verdict flips and figure changes; exit 1 if a pass flipped."""
    from harness.suite.compare import compare_folders, render_comparison, summary_lines

    try:
        comparison = compare_folders(run_a, run_b)
    except ConfigError as exc:
        raise _fail(EXIT_USAGE, str(exc)) from None
    out = Console(width=None if sys.stdout.isatty() else 200)
    out.print(render_comparison(comparison))
    for line in summary_lines(comparison):
        out.print(line, highlight=False)
    raise typer.Exit(comparison.exit_code)


@app.command()
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
    from harness.suite.index import Damage, write_index

    damaged: list[Damage] = []
    try:
        path = write_index(results_dir, nights, damaged)
    except ConfigError as exc:
        raise _fail(EXIT_USAGE, str(exc)) from None
    except OSError as exc:
        raise _fail(EXIT_INFRA, str(exc)) from None
    console.print(f"index: {path}", highlight=False)
    # The page is written without them; the exit code still says an input file is damaged.
    for d in damaged:
        console.print(f"[red]error:[/red] left out: {d.message}", highlight=False)
    if damaged:
        raise typer.Exit(EXIT_USAGE if any(not d.infra for d in damaged) else EXIT_INFRA)


@app.command()
def verify(
    results_dir: Annotated[Path, typer.Argument(help="A results/<run-id>/ folder.")],
    spark_master: SparkMasterOpt = None,
) -> None:
    """Re-run the checks of a result folder from its files alone (no cluster)."""
    _use_spark_master(spark_master)
    from harness.report import render_table
    from harness.report.run_summary import TERMINAL_WIDTH
    from harness.verdict.run_verify import EXIT_FOR_VERDICT, verify_run

    try:
        summary = verify_run(results_dir)
    except ConfigError as exc:  # not a result folder, or its spec.yaml is wrong
        raise _fail(EXIT_USAGE, str(exc)) from None
    except (HarnessError, OSError) as exc:  # the folder could not be read or written
        raise _fail(EXIT_INFRA, str(exc)) from None
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


@app.command()
def cleanup(
    all_runs: bool = typer.Option(
        False, "--all", help="Also remove resources of runs whose process is still alive."
    ),
) -> None:
    """Remove containers and networks left by kafka-chaos runs (those of dead runs by default)."""
    try:
        from harness.cluster import docker_client
        from harness.nodes.reaper import RUN_LABEL, remove_dead_runs, remove_run

        client = docker_client()
        removed = remove_run(client) if all_runs else remove_dead_runs(client)
        live = client.containers.list(all=True, filters={"label": RUN_LABEL})
    except HarnessError as exc:
        raise _fail(EXIT_INFRA, str(exc)) from None
    for name in removed:
        console.print(f"removed {name}")
    console.print(f"cleanup: removed {len(removed)} resource(s)")
    if live:
        names = ", ".join(str(c.name) for c in live)
        console.print(f"still running (their run is alive; --all removes them): {names}")


def main() -> None:
    app()
