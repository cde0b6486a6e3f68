"""One registry of fault kinds: the spec accepts exactly its kinds, and each builds a fault
that injects and heals through the narrow protocol (fake nodes, no Docker)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from pydantic import ValidationError

from harness import ConfigError
from harness.faults import Fault, PartitionFault, registry
from harness.spec import models
from harness.spec.models import parse_fault
from tests.unit.fakes import FakeCluster


def test_the_spec_takes_its_fault_kinds_from_the_registry() -> None:
    assert models.FAULT_KINDS is registry.FAULT_KINDS
    workload = (*registry.CONSUMER_FAULTS, *registry.PRODUCER_FAULTS)
    assert (*registry.KINDS, *workload) == registry.FAULT_KINDS
    for kind in registry.FAULT_KINDS:
        assert parse_fault({"at_s": 1, "kind": kind}).kind == kind


def test_partition_is_the_spec_s_other_word_for_isolate() -> None:
    assert parse_fault({"at_s": 1, "kind": "partition"}).kind == "isolate"
    assert "partition" not in registry.FAULT_KINDS  # so the nemesis never sees it


@pytest.mark.parametrize(("raw", "got"), [("explode", "'explode'"), (3, "3"), ({}, "a mapping")])
def test_an_unknown_kind_lists_every_allowed_word(raw: object, got: str) -> None:
    with pytest.raises(ValidationError) as info:
        parse_fault({"at_s": 1, "kind": raw})
    message = info.value.errors()[0]["msg"].removeprefix("Value error, ")
    words = [*registry.FAULT_KINDS]
    words.insert(words.index("isolate") + 1, "partition")  # each alias right after its kind
    assert message == f"expected one of {', '.join(words)} (got {got})"


# Kinds done to one node whose fault stays until healed (or, restart, heals at once).
NODE_KINDS = ["kill", "stop", "restart", "pause", "isolate", "cut-clients", "cut-replication"]


def test_node_kinds_take_a_node_target() -> None:
    assert all(registry.KINDS[k].target_style == "node" for k in NODE_KINDS)


@pytest.mark.parametrize("kind", NODE_KINDS)
def test_every_node_kind_injects_and_heals_through_the_protocol(kind: str) -> None:
    cluster = FakeCluster()
    fault = registry.make_fault(kind, cluster, 2)
    assert isinstance(fault, Fault)
    fault.inject()
    if kind == "restart":  # back up before inject returns
        assert [op for _, op, _ in cluster.ops()] == ["stop", "start"]
    else:
        assert list(cluster.faults) == [fault] and fault.active
    fault.heal()
    assert len(cluster.faults) == 0 and not fault.active
    assert all(n.is_up() and not n.chains for n in cluster.nodes)
    events = [e for e in cluster.history.events if e.kind.startswith("fault.")]
    assert [e.kind for e in events] == ["fault.inject", "fault.heal"]
    assert events[0].fields["fault_id"] == fault.id and "broker-2" in events[0].fields["target"]


def test_a_consumer_or_producer_kind_is_not_a_node_fault() -> None:
    assert registry.is_consumer_fault("consumer-crash")
    assert registry.is_producer_fault("producer-pause") and registry.is_producer_fault(
        "producer-crash"
    )
    for kind in ("consumer-crash", "producer-crash"):
        with pytest.raises(ConfigError, match="a consumer or producer fault: the nemesis plays it"):
            registry.make_fault(kind, FakeCluster(), 1)
    with pytest.raises(ConfigError, match="no cluster fault of kind 'explode'; kinds: kill, stop"):
        registry.make_fault("explode", FakeCluster(), 1)


def test_isolate_cuts_one_node_off_from_every_other_both_ways() -> None:
    cluster = FakeCluster(mode="zookeeper")
    fault = registry.make_fault("isolate", cluster, 1)
    assert isinstance(fault, PartitionFault)
    fault.inject()
    chain = f"KC_{fault.id}"
    assert all(chain in n.chains for n in cluster.nodes)
    isolated = " ".join(cluster.node(1).commands[0])
    assert all(f"-s {ip}" in isolated for ip in ("10.0.0.2", "10.0.0.3", "10.0.0.99"))
    assert fault.describe()["target"] == "broker-1"
    fault.heal()
    assert not any(n.chains for n in cluster.nodes)


def test_cut_replication_leaves_zookeeper_alone() -> None:
    cluster = FakeCluster(mode="zookeeper")
    registry.make_fault("cut-replication", cluster, 3).inject()
    assert not cluster.node("zookeeper").chains
    assert all(n.chains for n in cluster.broker_nodes)


def test_cut_clients_needs_a_client_listener() -> None:
    with pytest.raises(ConfigError, match="zookeeper has no client listener"):
        registry.make_fault("cut-clients", FakeCluster(mode="zookeeper"), "zookeeper")


def test_faults_and_the_spec_load_without_docker_or_the_cluster() -> None:
    code = (
        "import sys, harness.faults.registry, harness.faults.healing, harness.nemesis, "
        "harness.spec; print(sorted(m for m in ('docker', 'testcontainers', 'harness.cluster', "
        "'harness.nodes.node') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_each_kind_owns_its_options_and_one_name_means_one_thing() -> None:
    owned = {name for k in registry.ALL_KINDS for name in k.own_options}
    assert set(registry.OPTION_NAMES) == owned
    for k in registry.ALL_KINDS:
        for name in k.own_options:  # the same field wherever it is declared
            assert repr(k.model_fields[name]) == repr(registry.OPTION_FIELDS[name]), (k, name)
        model = registry.PARSE_MODELS[k.name]  # the spec parses every option, rules refuse
        assert set(model.model_fields) == set(registry.SPEC_KEYS)
        assert model.own_options == k.own_options


def test_a_kind_knows_its_flags() -> None:
    kinds = registry.SPEC_KINDS
    assert kinds["cut-zookeeper"].modes == ("zookeeper",) and kinds["cut-quorum"].modes == (
        "kraft",
    )
    assert {k for k, c in kinds.items() if c.broker_only} == {
        "cut-clients",
        "cut-replication",
        "cut-zookeeper",
        "lossy",
        "decommission",
        "split",
        "disk-full",
        "corrupt",
    }
    assert {k for k, c in kinds.items() if c.zookeeper_target} == {
        "kill",
        "stop",
        "restart",
        "pause",
        "isolate",
        "latency",
        "bandwidth",
        "reset",
    }
    assert registry.ALIASES == {"partition": "isolate"}
