"""Broker log lines around each fault: the first place to look when a verdict surprises."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

# Kafka's log4j layout: "[2024-05-01 12:00:00,123] INFO ..." in UTC.
LOG4J_TS = re.compile(r"^\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}),(\d{3})\]")
WINDOW_MS = 5_000
MAX_LINES = 40


@dataclass(frozen=True)
class LogEntry:
    """One timestamped line plus the continuation lines (stack traces) that follow it."""

    ts: int
    lines: tuple[str, ...]


@dataclass(frozen=True)
class BrokerTail:
    broker: str
    lines: tuple[str, ...]
    omitted: int  # lines inside the window left out to respect the cap


def parse_log4j_ts(line: str) -> int | None:
    """Milliseconds since the epoch of a log4j line, or None for a continuation line."""
    match = LOG4J_TS.match(line)
    if match is None:
        return None
    seconds = datetime.fromisoformat(match.group(1)).replace(tzinfo=timezone.utc).timestamp()
    return int(seconds) * 1000 + int(match.group(2))


def parse_log(text: str) -> list[LogEntry]:
    """Group lines into entries; lines before the first timestamp cannot be placed and are dropped."""
    entries: list[LogEntry] = []
    ts: int | None = None
    lines: list[str] = []
    for line in text.splitlines():
        line_ts = parse_log4j_ts(line)
        if line_ts is None:
            if ts is not None:
                lines.append(line)
            continue
        if ts is not None:
            entries.append(LogEntry(ts, tuple(lines)))
        ts, lines = line_ts, [line]
    if ts is not None:
        entries.append(LogEntry(ts, tuple(lines)))
    return entries


def read_broker_logs(brokers_dir: Path) -> dict[str, list[LogEntry]]:
    """Every `<id>.log` in the folder, by broker id; bytes that are not UTF-8 are replaced."""
    return {
        path.stem: parse_log(path.read_text(encoding="utf-8", errors="replace"))
        for path in sorted(brokers_dir.glob("*.log"))
    }


def tail_around(
    entries: list[LogEntry],
    center_ms: int,
    window_ms: int = WINDOW_MS,
    max_lines: int = MAX_LINES,
) -> tuple[tuple[str, ...], int]:
    """Lines of the entries within ±window of the event, in log order, nearest ones first kept.

    When the window holds more than `max_lines`, the entries closest in time to the event win:
    they are the ones that explain it.
    """
    inside = [e for e in entries if abs(e.ts - center_ms) <= window_ms]
    total = sum(len(e.lines) for e in inside)
    kept: dict[int, tuple[str, ...]] = {}
    budget = max_lines
    for i in sorted(range(len(inside)), key=lambda i: abs(inside[i].ts - center_ms)):
        if budget <= 0:
            break
        kept[i] = inside[i].lines[:budget]
        budget -= len(kept[i])
    lines = tuple(line for i in sorted(kept) for line in kept[i])
    return lines, total - len(lines)


def tails_around(logs: dict[str, list[LogEntry]], center_ms: int) -> list[BrokerTail]:
    """One tail per broker log for one event."""
    tails = []
    for broker, entries in logs.items():
        lines, omitted = tail_around(entries, center_ms)
        tails.append(BrokerTail(broker, lines, omitted))
    return tails
