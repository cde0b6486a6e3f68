"""`explore SPEC`: draw fault schedules from the spec's `explore:` (or its defaults), run each as
an ordinary cell, shrink each expectation's first violation to a minimal-repro.yaml, and write
the explore run's summary.json (harness.explore; docs/exploring.md). `validate` shows the
first schedules it would draw (`print_first_schedules`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from harness.cli.builds import refuse_unbuilt
from harness.cli.options import SEED_MAX, SparkMasterOpt, SpecArg, use_spark_master
from harness.cli.plans import is_suite, load_plan
from harness.cli.terminal import (
    EXIT_FAIL,
    EXIT_INFRA,
    EXIT_INTERRUPTED,
    EXIT_PASS,
    EXIT_USAGE,
    console,
    fail,
)

if TYPE_CHECKING:
    from rich.table import Table

    from harness.experiment import Plan
    from harness.explore.guide import Drawing
    from harness.explore.summary import ExploreSummary

DEFAULT_BUDGET_CELLS = 20
RUNS_MAX = 9
# Two trials at a time: on two cores a trial on a kept cluster leaves the machine ~60 % idle
# (docs/exploring.md, "Two trials at a time"); more would crowd the machine that times the faults.
DEFAULT_PARALLEL = 2
PARALLEL_MAX = 4
SHOWN_SCHEDULES = 3
EXIT_FOR_VERDICT = {"pass": EXIT_PASS, "fail": EXIT_FAIL}


def check_options(
    budget_cells: int | None, budget_minutes: float | None, runs: int, need: int
) -> tuple[int | None, float | None]:
    """The budget (cells, seconds) the options give; usage errors for the rest."""
    if budget_cells is not None and budget_minutes is not None:
        raise fail(EXIT_USAGE, "give --budget-cells or --budget-minutes, not both")
    if need > runs:
        raise fail(EXIT_USAGE, f"--need {need} is more than --runs {runs}")
    if budget_cells is None and budget_minutes is None:
        return DEFAULT_BUDGET_CELLS, None
    return budget_cells, None if budget_minutes is None else budget_minutes * 60


def explore(
    spec: SpecArg,
    budget_cells: Annotated[
        int | None,
        typer.Option(
            "--budget-cells",
            min=1,
            help=f"Cells to run in all, trials and shrinking (default {DEFAULT_BUDGET_CELLS}).",
        ),
    ] = None,
    budget_minutes: Annotated[
        float | None,
        typer.Option(
            "--budget-minutes", min=0.1, help="Minutes to run cells for (instead of a count)."
        ),
    ] = None,
    seed: Annotated[
        int | None, typer.Option(min=0, max=SEED_MAX, help="Seed of the schedules drawn.")
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(help="The explore run's folder (default results/<UTC start>-explore-<spec>)."),
    ] = None,
    runs: Annotated[
        int, typer.Option(min=1, max=RUNS_MAX, help="Runs of each shrink candidate (k).")
    ] = 3,
    need: Annotated[
        int, typer.Option(min=1, max=RUNS_MAX, help="Of which must violate to keep it.")
    ] = 2,
    cells: Annotated[
        str | None, typer.Option(help="Only cells whose id matches (comma list, globs).")
    ] = None,
    max_trials: Annotated[
        int | None,
        typer.Option(
            "--max-trials",
            min=1,
            help="Draw at most this many schedules (shrinking counts on the budget only).",
        ),
    ] = None,
    drawing: Annotated[
        str,
        typer.Option(
            help="guided: breadth first, then mutate what reached a new state; random: the "
            "uniform baseline.",
        ),
    ] = "guided",
    fresh_clusters: Annotated[
        bool,
        typer.Option(
            "--fresh-clusters",
            help="A new cluster for every trial (by default a trial runs on the cluster the "
            "one before left, when a health check passes).",
        ),
    ] = False,
    parallel: Annotated[
        int,
        typer.Option(
            min=1,
            max=PARALLEL_MAX,
            help="Trials at a time, each on a worker process with its own cluster (shrinking "
            "and confirmation: one cell at a time).",
        ),
    ] = DEFAULT_PARALLEL,
    spark_master: SparkMasterOpt = None,
) -> None:
    """Search fault schedules for a violation of the spec's expectations and shrink it to a
    minimal experiment file (exit 1 when one was found, 0 when every trial passed)."""
    use_spark_master(spark_master)
    if is_suite(spec):
        raise fail(EXIT_USAGE, f"explore searches one experiment; {spec} is a suite file")
    cell_budget, seconds = check_options(budget_cells, budget_minutes, runs, need)
    if drawing not in ("guided", "random"):
        raise fail(EXIT_USAGE, f"--drawing {drawing!r}: expected guided or random")
    plan = load_plan(spec, seed, cells)
    refuse_unbuilt(plan.cells)
    started = datetime.now(timezone.utc)
    folder = out or Path("results") / (
        f"{started.strftime('%Y%m%dT%H%M%SZ')}-explore-{plan.spec.name}"
    )
    console.print(
        f"exploring {plan.spec.name}: {len(plan.cells)} cell(s), seed {plan.seed}, budget "
        + (f"{cell_budget} cells" if cell_budget else f"{budget_minutes} min")
        + f"; folder {folder}",
        highlight=False,
    )
    try:
        folder.mkdir(parents=True, exist_ok=True)
        summary = _search(
            plan,
            spec,
            folder,
            (cell_budget, seconds, max_trials),
            (runs, need),
            started,
            "random" if drawing == "random" else "guided",
            not fresh_clusters,
            parallel,
        )
    except KeyboardInterrupt:
        console.print(
            "[yellow]interrupted[/yellow]: the running cell stopped, cluster removed; "
            "summary.json holds what was found so far"
        )
        raise typer.Exit(EXIT_INTERRUPTED) from None
    except OSError as exc:
        raise fail(EXIT_INFRA, f"{folder}: {exc}") from None
    print_summary(summary)
    raise typer.Exit(EXIT_FOR_VERDICT.get(summary.verdict, EXIT_INFRA))


def _search(
    plan: Plan,
    spec: Path,
    folder: Path,
    limits: tuple[int | None, float | None, int | None],  # cells, seconds, trials
    repeats: tuple[int, int],  # runs of a shrink candidate, of which must violate
    started: datetime,
    drawing: Drawing,
    reuse: bool,
    parallel: int = 1,
) -> ExploreSummary:
    from contextlib import closing

    from harness.cli.progress import CellProgress
    from harness.explore.budget import Budget
    from harness.explore.cluster_pool import ClusterPool
    from harness.explore.search import RunTrial, Search, StartTrial
    from harness.explore.summary import ExploreSummary, TrialRecord, write_summary
    from harness.explore.trial import plan_runner
    from harness.explore.workers import TrialWorkers, WorkerSetup
    from harness.verdict.run_verify import small_cells, spark_checks

    def trial_done(record: TrialRecord) -> None:
        said = f" violated {', '.join(record.violated)}" if record.violated else ""
        new = f"; new: {', '.join(record.new_states)}" if record.new_states else ""
        idle = "" if record.counted else " (injected nothing: not counted)"
        console.print(
            f"  trial {record.trial} ({len(record.faults)} faults, {record.origin}): "
            f"{record.verdict}{said}{new}{idle}",
            highlight=False,
        )

    cells, seconds, max_trials = limits
    runs, need = repeats
    budget = Budget(cells=cells, seconds=seconds, clock=time.monotonic)
    summary = ExploreSummary(
        spec=plan.spec.name,
        file=str(spec),
        seed=plan.seed,
        started=started.isoformat(timespec="seconds"),
        k=runs,
        need=need,
        budget=budget.describe(),
    )
    small = small_cells(plan.cells)

    def search_with(
        run: RunTrial,
        start: StartTrial | None,
        stop: Callable[[], None],
        clusters: Callable[[], dict[str, Any]],
    ) -> None:
        search = Search(
            plan.cells, plan.seed, run, folder, budget, runs, need, max_trials, trial_done,
            drawing, parallel, start,
        )  # fmt: skip
        try:
            search.explore(summary)
        finally:  # Ctrl-C too: running cells stop, then what was found so far is kept
            stop()
            summary.budget["clusters"] = clusters()
            console.print(f"written: {write_summary(folder, summary)}", highlight=False)

    if parallel > 1:
        workers = TrialWorkers(
            parallel, WorkerSetup(spec, plan.seed, folder / "trials", reuse, small, CellProgress)
        )
        search_with(workers.run, workers.start, workers.close, workers.describe)
        return summary
    pool = ClusterPool(enabled=reuse)
    with spark_checks(small=small) as checks, closing(pool):
        runner = plan_runner(spec, plan.seed, folder / "trials", CellProgress(), checks, pool=pool)
        search_with(runner, None, lambda: None, pool.describe)
    return summary


def print_summary(summary: ExploreSummary) -> None:
    """The coverage table (kind x role, trials per workload phase), the "sometimes" states
    reached, and each violation with its shrunk schedule."""
    console.print(coverage_table(summary))
    console.print(states_table(summary))
    curve = " ".join(str(p.states) for p in summary.curve)
    console.print(f"states reached after each counted trial: {curve or '-'}", highlight=False)
    for v in [*summary.violations, *summary.unconfirmed]:
        shrunk = v.shrunk
        said = (
            "not shrunk"
            if shrunk is None
            else f"shrunk {len(v.original)} -> {len(shrunk.faults)} fault(s), reproduced "
            f"{shrunk.reproduced}" + (f": {shrunk.file}" if shrunk.file else "")
        )
        how = "[red]violated[/red]" if v in summary.violations else "[yellow]unconfirmed[/yellow]"
        console.print(f"{v.property} {how} (trial {v.trial}, {v.cell}): {said}")
    console.print(f"explore verdict [bold]{summary.verdict}[/bold]", highlight=False)


def coverage_table(summary: ExploreSummary) -> Table:
    """One line per (kind, role) tried, its trials per workload phase."""
    from rich.table import Table

    from harness.explore.coverage import PHASES, coverage_grid

    table = Table(title=f"explore {summary.spec}: {len(summary.trials)} trial(s) - coverage")
    for column in ("kind", "role", *PHASES):
        table.add_column(column, justify="right" if column in PHASES else "left")
    rows = [(r.kind, r.role, r.phase, r.trials) for r in summary.coverage]
    for kind, role, phases in coverage_grid(rows):
        table.add_row(kind, role, *(str(phases[p] or "-") for p in PHASES))
    return table


def states_table(summary: ExploreSummary) -> Table:
    """Each "sometimes" state with the first trial that reached it (never: a gap)."""
    from rich.table import Table

    from harness.explore.states import STATES

    table = Table(title="states reached (sometimes)")
    table.add_column("state")
    table.add_column("first trial", justify="right")
    for state in [*STATES, *(s for s in summary.reached if s not in STATES)]:
        first = summary.reached.get(state)
        table.add_row(state, "[yellow]never[/yellow]" if first is None else str(first))
    return table


def print_first_schedules(plan: Any, count: int = SHOWN_SCHEDULES) -> None:
    """For `validate`: the first schedules explore would draw for each cell (its `explore:`)."""
    from harness.explore.guide import Guide

    for cell in plan.cells:
        if cell.spec.explore is None:
            continue
        console.print(
            f"explore {cell.id}: first {count} schedules (seed {plan.seed}, before any "
            "trial reaches a state)"
        )
        guide = Guide(cell.spec, plan.seed)
        for trial in range(count):
            schedule, _ = guide.next(trial)
            guide.record(schedule, [])
            faults = "; ".join(
                f"t={f['at_s']}s {f['kind']} {f['target']}"
                + (f" {f['side']}" if "side" in f else "")
                + (f" for {f['duration_s']}s" if "duration_s" in f else "")
                for f in schedule.faults
            )
            console.print(f"  trial {trial}: {faults}", highlight=False)
