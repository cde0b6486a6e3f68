"""The report's table of the summary's `broker` section: Kafka's own view of the cell
(spark_jobs/checks/broker_metrics.py), each figure with its value or why it is undecided."""

from __future__ import annotations

from typing import Any

from harness.results.metrics import BROKER_FIGURES, BROKER_PREFIX


def broker_rows(summary: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(`broker.<figure>`, value, why undecided) per BROKER_FIGURES figure; none without the
    section."""
    section = summary.get("broker")
    if not isinstance(section, dict):
        return []
    undecided = summary.get("undecided") or {}
    rows = []
    for name in BROKER_FIGURES:
        value = section.get(name)
        shown = "?" if value is None else f"{value:g}" if isinstance(value, float) else str(value)
        # named as an expectation names it: `broker.isr_shrinks` is not the ISR section's
        # `isr_shrinks` (a leader's meter against the partition watch's view)
        rows.append((BROKER_PREFIX + name, shown, str(undecided.get(BROKER_PREFIX + name, ""))))
    return rows
