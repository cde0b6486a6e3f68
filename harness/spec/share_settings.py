"""What a cell with a share group (spec `consumer: {kind: share}`) asks of its cluster, and
the spec problems of its share sets.

Share groups are Kafka 4.2's (KIP-932 production-ready; `share.version` 1 is finalized on a
cluster formatted at 4.2 or later) and KRaft's only. Their state lives in the internal
topic `__share_group_state` (3 replicas, min ISR 2 by Kafka's default: a cell of fewer
brokers gets what it has). The lock duration and the delivery limit are the brokers'
settings here (`group.share.record.lock.duration.ms`, `group.share.delivery.count.limit`,
`group.share.session.timeout.ms` with the heartbeat interval and the floors under both):
one per cluster, so the share sets of a cell must agree on them; the lower bound of the
lock duration (15 s by Kafka's default) is lowered to 1 s so a spec can ask for a short
one. A spec's own `broker_config` wins over all of these.
"""

from __future__ import annotations

from harness.nodes.topology import version_tuple
from harness.spec.consumers import ShareConsumerSpec
from harness.spec.models import Spec

SINCE = (4, 2)
MIN_LOCK_MS = 1000


def share_sets(spec: Spec) -> list[tuple[str, ShareConsumerSpec]]:
    return [(n, c) for n, c in spec.consumer_sets() if isinstance(c, ShareConsumerSpec)]


def share_broker_settings(spec: Spec) -> dict[str, object]:
    """The broker settings the cell's share sets need ({} without one)."""
    shares = [c for _, c in share_sets(spec)]
    if not shares:
        return {}
    brokers = spec.cluster.brokers
    out: dict[str, object] = {
        "share.coordinator.state.topic.replication.factor": min(3, brokers),
        "share.coordinator.state.topic.min.isr": min(2, brokers),
        "group.share.min.record.lock.duration.ms": MIN_LOCK_MS,
    }
    lock = next((c.lock_ms for c in shares if c.lock_ms is not None), None)
    if lock is not None:
        out["group.share.record.lock.duration.ms"] = lock
        out["group.share.max.record.lock.duration.ms"] = max(lock, 60_000)
    limit = next((c.delivery_limit for c in shares if c.delivery_limit is not None), None)
    if limit is not None:
        out["group.share.delivery.count.limit"] = limit
    session = next((c.session_timeout_ms for c in shares if c.session_timeout_ms), None)
    if session is not None:
        # Kafka's floors (45 s, heartbeat 5 s) let no shorter session through; a heartbeat
        # at most a third of the session, as the classic protocol advises.
        heartbeat = min(5000, session // 3)
        out["group.share.session.timeout.ms"] = session
        out["group.share.min.session.timeout.ms"] = min(session, 45_000)
        out["group.share.max.session.timeout.ms"] = max(session, 60_000)
        out["group.share.heartbeat.interval.ms"] = heartbeat
        out["group.share.min.heartbeat.interval.ms"] = min(heartbeat, 5000)
    return out


def share_problems(spec: Spec) -> list[tuple[str, str]]:
    """Each share set's problems, named by its key path."""
    out: list[tuple[str, str]] = []
    sets = share_sets(spec)
    locks: dict[int, str] = {}
    limits: dict[int, str] = {}
    sessions: dict[int, str] = {}
    for i, (name, c) in enumerate(spec.consumer_sets()):
        if not isinstance(c, ShareConsumerSpec):
            continue
        path = spec.consumer_path(i)
        if spec.cluster.mode != "kraft":
            out.append((f"{path}.kind", "share groups need a KRaft cluster (cluster.mode: kraft)"))
        elif version_tuple(spec.cluster.version) < SINCE:
            out.append(
                (
                    f"{path}.kind",
                    f"share groups need Kafka 4.2 or later (cluster.version {spec.cluster.version})",
                )
            )
        if c.ack == "implicit" and (c.release_every or c.reject_every):
            out.append(
                (
                    f"{path}.ack",
                    "release_every / reject_every need ack: explicit (implicit accepts all)",
                )
            )
        if c.renew and c.ack != "explicit":
            out.append((f"{path}.renew", "renew needs ack: explicit (KIP-1222)"))
        if c.renew and c.client != "java":
            out.append(
                (
                    f"{path}.renew",
                    "renew needs client: java (confluent-kafka 2.16's ShareConsumer has no "
                    "RENEW acknowledgement, KIP-1222)",
                )
            )
        for key in ("group.id", "share.acknowledgement.mode", "bootstrap.servers"):
            if key in c.client_settings:
                owner = {"group.id": "group", "share.acknowledgement.mode": "ack"}.get(key)
                out.append(
                    (
                        f"{path}.config.{key}",
                        f"set through {path}.{owner} instead" if owner else "set by the harness",
                    )
                )
        if c.lock_ms is not None:
            locks[c.lock_ms] = name
        if c.delivery_limit is not None:
            limits[c.delivery_limit] = name
        if c.session_timeout_ms is not None:
            sessions[c.session_timeout_ms] = name
    if len(locks) > 1:
        out.append(
            ("consumers", f"share sets disagree on lock_ms ({sorted(locks)}): one per cluster")
        )
    if len(sessions) > 1:
        out.append(
            (
                "consumers",
                f"share sets disagree on session_timeout_ms ({sorted(sessions)}): one per cluster",
            )
        )
    if len(limits) > 1:
        out.append(
            (
                "consumers",
                f"share sets disagree on delivery_limit ({sorted(limits)}): one per cluster",
            )
        )
    groups = [c.group for _, c in sets]
    for group in sorted({g for g in groups if groups.count(g) > 1}):
        out.append(("consumers", f"share group {group!r} is used by two sets; give each its own"))
    return out
