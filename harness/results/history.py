"""One append-only history of everything that happened, faults included (Jepsen)."""

from __future__ import annotations

import json
import math
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, SupportsIndex

# A process whose wall clock a fault moves (it runs under libfaketime) is given
# the true wall clock of its start with the monotonic clock of that moment, "<wall_ns>:<mono_ns>"
# (harness.common.faketime): its ledger and events then keep true time, counted on the
# monotonic clock, which libfaketime leaves alone. Kafka's record timestamps, which the
# client library takes from the wall clock, are skewed: that is the fault.
TRUE_CLOCK_ENV = "KAFKA_CHAOS_TRUE_CLOCK"


def _true_clock_anchor() -> tuple[int, int] | None:
    raw = os.environ.get(TRUE_CLOCK_ENV, "")
    wall, _, mono = raw.partition(":")
    if not (wall.isdigit() and mono.isdigit()):
        return None
    return int(wall), int(mono)


_ANCHOR = _true_clock_anchor()


def _monotonic_sleep(seconds: float | SupportsIndex) -> None:
    """time.sleep on a monotonic wait: under libfaketime 0.9.10 Python's time.sleep (an
    absolute clock_nanosleep) fails with EINVAL, while a timed wait on an Event does not."""
    threading.Event().wait(max(0.0, float(seconds)))


if _ANCHOR is not None:  # a process under libfaketime (harness.common.faketime)
    time.sleep = _monotonic_sleep


def true_clock_anchor() -> str:
    """This process's true wall clock and monotonic clock now, as TRUE_CLOCK_ENV takes them."""
    return f"{now_ms() * 1_000_000}:{time.monotonic_ns()}"


def now_ms() -> int:
    """The wall clock in ms: true time even in a process whose clock is skewed."""
    if _ANCHOR is None:
        return time.time_ns() // 1_000_000
    wall_ns, mono_ns = _ANCHOR
    return (wall_ns + time.monotonic_ns() - mono_ns) // 1_000_000


@dataclass(frozen=True)
class Event:
    ts: int
    kind: str
    fields: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"ts": self.ts, "kind": self.kind, **self.fields}


# The latest time an event may carry: the end of year 9999 in ms (what a date can show).
MAX_TS_MS = 253_402_300_799_999


def is_event_time(ts: object) -> bool:
    """An event's `ts`: ms since the epoch, a finite number a date can show (a history is
    input: `Infinity` or 1e300 there must not crash a summary or a report)."""
    return (
        isinstance(ts, int | float)
        and not isinstance(ts, bool)
        and math.isfinite(ts)
        and 0 <= ts <= MAX_TS_MS
    )


class History:
    """Thread-safe event log shared by the cluster, the faults and the workload."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._events: list[Event] = []

    def append(self, kind: str, **fields: Any) -> Event:
        event = Event(now_ms(), kind, fields)
        with self._lock:
            self._events.append(event)
        return event

    def merge(self, events: list[dict[str, Any]]) -> None:
        """Add events recorded elsewhere (a consumer process) with their own timestamps."""
        with self._lock:
            for e in events:
                fields = {k: v for k, v in e.items() if k not in ("ts", "kind")}
                self._events.append(Event(int(e["ts"]), str(e["kind"]), fields))

    @property
    def events(self) -> list[Event]:
        with self._lock:
            return list(self._events)

    def write_jsonl(self, path: Path) -> None:
        with path.open("w", encoding="utf-8") as f:
            for event in sorted(self.events, key=lambda e: e.ts):
                f.write(json.dumps(event.as_dict(), default=str) + "\n")
