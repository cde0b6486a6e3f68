"""rolling-restart against a real cluster under a small acks=all load: every broker restarted
in turn, each with its own window in the history, nothing acknowledged lost, ISR full at the end."""

from __future__ import annotations

import pytest

from harness.faults.registry import make_fault
from tests.integration.conftest import ClusterFactory
from tests.integration.kafka_io import producing, read_all

# make test-slow (nightly): a restart is test_fault_kinds.py's test_stop_start_and_restart
# (make test); the rolling restart under load is the rolling-restart experiment's (nightly).
pytestmark = [pytest.mark.docker, pytest.mark.slow_lane]


def test_rolling_restart_under_acks_all_load_loses_nothing(start_cluster: ClusterFactory) -> None:
    cluster = start_cluster(mode="kraft", brokers=3, broker_config={"min.insync.replicas": 2})
    cluster.create_topic("t", partitions=3, replication_factor=3)
    starts = {b: cluster.node(b).starts for b in (1, 2, 3)}
    with producing(cluster.bootstrap_servers, "t", per_second=50) as sent:
        fault = make_fault("rolling-restart", cluster, None, {}).inject()

    assert {b: cluster.node(b).starts for b in (1, 2, 3)} == {b: n + 1 for b, n in starts.items()}
    events = [e.fields for e in cluster.history.events if e.kind.startswith("fault.")]
    windows = [(f["fault"], f["target"]) for f in events]
    assert windows == [
        ("rolling-restart", "cluster"),
        *[("restart", f"broker-{b}") for b in (1, 2, 3) for _ in ("inject", "heal")],
        ("rolling-restart", "cluster"),
    ]
    outcome = events[-1]
    assert outcome["fault_id"] == fault.id and outcome["completed"] is True
    assert outcome["restarted"] == [1, 2, 3] and len(outcome["full_isr_s"]) == 3
    assert cluster.under_replicated() == []

    assert len(sent.acked) > 0
    seen = read_all(cluster.bootstrap_servers, "t", 3, at_least=len(sent.acked))
    lost = set(sent.acked) - set(seen)
    assert not lost, f"{len(lost)} acknowledged records lost, e.g. {sorted(lost)[:5]}"
