"""What the index page is built from: the suite folders under a results folder and its
history.parquet. A damaged input is left out of the page, noted on it, and listed (Damage)
so that `index` still exits 2 or 3."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pyarrow as pa

from harness.errors import ConfigError
from harness.results.layout import FIGURE_HISTORY, SuitePaths
from harness.results.tables import FIGURE_HISTORY as HISTORY_SCHEMA
from harness.suite.changes import earlier_runs, history_records
from harness.suite.compare import read_summary
from harness.suite.history import history_rows, read_history


@dataclass(frozen=True)
class Damage:
    """An input file the index could not use (its page is written without it): `infra` when
    the file could not be read (exit 3), else it is malformed (exit 2)."""

    message: str
    infra: bool = False


@dataclass(frozen=True)
class SuiteFolder:
    """A suite run's folder: its summary, and its cells as history rows."""

    folder: Path
    summary: dict[str, Any]
    rows: list[dict[str, Any]]  # its cells as history rows

    @property
    def run_id(self) -> str:
        return str(self.summary.get("run_id") or self.folder.name)

    @property
    def started(self) -> datetime | None:
        started = self.rows[0]["started"] if self.rows else None
        return started if isinstance(started, datetime) else _parse(self.summary.get("started"))


def _parse(text: Any) -> datetime | None:
    try:
        when = datetime.fromisoformat(str(text))
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc)


def _sort_key(f: SuiteFolder) -> tuple[datetime, str]:
    return (f.started or datetime.min.replace(tzinfo=timezone.utc), f.folder.name)


def suite_folders(
    results: Path, notes: list[str] | None = None, damaged: list[Damage] | None = None
) -> list[SuiteFolder]:
    """Every suite folder directly under `results`, oldest first; one whose summary.json is
    unreadable or malformed is left out, noted, and listed in `damaged`."""
    found = []
    for folder in sorted(p for p in results.iterdir() if p.is_dir()) if results.is_dir() else []:
        paths = SuitePaths(folder)
        if not (paths.summary.is_file() and paths.suite.is_file()):
            continue
        try:
            summary = read_summary(paths.summary)
        except ConfigError as exc:
            if notes is not None:
                notes.append(f"{folder.name}/summary.json left out: {exc}")
            if damaged is not None:
                damaged.append(Damage(str(exc)))
            continue
        if summary.get("shard") is not None:
            continue  # a part of a night (`--shard`): its merge is the run (harness.suite.shards)
        if isinstance(summary.get("experiments"), list):
            found.append(SuiteFolder(folder, summary, history_rows(summary)))
    return sorted(found, key=_sort_key)


def read_figure_history(
    results: Path, notes: list[str], damaged: list[Damage]
) -> list[dict[str, Any]]:
    path = results / FIGURE_HISTORY
    try:
        if path.exists() and not path.is_file():
            raise ValueError("not a regular file")
        table = read_history(path)
        _check_history_schema(table.schema)
        return history_records(table)
    except Exception as exc:  # an unreadable history must not lose the page
        why = f"{type(exc).__name__}: {exc}"
        notes.append(f"{FIGURE_HISTORY} cannot be read ({why}); no trends")
        infra = isinstance(exc, OSError) and not isinstance(exc, pa.ArrowException)
        damaged.append(Damage(f"{path}: cannot be read ({why})", infra))
        return []


def _check_history_schema(schema: pa.Schema) -> None:
    """The contract's columns the file has carry the contract's types (a file written by an
    older harness may lack columns, never hold one of another type)."""
    wrong = [
        f"{name} is {schema.field(name).type}, expected {want.type}"
        for want in HISTORY_SCHEMA
        for name in [want.name]
        if name in schema.names and not schema.field(name).type.equals(want.type)
    ]
    if wrong:
        raise ValueError(f"not a history table: {'; '.join(wrong)}")


def latest_from_history(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    runs = earlier_runs(rows, None, "", None)
    return [dict(r) for r in rows if runs and r.get("suite_run") == runs[-1]]


def all_rows(history: list[dict[str, Any]], folders: Sequence[SuiteFolder]) -> list[dict[str, Any]]:
    """The history, plus the cells of suite folders it lacks (a history lost or not appended)."""
    known = {r.get("suite_run") for r in history}
    return history + [r for f in folders if f.run_id not in known for r in f.rows]
