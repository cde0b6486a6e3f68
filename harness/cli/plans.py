"""What `validate` and `run --dry-run` show: an experiment's or a suite's plan, loaded (a bad
spec exits 2) and printed, cells and fault schedules; nothing starts."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.table import Table

from harness.cli.terminal import EXIT_USAGE, console, fail
from harness.errors import ConfigError

if TYPE_CHECKING:
    from harness.suite.plan import SuitePlan


def load_plan(spec: Path, seed: int | None, cells: str | None) -> Any:
    from harness.experiment import make_plan

    try:
        return make_plan(spec, seed, cells)
    except ConfigError as exc:
        raise fail(EXIT_USAGE, str(exc)) from None


def print_plan(plan: Any) -> None:
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


def is_suite(path: Path) -> bool:
    from harness.suite.model import is_suite_file

    return is_suite_file(path)


def load_suite_plan(
    path: Path, seed: int | None, cells: str | None, shard: str | None = None
) -> SuitePlan:
    from harness.suite.plan import make_suite_plan
    from harness.suite.shards import Shard

    try:
        return make_suite_plan(path, seed, cells, Shard.parse(shard) if shard else None)
    except ConfigError as exc:
        raise fail(EXIT_USAGE, str(exc)) from None


def print_suite_plan(plan: SuitePlan) -> None:
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
