"""Today's bounds against the figures a calibration record kept: per cell and bound, the quiet
figures and their margin now, the margin of the bound the runs were judged by (when the bound
changed since), and what the runs beside CPU burners gave. docs/experiments.md's table of
calibrated bounds is rendered from these rows (scripts/docs_calibration.py).

Quiet runs set a bound (a machine with burners may leave a timing figure undecided by the
overload rule, and its figures are not what the bound is for); runs beside burners show what
the nightly's noise does to the verdict: they must pass or be `unknown`, never `fail`.

`broker_errors` is the one figure that depends on the spec beyond its bound (which ERROR
templates `broker_logs.allow` expects): it is counted again under today's allow-list from the
templates the record kept, so an allow entry added with its evidence re-judges the runs that
showed that line; a run recorded before records kept templates stays apart (`older-allow`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.results.broker_log import compile_allow, row_allowed
from harness.results.metrics import BROKER_LOG_METRICS
from harness.spec import Cell
from harness.spec.expect import Bound
from harness.verdict.calibration import bound_kind
from harness.verdict.cell_verdict import resolved_expect
from harness.verdict.margins import meets_goal, worst_margin


@dataclass
class CalibratedBound:
    cell: str
    metric: str
    bound: str  # as the spec writes it today
    threshold: float
    kind: str  # count | relative | numeric (harness.verdict.calibration.bound_kind)
    quiet: list[float] = field(default_factory=list)
    quiet_verdicts: list[str] = field(default_factory=list)
    margin: float | None = None  # today's bound against the quiet figures
    before: str | None = None  # the bound the quiet runs were judged by, when it differs
    margin_before: float | None = None
    loaded: list[float | None] = field(default_factory=list)  # beside burners, run order
    loaded_verdicts: list[str] = field(default_factory=list)
    loaded_overloaded: int = 0  # of the loaded runs, those the overload rule flagged
    burners: list[int] = field(default_factory=list)
    # broker_errors: runs judged with a `broker_logs.allow` changed since, whose counted
    # templates the record lacks (older records), so today's list cannot judge them again;
    # their verdicts, kept out of the lists above
    older_allow: list[str] = field(default_factory=list)
    rejudged: int = 0  # runs whose broker_errors today's allow-list judges otherwise

    @property
    def status(self) -> str:
        """`ok`, `thin` (a timing bound under the goal), `failed` (a run failed it, quiet or
        beside burners), `unmeasured` (no quiet figure), `older-allow` (the only failures
        were judged with an allow-list changed since and cannot be judged again)."""
        if "fail" in self.quiet_verdicts or "fail" in self.loaded_verdicts:
            return "failed"
        if "fail" in self.older_allow:
            return "older-allow"
        if not self.quiet:
            return "unmeasured"
        if self.kind == "count" or meets_goal(self.margin):
            return "ok"
        return "thin"


def _op(bound_text: str) -> str:
    return bound_text.split(" ", 1)[0]


def _recorded(
    record: Mapping[str, Any], cell_id: str, metric: str
) -> list[tuple[Mapping[str, Any], Mapping[str, Any], Mapping[str, Any]]]:
    """(calibration, cell entry, bound entry) for the metric of the cell in each calibration,
    oldest first."""
    out = []
    for cal in record.get("calibrations", []):
        for cell in cal.get("cells", []):
            if cell.get("cell") != cell_id:
                continue
            out += [(cal, cell, b) for b in cell.get("bounds", []) if b.get("metric") == metric]
    return out


@dataclass
class _Judged:
    """A bound entry's figures and verdicts as today's spec judges them."""

    figures: list[float | None]
    verdicts: list[str]
    older_allow: list[str] = field(default_factory=list)  # verdicts not judged again
    rejudged: int = 0


def _judged_today(
    metric: str,
    bound: Bound,
    allow: Sequence[str],
    cell: Mapping[str, Any],
    entry: Mapping[str, Any],
) -> _Judged:
    """broker_errors counted again under today's allow-list from the templates the record
    kept; a run without them, judged with another allow-list, is set apart. Any other
    metric's figures do not depend on the allow-list: as recorded."""
    figures: list[float | None] = list(entry.get("figures") or [])
    verdicts = [str(v) for v in entry.get("verdicts") or []]
    if metric not in BROKER_LOG_METRICS:
        return _Judged(figures, verdicts)
    patterns = compile_allow(allow)
    counted = entry.get("counted")
    runs_counted: list[Any] = counted if isinstance(counted, list) else []
    then = cell.get("broker_logs_allow")
    changed = isinstance(then, list) and [str(p) for p in then] != list(allow)
    out = _Judged([], [])
    for i, (figure, verdict) in enumerate(zip(figures, verdicts, strict=False)):
        rows = runs_counted[i] if i < len(runs_counted) else None
        if figure == 0:
            rows = []  # nothing was counted: no allow-list counts fewer
        if figure is not None and isinstance(rows, list):
            now = float(sum(int(r.get("count") or 0) for r in rows if not row_allowed(patterns, r)))
            if verdict in ("pass", "fail"):
                judged = "pass" if bound.holds(now) else "fail"
                out.rejudged += int(now != figure or judged != verdict)
                verdict = judged
            figure = now
        elif changed and figure is not None:  # an undecided figure stays undecided
            out.older_allow.append(verdict)
            continue
        out.figures.append(figure)
        out.verdicts.append(verdict)
    return out


def calibrated_bounds(record: Mapping[str, Any], cells: Sequence[Cell]) -> list[CalibratedBound]:
    """Every numeric bound of the cells as the spec has them today, with the record's figures."""
    rows = []
    for cell in cells:
        for metric, bound in resolved_expect(cell.spec).items():
            if bound is None or bound.op in ("exact", "is") or bound.threshold is None:
                continue
            row = CalibratedBound(
                cell.id, metric, str(bound), bound.threshold, bound_kind(metric, bound)
            )
            before: tuple[str, float] | None = None
            allow = [str(p) for p in cell.spec.broker_logs.allow]
            for cal, cell_entry, entry in _recorded(record, cell.id, metric):
                judged = _judged_today(metric, bound, allow, cell_entry, entry)
                figures, verdicts = judged.figures, judged.verdicts
                row.older_allow += judged.older_allow
                row.rejudged += judged.rejudged
                if cal.get("load"):
                    row.loaded += figures
                    row.loaded_verdicts += verdicts
                    row.loaded_overloaded += len(entry.get("overloaded_runs") or [])
                    row.burners.append(int(cal["load"]))
                    continue
                row.quiet += [f for f in figures if f is not None]
                row.quiet_verdicts += verdicts
                if entry.get("bound") != str(bound) and entry.get("threshold") is not None:
                    before = (str(entry["bound"]), float(entry["threshold"]))
            row.margin = worst_margin(bound.op, bound.threshold, row.quiet)
            if before is not None:
                row.before = before[0]
                row.margin_before = worst_margin(_op(before[0]), before[1], row.quiet)
            rows.append(row)
    return rows


def unknown_cells(record: Mapping[str, Any], cells: Sequence[Cell]) -> list[str]:
    """Cells the record names that the spec no longer has (a stale record)."""
    ids = {c.id for c in cells}
    named = {c.get("cell") for cal in record.get("calibrations", []) for c in cal.get("cells", [])}
    return sorted(str(c) for c in named - ids)
