"""What each night cost (for results/index.html): its harness overhead and mean seconds per
phase, from history rows (`harness.results.tables.FIGURE_HISTORY`'s `t_*` columns).

Pure. A night's overhead is the end-of-run footer's figure over its cells
(`harness.results.timings.overhead_per_100s` of their summed timings); its phases are means
per cell. Rows without timings (`t_total` null: cells of an older harness, or a cell that
never got a summary) are left out; a night with none has no point.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from harness.report.trends import CostPoint
from harness.results.timings import HISTORY_COLUMNS, TOTAL, overhead_per_100s, sum_timings


def _value(row: Mapping[str, Any], column: str) -> float | None:
    value = row.get(column)
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        return None  # null, or NaN from a pandas-built frame
    return float(value)


def row_timings(row: Mapping[str, Any]) -> dict[str, float] | None:
    """A history row's timings under the summary's keys (a null column: 0.0); None when the
    row has none (t_total null)."""
    if _value(row, HISTORY_COLUMNS[TOTAL]) is None:
        return None
    return {key: _value(row, column) or 0.0 for key, column in HISTORY_COLUMNS.items()}


def summed(rows: Sequence[Mapping[str, Any]]) -> tuple[dict[str, float] | None, int]:
    """The rows' timings summed as a run summary sums its cells' (None: no row has them),
    and how many rows had them."""
    timed = [{"timings": t} for r in rows if (t := row_timings(r)) is not None]
    return sum_timings(timed), len(timed)


def night_cost(rows: Sequence[Mapping[str, Any]]) -> CostPoint | None:
    """One night's point from its rows; None when none of them has timings or a start."""
    total, cells = summed(rows)
    starts = [r["started"] for r in rows if isinstance(r.get("started"), datetime)]
    if total is None or not starts:
        return None
    means = {key: round(seconds / cells, 3) for key, seconds in total.items()}
    return CostPoint(min(starts), cells, overhead_per_100s(total), means)


def night_costs(nights: Sequence[Sequence[Mapping[str, Any]]]) -> list[CostPoint]:
    """The points of nights (each its rows), in the order given; a night without timings is
    left out."""
    return [p for rows in nights if (p := night_cost(rows)) is not None]
