"""What `calibrate` prints from its calibration.json: one table per cell, a row per bound
(every run's figure, the spread, the margin, the verdicts, the suggestion), then why."""

from __future__ import annotations

from collections import Counter
from typing import Any

from rich.markup import escape
from rich.table import Table

from harness.cli.terminal import console
from harness.verdict.calibration import LOAD

STYLES = {"ok": "green", "thin": "yellow", "failed": "red", "undecided": "magenta"}
UNDECIDED, OVERLOADED = "?", "!"  # marks after a run's figure


def _number(value: float) -> str:
    return f"{value:.4g}"


def figures_text(bound: dict[str, Any]) -> str:
    """`60.1 58.2 ? 61!`: each run's figure; ? undecided, ! measured while overloaded."""
    flagged = {f["run"] for f in bound.get("overloaded") or []}
    shown = []
    for run, value in enumerate(bound.get("figures") or [], start=1):
        text = UNDECIDED if value is None else _number(value)
        shown.append(text + (OVERLOADED if run in flagged else ""))
    return " ".join(shown)


def verdicts_text(verdicts: list[str]) -> str:
    """`2 pass, 1 fail`."""
    counts = Counter(verdicts)
    return ", ".join(f"{counts[v]} {v}" for v in ("pass", "fail", "unknown") if counts[v])


def margin_text(margin: float | None) -> str:
    return "-" if margin is None else f"{margin * 100:.1f} %"


def spread_text(bound: dict[str, Any]) -> str:
    low, high = bound.get("min"), bound.get("max")
    if low is None or high is None:
        return "-"
    return _number(low) if low == high else f"{_number(low)}..{_number(high)}"


def suggested_text(bound: dict[str, Any]) -> str:
    """`< 16 (30.0 %)`: the suggestion and its margin, or `-`."""
    if not bound.get("suggested"):
        return "-"
    return escape(f"{bound['suggested']} ({margin_text(bound.get('suggested_margin'))})")


def cell_table(cell: dict[str, Any]) -> Table:
    verdicts = " ".join(cell.get("verdicts") or [])
    table = Table(title=f"cell {cell['cell']}  (runs: {verdicts})", title_justify="left")
    for column in ("bound", "figures", "min..max", "margin", "verdicts", "status", "suggested"):
        table.add_column(column, justify="right" if column == "margin" else "left")
    for b in cell["bounds"]:
        status = b["status"]
        table.add_row(
            escape(f"{b['metric']} {b['bound']}"),
            figures_text(b),
            spread_text(b),
            margin_text(b.get("margin")),
            verdicts_text(b.get("verdicts") or []),
            f"[{STYLES.get(status, 'default')}]{status}[/]",
            suggested_text(b),
        )
    return table


def bound_notes(cell: dict[str, Any]) -> list[str]:
    """Why a run is unknown for more than the load, why a figure is missing or flagged, and
    why nothing is suggested."""
    notes = [
        f"run {n} unknown, not for the load: {why}"
        for n, why in enumerate(cell.get("unknown_why") or [], start=1)
        if why not in (None, LOAD)
    ]
    for b in cell["bounds"]:
        for entry in b.get("undecided") or []:
            notes.append(f"{b['metric']}: run {entry['run']} undecided: {entry['reason']}")
        for entry in b.get("overloaded") or []:
            notes.append(f"{b['metric']}: run {entry['run']} overloaded: {entry['reason']}")
        if b.get("note"):
            notes.append(f"{b['metric']}: {b['note']}")
    return notes


def print_calibration(doc: dict[str, Any]) -> None:
    """Every cell's table and notes, then the loads and the overall status."""
    for cell in doc["cells"]:
        if not cell["bounds"]:
            console.print(f"cell {cell['cell']}: no numeric bound to calibrate")
            continue
        console.print(cell_table(cell))
        for note in bound_notes(cell):
            console.print(f"  [dim]{escape(note)}[/dim]", highlight=False)
    for run in doc.get("run_folders") or []:
        start, end = run.get("loadavg_start"), run.get("loadavg_end")
        load = f"load {start[0]:.1f} -> {end[0]:.1f}" if start and end else "load unknown"
        if isinstance(run.get("load1_max"), (int, float)):  # `--from`: its cells' samplers
            load = f"load up to {run['load1_max']:.1f}"
        where = run.get("folder") or f"no folder: {run.get('error')}"
        console.print(
            escape(f"run {run['run']}: {run.get('verdict')}, {load}, {where}"), highlight=False
        )
    status = doc["status"]
    console.print(
        f"calibration: [{STYLES.get(status, 'default')}]{status}[/] "
        f"(goal: every bound {doc['margin_goal']:.0%} from its worst figure; "
        f"{OVERLOADED} overloaded, {UNDECIDED} undecided)",
        highlight=False,
    )
