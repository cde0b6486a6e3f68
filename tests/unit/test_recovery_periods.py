"""When the cluster had recovered after a heal (harness.results.recovery), on hand-built
histories: the partition watch's first moment with every partition led and whole."""

from __future__ import annotations

from typing import Any

from harness.results.recovery import RECOVERY_CAP_MS, recovering_periods

T = 1_700_000_000_000


def ev(ts: int, kind: str, **fields: Any) -> dict[str, Any]:
    return {"ts": T + ts, "kind": kind, **fields}


def state(ts: int, partition: int, leader: int | None, isr: list[int]) -> dict[str, Any]:
    replicas = [1, 2, 3]
    return ev(
        ts,
        "partition.state",
        topic="chaos",
        partition=partition,
        leader=leader,
        isr=isr,
        replicas=replicas,
    )


def kill(inject: int, heal: int | None, fault_id: int = 1) -> list[dict[str, Any]]:
    out = [ev(inject, "fault.inject", fault_id=fault_id, fault="kill", target="broker-1")]
    if heal is not None:
        out.append(ev(heal, "fault.heal", fault_id=fault_id, fault="kill", target="broker-1"))
    return out


def test_recovery_ends_when_every_partition_is_led_with_its_full_isr() -> None:
    history = [
        state(0, 0, 1, [1, 2, 3]),
        state(0, 1, 2, [1, 2, 3]),
        *kill(1000, 5000),
        state(1500, 0, 2, [2, 3]),
        state(1500, 1, 2, [2, 3]),
        state(6000, 0, 2, [1, 2, 3]),  # partition 1 still short
        state(7000, 1, 2, [1, 2, 3]),  # whole, though partition 0's leader is not preferred
    ]
    assert recovering_periods(history) == [(T + 5000, T + 7000)]


def test_a_cluster_whole_at_the_heal_has_no_recovery_and_consumer_crashes_none() -> None:
    history = [
        state(0, 0, 1, [1, 2, 3]),
        *kill(1000, 2000),
        ev(3000, "consumer.crash", consumer="group/m0", pid=7),
        ev(4000, "consumer.launch", consumer="group/m0", pid=8),
    ]
    assert recovering_periods(history) == []


def test_a_leaderless_partition_or_no_healthy_moment_leaves_the_recovery_open() -> None:
    history = [state(0, 0, 1, [1, 2, 3]), *kill(1000, 2000), state(1500, 0, None, [1])]
    assert recovering_periods(history) == [(T + 2000, None)]


def test_without_the_watch_a_heal_is_followed_by_the_cap_and_an_open_fault_by_nothing() -> None:
    history = [*kill(1000, 2000), *kill(5000, None, fault_id=2)]
    assert recovering_periods(history) == [(T + 2000, T + 2000 + RECOVERY_CAP_MS)]
