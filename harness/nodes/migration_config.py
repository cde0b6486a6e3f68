"""The server.properties of each phase of Kafka's ZooKeeper-to-KRaft migration (KIP-866; pure).

Kafka's 3.9 operations guide, "ZooKeeper to KRaft Migration", in the harness's wiring:

* `controller` — a KRaft controller of the new quorum while migrating: the KRaft wiring plus
  `zookeeper.metadata.migration.enable`, `zookeeper.connect`, and the brokers'
  `inter.broker.listener.name` (it sends the ZooKeeper-mode brokers their RPCs);
* `broker-migrating` — a ZooKeeper-mode broker that also registers with the quorum:
  migration flag, `controller.quorum.voters`, `controller.listener.names`, CONTROLLER in
  the listener map, `inter.broker.protocol.version` at the software's line;
* `broker-kraft` — the same broker in KRaft mode (`process.roles=broker`, `node.id`): no
  ZooKeeper, no migration flag, no inter.broker.protocol.version (metadata.version rules);
* `controller-final` — a controller once the migration is finalized: KRaft only.
"""

from __future__ import annotations

import dataclasses
from typing import Literal

from harness.errors import ConfigError
from harness.nodes.topology import (
    CONTROLLER_ID_BASE,
    CONTROLLER_PORT,
    ZOOKEEPER_PORT,
    NodeSpec,
    _props,
    kafka_properties,
    version_tuple,
)

Phase = Literal["controller", "broker-migrating", "broker-kraft", "controller-final"]
PHASES: tuple[Phase, ...] = ("controller", "broker-migrating", "broker-kraft", "controller-final")
MIGRATION_FLAG = "zookeeper.metadata.migration.enable"
IBP = "inter.broker.protocol.version"
MIGRATION_SINCE = (3, 4)  # KIP-866's migration exists from Kafka 3.4 (production-ready 3.6+)
QUORUM_SIZES = (1, 3, 5)  # a static quorum of dedicated controllers


def plan_migration_controllers(count: int) -> list[NodeSpec]:
    """The quorum a ZooKeeper cluster migrates onto: dedicated controllers 101.. as a KRaft
    cluster's (planned with the cluster, started by the migration)."""
    return [
        NodeSpec(f"controller-{CONTROLLER_ID_BASE + i}", "controller", CONTROLLER_ID_BASE + i, None)
        for i in range(1, count + 1)
    ]


def ibp_of(version: str) -> str:
    """The inter.broker.protocol.version a migrating broker runs: its software's line."""
    return "{}.{}".format(*version_tuple(version))


def migration_properties(
    phase: Phase,
    node: NodeSpec,
    brokers: list[NodeSpec],
    controllers: list[NodeSpec],
    config: dict[str, object],
    version: str,
) -> str:
    """The properties `node` runs with in `phase`; `config` the cluster's own settings."""
    own = {k: v for k, v in config.items() if k != IBP}  # a KRaft node rejects it
    if phase in ("controller", "controller-final"):
        text = kafka_properties("kraft", node, [*controllers, *brokers], own)
        if phase == "controller-final":
            return text
        return (
            text
            + "\n"
            + _props(
                {
                    MIGRATION_FLAG: True,
                    "zookeeper.connect": f"zookeeper:{ZOOKEEPER_PORT}",
                    "inter.broker.listener.name": "INTERNAL",
                }
            )
        )
    if phase == "broker-kraft":
        broker = dataclasses.replace(node, role="broker")
        return kafka_properties("kraft", broker, [*controllers, *brokers], own)
    text = kafka_properties("zookeeper", node, brokers, own)
    voters = ",".join(f"{c.node_id}@{c.name}:{CONTROLLER_PORT}" for c in controllers)
    return (
        text.replace(
            "listener.security.protocol.map=",
            "listener.security.protocol.map=CONTROLLER:PLAINTEXT,",
        )
        + "\n"
        + _props(
            {
                MIGRATION_FLAG: True,
                "controller.quorum.voters": voters,
                "controller.listener.names": "CONTROLLER",
                IBP: ibp_of(version),
            }
        )
    )


def migration_problems(
    mode: str, version: str, controllers: int, spares: int = 0
) -> list[tuple[str, str]]:
    """What keeps a cluster from planning `controllers` to migrate onto, keyed by the
    cluster's field (empty: nothing, or no migration planned)."""
    if not controllers:
        return []
    out: list[tuple[str, str]] = []
    if mode != "zookeeper":
        out.append(
            ("migration_controllers", f"a migration starts from mode zookeeper (got {mode})")
        )
    elif version_tuple(version) < MIGRATION_SINCE or version_tuple(version)[0] != 3:
        out.append(
            (
                "version",
                f"the ZooKeeper-to-KRaft migration (KIP-866) exists in Kafka 3.4 to 3.9, "
                f"ideally 3.9 (got {version})",
            )
        )
    if controllers not in QUORUM_SIZES:
        out.append(
            (
                "migration_controllers",
                f"expected 1, 3 or 5 (a KRaft quorum's voters) (got {controllers})",
            )
        )
    if spares:
        out.append(
            ("spare_brokers", "expected 0 with migration_controllers (a spare is not migrated)")
        )
    return out  # and not with link proxies: harness.nodes.capabilities says so


def validate_migration(mode: str, version: str, controllers: int, spares: int = 0) -> None:
    """ConfigError naming the first problem of migration_problems."""
    for key, why in migration_problems(mode, version, controllers, spares):
        raise ConfigError(f"{key}: {why}")
