"""broker_errors: the ERROR and FATAL events of the nodes' logs (`brokers/<node>.log`) that
the spec's `broker_logs.allow` does not expect, grouped by template
(harness.results.broker_log). Pure Python over the folder: no Spark.

What it reads from the history: the allow list (broker_logs.allow, at the cell's start) and
which logs were saved (broker_logs.saved: a node whose log was not saved makes the count a
lower bound). No log at all (the cell stopped before its cluster ended, an older folder)
leaves the count undecided, never 0.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from harness.results import broker_log as bl
from harness.results import events as ev
from harness.results.events import Event
from harness.results.layout import CellPaths, require_regular
from harness.results.metrics import Figures
from spark_jobs import history_facts as hf
from spark_jobs.check import Check
from spark_jobs.context import CellContext

NAME = "broker_errors"


def _last(history: list[Event], kind: str) -> Event | None:
    found = hf.events(history, kind)
    return found[-1] if found else None


def allow_patterns(history: list[Event]) -> list[str]:
    """The spec's broker_logs.allow as the cell recorded it ([] if it had none)."""
    event = _last(history, ev.BROKER_LOGS_ALLOW)
    allow = event.get("allow") if event is not None else None
    return [str(p) for p in allow] if isinstance(allow, list) else []


def log_files(cell_dir: Path) -> list[Path]:
    """brokers/*.log, each a regular file (ResultFolderError for a FIFO or a device)."""
    folder = CellPaths(cell_dir).brokers
    if not folder.is_dir():
        return []
    files = sorted(folder.glob("*.log"))
    for path in files:
        require_regular(path)
    return files


def gaps(history: list[Event], files: list[Path]) -> list[str]:
    """Why the logs at hand may not be every node's whole log."""
    present = {p.name for p in files}
    saved = _last(history, ev.BROKER_LOGS_SAVED)
    if saved is not None:
        out = [f"{node}'s log was not saved ({error})" for node, error in _items(saved, "failed")]
        out += [
            f"brokers/{name} missing" for _, name in _items(saved, "files") if name not in present
        ]
        return out
    started = _last(history, ev.CLUSTER_START)
    nodes = started.get("nodes") if started is not None else None
    if isinstance(nodes, list) and len(files) < len(nodes):
        return [
            f"{len(files)} log(s) in brokers/ for {len(nodes)} node(s), and no"
            f" {ev.BROKER_LOGS_SAVED} event saying why"
        ]
    return []


def _items(event: Event, key: str) -> list[tuple[str, str]]:
    value = event.get(key)
    return [(str(k), str(v)) for k, v in value.items()] if isinstance(value, dict) else []


def _events(files: list[Path]) -> Iterator[bl.LogEvent]:
    for path in files:
        with open(path, encoding="utf-8", errors="replace") as lines:
            yield from bl.parse_events(lines, path.stem)


def broker_log_figures(cell_dir: Path, history: list[Event]) -> Figures:
    """broker_errors and broker_errors_by_template of the cell folder."""
    files = log_files(cell_dir)
    missing = gaps(history, files)
    if not files:
        reason = "no broker logs in brokers/ (the cell ended before its cluster was removed?)"
        return {
            "broker_errors": None,
            "broker_errors_by_template": [],
            "undecided": {NAME: "; ".join([reason, *missing])},
        }
    allowed = bl.allowed_by(bl.compile_allow(allow_patterns(history)))
    rows = bl.group(_events(files), allowed)
    count = sum(r["count"] for r in rows if not r["allowed"])
    out: Figures = {"broker_errors": count, "broker_errors_by_template": rows}
    if missing:  # as spark_jobs.check.lower_bound, at the summary's top level
        reason = "; ".join(missing)
        if count > 0:
            out["undecided"] = {NAME: f"a lower bound ({reason})"}
        else:
            out["broker_errors"] = None
            out["undecided"] = {NAME: reason}
    return out


def run(ctx: CellContext) -> Figures:
    return broker_log_figures(ctx.cell_dir, ctx.data.history)


CHECK = Check(
    "broker_logs",
    needs=(),
    decides=(NAME, "broker_errors_by_template"),
    run=run,
    lane="broker_logs",  # plain Python: alongside the Spark checks
)
