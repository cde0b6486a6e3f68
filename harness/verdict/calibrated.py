"""Today's bounds against the figures a calibration record kept: per cell and bound, the quiet
figures and their margin now, the margin of the bound the runs were judged by (when the bound
changed since), and what the runs beside CPU burners gave. docs/experiments.md's table of
calibrated bounds is rendered from these rows (scripts/docs_calibration.py).

Quiet runs set a bound (a machine with burners may leave a timing figure undecided by the
overload rule, and its figures are not what the bound is for); runs beside burners show what
the nightly's noise does to the verdict: they must pass or be `unknown`, never `fail`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.spec import Cell
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

    @property
    def status(self) -> str:
        """`ok`, `thin` (a timing bound under the goal), `failed` (a run failed it, quiet or
        beside burners), `unmeasured` (no quiet figure)."""
        if "fail" in self.quiet_verdicts or "fail" in self.loaded_verdicts:
            return "failed"
        if not self.quiet:
            return "unmeasured"
        if self.kind == "count" or meets_goal(self.margin):
            return "ok"
        return "thin"


def _op(bound_text: str) -> str:
    return bound_text.split(" ", 1)[0]


def _recorded(
    record: Mapping[str, Any], cell_id: str, metric: str
) -> list[tuple[Mapping[str, Any], Mapping[str, Any]]]:
    """(calibration, bound entry) for the metric of the cell in each calibration, oldest first."""
    out = []
    for cal in record.get("calibrations", []):
        for cell in cal.get("cells", []):
            if cell.get("cell") != cell_id:
                continue
            out += [(cal, b) for b in cell.get("bounds", []) if b.get("metric") == metric]
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
            for cal, entry in _recorded(record, cell.id, metric):
                figures = list(entry.get("figures") or [])
                verdicts = [str(v) for v in entry.get("verdicts") or []]
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
