"""Fault windows read from a history: the one definition the report draws and the checks
measure against (moved here from harness.report.timeline so spark_jobs can use it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.results import events as ev

# The spec's fault kind a `consumer.crash` event comes from.
CONSUMER_CRASH_FAULT = "consumer-crash"


@dataclass(frozen=True)
class FaultWindow:
    fault_id: Any
    fault: str
    target: str
    start_ms: int
    end_ms: int | None  # None: never healed
    level: str = ""  # how bad, when the fault says (a link fault: "+200±50 ms clients")

    @property
    def label(self) -> str:
        return f"{self.fault} {self.target}" + (f" {self.level}" if self.level else "")

    @property
    def consumer_crash(self) -> bool:
        """A crashed consumer member, not a fault done to the cluster."""
        return self.fault == CONSUMER_CRASH_FAULT and self.fault_id is None


def fault_windows(events: list[dict[str, Any]]) -> list[FaultWindow]:
    """Every fault's window, in time order: `fault.inject` up to the `fault.heal` of the same
    `fault_id`; a consumer crash (`consumer.crash` of a running process, with its pid) up to
    the next `consumer.launch` of that consumer. A window never closed stays open (None)."""
    open_: dict[Any, dict[str, Any]] = {}
    windows: list[FaultWindow] = []
    for i, event in enumerate(sorted(events, key=lambda e: e["ts"])):
        kind = event["kind"]
        if kind in (ev.FAULT_INJECT, ev.FAULT_HEAL):
            fault_id = event.get("fault_id", f"#{i}")
            # a history is input: an id of another type still keys its window
            key: Any = ("fault", fault_id if isinstance(fault_id, int | str) else repr(fault_id))
        elif kind in (ev.CONSUMER_CRASH, ev.CONSUMER_LAUNCH) and event.get("consumer"):
            key = ("consumer", str(event["consumer"]))
        else:
            continue
        opens = kind == ev.FAULT_INJECT or (kind == ev.CONSUMER_CRASH and "pid" in event)
        if opens:
            if key in open_:  # injected twice without a heal: close the first at the second
                windows.append(_window(open_.pop(key), event["ts"]))
            open_[key] = event
        elif kind in (ev.FAULT_HEAL, ev.CONSUMER_LAUNCH) and key in open_:
            windows.append(_window(open_.pop(key), event["ts"]))
    windows.extend(_window(start, None) for start in open_.values())
    return sorted(windows, key=lambda w: w.start_ms)


def _window(start: dict[str, Any], end_ms: int | None) -> FaultWindow:
    if start["kind"] == ev.CONSUMER_CRASH:
        return FaultWindow(
            None, CONSUMER_CRASH_FAULT, str(start["consumer"]), int(start["ts"]), end_ms
        )
    return FaultWindow(
        fault_id=start.get("fault_id"),
        fault=str(start.get("fault", "fault")),
        target=str(start.get("target", "?")),
        start_ms=int(start["ts"]),
        end_ms=end_ms,
        level=str(start.get("level") or ""),
    )
