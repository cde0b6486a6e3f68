"""What the nemesis plays a schedule on, and what it plays: the one protocol of every kind.

The stage is the cluster and the cell's client processes (the consumer members, the producer
when it runs as a process, the offset files of the processes that run with a fake clock).
A kind (harness.faults.kind.FaultKind) says whether it can be played on this stage and
makes its act; the nemesis injects the act when the fault fires and heals it after its
duration, whatever the kind (Jepsen's nemesis protocol: the nemesis knows no kind).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from harness.faults.control import ChaosTarget


class ConsumerControl(Protocol):
    """How the nemesis crashes and restarts consumer members (by "<set>/<index>")."""

    def crash_member(self, ref: str, index: int | None = None) -> str:
        """SIGKILL the member; its `consumer.crash` event carries the plan's `index`."""

    def restart_member(self, name: str) -> None: ...


class ProducerControl(Protocol):
    """What a producer fault asks of the producer (harness.workload.producer.supervisor)."""

    def crash(self) -> None: ...
    def restart(self) -> None: ...
    def pause(self) -> None: ...
    def resume(self) -> None: ...


class ClockFiles(Protocol):
    """Where the skewable client processes of a cell read their offset (the runner's)."""

    def clock_file(self, target: str) -> Path:
        """The offset file of `producer` or `consumer:<set>/<i>`; ConfigError if that process
        does not run under libfaketime."""


@dataclass(frozen=True)
class Stage:
    cluster: ChaosTarget
    consumers: ConsumerControl
    producer: ProducerControl | None = None  # a producer process (None: a thread, not one)
    clocks: ClockFiles | None = None  # None: no client process runs with a fake clock


class Act(Protocol):
    """What the nemesis injects and heals (a harness.faults.base.Fault, or an act on a
    workload process such as a consumer member's crash)."""

    planned: dict[str, Any]  # the plan's index, at_s, late_s... (a Fault's fault.inject has them)

    @property
    def healed_by_cluster(self) -> bool:
        """Booked with the cluster's faults, so its heal_all undoes it; else the nemesis
        does, at the heal phase."""

    def inject(self) -> object: ...
    def heal(self) -> None:
        """Undo it; nothing when it is undone already."""
