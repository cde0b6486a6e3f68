"""What changed in the latest suite run against the history (for results/index.html).

Pure functions over history rows (dicts with `harness.results.tables.FIGURE_HISTORY`'s
columns, as `history_records` reads them) and the latest run's cells:

* a **flip**: the cell's verdict differs from its verdict in the most recent earlier run of
  the same suite that had the cell (`previous_run`);
* a figure **out of range**: the latest value lies outside [min, max] of that figure over
  the cell's last N earlier runs (N = `NIGHTS`, 7), by more than `compare.changed` calls a
  change (counts: at all; times: max(1 s, 25 %)); or it is undecided now while one of those
  nights decided it. A figure never decided in those nights has no range and is not flagged.

Figures carry compare's names: `lost`, `duplicated`, …, `max_stall_s`, `stall_s.<set>`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import pyarrow as pa

from harness.results.verdicts import as_verdict
from harness.suite.compare import Key, changed

NIGHTS = 7
# history.parquet's figure columns, in the order the index shows them
HISTORY_FIGURES = (
    "lost",
    "lost_never_consumed",
    "duplicated",
    "reprocessed",
    "max_stall_s",
    "unavailable_s",
)
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def history_records(table: pa.Table) -> list[dict[str, Any]]:
    """The history as row dicts (nulls as None; `stall_s` as (set, seconds) pairs)."""
    return [dict(row) for row in table.to_pylist()]


def _clean(value: Any) -> Any:
    """None for null or NaN (a pandas-built frame), else the value."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return value


def _pairs(stalls: Any) -> Iterable[tuple[str, Any]]:
    if isinstance(stalls, Mapping):
        return stalls.items()
    if isinstance(stalls, list | tuple):
        return ((str(k), v) for k, v in stalls)
    return ()


def row_figures(row: Mapping[str, Any]) -> dict[str, Any]:
    """A history row's figures under compare's names (`stall_s.<set>` from the map column)."""
    out = {name: _clean(row.get(name)) for name in HISTORY_FIGURES}
    for name, value in _pairs(row.get("stall_s")):
        out[f"stall_s.{name}"] = _clean(value)
    return out


def _started(row: Mapping[str, Any]) -> datetime:
    when = row.get("started")
    if not isinstance(when, datetime):
        return _EPOCH
    return when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc)


def earlier_runs(
    rows: Sequence[Mapping[str, Any]],
    suite: str | None,
    latest_run: str,
    latest_started: datetime | None,
) -> list[str]:
    """The runs of the same suite started before the latest one (or in the same second),
    oldest first."""
    runs: dict[str, datetime] = {}
    for row in rows:
        run = row.get("suite_run")
        if not isinstance(run, str) or run == latest_run:
            continue
        if suite is not None and row.get("suite") != suite:
            continue
        runs[run] = min(runs.get(run, _started(row)), _started(row))
    if latest_started is not None:
        runs = {r: s for r, s in runs.items() if s <= latest_started}  # same second: earlier
    return sorted(runs, key=lambda r: (runs[r], r))


@dataclass(frozen=True)
class OutOfRange:
    """A figure outside what the last nights measured (value None: undecided now)."""

    figure: str
    value: Any
    low: Any
    high: Any
    nights: int  # how many earlier nights decided it (the range is over those)

    @property
    def direction(self) -> str:
        if self.value is None:
            return "undecided"
        return "above" if self.value > self.high else "below"


@dataclass
class CellChange:
    experiment: str
    cell: str
    verdict: str
    previous_verdict: str | None = None  # None: the cell is new (in no earlier run)
    previous_run: str | None = None
    out_of_range: list[OutOfRange] = field(default_factory=list)
    nights: int = 0  # earlier runs of the window that had the cell

    @property
    def is_new(self) -> bool:
        return self.previous_verdict is None

    @property
    def flipped(self) -> bool:
        return self.previous_verdict is not None and self.previous_verdict != self.verdict

    @property
    def flipped_from_pass(self) -> bool:
        return self.flipped and self.previous_verdict == "pass"

    @property
    def changed(self) -> bool:
        return self.flipped or bool(self.out_of_range)


def out_of_range(name: str, value: Any, past: Sequence[Any]) -> OutOfRange | None:
    """`value` against the decided values of `past` (the last nights, oldest first)."""
    decided = [v for v in (_clean(p) for p in past) if isinstance(v, int | float)]
    if not decided:
        return None
    low, high = min(decided), max(decided)
    value = _clean(value)
    if value is None:
        return OutOfRange(name, None, low, high, len(decided))
    if not isinstance(value, int | float):
        return None
    if (value < low and changed(name, low, value)) or (value > high and changed(name, high, value)):
        return OutOfRange(name, value, low, high, len(decided))
    return None


def cell_changes(
    latest: Mapping[Key, tuple[str, Mapping[str, Any]]],
    rows: Sequence[Mapping[str, Any]],
    *,
    suite: str | None,
    latest_run: str,
    latest_started: datetime | None = None,
    nights: int = NIGHTS,
) -> dict[Key, CellChange]:
    """Each latest cell ((experiment, cell) -> (verdict, figures)) against the history rows."""
    runs = earlier_runs(rows, suite, latest_run, latest_started)
    order = {run: i for i, run in enumerate(runs)}
    by_cell: dict[Key, list[Mapping[str, Any]]] = {}
    for row in rows:
        run = row.get("suite_run")
        if run in order:
            key = (str(row.get("experiment")), str(row.get("cell")))
            by_cell.setdefault(key, []).append(row)
    out: dict[Key, CellChange] = {}
    for key, (verdict, figures) in latest.items():
        past = sorted(by_cell.get(key, []), key=lambda r: order[r["suite_run"]])
        change = CellChange(key[0], key[1], as_verdict(verdict))
        if past:
            change.previous_verdict = as_verdict(past[-1].get("verdict"))
            change.previous_run = str(past[-1]["suite_run"])
        window = [row_figures(r) for r in past[-nights:]] if nights > 0 else []
        change.nights = len(window)
        names = list(figures) + [n for w in window for n in w if n not in figures]
        for name in dict.fromkeys(names):
            flagged = out_of_range(name, figures.get(name), [w.get(name) for w in window])
            if flagged is not None:
                change.out_of_range.append(flagged)
        out[key] = change
    return out
