"""The report's "Where the lost records went" section: the summary's `lost_where` counts,
why some are unknown, and the first examples with the broker copy that held each one."""

from __future__ import annotations

from typing import Any

from harness.report.timeline import utc
from harness.results.metrics import LOST_PLACES

MEANING = {
    "never_appended": "in no broker's copy, and no copy is missing",
    "truncated": "in a broker's copy taken before it rejoined, or a broker logged its "
    "truncation; gone from the final log",
    "deleted": "below the final log start offset, or only in a copy taken before a disk wipe",
    "unsynced": "acknowledged before a power loss dropped its segment's unsynced bytes "
    "(the filesystem's own record)",
    "corrupted": "acknowledged before a corrupt fault damaged its segment",
    "unknown": "cannot be placed (the reasons below)",
}
EXAMPLES = 10


def lost_where_section(summary: dict[str, Any]) -> dict[str, Any] | None:
    """What the template shows; None when the cell has no lost_where figure at all."""
    where = summary.get("lost_where")
    undecided = (summary.get("undecided") or {}).get("lost_where")
    if where is None and undecided is None:
        return None
    counts = [(p, MEANING[p], where.get(p) if where else None) for p in LOST_PLACES]
    examples = []
    for s in (summary.get("lost_where_sample") or [])[:EXAMPLES]:
        ts, log_ts = s.get("capture_ts"), s.get("log_ts")
        examples.append(
            {
                "seq": s.get("seq"),
                "where": s.get("where"),
                "partition": s.get("partition"),
                "offset": s.get("offset"),
                "broker": s.get("broker") or "",
                "capture": s.get("capture") or "",
                "captured": utc(int(ts)) if isinstance(ts, int) else "",
                "evidence": s.get("evidence") or "",
                "logged": (
                    f"truncated to {s.get('truncated_to')} at {utc(int(log_ts))}"
                    if isinstance(log_ts, int)
                    else ""
                ),
            }
        )
    return {
        "counts": counts if where else [],
        "undecided": undecided,
        "reasons": sorted((summary.get("lost_where_reasons") or {}).items()),
        "examples": examples,
    }
