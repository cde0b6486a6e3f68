"""The nemesis: plays a cell's fault schedule against the cluster and the consumers (Jepsen)."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Sequence
from typing import Protocol

from harness.errors import HarnessError
from harness.faults.base import Fault
from harness.faults.clock import ClockFiles, ClockSkew, is_process_target
from harness.faults.control import ChaosTarget
from harness.faults.kind import FaultKind
from harness.faults.producer import ProducerControl, ProducerCrash
from harness.faults.registry import (
    is_consumer_fault,
    is_operation,
    is_producer_fault,
    spec_of,
)
from harness.faults.step_trigger import starts_step
from harness.faults.targets import Target, with_group
from harness.results.history import History


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


class ConsumerControl(Protocol):
    """How the nemesis crashes and restarts consumer members (by "<set>/<index>")."""

    def crash_member(self, ref: str, index: int | None = None) -> str:
        """SIGKILL the member; its `consumer.crash` event carries the plan's `index`."""

    def restart_member(self, name: str) -> None: ...


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


def _on_process(p: Planned) -> bool:
    """A clock-skew of a client process (the producer, a consumer member), not of a node."""
    return isinstance(_spec(p), ClockSkew) and is_process_target(p.target)


def _sequential(kind: str) -> bool:
    """Operations on the cluster (not the one-node restart) run one after the other."""
    return is_operation(kind) and kind != "restart"


class Nemesis:
    """Injects each planned fault at its time and heals it after its duration.

    A fault whose target cannot be resolved (no leader, say) or whose time never came is
    recorded as `fault.skipped`, one that raised as `fault.error`, and the run goes on (the
    verdict's `faults` check makes the cell unknown unless the fault is `optional`); faults without a duration stay until
    the heal phase (`heal_all`). Kinds come from harness.faults.registry; time from
    `clock` (real by default, virtual in unit tests).
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
        self.producer = producer  # a producer process (producer-crash, producer-pause)
        self.clocks = clocks  # the client processes' offset files (clock-skew on a client)
        self.clock = clock or RealClock()
        self.consumers = consumers
        self.history = history
        self.rng = random.Random(seed)
        self.default_group = default_group
        self.plan = list(plan)
        self._faults: dict[int, Fault] = {}
        self._fault_nodes: dict[int, int | str] = {}
        self._node_locks: dict[str, threading.Lock] = {}
        self._crashed: dict[int, str] = {}
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
        if is_consumer_fault(p.kind):
            ref = p.target.removeprefix("consumer:")
            name = self.consumers.crash_member(ref, p.index)
            with self._lock:
                self._crashed[p.index] = name
            return
        if is_producer_fault(p.kind) and self.producer is None:
            self._skipped(p, "the producer is not a process the nemesis can act on")
            return
        if _on_process(p) and self.clocks is None:
            self._skipped(p, "no client process of this cell runs with a fake clock")
            return
        resolved = self._resolve(p)
        if resolved is None:
            return
        # How late the nemesis itself is (resolving the target took its time); the turns
        # taken below are the plan's own rules and do not count.
        late_s = self.clock.monotonic() - (self._t0 + start_s + p.at_s)
        # Operations take turns, in schedule order, as an operator does them: a reassign
        # onto a broker waits for the add-broker before it. Other faults take turns per node.
        node = OPERATIONS_LOCK if _sequential(p.kind) else resolved
        spec = _spec(p)
        with self._node_lock(node):
            if self.producer is not None and isinstance(spec, ProducerCrash):
                fault = spec.make_on(self.cluster, self.producer)
            elif isinstance(spec, ClockSkew) and self.clocks is not None and _on_process(p):
                fault = spec.make_on_process(self.cluster, p.target, self.clocks)
            else:
                fault = spec.make(self.cluster, resolved or None)
            fault.planned = {
                "index": p.index,
                "spec_kind": p.kind,
                "at_s": p.at_s,
                "late_s": round(late_s, 3),
            }
            if p.after_step is not None:  # at_s counted from that step's start, step_at_s
                fault.planned |= {"after_step": p.after_step, "step_at_s": round(start_s, 3)}
            if p.optional:
                fault.planned["optional"] = True
            fault.inject()
        with self._lock:
            self._faults[p.index] = fault
            self._fault_nodes[p.index] = node

    def _heal(self, p: Planned) -> None:
        if is_consumer_fault(p.kind):
            with self._lock:
                name = self._crashed.pop(p.index, None)
            if name is not None:
                self.consumers.restart_member(name)
            return
        with self._lock:
            fault = self._faults.pop(p.index, None)
            node = self._fault_nodes.pop(p.index, None)
        if fault is not None and node is not None:
            with self._node_lock(node):
                fault.heal()

    def _node_lock(self, node: int | str) -> threading.Lock:
        """Faults on one node take turns: a kill must not land while another fault's heal
        is still bringing that node back (it would then be awaited for a start it never makes)."""
        with self._lock:
            return self._node_locks.setdefault(str(node), threading.Lock())

    def _resolve(self, p: Planned) -> int | str | None:
        """The node a node fault acts on; a topic target or "" (none) as planned; None: skipped."""
        text = p.target
        if (
            is_producer_fault(p.kind)
            or _on_process(p)
            or _spec(p).target_style in ("topic", "spare", "none")
            or not text
        ):
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
        """Heal phase: members crashed without a planned restart come back."""
        with self._lock:
            crashed, self._crashed = list(self._crashed.values()), {}
        for name in crashed:
            self.consumers.restart_member(name)
