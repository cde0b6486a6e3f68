"""The report's "Broker log errors" section: the summary's broker_errors and its most frequent
templates (spark_jobs/checks/broker_logs.py), times relative to the cell's start."""

from __future__ import annotations

from typing import Any

from harness.report.timeline import utc

TOP_TEMPLATES = 10
SHOWN_CHARS = 400  # of an example line or its exception: the rest is in summary.json


def _short(text: object) -> str:
    text = str(text or "")
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."


def _since(ts: object, start: int | None) -> str:
    if not isinstance(ts, int) or isinstance(ts, bool):
        return "?"
    if start is None:
        return f"{utc(ts)} UTC"
    return f"+{(ts - start) / 1000:.1f} s ({utc(ts)} UTC)"


def broker_errors_section(summary: dict[str, Any], events: list[dict[str, Any]]) -> dict[str, Any]:
    """count ("?" when undecided), why undecided, the top templates' rows and how many more;
    a row's `first` is relative to the history's first event (the cell's start)."""
    count = summary.get("broker_errors")
    reason = str((summary.get("undecided") or {}).get("broker_errors", ""))
    templates = summary.get("broker_errors_by_template")
    rows = [t for t in templates if isinstance(t, dict)] if isinstance(templates, list) else []
    start = next((e["ts"] for e in events if isinstance(e.get("ts"), int)), None)
    shown = [
        {
            "level": str(t.get("level", "")),
            "logger": str(t.get("logger", "")),
            "template": str(t.get("template", "")),
            "count": t.get("count"),
            "nodes": ", ".join(str(n) for n in t.get("nodes") or []),
            "first": _since(t.get("first_ts"), start),
            "example": _short(t.get("example")),
            "detail": _short(t.get("detail")),
            "allowed": bool(t.get("allowed")),
        }
        for t in rows[:TOP_TEMPLATES]
    ]
    return {
        "measured": "broker_errors" in summary,  # summaries before the check lack it
        "count": "?" if count is None else str(count),
        "reason": reason,
        "allowed": sum(int(t.get("count") or 0) for t in rows if t.get("allowed")),
        "rows": shown,
        "more": max(0, len(rows) - TOP_TEMPLATES),
    }
