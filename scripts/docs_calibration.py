"""docs/experiments.md's table of calibrated bounds, and what is still to run, from the
calibration records.

One row per numeric bound of every shipped experiment that has a record
(experiments/calibrations/<spec name>.json, written by `harness calibrate --record`): the
bound as the spec writes it today, the quiet runs' figures and their margin against it, the
bound the runs were judged by when it has changed since (and its margin), and what the runs
beside CPU burners gave. A record naming a cell the spec no longer has is an error: the
experiment changed and its figures no longer describe it.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from harness.experiment import make_plan
from harness.report.catalogue import FOLDERS
from harness.report.suite_summary import format_duration
from harness.results.calibration_record import read_record, record_path
from harness.spec import load_spec
from harness.suite.calibration_debt import (
    GOAL_BURNERS,
    GOAL_LOADED,
    GOAL_QUIET,
    SpecDebt,
    spec_debt,
)
from harness.verdict.calibrated import CalibratedBound, calibrated_bounds, unknown_cells

SPEC_FOLDERS = (*FOLDERS, "experiments/soak")  # the catalogue's, and the soak


def _figure(value: float) -> str:
    return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"


def _spread(figures: list[float]) -> str:
    if not figures:
        return "-"
    lo, hi = min(figures), max(figures)
    text = _figure(lo) if lo == hi else f"{_figure(lo)}-{_figure(hi)}"
    return f"{text} ({len(figures)})"


def _margin(row: CalibratedBound) -> str:
    if row.status == "unmeasured":
        return "unmeasured"
    if row.kind == "count":
        if row.status == "older-allow":
            n = row.older_allow.count("fail")
            held = "holds" if row.quiet else "unmeasured"  # no run left that today's list judged
            return f"{held}; {n} run(s) failed under an allow-list changed since"
        return "fails" if row.status == "failed" else "holds"
    text = "-" if row.margin is None else f"{row.margin * 100:.0f} %"
    return f"{text} ({row.status})" if row.status != "ok" else text


def _resolved(row: CalibratedBound) -> str:
    """A relative bound's threshold in this cell."""
    return f" ({_figure(row.threshold)})" if row.kind == "relative" else ""


def _before(row: CalibratedBound) -> str:
    parts = []
    if row.before is not None:
        margin = "-" if row.margin_before is None else f"{row.margin_before * 100:.0f} %"
        parts.append(f"`{row.before}`: {margin}")
    if row.rejudged:
        parts.append(f"{row.rejudged} run(s) judged otherwise by the allow-list then")
    return "; ".join(parts)


def _loaded(row: CalibratedBound) -> str:
    if not row.loaded_verdicts:
        return "-"
    counts = Counter(row.loaded_verdicts)
    verdicts = ", ".join(f"{counts[v]} {v}" for v in ("pass", "unknown", "fail") if counts[v])
    figures = ", ".join("-" if f is None else _figure(f) for f in row.loaded)
    burners = "/".join(str(b) for b in sorted(set(row.burners)))
    overloaded = f"; {row.loaded_overloaded} overloaded" if row.loaded_overloaded else ""
    return f"{verdicts} ({figures}; {burners} burners{overloaded})"


def spec_files(root: Path) -> list[Path]:
    return [p for folder in SPEC_FOLDERS for p in sorted((root / folder).glob("*.yaml"))]


def debt_of(path: Path) -> SpecDebt:
    """What the spec's calibration record still lacks (harness.suite.calibration_debt)."""
    name = load_spec(path).name
    return spec_debt(
        name, path, make_plan(path, 1, None).cells, read_record(record_path(path, name))
    )


def debt_table(root: Path) -> str:
    """Per experiment with a numeric bound: the fewest runs any of its cells has recorded,
    quiet and beside burners, against the goal, and the planned machine time to close it."""
    lines = [
        f"| experiment | cells | quiet runs (of {GOAL_QUIET}) "
        f"| beside {GOAL_BURNERS} burners (of {GOAL_LOADED}) | still to run |",
        "|---|---:|---:|---:|---:|",
    ]
    debts = [d for d in (debt_of(p) for p in spec_files(root)) if d.cells]
    for d in debts:
        rel = d.file.relative_to(root).as_posix()
        left = d.planned_s()
        lines.append(
            f"| [`{d.name}`]({rel}) | {len(d.cells)} | {d.quiet_runs} | {d.loaded_runs} "
            f"| {format_duration(left) if left else 'done'} |"
        )
    total = sum(d.planned_s() for d in debts)
    quiet = sum(d.planned_s(0) for d in debts)
    lines += [
        "",
        f"Still to run: {format_duration(total)} of planned machine time ({format_duration(quiet)} quiet, "
        f"{format_duration(total - quiet)} beside burners), one calibration at a time: the suite "
        "estimate of each batch scaled by what the experiment's recorded calibrations took "
        "against it (quiet and beside burners apart).",
    ]
    return "\n".join(lines) + "\n"


def calibration_table(root: Path) -> str:
    lines = [
        "| experiment | cell | bound | quiet figures (runs) | margin | judged by then: margin "
        "| beside CPU burners |",
        "|---|---|---|---|---:|---|---|",
    ]
    missing = []
    for path in spec_files(root):
        name = load_spec(path).name
        record = read_record(record_path(path, name))
        rel = path.relative_to(root).as_posix()
        if record is None:
            missing.append(f"[`{name}`]({rel})")
            continue
        cells = make_plan(path, 1, None).cells
        stale = unknown_cells(record, cells)
        if stale:
            raise ValueError(f"{record_path(path, name)}: cells {stale} are not in {path}")
        for row in calibrated_bounds(record, cells):
            lines.append(
                f"| [`{name}`]({rel}) | `{row.cell}` | `{row.metric}` `{row.bound}`{_resolved(row)} "
                f"| {_spread(row.quiet)} | {_margin(row)} | {_before(row)} | {_loaded(row)} |"
            )
    if missing:
        lines += ["", f"Not calibrated yet: {', '.join(missing)} ([still to run](#still-to-run))."]
    return "\n".join(lines) + "\n"
