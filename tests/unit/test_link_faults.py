"""Link proxies without Docker: where each proxy listens and forwards, how a node's listeners
and names are rewritten, which proxies a scope puts toxics on, each kind's parameters and
the spec's rules for latency, bandwidth and reset."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.errors import ConfigError
from harness.faults.bandwidth import BandwidthFault, kilobytes_per_s
from harness.faults.latency import LatencyFault
from harness.faults.links import links_in_scope, split
from harness.nodes import links
from harness.nodes.topology import kafka_properties, plan_nodes, plan_spares
from harness.spec import load_spec
from tests.unit.fakes import FakeCluster
from tests.unit.test_network_faults import ControllersCluster
from tests.unit.test_spec import errors_of, write

PORTS = [31001, 31002, 31003]


def props(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines())


def test_a_broker_proxies_each_peer_listener_at_the_peer_s_own_loopback_address() -> None:
    nodes = plan_nodes("kraft", 3, 0, PORTS)
    b1 = nodes[0]
    got = {p.name: (p.listen, p.upstream) for p in links.proxies(b1, nodes, "run1")}
    assert got == {
        "broker-2-internal": ("127.0.1.2:9092", "kc-run1-broker-2:9092"),
        "broker-2-controller": ("127.0.1.2:9093", "kc-run1-broker-2:9093"),
        "broker-3-internal": ("127.0.1.3:9092", "kc-run1-broker-3:9092"),
        "broker-3-controller": ("127.0.1.3:9093", "kc-run1-broker-3:9093"),
        "clients": ("0.0.0.0:31001", f"127.0.0.1:{links.CLIENT_BACKEND_PORT}"),
    }
    # Its /etc/hosts sends each peer's name (never its own) to that loopback address.
    assert links.hosts(b1, nodes) == {"broker-2": "127.0.1.2", "broker-3": "127.0.1.3"}
    assert json.loads(links.proxies_json(b1, nodes, "run1"))[0]["enabled"] is True


def test_zookeeper_mode_and_dedicated_controllers_get_their_own_proxies() -> None:
    zk = plan_nodes("zookeeper", 2, 0, PORTS[:2])
    broker = next(n for n in zk if n.name == "broker-1")
    names = {p.name: p.listen for p in links.proxies(broker, zk, "r")}
    assert names["zookeeper-zookeeper"] == "127.0.1.250:2181"
    assert "broker-2-controller" not in names  # no controller listener in ZooKeeper mode
    ctl = plan_nodes("kraft", 2, 3, PORTS[:2])
    controller = next(n for n in ctl if n.name == "controller-101")
    names = {p.name for p in links.proxies(controller, ctl, "r")}
    assert "clients" not in names and "broker-1-internal" in names
    assert "controller-102-controller" in names and "broker-1-controller" not in names


def test_spares_are_reachable_through_the_proxies_planned_at_start() -> None:
    nodes = plan_nodes("kraft", 3, 0, PORTS)
    spare = plan_spares(3, [31004])[0]
    assert "broker-4-internal" in {p.name for p in links.proxies(nodes[0], [*nodes, spare], "r")}


def test_proxied_listeners_bind_the_node_s_name_and_clients_land_behind_the_proxy() -> None:
    nodes = plan_nodes("kraft", 3, 0, PORTS)
    plain = props(kafka_properties("kraft", nodes[0], nodes, {}))
    proxied = props(kafka_properties("kraft", nodes[0], nodes, {}, links.CLIENT_BACKEND_PORT))
    assert plain["listeners"] == "INTERNAL://:9092,EXTERNAL://:31001,CONTROLLER://:9093"
    assert proxied["listeners"] == (
        "INTERNAL://broker-1:9092,EXTERNAL://127.0.0.1:9094,CONTROLLER://broker-1:9093"
    )
    # Advertised and voters are the same names either way: everyone follows them through.
    for key in ("advertised.listeners", "controller.quorum.voters"):
        assert plain[key] == proxied[key]


def labels(cluster: FakeCluster, target: str, scope: str) -> list[str]:
    node = cluster.node(target)
    return [link.label for link in links_in_scope(node, cluster.nodes, cluster.mode, scope)]  # type: ignore[arg-type]


def test_each_scope_names_every_link_of_the_target_once_in_whichever_node_opens_it() -> None:
    c = FakeCluster(brokers_n=3)
    assert labels(c, "broker-1", "clients") == ["broker-1:clients"]
    assert labels(c, "broker-1", "replication") == [
        "broker-1:broker-2-internal",
        "broker-2:broker-1-internal",
        "broker-1:broker-3-internal",
        "broker-3:broker-1-internal",
    ]
    assert labels(c, "broker-2", "controller") == [
        "broker-2:broker-1-controller",
        "broker-1:broker-2-controller",
        "broker-2:broker-3-controller",
        "broker-3:broker-2-controller",
    ]
    every = labels(c, "broker-1", "all")
    assert len(every) == len(set(every)) == 1 + 4 + 4


def test_controller_scope_follows_the_mode() -> None:
    zk = FakeCluster(brokers_n=2, mode="zookeeper")
    assert labels(zk, "broker-1", "controller") == ["broker-1:zookeeper-zookeeper"]
    assert labels(zk, "zookeeper", "all") == [
        "broker-1:zookeeper-zookeeper",
        "broker-2:zookeeper-zookeeper",
    ]
    dedicated = ControllersCluster(brokers_n=2)
    # A broker without a controller role: only its own links to the voters.
    assert labels(dedicated, "broker-1", "controller") == [
        f"broker-1:controller-{i}-controller" for i in (101, 102, 103)
    ]
    assert "broker-2:controller-101-controller" in labels(dedicated, "controller-101", "all")


def test_latency_is_half_each_way_and_bandwidth_is_in_kilobytes() -> None:
    assert split(201) == (101, 100) and sum(split(7)) == 7
    c = FakeCluster(brokers_n=3, link_proxies=True)
    fault = LatencyFault(c, 1, delay_ms=200, jitter_ms=51, scope="clients")
    assert fault.attributes("upstream") == {"latency": 100, "jitter": 26}
    assert fault.attributes("downstream") == {"latency": 100, "jitter": 25}
    assert fault.describe()["level"] == "+200±51 ms clients"
    assert kilobytes_per_s(8) == 1 and kilobytes_per_s(800) == 100
    assert BandwidthFault(c, 1, 800, "replication").attributes("downstream") == {"rate": 100}


def test_a_link_fault_on_a_cluster_without_proxies_is_refused_by_name() -> None:
    with pytest.raises(ConfigError, match="latency needs link proxies"):
        LatencyFault(FakeCluster(brokers_n=3), 1, delay_ms=100)


SPEC = """
name: links
cluster: {{brokers: {brokers}{extra}}}
producer: {{rate: 10, duration_s: 5}}
faults:
  - {fault}
"""


def spec_errors(tmp_path: Path, fault: str, brokers: int = 3, extra: str = "") -> list[str]:
    return errors_of(tmp_path, SPEC.format(fault=fault, brokers=brokers, extra=extra))


def test_the_spec_names_what_a_link_fault_is_missing_or_cannot_do(tmp_path: Path) -> None:
    cases = {
        "{at_s: 1, kind: latency, duration_s: 5}": "faults[0].delay_ms",
        "{at_s: 1, kind: latency, delay_ms: 10, jitter_ms: 20}": "faults[0].jitter_ms",
        "{at_s: 1, kind: bandwidth, rate_kbit: 4}": "faults[0].rate_kbit",
        "{at_s: 1, kind: reset, every_s: 3}": "faults[0].duration_s",
        "{at_s: 1, kind: reset, duration_s: 10}": "faults[0].every_s",
        "{at_s: 1, kind: latency, delay_ms: 10, scope: nowhere}": "faults[0].scope",
        "{at_s: 1, kind: lossy, loss: 0.1, scope: controller}": "faults[0].scope",
    }
    for fault, key in cases.items():
        errors = spec_errors(tmp_path, fault)
        assert any(e.startswith(key) for e in errors), (fault, errors)
    one = spec_errors(tmp_path, "{at_s: 1, kind: latency, delay_ms: 9, scope: replication}", 1)
    assert any("replication needs at least two brokers" in e for e in one)
    off = spec_errors(tmp_path, "{at_s: 1, kind: reset}", extra=", link_proxies: false")
    assert any("cluster.link_proxies is false" in e for e in off)


def test_a_planned_link_fault_gives_the_cell_link_proxies_and_no_other_spec_does(
    tmp_path: Path,
) -> None:
    text = SPEC.format(brokers=3, extra="", fault="{at_s: 1, kind: latency, delay_ms: 50}")
    assert load_spec(write(tmp_path, text)).capabilities()["link_proxies"] is True
    text = SPEC.format(brokers=3, extra="", fault="{at_s: 1, kind: kill, duration_s: 2}")
    assert load_spec(write(tmp_path, text)).capabilities()["link_proxies"] is False
    forced = SPEC.format(
        brokers=3, extra=", link_proxies: true", fault="{at_s: 1, kind: kill, duration_s: 2}"
    )
    assert load_spec(write(tmp_path, forced)).capabilities()["link_proxies"] is True
