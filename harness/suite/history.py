"""results/history.parquet: every suite run appends one row per cell (what changed since last
night). The columns are `harness.results.tables.FIGURE_HISTORY`; a missing file starts anew."""

from __future__ import annotations

import contextlib
import fcntl
import json
import math
import os
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from harness.results.tables import FIGURE_HISTORY
from harness.results.timings import HISTORY_COLUMNS
from harness.results.verdicts import as_verdict


def _int(value: Any) -> int | None:
    """A count read from a summary: a number, else None (as is Infinity or NaN, which
    summary.json may hold when a user edited it: `harness index` never crashes on it)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value) if math.isfinite(value) else None


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _finite(value: Any) -> float | None:
    number = _float(value)
    return number if number is not None and math.isfinite(number) else None


def _timestamp(text: Any) -> datetime | None:
    if not isinstance(text, str):
        return None
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc)


def history_rows(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per cell of a suite run's summary.json content (FIGURE_HISTORY's columns)."""
    started = _timestamp(summary.get("started"))
    rows = []
    for e in summary.get("experiments") or []:
        planned = e.get("planned_by_cell") or {}
        confirmed = {
            str(c.get("cell")): _text(c.get("status"))
            for c in e.get("confirmations") or []
            if isinstance(c, dict)
        }
        for cell in e.get("cells") or []:
            counts = cell.get("counts") or {}
            params = cell.get("params") or {}
            stalls = cell.get("stalls_by_set") or {}
            timings = cell.get("timings")
            timings = timings if isinstance(timings, dict) else {}
            margins = cell.get("margins")
            margins = margins if isinstance(margins, dict) else {}
            rows.append(
                {
                    "suite_run": summary.get("run_id"),
                    "suite": summary.get("suite"),
                    "started": started,
                    "experiment": e.get("experiment"),
                    "experiment_run": e.get("run_id"),
                    "cell": cell.get("cell"),
                    "kafka_version": _text(params.get("version")),
                    "mode": _text(params.get("mode")),
                    "seed": _int(e.get("seed")),
                    "verdict": as_verdict(cell.get("verdict")),
                    "lost": _int(counts.get("lost")),
                    "lost_never_consumed": _int(counts.get("lost_never_consumed")),
                    "duplicated": _int(counts.get("duplicated")),
                    "reprocessed": _int(counts.get("reprocessed")),
                    "max_stall_s": _float(cell.get("max_stall_s")),
                    "stall_s": [(str(k), _float(v)) for k, v in stalls.items()],
                    "unavailable_s": _float(cell.get("unavailable_s")),
                    "duration_s": _float(cell.get("duration_s")),
                    "planned_s": _float(planned.get(cell.get("cell"))),
                    "params": json.dumps(params, sort_keys=True, default=str),
                    **{col: _float(timings.get(key)) for key, col in HISTORY_COLUMNS.items()},
                    "margins": [(str(k), _finite(v)) for k, v in margins.items()],
                    "confirmation": confirmed.get(str(cell.get("cell"))),
                    "harness": _text(summary.get("harness")),
                }
            )
    return rows


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def rows_table(rows: list[dict[str, Any]]) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=FIGURE_HISTORY)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One appender at a time (two suite runs ending together must not lose rows)."""
    lock = path.with_name(path.name + ".lock")
    with lock.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def append_history(path: Path, rows: list[dict[str, Any]]) -> int:
    """Append rows to the history file (created when missing); returns its row count after.

    A file written by an older harness (fewer columns) is kept: its rows get nulls in the new
    columns. The file is replaced atomically, so a crash leaves the old one whole. A file that
    is not a readable Parquet table is an error (OSError / pyarrow's), never overwritten.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    new = rows_table(rows)
    with _locked(path):
        if path.exists():
            old = pq.read_table(path)
            table = pa.concat_tables([old, new], promote_options="permissive")
        else:
            table = new
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        pq.write_table(table, tmp)
        os.replace(tmp, path)
    return int(table.num_rows)


def read_history(path: Path) -> pa.Table:
    """The whole history (empty, with the contract's columns, when there is none yet)."""
    if not path.exists():
        return FIGURE_HISTORY.empty_table()
    return pq.read_table(path)
