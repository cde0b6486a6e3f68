"""Cluster capabilities without Docker: each declared once (harness.nodes.capabilities), and
the spec, KafkaCluster, the plugin and the nemesis derived from the declarations."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any, ClassVar

import pytest

from harness.cluster import KafkaCluster
from harness.faults.kind import CellView, FaultKind
from harness.faults.registry import ALL_KINDS, kinds_needing
from harness.faults.stage import Stage
from harness.nodes.capabilities import (
    CAPABILITIES,
    CAPABILITY_KEYS,
    Capabilities,
    CapabilityBuilders,
    FakeClock,
    LinkProxies,
    LogDirs,
    PersistentData,
)
from harness.nodes.capabilities.base import NEXT_ENTRYPOINT_ENV
from harness.nodes.topology import plan_nodes
from harness.pytest_plugin.builder import ClusterBuilder
from harness.pytest_plugin.options import CLUSTER_KEYS, parse
from harness.spec import load_spec
from harness.spec.models import ClusterSpec, _ClusterShape
from tests.unit.fakes import FakeCluster, Planned
from tests.unit.test_nemesis import nemesis_for
from tests.unit.test_spec import write

BASE = "name: c\nproducer: {records: 100}\n"


def test_every_surface_lists_the_declared_keys_in_the_registrys_order() -> None:
    spec_keys = [k for c in CAPABILITIES for k in c.Fields.model_fields]
    shape = len(_ClusterShape.model_fields)
    assert list(ClusterSpec.model_fields)[shape:-1] == spec_keys  # after the shape, before metrics
    assert CLUSTER_KEYS[-len(CAPABILITY_KEYS) :] == CAPABILITY_KEYS
    for c in CAPABILITIES:
        for builder in c.summary()["builders"]:
            assert callable(getattr(ClusterBuilder, builder))
            assert hasattr(CapabilityBuilders, builder)


def test_each_capability_names_the_kinds_that_need_it() -> None:
    assert kinds_needing(LinkProxies) == ("latency", "bandwidth", "reset")
    assert kinds_needing(LogDirs) == ("disk-full",)
    assert kinds_needing(FakeClock) == ("clock-skew",)
    assert kinds_needing(PersistentData) == ("upgrade", "migrate-to-kraft")
    needing = {k.name for k in ALL_KINDS if k.needs}
    assert needing == {n for c in CAPABILITIES for n in kinds_needing(c)}


@pytest.mark.parametrize(
    ("fault", "on"),
    [
        ("{at_s: 1, kind: reset}", LinkProxies),
        ("{at_s: 1, kind: disk-full, target: broker:1, duration_s: 2}", LogDirs),
        ("{at_s: 1, kind: clock-skew, offset_s: 60, duration_s: 2}", FakeClock),
        ("{at_s: 1, kind: upgrade, to_version: 4.1.2}", PersistentData),
    ],
)
def test_a_planned_fault_turns_on_what_it_needs_and_nothing_else(
    tmp_path: Path, fault: str, on: type[Any]
) -> None:
    spec = load_spec(write(tmp_path, BASE + f"faults: [{fault}]\n"))
    assert [c for c in CAPABILITIES if spec.uses(c)] == [on]
    plain = load_spec(write(tmp_path, BASE, "plain.yaml"))
    assert not any(plain.uses(c) for c in CAPABILITIES)


def test_a_skew_of_a_client_turns_on_its_fake_clock_not_the_clusters(tmp_path: Path) -> None:
    fault = "{at_s: 1, kind: clock-skew, target: producer, offset_s: 60, duration_s: 2}"
    spec = load_spec(write(tmp_path, BASE + f"faults: [{fault}]\n"))
    assert not spec.uses(FakeClock) and spec.processes_needing(FakeClock) == {"producer"}


def test_cluster_start_records_what_is_on_in_the_registrys_order() -> None:
    built = Capabilities(
        {"fake_clock": True, "log_dirs": 2, "log_dir_size_mb": 32, "link_proxies": 1}
    )
    assert list(built.record().items()) == [
        ("link_proxies", True),
        ("log_dirs", 2),
        ("log_dir_size_mb", 32),
        ("fake_clock", True),
    ]
    assert Capabilities({}).record() == {}
    assert Capabilities({"log_dirs": 1}).record() == {}


def test_a_node_is_wired_by_every_capability_and_zookeeper_by_none() -> None:
    nodes = plan_nodes("kraft", 2, 0, [41001, 41002])
    wiring = Capabilities({"link_proxies": True, "fake_clock": True}).wire(nodes[0], nodes, "r")
    # The fake clock's entry point wraps the link proxies' (it execs the next one).
    assert [e.path for e in wiring.entrypoints] == [
        "/opt/kafka-chaos-clock/entrypoint",
        "/opt/kafka-chaos-links/entrypoint",
    ]
    assert wiring.client_backend_port is not None and "KAFKA_CHAOS_PROXIES" in wiring.env
    assert NEXT_ENTRYPOINT_ENV not in wiring.env  # set by the node: it knows the order
    sized = Capabilities({"log_dirs": 2, "log_dir_size_mb": 64, "persistent_data": True})
    broker = sized.wire(nodes[0], nodes, "r")
    assert (len(broker.log_dirs), broker.log_dir_mb, broker.persistent) == (2, 64, True)
    dedicated = plan_nodes("kraft", 1, 1, [41001])[0]
    controller = sized.wire(dedicated, [dedicated], "r")
    assert (len(controller.log_dirs), controller.log_dir_mb) == (1, None)


def test_kafka_cluster_takes_each_capabilitys_keywords_and_no_other() -> None:
    cluster = KafkaCluster(brokers=1, fake_clock=True, log_dirs=2, log_dir_size_mb=32)
    assert cluster.has(FakeClock) and cluster.has(LogDirs) and not cluster.has(LinkProxies)
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        KafkaCluster(colour=True)  # type: ignore[call-arg]


def test_the_plugin_takes_the_same_keys_and_builder_methods() -> None:
    options = parse({"persistent_data": True, "log_dirs": 2}, "m").cluster_kwargs()
    built = ClusterBuilder().with_persistent_data().with_log_dirs(2).options.cluster_kwargs()
    assert options == built
    assert {k: options[k] for k in CAPABILITY_KEYS} == {
        "link_proxies": False,
        "log_dirs": 2,
        "log_dir_size_mb": None,
        "fake_clock": False,
        "persistent_data": True,
        "power_loss_fs": False,
    }


class _Held:
    """An act on a made-up client process: what a new process-targeted kind brings."""

    healed_by_cluster = False

    def __init__(self, log: list[str], target: str) -> None:
        self.log, self.target = log, target
        self.planned: dict[str, Any] = {}

    def inject(self) -> _Held:
        self.log.append(f"hold {self.target}")
        return self

    def heal(self) -> None:
        self.log.append(f"release {self.target}")


class _HoldPipeline(FaultKind):
    """A kind the nemesis has never heard of, played on the stage by its own methods."""

    name: ClassVar[str] = "hold-pipeline"
    log: ClassVar[list[str]] = []

    def plan_target(self, cell: CellView, rng: random.Random) -> str:
        return "consumer:pipeline/0"

    def resolves_node(self, target: str) -> bool:
        return False

    def act(self, stage: Stage, target: int | str, index: int) -> _Held:
        return _Held(self.log, str(target))


def test_the_nemesis_plays_a_kind_it_does_not_know_through_the_protocol() -> None:
    cluster = FakeCluster()
    kind = _HoldPipeline.of("consumer:pipeline/0")
    plan = [
        Planned(0, at_s=1, kind="hold-pipeline", target="consumer:pipeline/0", spec=kind),
        Planned(
            1, at_s=2, kind="hold-pipeline", target="consumer:pipeline/1", duration_s=1, spec=kind
        ),
    ]
    nemesis, _ = nemesis_for(cluster, *plan)
    nemesis.start()
    cluster.clock.play(10, lambda: nemesis.playing)
    assert _HoldPipeline.log == [
        "hold consumer:pipeline/0",
        "hold consumer:pipeline/1",
        "release consumer:pipeline/1",
    ]
    nemesis.restart_crashed()  # the heal phase: what the cluster does not book is undone
    assert _HoldPipeline.log[-1] == "release consumer:pipeline/0"
    assert len(cluster.faults) == 0 and cluster.history.events == []
