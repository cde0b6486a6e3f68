"""A cluster built the testcontainers-python way: `with_*` calls returning the builder, then
`with builder as cluster:` (started on enter, every container and network removed on exit).

The options are checked when the cluster is built (`options`, `build()`), before Docker is
asked for anything; `KafkaCluster` itself is imported only then, so loading the plugin stays
light for test suites that never start a cluster.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from harness.nodes.capabilities import CapabilityBuilders
from harness.pytest_plugin.options import ClusterOptions, Scalar, parse

if TYPE_CHECKING:
    from harness.cluster import KafkaCluster


class ClusterBuilder(CapabilityBuilders):
    """`ClusterBuilder().with_mode("zookeeper").with_brokers(3).with_broker_config(...)`; the
    capabilities' `with_*` methods are declared with them (harness.nodes.capabilities)."""

    def __init__(
        self,
        options: ClusterOptions | None = None,
        *,
        on_start: Callable[[KafkaCluster], None] | None = None,
    ) -> None:
        base = options or ClusterOptions()
        self._raw: dict[str, Any] = {
            "mode": base.mode,
            "brokers": base.brokers,
            "version": base.version,
            "broker_config": dict(base.broker_config),
            "controllers": base.controllers,
            "dynamic_quorum": base.dynamic_quorum,
            "spare_controllers": base.spare_controllers,
            **dict(base.capabilities),
            "start_timeout_s": base.start_timeout_s,
        }
        self._logs_dir: Path | None = None
        self._on_start = on_start  # the factory fixture's teardown list
        self._cluster: KafkaCluster | None = None

    # --- with_* ---------------------------------------------------------------------------
    def with_mode(self, mode: str) -> Self:
        self._raw["mode"] = mode
        return self

    def with_brokers(self, brokers: int) -> Self:
        self._raw["brokers"] = brokers
        return self

    def with_version(self, version: str) -> Self:
        self._raw["version"] = version
        return self

    def with_controllers(self, controllers: int) -> Self:
        """KRaft: dedicated controller nodes (ids 101...) instead of combined ones."""
        self._raw["controllers"] = controllers
        return self

    def with_dynamic_quorum(self, spare_controllers: int = 0) -> Self:
        """KRaft 3.9+ (KIP-853): a quorum that add-controller / remove-controller can change,
        with `spare_controllers` declared controllers they can start."""
        self._raw["dynamic_quorum"] = True
        self._raw["spare_controllers"] = spare_controllers
        return self

    def with_broker_config(
        self, config: Mapping[str, Scalar] | None = None, **settings: Scalar
    ) -> Self:
        """Adds to the settings given so far; dotted names go in the mapping."""
        self._raw["broker_config"] = {**self._raw["broker_config"], **(config or {}), **settings}
        return self

    def with_start_timeout(self, seconds: float) -> Self:
        self._raw["start_timeout_s"] = seconds
        return self

    def with_logs_dir(self, directory: Path) -> Self:
        """Every node's log is written there when the cluster is closed."""
        self._logs_dir = directory
        return self

    # --- build, start, close --------------------------------------------------------------
    @property
    def options(self) -> ClusterOptions:
        """The validated options (ConfigError naming the key)."""
        return parse(self._raw, "kafka_cluster builder")

    def build(self) -> KafkaCluster:
        """The cluster, not started."""
        from harness.cluster import KafkaCluster

        return KafkaCluster(**self.options.cluster_kwargs(), logs_dir=self._logs_dir)

    def start(self) -> KafkaCluster:
        """Build and start; a failed start removes what it created (KafkaCluster.up)."""
        cluster = self.build()
        if self._on_start is not None:
            self._on_start(cluster)  # known to the teardown before anything exists
        self._cluster = cluster.up()
        return cluster

    def __enter__(self) -> KafkaCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        if self._cluster is not None:
            cluster, self._cluster = self._cluster, None
            cluster.close()
