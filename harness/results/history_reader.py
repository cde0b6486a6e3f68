"""A cell's history.jsonl read back, leniently: for summaries, verdicts and reports.

Not part of harness.results.history (the writer): reading uses the folder's guards
(harness.results.layout), and the folder's files use the writer's clock.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.results.history import is_event_time
from harness.results.layout import require_regular


def read_jsonl(path: Path) -> tuple[list[dict[str, Any]], int]:
    """A history.jsonl's events sorted by time, and how many lines were not events.

    Lenient on purpose: a torn or foreign line must not stop a summary or a report
    (the checks in spark_jobs read the same file strictly). A FIFO or device in its place is a
    ResultFolderError, not a read that never ends.
    """
    require_regular(path)
    events: list[dict[str, Any]] = []
    bad = 0
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except ValueError:
            bad += 1
            continue
        if isinstance(event, dict) and is_event_time(event.get("ts")):
            event.setdefault("kind", "?")
            events.append(event)
        else:
            bad += 1
    return sorted(events, key=lambda e: e["ts"]), bad
