"""The nemesis: plays a cell's fault schedule against the cluster and the consumers (Jepsen)."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from harness.errors import HarnessError
from harness.faults import (
    ClientCutFault,
    Fault,
    KillFault,
    PartitionFault,
    PauseFault,
    RestartFault,
    StopFault,
    Target,
)
from harness.history import History

if TYPE_CHECKING:
    from harness.cluster import KafkaCluster


class Planned(Protocol):
    """What the nemesis needs of a planned fault (harness.schedule.PlannedFault)."""

    @property
    def index(self) -> int: ...
    @property
    def at_s(self) -> float: ...
    @property
    def kind(self) -> str: ...
    @property
    def target(self) -> str: ...
    @property
    def duration_s(self) -> float | None: ...


class ConsumerControl(Protocol):
    """How the nemesis crashes and restarts consumer members (by "<set>/<index>")."""

    def crash_member(self, ref: str) -> str: ...
    def restart_member(self, name: str) -> None: ...


BROKER_FAULTS: dict[str, Callable[[KafkaCluster, int | str], Fault]] = {
    "kill": KillFault,
    "stop": StopFault,
    "restart": RestartFault,
    "pause": PauseFault,
    "isolate": PartitionFault.isolate,
    "partition": PartitionFault.isolate,
    "cut-clients": ClientCutFault,
}


@dataclass
class _Action:
    at_s: float
    planned: Planned
    heal: bool


class Nemesis:
    """Injects each planned fault at its time and heals it after its duration, in one thread.

    A fault whose target cannot be resolved (no leader, say) is recorded as
    `fault.skipped` and the run goes on; faults without a duration stay until
    the heal phase (`heal_all`).
    """

    def __init__(
        self,
        cluster: KafkaCluster,
        plan: Sequence[Planned],
        consumers: ConsumerControl,
        history: History,
        seed: int,
        default_group: str,
    ) -> None:
        self.cluster = cluster
        self.consumers = consumers
        self.history = history
        self.rng = random.Random(seed)
        self.default_group = default_group
        actions = [_Action(p.at_s, p, False) for p in plan]
        actions += [_Action(p.at_s + p.duration_s, p, True) for p in plan if p.duration_s]
        self.actions = sorted(actions, key=lambda a: (a.at_s, a.heal))
        self._faults: dict[int, Fault] = {}
        self._crashed: dict[int, str] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="nemesis", daemon=True)
        self._t0 = 0.0
        self.errors: list[str] = []

    def start(self, t0: float) -> Nemesis:
        self._t0 = t0
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    @property
    def done(self) -> bool:
        return not self._thread.is_alive()

    @property
    def crashed_members(self) -> list[str]:
        return list(self._crashed.values())

    def _run(self) -> None:
        for action in self.actions:
            if self._stop.wait(max(0.0, self._t0 + action.at_s - time.monotonic())):
                return
            try:
                if action.heal:
                    self._heal(action.planned)
                else:
                    self._inject(action.planned)
            except Exception as exc:  # a failed fault is history, not the end of the run
                verb = "heal" if action.heal else "inject"
                msg = f"fault #{action.planned.index} {action.planned.kind} {verb}: {exc}"
                self.errors.append(msg)
                self.history.append("fault.error", index=action.planned.index, error=msg)

    def _inject(self, p: Planned) -> None:
        if p.kind == "consumer-crash":
            ref = p.target.removeprefix("consumer:")
            self._crashed[p.index] = self.consumers.crash_member(ref)
            return
        node = self._resolve(p)
        if node is None:
            return
        self._faults[p.index] = BROKER_FAULTS[p.kind](self.cluster, node).inject()

    def _heal(self, p: Planned) -> None:
        if p.kind == "consumer-crash":
            name = self._crashed.pop(p.index, None)
            if name is not None:
                self.consumers.restart_member(name)
            return
        fault = self._faults.pop(p.index, None)
        if fault is not None:
            fault.heal()

    def _resolve(self, p: Planned) -> int | str | None:
        text = p.target
        if text == "coordinator-of":
            text = f"coordinator-of:{self.default_group}"
        try:
            return Target.parse(text).resolve(self.cluster, self.rng)
        except HarnessError as exc:
            self.history.append(
                "fault.skipped", index=p.index, fault=p.kind, target=p.target, reason=str(exc)
            )
            return None

    def restart_crashed(self) -> None:
        """Heal phase: members crashed without a planned restart come back."""
        for index in list(self._crashed):
            self.consumers.restart_member(self._crashed.pop(index))
