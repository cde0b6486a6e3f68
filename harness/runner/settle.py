"""The phases that wait on the cluster: until it is healthy, recovered, and drained.

Each wait is bounded and says how it ended in the history (recovery.end, drain.end); the
cell goes on either way, and the checks decide what an unfinished wait leaves undecided.
"""

from __future__ import annotations

from collections.abc import Callable

from harness.cluster.kafka_cluster import KafkaCluster
from harness.common.waiting import wait_until
from harness.errors import HarnessError, WaitTimeout
from harness.results import events as ev
from harness.results.history import History
from harness.spec import Spec
from harness.workload.consumer_sets import ConsumerSets
from harness.workload.log_reader import end_offsets


def wait_healthy(cluster: KafkaCluster, spec: Spec, timeout_s: float) -> bool:
    """Until every partition is led with a full ISR, and every running broker says so alike."""
    t = spec.topic
    try:
        wait_until(
            lambda: cluster.admin.agreed_leaders(t.name, t.partitions),
            timeout_s,
            f"every partition of {t.name!r} led with a full ISR",
            done=lambda leaders: leaders is not None,
        )
    except WaitTimeout:
        return False
    return True


def recover(cluster: KafkaCluster, spec: Spec, history: History) -> None:
    timeout = spec.recovery.timeout_s
    if wait_healthy(cluster, spec, timeout):
        history.append(
            "recovery.end",
            recovered=True,
            detail="every partition led with a full ISR, in every broker's view",
        )
    else:
        history.append(
            "recovery.end",
            recovered=False,
            detail=f"not every partition led with a full ISR after {timeout} s",
        )
    record_quorum(cluster, history)


QUORUM_STATUS_TIMEOUT_S = 60.0  # a quorum that healed answers within seconds


def record_quorum(
    cluster: KafkaCluster, history: History, timeout_s: float = QUORUM_STATUS_TIMEOUT_S
) -> None:
    """A dynamic quorum's voters as Kafka's `describe --status` lists them now (quorum.status,
    which the quorum check holds to the voter changes the cell made); nothing for a static
    quorum. A status that cannot be read (asked again for `timeout_s`) is recorded with its
    error (the figure undecided)."""
    if not cluster.dynamic_quorum:
        return
    try:
        status = wait_until(
            cluster.quorum_status,
            timeout_s,
            "the quorum described (describe --status)",
            retry_on=HarnessError,
            interval_s=2.0,
        )
    except WaitTimeout as exc:
        last = exc.last
        history.append(ev.QUORUM_STATUS, error=str(last) if last is not None else str(exc))
        return
    except Exception as exc:
        history.append(ev.QUORUM_STATUS, error=str(exc).splitlines()[0] if str(exc) else repr(exc))
        return
    history.append(
        ev.QUORUM_STATUS,
        leader=status.leader,
        voters=status.voter_ids,
        directory_ids={str(k): v for k, v in sorted(status.voters.items())},
        observers=list(status.observers),
    )


def drain(
    cluster: KafkaCluster,
    consumers: ConsumerSets,
    spec: Spec,
    history: History,
    tick: Callable[[], None],
) -> None:
    """Until every consumer set has processed up to the log end (bounded); at once when a
    member could not start (it never will read: its reason is the drain's). `tick`: the
    runner's status, between reads."""
    t = spec.topic
    ends: dict[int, int] = {}  # the last end offsets read

    def drained() -> bool:
        nonlocal ends
        if consumers.not_started():
            return True
        try:
            # Every partition the topic has now: add-partitions may have grown it.
            ends = end_offsets(cluster.bootstrap_servers, t.name, at_least=t.partitions)
        except Exception:
            return False  # brokers still settling: ask again
        if consumers.reached(ends):
            return True
        tick()
        return False

    try:
        wait_until(
            drained,
            spec.recovery.drain_timeout_s,
            "every consumer set at the log end",
            interval_s=1,
        )
    except WaitTimeout:
        history.append("drain.end", complete=False, lag=consumers.lag(ends), ends=ends)
        return
    failed = consumers.not_started()
    if failed:  # no lag: nothing was waited for
        reason = "; ".join(f"{name} could not start: {why}" for name, why in failed.items())
        history.append(ev.DRAIN_END, complete=False, lag={}, ends=ends, reason=reason)
        return
    history.append("drain.end", complete=True, lag={}, ends=ends)
