"""Which nodes a cluster has and the properties each one runs with (pure logic)."""

from __future__ import annotations

import base64
import dataclasses
import re
import uuid
from dataclasses import dataclass
from typing import Literal

from harness.errors import ConfigError

DEFAULT_VERSION = "3.9.2"  # the Kafka version a spec gets when it names none

Mode = Literal["kraft", "zookeeper"]
Role = Literal["broker", "combined", "controller", "zookeeper"]

INTERNAL_PORT = 9092
CONTROLLER_PORT = 9093
ZOOKEEPER_PORT = 2181
# The JMX exporter agent's HTTP port inside a Kafka node (docker/entrypoint.sh); published on
# 127.0.0.1 at the node's own `metrics_port` when the cluster runs with metrics.
METRICS_PORT = 9404
DATA_DIR = "/var/lib/kafka/data"  # the first (often only) log directory
MAX_LOG_DIRS = 3
JBOD_KRAFT_SINCE = (3, 7)  # KRaft brokers take several log directories from 3.7 (KIP-858)
CONTROLLER_ID_BASE = 100  # dedicated controllers are 101, 102, ...
MAX_BROKERS = 5
# KIP-853's dynamic controller quorum (kraft.version 1, add/remove-controller) from Kafka 3.9.
DYNAMIC_QUORUM_SINCE = (3, 9)

# Settings that wire the containers together; an experiment cannot override them.
MANAGED_KEYS = frozenset(
    {
        "advertised.listeners",
        "broker.id",
        "controller.listener.names",
        "controller.quorum.bootstrap.servers",
        "controller.quorum.voters",
        "inter.broker.listener.name",
        "listener.security.protocol.map",
        "listeners",
        "log.dir",
        "log.dirs",
        "node.id",
        "process.roles",
        "zookeeper.connect",
    }
)


@dataclass(frozen=True)
class NodeSpec:
    """One container of the cluster."""

    name: str  # also its DNS alias on the cluster network
    role: Role
    node_id: int | None  # Kafka node id; None for ZooKeeper
    host_port: int | None  # client port published on 127.0.0.1 (brokers only)
    # Kafka's own metrics (the JMX exporter) published on 127.0.0.1 here; None: no agent.
    metrics_port: int | None = None

    @property
    def kafka_id(self) -> int:
        if self.node_id is None:
            raise ValueError(f"{self.name} is not a Kafka node")
        return self.node_id

    @property
    def is_broker(self) -> bool:
        return self.role in ("broker", "combined")

    @property
    def is_controller(self) -> bool:
        return self.role in ("controller", "combined")


def new_cluster_id() -> str:
    """A KRaft cluster id in Kafka's Uuid text form (22 url-safe base64 chars).

    Like Kafka's Uuid.randomUuid, never one starting with '-' (kafka-storage's parser takes
    `-t -x…` for an option; the entrypoint passes `--cluster-id=…`, which also takes the
    ZooKeeper-made ids a migration formats with, and those may start with '-').
    """
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


def major_version(version: str) -> int:
    if not re.fullmatch(r"\d+\.\d+\.\d+", str(version)):
        raise ConfigError(f"Kafka version {version!r} is not of the form X.Y.Z (e.g. 3.9.2)")
    return int(version.split(".", 1)[0])


def validate(
    mode: str,
    brokers: int,
    version: str,
    controllers: int,
    config: dict[str, object],
    spares: int = 0,
    *,
    dynamic_quorum: bool = False,
    spare_controllers: int = 0,
) -> None:
    """ConfigError naming the first thing wrong with the cluster's own shape (its
    capabilities' keys: harness.nodes.capabilities)."""
    if mode not in ("kraft", "zookeeper"):
        raise ConfigError(f"mode must be 'kraft' or 'zookeeper', not {mode!r}")
    major = major_version(version)
    if isinstance(brokers, bool) or not isinstance(brokers, int) or not 1 <= brokers <= MAX_BROKERS:
        raise ConfigError(f"brokers must be an integer from 1 to {MAX_BROKERS}, not {brokers!r}")
    if isinstance(spares, bool) or not isinstance(spares, int) or spares < 0:
        raise ConfigError(f"spare_brokers must be an integer >= 0, not {spares!r}")
    if brokers + spares > MAX_BROKERS:
        raise ConfigError(
            f"brokers + spare_brokers must be at most {MAX_BROKERS} (got {brokers} + {spares}): "
            "a spare is a broker id too"
        )
    if mode == "zookeeper" and major >= 4:
        raise ConfigError(
            f"Kafka {version} has no ZooKeeper mode (removed in 4.0); use mode='kraft' "
            "or a 3.9.x version"
        )
    if controllers and mode != "kraft":
        raise ConfigError("dedicated controllers exist only in mode='kraft'")
    if controllers < 0 or controllers > MAX_BROKERS:
        raise ConfigError(
            f"controllers must be 0 (combined nodes) to {MAX_BROKERS}, not {controllers}"
        )
    for key, why in quorum_problems(mode, version, controllers, dynamic_quorum, spare_controllers):
        raise ConfigError(f"{key}: {why}")
    managed = sorted(MANAGED_KEYS & set(config))
    if managed:
        raise ConfigError(
            f"broker_config sets {', '.join(managed)}: the harness manages these to wire the "
            "containers together; remove them"
        )


def quorum_problems(
    mode: str, version: str, controllers: int, dynamic: bool, spare_controllers: int
) -> list[tuple[str, str]]:
    """What keeps a cluster from a dynamic controller quorum (KIP-853) or spare controllers,
    keyed by the cluster's field (empty: nothing, or neither asked for)."""
    out: list[tuple[str, str]] = []
    if isinstance(spare_controllers, bool) or not isinstance(spare_controllers, int):
        return [("spare_controllers", f"expected an integer >= 0 (got {spare_controllers!r})")]
    if dynamic:
        if mode != "kraft":
            out.append(
                ("dynamic_quorum", f"a controller quorum exists only in mode kraft (got {mode})")
            )
        elif version_tuple(version) < DYNAMIC_QUORUM_SINCE:
            out.append(
                (
                    "dynamic_quorum",
                    f"a dynamic controller quorum (KIP-853, kraft.version 1) needs Kafka 3.9 or "
                    f"newer (got {version})",
                )
            )
        elif controllers < 1:
            out.append(
                (
                    "dynamic_quorum",
                    "expected dedicated controllers (cluster.controllers >= 1): the voters "
                    "added and removed are controller nodes, not brokers",
                )
            )
    if spare_controllers < 0:
        out.append(("spare_controllers", f"expected an integer >= 0 (got {spare_controllers})"))
    elif spare_controllers and not dynamic:
        out.append(
            (
                "spare_controllers",
                "expected 0 without dynamic_quorum: a static quorum (controller.quorum.voters) "
                "cannot take a new voter",
            )
        )
    elif controllers + spare_controllers > MAX_BROKERS:
        out.append(
            (
                "spare_controllers",
                f"expected controllers + spare_controllers <= {MAX_BROKERS} (got {controllers} "
                f"+ {spare_controllers}): a spare is a controller id too",
            )
        )
    return out


def log_dir_paths(count: int) -> tuple[str, ...]:
    """The log directories of a broker with `count` of them: DATA_DIR, then DATA_DIR-1, -2.

    The first holds KRaft's metadata log (Kafka's default metadata.log.dir)."""
    return (DATA_DIR, *(f"{DATA_DIR}-{i}" for i in range(1, count)))


def version_tuple(version: str) -> tuple[int, int]:
    major, minor = str(version).split(".")[:2]
    return int(major), int(minor)


def plan_nodes(mode: Mode, brokers: int, controllers: int, host_ports: list[int]) -> list[NodeSpec]:
    """Brokers 1..N; dedicated KRaft controllers 101..; one ZooKeeper in zookeeper mode."""
    nodes: list[NodeSpec] = []
    if mode == "zookeeper":
        nodes.append(NodeSpec("zookeeper", "zookeeper", None, None))
    for i in range(1, controllers + 1):
        nodes.append(
            NodeSpec(
                f"controller-{CONTROLLER_ID_BASE + i}", "controller", CONTROLLER_ID_BASE + i, None
            )
        )
    broker_role: Role = "combined" if mode == "kraft" and controllers == 0 else "broker"
    for i in range(1, brokers + 1):
        nodes.append(NodeSpec(f"broker-{i}", broker_role, i, host_ports[i - 1]))
    return nodes


def plan_spares(brokers: int, host_ports: list[int]) -> list[NodeSpec]:
    """Spare brokers brokers+1.., one per port: planned with the cluster, started by add-broker.

    Always role "broker": in KRaft a spare is no voter (a static quorum cannot grow), so it
    points at the voters the cluster started with; in ZooKeeper mode it is a broker like any.
    """
    return [
        NodeSpec(f"broker-{brokers + i}", "broker", brokers + i, port)
        for i, port in enumerate(host_ports, start=1)
    ]


def plan_spare_controllers(controllers: int, count: int) -> list[NodeSpec]:
    """Spare controllers after the dedicated ones (controllers 101..10n, spares 10n+1..):
    planned with a dynamic-quorum cluster, started by add-controller."""
    return [
        NodeSpec(f"controller-{CONTROLLER_ID_BASE + i}", "controller", CONTROLLER_ID_BASE + i, None)
        for i in range(controllers + 1, controllers + count + 1)
    ]


def with_metrics_ports(specs: list[NodeSpec], ports: list[int]) -> list[NodeSpec]:
    """The nodes with a metrics port each for the Kafka ones (in order), none for ZooKeeper."""
    free = iter(ports)
    return [
        s if s.node_id is None else dataclasses.replace(s, metrics_port=next(free)) for s in specs
    ]


def kafka_value(value: object) -> str:
    """A setting as Kafka spells it (Python's True is Kafka's true)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def _props(items: dict[str, object]) -> str:
    return "\n".join(f"{k}={kafka_value(v)}" for k, v in items.items())


def zookeeper_properties() -> str:
    return _props(
        {
            "dataDir": "/var/lib/zookeeper",
            "clientPort": ZOOKEEPER_PORT,
            "tickTime": 2000,
            "maxClientCnxns": 0,
            "admin.enableServer": False,
            "4lw.commands.whitelist": "*",
        }
    )


def kafka_properties(
    mode: Mode,
    node: NodeSpec,
    nodes: list[NodeSpec],
    config: dict[str, object],
    client_backend_port: int | None = None,
    log_dirs: int = 1,
    dynamic_quorum: bool = False,
) -> str:
    """Wiring for one Kafka node, then the experiment's settings (Kafka defaults otherwise).

    With `client_backend_port` (link proxies, harness.nodes.links) the client listener
    listens there on loopback, behind the proxy that holds the published port; it is
    advertised at the published port all the same, and the other listeners bind the node's
    own address only: the proxies of its links to peers listen on loopback at their ports.

    `dynamic_quorum` (KIP-853): every node finds the quorum through
    `controller.quorum.bootstrap.servers` (the controllers in `nodes`) instead of a fixed
    `controller.quorum.voters`, and a controller binds its listener to its own name: the
    voter set records the endpoint a controller announces, and `:9093` would announce none."""
    assert node.node_id is not None
    bind = "" if client_backend_port is None else node.name
    wiring: dict[str, object] = {"log.dirs": ",".join(log_dir_paths(log_dirs))}
    listeners: list[str] = []
    advertised: list[str] = []
    protocols = ["CONTROLLER:PLAINTEXT", "INTERNAL:PLAINTEXT", "EXTERNAL:PLAINTEXT"]
    if node.is_broker:
        external = (
            f"EXTERNAL://:{node.host_port}"
            if client_backend_port is None
            else f"EXTERNAL://127.0.0.1:{client_backend_port}"
        )
        listeners += [f"INTERNAL://{bind}:{INTERNAL_PORT}", external]
        advertised += [
            f"INTERNAL://{node.name}:{INTERNAL_PORT}",
            f"EXTERNAL://127.0.0.1:{node.host_port}",
        ]
        wiring["inter.broker.listener.name"] = "INTERNAL"
    if mode == "zookeeper":
        wiring["broker.id"] = node.node_id
        wiring["zookeeper.connect"] = f"zookeeper:{ZOOKEEPER_PORT}"
        protocols = protocols[1:]
    else:
        roles = {"combined": "broker,controller", "broker": "broker", "controller": "controller"}
        wiring["process.roles"] = roles[node.role]
        wiring["node.id"] = node.node_id
        voters = [n for n in nodes if n.is_controller]
        if dynamic_quorum:
            wiring["controller.quorum.bootstrap.servers"] = ",".join(
                f"{v.name}:{CONTROLLER_PORT}" for v in voters
            )
        else:
            wiring["controller.quorum.voters"] = ",".join(
                f"{v.node_id}@{v.name}:{CONTROLLER_PORT}" for v in voters
            )
        wiring["controller.listener.names"] = "CONTROLLER"
        if node.is_controller:
            own = node.name if dynamic_quorum else bind
            listeners.append(f"CONTROLLER://{own}:{CONTROLLER_PORT}")
    wiring["listeners"] = ",".join(listeners)
    if advertised:
        wiring["advertised.listeners"] = ",".join(advertised)
    wiring["listener.security.protocol.map"] = ",".join(protocols)
    # Controllers get the settings too: in KRaft they decide elections
    # (unclean.leader.election.enable, min.insync.replicas for ELR).
    return _props({**wiring, **config})
