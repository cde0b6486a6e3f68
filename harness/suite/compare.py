"""Two runs side by side (`python -m harness compare RUN_A RUN_B`): verdict flips and figure
changes, cell by cell. Either folder may be an experiment's run folder or a suite's.

Cells are matched by (experiment, cell id). A **flip** is a verdict that differs; a flip
**from pass** (to fail or unknown) is what makes `compare` exit 1. A **figure change**: a
count (`lost`, `lost_never_consumed`, `duplicated`, `reprocessed`, `unacked_present`,
`out_of_order`) that differs at all; a time (`max_stall_s`, `unavailable_s`, `stall_s.<set>`)
that moved by more than max(1 s, 25 % of the larger value) — times are noisy on a shared
machine, counts are not; and a figure that became undecided (null) or decided.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from rich.markup import escape
from rich.table import Table

from harness.errors import ConfigError
from harness.report.cell_report import fmt
from harness.results.layout import SUMMARY, RunPaths
from harness.results.metrics import COUNT_NAMES, TIME_METRICS
from harness.results.verdicts import as_verdict

# The summary's anomaly counts (not the workload's size: attempted, acked, failed) and times.
COUNTS = tuple(n for n in COUNT_NAMES if n not in ("attempted", "acked", "failed"))
TIMES = TIME_METRICS
TIME_ABS_S = 1.0
TIME_REL = 0.25

Key = tuple[str, str]  # (experiment, cell id)


@dataclass(frozen=True)
class RunCells:
    """A run or suite folder's cells, read from its summary.json."""

    folder: Path
    kind: Literal["suite", "experiment"]
    name: str
    run_id: str
    cells: dict[Key, dict[str, Any]]


def load_run(folder: Path) -> RunCells:
    """The folder's cells; ConfigError saying why when it is not a run or suite folder."""
    summary_path = folder / SUMMARY
    if not folder.is_dir():
        raise ConfigError(f"{folder} is not a run folder: no such folder")
    if not summary_path.is_file():
        why = (
            "it has spec.yaml but no summary.json (interrupted? `verify` writes it)"
            if RunPaths(folder).spec.is_file()
            else "it has no summary.json"
        )
        raise ConfigError(f"{folder} is not a run folder: {why}")
    summary = read_summary(summary_path)
    run_id = str(summary.get("run_id") or folder.name)
    if isinstance(summary.get("experiments"), list):
        cells = {
            (str(e.get("experiment", "?")), str(c.get("cell", "?"))): c
            for e in summary["experiments"]
            for c in e.get("cells") or []
        }
        return RunCells(folder, "suite", str(summary.get("suite", "?")), run_id, cells)
    if isinstance(summary.get("cells"), list):
        name = str(summary.get("spec", "?"))
        cells = {(name, str(c.get("cell", "?"))): c for c in summary["cells"]}
        return RunCells(folder, "experiment", name, run_id, cells)
    raise ConfigError(f"{summary_path}: not a run's or a suite's summary (no cells)")


MAX_SUMMARY_BYTES = 64 * 1024 * 1024  # a 500-cell suite's summary is a few MiB
_NUMBER_KEYS = ("duration_s", *TIMES)  # a cell's figures (null: undecided)
_TEXT_KEYS = ("cell", "verdict")
_MAPPINGS = ("counts", "params")


def read_summary(path: Path) -> dict[str, Any]:
    """A summary.json whose parts the readers use have the shapes they expect; ConfigError
    naming the file and the key path otherwise (compare and index never crash on a summary)."""
    try:
        size = path.stat().st_size
        if size > MAX_SUMMARY_BYTES:
            raise ConfigError(f"{path}: {size} bytes; a summary is at most {MAX_SUMMARY_BYTES}")
        summary = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise ConfigError(f"{path}: cannot be read as JSON: {exc}") from None
    if not isinstance(summary, dict):
        raise ConfigError(f"{path}: expected a JSON object (got {_kind(summary)})")
    problems = summary_problems(summary)
    if problems:
        shown = problems[:5] + ([f"... and {len(problems) - 5} more"] if len(problems) > 5 else [])
        raise ConfigError("\n  ".join([f"{path}: not a summary as the harness writes it:", *shown]))
    return summary


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    return "a number" if isinstance(value, int | float) else type(value).__name__


def _is_number(value: Any) -> bool:
    """A JSON number a figure can be (float-sized: a 400-digit integer is not a figure)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        float(value)
    except OverflowError:
        return False
    return True


def _want(problems: list[str], where: str, value: Any, what: str, ok: bool) -> bool:
    if not ok:
        problems.append(f"{where}: expected {what} (got {_kind(value)})")
    return ok


def _cell_problems(cell: Any, where: str, problems: list[str]) -> None:
    if not _want(problems, where, cell, "an object", isinstance(cell, dict)):
        return
    for key in _TEXT_KEYS:
        value = cell.get(key)
        _want(
            problems, f"{where}.{key}", value, "a string", value is None or isinstance(value, str)
        )
    for key in _MAPPINGS:
        value = cell.get(key)
        _want(
            problems, f"{where}.{key}", value, "an object", value is None or isinstance(value, dict)
        )
    for key in _NUMBER_KEYS:
        value = cell.get(key)
        _want(
            problems,
            f"{where}.{key}",
            value,
            "a number or null",
            value is None or _is_number(value),
        )
    counts = cell.get("counts")
    for name, value in counts.items() if isinstance(counts, dict) else ():
        if name in COUNT_NAMES:
            ok = value is None or _is_number(value)
            _want(problems, f"{where}.counts.{name}", value, "a number or null", ok)
    checks = cell.get("checks")
    if _want(
        problems,
        f"{where}.checks",
        checks,
        "a list of check objects",
        checks is None or isinstance(checks, list),
    ):
        for i, check in enumerate(checks or []):
            ok = isinstance(check, dict) and all(
                isinstance(check.get(k), str | None) for k in ("name", "verdict", "detail")
            )
            _want(problems, f"{where}.checks[{i}]", check, "an object of texts", ok)
    _seconds_by(problems, f"{where}.stalls_by_set", cell.get("stalls_by_set"), "consumer set")


def _seconds_by(problems: list[str], where: str, value: Any, key: str) -> None:
    """An object of `key` -> seconds (or null), or null."""
    wanted = f"an object of {key} -> seconds"
    if _want(problems, where, value, wanted, value is None or isinstance(value, dict)):
        for name, seconds in (value or {}).items():
            ok = seconds is None or _is_number(seconds)
            _want(problems, f"{where}.{name}", seconds, "a number or null", ok)


def _cells_problems(cells: Any, where: str, problems: list[str]) -> None:
    if cells is None:
        return
    if _want(problems, where, cells, "a list of cell objects", isinstance(cells, list)):
        for i, cell in enumerate(cells):
            _cell_problems(cell, f"{where}[{i}]", problems)


def summary_problems(summary: dict[str, Any]) -> list[str]:
    """What is wrong with the shape of a run's or a suite's summary (key path: expected,
    got), for the parts compare and index read; [] when they can read it."""
    problems: list[str] = []
    for key in ("run_id", "suite", "spec"):
        value = summary.get(key)
        _want(problems, key, value, "a string", value is None or isinstance(value, str))
    _cells_problems(summary.get("cells"), "cells", problems)
    experiments = summary.get("experiments")
    if experiments is None:
        return problems
    if not _want(problems, "experiments", experiments, "a list", isinstance(experiments, list)):
        return problems
    for i, e in enumerate(experiments):
        where = f"experiments[{i}]"
        if not _want(problems, where, e, "an object", isinstance(e, dict)):
            continue
        for key in ("experiment", "run_id", "run_dir", "error"):
            value = e.get(key)
            ok = value is None or isinstance(value, str)
            _want(problems, f"{where}.{key}", value, "a string", ok)
        seed = e.get("seed")
        ok = seed is None or (_is_number(seed) and float(seed).is_integer())
        _want(problems, f"{where}.seed", seed, "an integer", ok)
        _seconds_by(problems, f"{where}.planned_by_cell", e.get("planned_by_cell"), "cell")
        _cells_problems(e.get("cells"), f"{where}.cells", problems)
    return problems


def figures(cell: dict[str, Any]) -> dict[str, Any]:
    """The compared figures of a cell summary: counts, times, stall per consumer set."""
    counts = cell.get("counts") or {}
    # A count the summary does not have at all was not measured then (written before the
    # count existed): left out, so it does not show as a change; a null one is undecided.
    out: dict[str, Any] = {name: counts.get(name) for name in COUNTS if name in counts}
    out.update({name: cell.get(name) for name in TIMES})
    for name, value in (cell.get("stalls_by_set") or {}).items():
        out[f"stall_s.{name}"] = value
    return out


def _is_time(name: str) -> bool:
    return name in TIMES or name.startswith("stall_s.")


def changed(name: str, a: Any, b: Any) -> bool:
    if a is None or b is None:
        return (a is None) != (b is None)
    if not isinstance(a, int | float) or not isinstance(b, int | float):
        return bool(a != b)
    if _is_time(name):
        return abs(b - a) > max(TIME_ABS_S, TIME_REL * max(abs(a), abs(b)))
    return bool(a != b)


@dataclass
class CellRow:
    experiment: str
    cell: str
    verdict_a: str | None  # None: the cell is not in A
    verdict_b: str | None
    changes: dict[str, tuple[Any, Any]] = field(default_factory=dict)  # figure -> (a, b)

    @property
    def flipped(self) -> bool:
        return None not in (self.verdict_a, self.verdict_b) and self.verdict_a != self.verdict_b

    @property
    def flipped_from_pass(self) -> bool:
        return self.flipped and self.verdict_a == "pass"


@dataclass
class Comparison:
    a: RunCells
    b: RunCells
    rows: list[CellRow]

    @property
    def flips(self) -> list[CellRow]:
        return [r for r in self.rows if r.flipped]

    @property
    def flipped_from_pass(self) -> list[CellRow]:
        return [r for r in self.rows if r.flipped_from_pass]

    @property
    def only_a(self) -> list[CellRow]:
        return [r for r in self.rows if r.verdict_b is None]

    @property
    def only_b(self) -> list[CellRow]:
        return [r for r in self.rows if r.verdict_a is None]

    @property
    def changed(self) -> list[CellRow]:
        return [r for r in self.rows if r.changes]

    @property
    def exit_code(self) -> int:
        """1 when a verdict flipped from pass, else 0."""
        return 1 if self.flipped_from_pass else 0


def compare_runs(a: RunCells, b: RunCells) -> Comparison:
    """Every cell of A (in A's order), then those only in B."""
    keys = list(a.cells) + [k for k in b.cells if k not in a.cells]
    rows = []
    for key in keys:
        ca, cb = a.cells.get(key), b.cells.get(key)
        row = CellRow(
            key[0],
            key[1],
            as_verdict(ca.get("verdict")) if ca is not None else None,
            as_verdict(cb.get("verdict")) if cb is not None else None,
        )
        if ca is not None and cb is not None:
            fa, fb = figures(ca), figures(cb)
            for name in list(fa) + [n for n in fb if n not in fa]:
                if name in COUNTS and (name not in fa or name not in fb):
                    continue  # a count one of the two summaries predates
                va, vb = fa.get(name), fb.get(name)
                if changed(name, va, vb):
                    row.changes[name] = (va, vb)
        rows.append(row)
    return Comparison(a, b, rows)


def compare_folders(a: Path, b: Path) -> Comparison:
    return compare_runs(load_run(a), load_run(b))


_STYLE = {"pass": "green", "fail": "bold red", "unknown": "yellow"}


def _verdict(v: str | None) -> str:
    return "[dim]-[/dim]" if v is None else f"[{_STYLE.get(v, 'yellow')}]{v}[/]"


def render_comparison(c: Comparison) -> Table:
    """Cells side by side: A's and B's verdicts, what changed (`figure a → b`)."""
    # Names and figures come from the files: escaped, as `[/x]` in them is not rich markup.
    table = Table(title=escape(f"A {c.a.run_id}  vs  B {c.b.run_id}"), title_justify="left")
    for column in ("experiment", "cell", "A", "B", "flip", "figure changes"):
        table.add_column(column)
    for r in c.rows:
        flip = (
            "[bold red]from pass[/]"
            if r.flipped_from_pass
            else "yes"
            if r.flipped
            else "only A"
            if r.verdict_b is None
            else "only B"
            if r.verdict_a is None
            else ""
        )
        changes = "; ".join(f"{k} {fmt(va)} → {fmt(vb)}" for k, (va, vb) in r.changes.items())
        table.add_row(
            escape(r.experiment),
            escape(r.cell),
            _verdict(r.verdict_a),
            _verdict(r.verdict_b),
            flip,
            escape(changes),
        )
    return table


def summary_lines(c: Comparison) -> list[str]:
    both = len(c.rows) - len(c.only_a) - len(c.only_b)
    lines = [
        f"{both} cell(s) in both, {len(c.only_a)} only in A, {len(c.only_b)} only in B; "
        f"{len(c.flips)} verdict flip(s), {len(c.flipped_from_pass)} from pass; "
        f"{len(c.changed)} cell(s) with figure changes"
    ]
    lines += [
        escape(f"flipped from pass: {r.experiment} {r.cell} ({r.verdict_a} → {r.verdict_b})")
        for r in c.flipped_from_pass
    ]
    return lines
