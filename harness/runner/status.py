"""What the terminal shows while a cell runs: counters, the phase, faults as they happen."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from harness.results.history import Event

# Events worth a line on the terminal the moment they are recorded.
_SHOWN = ("fault.", "consumer.crash", "producer.errors")


@dataclass
class Status:
    cell: str
    phase: str = "starting"
    attempted: int = 0
    acked: int = 0
    failed: int = 0
    consumed: int = 0
    lines: list[str] = field(default_factory=list)  # to print once (faults as they happen)


Reporter = Callable[[Status], None]


def status_line(e: Event) -> str | None:
    """One terminal line for a fault, a consumer crash or producer errors; None for the rest."""
    if not e.kind.startswith(_SHOWN):
        return None
    what = " ".join(
        str(e.fields[k]) for k in ("fault", "target", "consumer", "error") if k in e.fields
    )
    return f"{e.kind} {what}".splitlines()[0][:200]
