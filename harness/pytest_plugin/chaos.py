"""Faults inside a test, from spec-like dicts, healed at teardown whatever happened.

`chaos.fault({...})` checks the dict at once (the spec's models and kind rules) and returns a
handle; the target is resolved when the handle is injected, like the nemesis resolves it when
a planned fault fires (`leader-of:orders/0` is the leader at that moment). The handle keeps
what was done, so a test can assert on it: the node the target named, when the fault began
and ended (the times of its `fault.inject` / `fault.heal` history events).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any, Protocol

from harness.errors import FaultError
from harness.faults.base import Fault
from harness.faults.control import ChaosTarget, NodeRef
from harness.faults.kind import FaultKind
from harness.faults.targets import Target
from harness.pytest_plugin.fault_dict import ClusterFacts, parse_fault


class HealableTarget(ChaosTarget, Protocol):
    def heal_all(self) -> None: ...


class FaultHandle:
    """One fault of a test: `inject()`, `heal()`, or `with handle:`; what it did, recorded."""

    def __init__(self, cluster: ChaosTarget, spec: FaultKind, rng: random.Random) -> None:
        self.cluster = cluster
        self.spec = spec  # the kind's model, as the spec would have parsed it
        self.rng = rng
        self.resolved: NodeRef | None = None  # the node (or topic) the target named at inject
        self.fault: Fault | None = None
        self.injected_at: float | None = None  # s since the epoch, its fault.inject event
        self.healed_at: float | None = None  # s since the epoch, its fault.heal event
        self.error: str | None = None  # why the inject failed

    @property
    def kind(self) -> str:
        return self.spec.kind

    @property
    def target(self) -> str:
        """The target as written; `resolved` is what it named."""
        return self.spec.target

    @property
    def active(self) -> bool:
        return self.fault is not None and self.fault.active

    @property
    def events(self) -> list[dict[str, Any]]:
        """This fault's events in the cluster's history (fault.inject, fault.heal)."""
        if self.fault is None:
            return []
        fid = self.fault.id
        return [
            e.as_dict()
            for e in self.cluster.history.events
            if e.kind.startswith("fault.") and e.fields.get("fault_id") == fid
        ]

    def inject(self) -> FaultHandle:
        """Resolve the target now, then inject; a second call does nothing."""
        if self.fault is not None:
            return self
        try:
            self.resolved = self._resolve()
            fault = self.spec.make(self.cluster, self.resolved)
            self.fault = fault
            fault.inject()
        except Exception as exc:
            self.error = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            self._times()
        return self

    def heal(self) -> None:
        """Undo it (an operation such as restart or reassign has nothing to undo)."""
        if self.fault is not None:
            try:
                self.fault.heal()
            finally:
                self._times()

    def _resolve(self) -> NodeRef | None:
        """As the nemesis does: a node target by `Target` (seeded), a topic as written."""
        style = self.spec.planned_style()
        if style == "topic":
            return self.spec.target
        if style in ("spare", "none"):
            return None if self.spec.target == "random" else self.spec.target
        return Target.parse(self.spec.target).resolve(self.cluster, self.rng)

    def _times(self) -> None:
        for event in self.events:
            seconds = event["ts"] / 1000
            if event["kind"] == "fault.inject":
                self.injected_at = seconds
            elif event["kind"] == "fault.heal":
                self.healed_at = seconds

    def __enter__(self) -> FaultHandle:
        return self.inject()

    def __exit__(self, *exc: object) -> None:
        self.heal()

    def __repr__(self) -> str:
        state = "active" if self.active else "healed" if self.healed_at else "not injected"
        return f"<fault {self.kind} {self.target!r} -> {self.resolved!r}, {state}>"


class Chaos:
    """Faults on one cluster; `close()` (the fixture's teardown) heals every one still active,
    newest first, then sweeps with `heal_all()` if any heal failed."""

    def __init__(self, cluster: HealableTarget, seed: int = 0) -> None:
        self.cluster = cluster
        self.seed = seed
        self.rng = random.Random(seed)  # `random` targets: the same test, the same broker
        self.faults: list[FaultHandle] = []

    def fault(self, spec: Mapping[str, Any]) -> FaultHandle:
        """The fault the dict describes, checked now, injected by `inject()` or `with`."""
        handle = FaultHandle(
            self.cluster, parse_fault(spec, ClusterFacts.of(self.cluster)), self.rng
        )
        self.faults.append(handle)
        return handle

    def inject(self, spec: Mapping[str, Any]) -> FaultHandle:
        """The fault, injected now; healed by `handle.heal()` or at teardown."""
        return self.fault(spec).inject()

    def close(self) -> None:
        failed = []
        for handle in reversed(self.faults):
            try:
                handle.heal()
            except Exception as exc:
                failed.append(f"{handle!r}: {type(exc).__name__}: {exc}")
        if failed:
            self.cluster.heal_all()
            raise FaultError(
                "healing a test's faults failed (then heal_all ran): " + "; ".join(failed)
            )

    def __enter__(self) -> Chaos:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
