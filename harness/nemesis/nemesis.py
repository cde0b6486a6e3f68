"""The nemesis: plays a cell's fault schedule against the cluster and the consumers (Jepsen)."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Sequence
from typing import Protocol

from harness.errors import HarnessError
from harness.faults.control import ChaosTarget, NodeRef
from harness.faults.kind import FaultKind
from harness.faults.registry import spec_of
from harness.faults.stage import Act, ClockFiles, ConsumerControl, ProducerControl, Stage
from harness.faults.step_trigger import starts_step
from harness.faults.targets import Target, with_group
from harness.results.history import History

__all__ = ["ConsumerControl", "Nemesis"]


class Planned(Protocol):
    """What the nemesis needs of a planned fault (harness.nemesis.schedule.PlannedFault)."""

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
    @property
    def spec(self) -> FaultKind | None:
        """The kind's model from the spec (its options); None: the kind with none set."""

    @property
    def optional(self) -> bool: ...
    @property
    def after_step(self) -> str | None:
        """at_s counts from the start of this operation step (harness.faults.step_trigger)."""


class Clock(Protocol):
    """The nemesis's sense of time; tests pass a fake one and need no real seconds."""

    def monotonic(self) -> float: ...
    def wait(self, event: threading.Event, seconds: float) -> bool:
        """Up to `seconds`, or until `event` is set; whether it was set."""


class RealClock:
    def monotonic(self) -> float:
        return time.monotonic()

    def wait(self, event: threading.Event, seconds: float) -> bool:
        return event.wait(seconds)


OPERATIONS_LOCK = "operations"
STEP_POLL_S = 0.2  # how often a fault waiting for an operation step reads the history


def _spec(p: Planned) -> FaultKind:
    """The planned fault's kind model (with no options when the plan carries none)."""
    return p.spec if p.spec is not None else spec_of(p.kind)


class Nemesis:
    """Injects each planned fault at its time and heals it after its duration.

    A fault whose target cannot be resolved (no leader, say) or whose time never came is
    recorded as `fault.skipped`, one that raised as `fault.error`, and the run goes on (the
    verdict's `faults` check makes the cell unknown unless the fault is `optional`); faults without a duration stay until
    the heal phase (`heal_all`). It knows no kind: each planned kind says whether it can be
    played on the stage (the cluster, the consumers, a producer process, the clients' clock
    files), what its target resolves to and what it does (harness.faults.stage); time comes
    from `clock` (real by default, virtual in unit tests).
    """

    def __init__(
        self,
        cluster: ChaosTarget,
        plan: Sequence[Planned],
        consumers: ConsumerControl,
        history: History,
        seed: int,
        default_group: str,
        clock: Clock | None = None,
        producer: ProducerControl | None = None,
        clocks: ClockFiles | None = None,
    ) -> None:
        self.cluster = cluster
        self.stage = Stage(cluster, consumers, producer, clocks)
        self.clock = clock or RealClock()
        self.history = history
        self.rng = random.Random(seed)
        self.default_group = default_group
        self.plan = list(plan)
        self._acts: dict[int, tuple[Act, NodeRef]] = {}  # injected, not healed: act, its lock
        self._node_locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        # One thread per planned fault: bringing a killed broker back takes seconds (log
        # recovery, registration) and must not push the next fault off its schedule.
        self._threads = [
            threading.Thread(target=self._play, args=(p,), name=f"nemesis-{p.index}", daemon=True)
            for p in self.plan
        ]
        self._t0 = 0.0

    def start(self, t0: float | None = None) -> Nemesis:
        """Play the plan, `at_s` counted from t0 (the clock's now if not given)."""
        self._t0 = self.clock.monotonic() if t0 is None else t0
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def join(self, timeout: float | None = None) -> None:
        for thread in self._threads:
            thread.join(timeout)

    @property
    def playing(self) -> int:
        """How many planned faults are still waiting, injecting or healing."""
        return sum(t.is_alive() for t in self._threads)

    @property
    def done(self) -> bool:
        return self.playing == 0

    def _play(self, p: Planned) -> None:
        """One planned fault, start to end. Whatever escapes (a wait the clock cannot make,
        a bug) is recorded as `fault.error`: a fault's thread never ends without a word."""
        try:
            self._play_one(p)
        except BaseException as exc:
            msg = f"fault #{p.index} {p.kind}: the nemesis thread died: {type(exc).__name__}: {exc}"
            self.history.append(
                "fault.error", index=p.index, fault=p.kind, error=msg, optional=p.optional
            )

    def _play_one(self, p: Planned) -> None:
        start_s = 0.0  # when at_s counts from, in seconds into the workload
        if p.after_step is not None:
            began = self._step_began(p.after_step)
            if began is None:
                self._skipped(p, f"no operation step {p.after_step!r} began before the run ended")
                return
            start_s = began
        if not self._at(start_s + p.at_s):
            self._skipped(p, "the run was stopped before the fault's time")
            return
        self._do(p, heal=False, start_s=start_s)
        if p.duration_s is not None and self._at(start_s + p.at_s + p.duration_s):
            self._do(p, heal=True)

    def _step_began(self, word: str) -> float | None:
        """Seconds into the workload when the history first showed a step `word` answers to
        (seen within STEP_POLL_S); None if the run stopped first."""
        seen = 0
        while True:
            events = self.history.events
            if any(starts_step(word, e.kind, e.fields) for e in events[seen:]):
                return self.clock.monotonic() - self._t0
            seen = len(events)
            if self.clock.wait(self._stop, STEP_POLL_S):
                return None

    def _at(self, at_s: float) -> bool:
        """Wait until `at_s` into the workload; False if the run is being stopped."""
        delay = max(0.0, self._t0 + at_s - self.clock.monotonic())
        return not self.clock.wait(self._stop, delay)

    def _do(self, p: Planned, heal: bool, start_s: float = 0.0) -> None:
        try:
            if heal:
                self._heal(p)
            else:
                self._inject(p, start_s)
        except Exception as exc:  # a failed fault is history, not the end of the run
            msg = f"fault #{p.index} {p.kind} {'heal' if heal else 'inject'}: {exc}"
            self.history.append(
                "fault.error", index=p.index, fault=p.kind, error=msg, optional=p.optional
            )

    def _inject(self, p: Planned, start_s: float = 0.0) -> None:
        kind = _spec(p)
        why = kind.unplayable(self.stage, p.target)
        if why is not None:
            self._skipped(p, why)
            return
        resolved = self._resolve(p, kind)
        if resolved is None:
            return
        # How late the nemesis itself is (resolving the target took its time); the turns
        # taken below are the plan's own rules and do not count.
        late_s = self.clock.monotonic() - (self._t0 + start_s + p.at_s)
        # Operations take turns, in schedule order, as an operator does them: a reassign
        # onto a broker waits for the add-broker before it. Other faults take turns per node.
        lock = OPERATIONS_LOCK if kind.takes_turns() else resolved
        with self._node_lock(lock):
            act = kind.act(self.stage, resolved, p.index)
            act.planned = {
                "index": p.index,
                "spec_kind": p.kind,
                "at_s": p.at_s,
                "late_s": round(late_s, 3),
            }
            if p.after_step is not None:  # at_s counted from that step's start, step_at_s
                act.planned |= {"after_step": p.after_step, "step_at_s": round(start_s, 3)}
            if p.optional:
                act.planned["optional"] = True
            act.inject()
        with self._lock:
            self._acts[p.index] = (act, lock)

    def _heal(self, p: Planned) -> None:
        with self._lock:
            act, lock = self._acts.pop(p.index, (None, None))
        if act is not None and lock is not None:
            with self._node_lock(lock):
                act.heal()

    def _node_lock(self, node: int | str) -> threading.Lock:
        """Faults on one node take turns: a kill must not land while another fault's heal
        is still bringing that node back (it would then be awaited for a start it never makes)."""
        with self._lock:
            return self._node_locks.setdefault(str(node), threading.Lock())

    def _resolve(self, p: Planned, kind: FaultKind) -> NodeRef | None:
        """The node a node fault acts on; a topic, a process or "" (none) as planned; None:
        skipped."""
        text = p.target
        if not text or not kind.resolves_node(text):
            return text
        text = with_group(text, self.default_group)
        try:
            return Target.parse(text).resolve(self.cluster, self.rng)
        except HarnessError as exc:
            self._skipped(p, str(exc))
            return None

    def _skipped(self, p: Planned, reason: str) -> None:
        self.history.append(
            "fault.skipped",
            index=p.index,
            fault=p.kind,
            target=p.target,
            reason=reason,
            optional=p.optional,
        )

    def restart_crashed(self) -> None:
        """Heal phase, after the cluster's heal_all: what no heal undid and the cluster does
        not book (a crashed consumer member without a planned restart) is undone, in order."""
        with self._lock:
            left = [a for a, _ in self._acts.values() if not a.healed_by_cluster]
            self._acts = {i: e for i, e in self._acts.items() if e[0].healed_by_cluster}
        for act in left:
            act.heal()
