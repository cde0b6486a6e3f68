"""Kafka's partition reassignment, planned, started and waited for: shared by reassign and
decommission.

Planning is pure (unit-tested without Kafka); `reassign_and_wait` starts the reassignment
through `Operable` and waits, bounded, until the cluster's metadata shows it complete.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from harness.common.waiting import wait_until
from harness.errors import FaultError, HarnessError
from harness.faults.control import Operable, PartitionState

Moves = dict[int, tuple[int, ...]]  # partition -> its new replica list (preferred leader first)


def plan_replication_factor(
    states: Mapping[int, PartitionState], brokers: Sequence[int], rf: int
) -> Moves:
    """The moves that give every partition `rf` replicas; partitions already there stay out.

    A partition keeps its current replicas, leader first (so leadership does not move):
    a short one gains the least-loaded running brokers, a long one drops the replicas that
    matter least (out of the ISR, on a broker not running, on the most-loaded broker).
    Load is the topic's replicas per broker, updated partition by partition in order, and
    ties go to the lower broker id (or the earlier replica): one input, one plan.
    """
    if rf < 1:
        raise FaultError(f"a replication factor is at least 1 (got {rf})")
    running = sorted(set(brokers))
    if rf > len(running):
        raise FaultError(f"replication factor {rf} needs {rf} running brokers; running: {running}")
    load = Counter(b for s in states.values() for b in s.replicas)
    moves: Moves = {}
    for p in sorted(states):
        state = states[p]
        current = _leader_first(state)
        if len(current) == rf:
            continue
        if len(current) < rf:
            spare = sorted((b for b in running if b not in current), key=lambda b: (load[b], b))
            added = tuple(spare[: rf - len(current)])
            load.update(added)
            moves[p] = current + added
            continue
        # Followers in the order they go: out of the ISR, not running, most loaded, last.
        followers = sorted(
            enumerate(current[1:]),
            key=lambda item: (item[1] in state.isr, item[1] in running, -load[item[1]], -item[0]),
        )
        dropped = {b for _, b in followers[: len(current) - rf]}
        load.subtract(dropped)
        moves[p] = tuple(b for b in current if b not in dropped)
    return moves


def _leader_first(state: PartitionState) -> tuple[int, ...]:
    """The replicas in their order, the current leader moved to the front."""
    if state.leader is None or state.leader not in state.replicas:
        return state.replicas
    return (state.leader, *(b for b in state.replicas if b != state.leader))


def reassign_and_wait(
    ops: Operable, topic: str, moves: Mapping[int, Sequence[int]], timeout_s: float
) -> dict[str, Any]:
    """Start the reassignment of these partitions and wait, bounded, until it is complete:
    each one's replicas equal to its target, every target replica in the ISR, and the
    controller running no reassignment of them. Partitions already placed as asked are left
    alone. Returns what the history records: `moved` (partitions reassigned), `before` and
    `after` (partition -> replicas of those partitions); raises WaitTimeout naming what was
    still missing.
    """
    states = ops.partition_states(topic)
    unknown = sorted(p for p in moves if p not in states)
    if unknown:
        raise FaultError(f"topic {topic!r} has no partition {unknown} (it has {len(states)})")
    targets = {
        p: tuple(replicas)
        for p, replicas in sorted(moves.items())
        if tuple(replicas) != states[p].replicas
    }
    before = {p: states[p].replicas for p in targets}
    if not targets:
        return {"moved": 0, "before": {}, "after": {}}
    # While a reassignment runs, the metadata lists the replicas being removed too: a move
    # that removes one is complete once the replicas equal the target. One that only adds
    # (a higher replication factor) looks complete as soon as its replicas are in sync, a
    # moment before the controller finishes: for those, the controller is asked (a JVM).
    only_adding = [p for p in targets if set(before[p]) <= set(targets[p])]
    ops.reassign(topic, targets)

    def missing() -> list[str]:
        """What is not yet as planned; empty once complete."""
        now = ops.partition_states(topic)
        out = [_short_of(p, now.get(p), target) for p, target in targets.items()]
        out = [text for text in out if text]
        if not out and only_adding:
            running = {p for t, p in ops.reassignments_in_progress() if t == topic}
            out = [f"{p}: still reassigning" for p in sorted(running & set(only_adding))]
        return out

    wait_until(
        missing,
        timeout_s,
        f"reassignment of {topic} partitions {sorted(targets)} complete",
        done=lambda left: not left,
        interval_s=1.0,
        retry_on=HarnessError,
    )
    return {"moved": len(targets), "before": compact(before), "after": compact(targets)}


def _short_of(p: int, state: PartitionState | None, target: tuple[int, ...]) -> str:
    if state is None:
        return f"{p}: not in the metadata"
    if state.replicas != target:
        return f"{p}: replicas {list(state.replicas)}, target {list(target)}"
    outside = [b for b in target if b not in state.isr]
    return f"{p}: {outside} not in the ISR {list(state.isr)}" if outside else ""


def compact(placement: Mapping[int, Sequence[int]]) -> dict[str, list[int]]:
    """partition -> replicas, as JSON keeps it (string keys, in partition order)."""
    return {str(p): list(placement[p]) for p in sorted(placement)}
