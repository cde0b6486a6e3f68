"""Bounds that came close: the ones whose margin fell under MARGIN_LOW in the latest runs.

A cell's bound whose margin (harness.verdict.margin, the history's `margins` column) was
under MARGIN_LOW in the latest run or the runs just before it is about to fail, or set
tighter than the machine's noise, before it flips.

Pure functions over history rows (`history_records`) for results/index.html.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

MARGIN_LOW = 0.20  # a margin under this is listed (the README's bounds keep ≥ 30 %)
MARGIN_RUNS = 7  # the runs looked at: the latest and the 6 before it


def row_margins(row: Mapping[str, Any]) -> dict[str, float]:
    """A history row's decided margins, bound's metric -> margin (the map column reads as
    (key, value) pairs from pyarrow, as a dict from hand-built rows)."""
    raw = row.get("margins")
    pairs: Iterable[Any] = raw.items() if isinstance(raw, Mapping) else raw or ()
    out = {}
    for pair in pairs:
        if not isinstance(pair, list | tuple) or len(pair) != 2:
            continue
        value = pair[1]
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            out[str(pair[0])] = float(value)
    return out


@dataclass(frozen=True)
class ThinMargin:
    """A bound's smallest margin over the runs looked at, and the run that had it."""

    experiment: str
    cell: str
    metric: str
    margin: float
    run: str
    started: datetime | None
    under: int  # how many of the runs looked at had it under the limit


def thin_margins(
    rows: Sequence[Mapping[str, Any]],
    runs: Sequence[str],
    latest: Sequence[Mapping[str, Any]],
    count: int = MARGIN_RUNS,
    low: float = MARGIN_LOW,
) -> list[ThinMargin]:
    """Bounds whose margin was under `low` in the latest run (`latest`'s rows) or the
    `count - 1` earlier runs before it (`runs`, oldest first), smallest margin first; a tie
    is the most recent run's."""
    window = set(runs[-(count - 1) :]) if count > 1 else set()
    order = {run: i for i, run in enumerate(runs)}
    past = sorted(
        (r for r in rows if r.get("suite_run") in window), key=lambda r: order[r["suite_run"]]
    )
    seen: dict[tuple[str, str, str], tuple[float, Mapping[str, Any]]] = {}
    under: dict[tuple[str, str, str], int] = {}
    for row in [*past, *latest]:
        for metric, value in row_margins(row).items():
            key = (str(row.get("experiment")), str(row.get("cell")), metric)
            if value < low:
                under[key] = under.get(key, 0) + 1
            if key not in seen or value <= seen[key][0]:
                seen[key] = (value, row)
    out = [
        ThinMargin(
            *key,
            margin=value,
            run=str(row.get("suite_run")),
            started=row["started"] if isinstance(row.get("started"), datetime) else None,
            under=under[key],
        )
        for key, (value, row) in seen.items()
        if key in under
    ]
    return sorted(out, key=lambda t: (t.margin, t.experiment, t.cell, t.metric))
