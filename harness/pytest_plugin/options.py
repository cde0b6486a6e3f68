"""The cluster a test asks for: the `kafka_cluster` marker's keywords or a builder's `with_*` calls.

Checked before Docker is touched, with the spec's own cluster model (`ClusterSpec`) and the
cluster's own rules (`harness.nodes.topology.validate`), so a wrong marker fails the test's
set-up in a second, naming the key, instead of after a minute of container start-up.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.errors import ConfigError
from harness.nodes.topology import DEFAULT_VERSION, validate

MARKER = "kafka_cluster"
CLUSTER_KEYS = (
    "mode",
    "brokers",
    "version",
    "broker_config",
    "controllers",
    "link_proxies",
    "log_dirs",
    "log_dir_size_mb",
    "fake_clock",
    "persistent_data",
)
# Cluster keys that are no spec `cluster:` key (the spec derives them from its faults).
DERIVED_KEYS = ("persistent_data",)
PLUGIN_KEYS = ("shared", "start_timeout_s")  # how the plugin runs it, not what Kafka is
MARKER_KEYS = (*CLUSTER_KEYS, *PLUGIN_KEYS)
DEFAULT_START_TIMEOUT_S = 180.0

Scalar = str | int | float | bool


@dataclass(frozen=True)
class ClusterOptions:
    """Validated, and hashable: the shared pool keys its clusters by these."""

    mode: str = "kraft"
    brokers: int = 3
    version: str = DEFAULT_VERSION
    broker_config: tuple[tuple[str, Scalar], ...] = ()  # sorted items
    controllers: int = 0
    link_proxies: bool = False  # every link through a Toxiproxy: for latency, bandwidth, reset
    log_dirs: int = 1  # each broker's log directories (JBOD)
    log_dir_size_mb: int | None = None  # each its own filesystem of this size: for disk-full
    fake_clock: bool = False  # every Kafka node's JVM under libfaketime: for clock-skew
    persistent_data: bool = False  # log directories that outlive containers: for upgrade
    start_timeout_s: float = DEFAULT_START_TIMEOUT_S
    shared: bool = False  # one cluster per distinct options for the whole session

    def cluster_kwargs(self) -> dict[str, Any]:
        """Keyword arguments of `KafkaCluster(...)`."""
        return {
            "mode": self.mode,
            "brokers": self.brokers,
            "version": self.version,
            "broker_config": dict(self.broker_config),
            "controllers": self.controllers,
            "start_timeout_s": self.start_timeout_s,
            "link_proxies": self.link_proxies,
            "log_dirs": self.log_dirs,
            "log_dir_size_mb": self.log_dir_size_mb,
            "fake_clock": self.fake_clock,
            "persistent_data": self.persistent_data,
        }

    def describe(self) -> str:
        config = ", ".join(f"{k}={v}" for k, v in self.broker_config)
        dedicated = f" + {self.controllers} controllers" if self.controllers else ""
        proxied = ", link proxies" if self.link_proxies else ""
        proxied += ", fake clock" if self.fake_clock else ""
        proxied += ", persistent data" if self.persistent_data else ""
        dirs = f", {self.log_dirs} log dirs" if self.log_dirs > 1 else ""
        sized = f" of {self.log_dir_size_mb} MB" if self.log_dir_size_mb else ""
        return (
            f"{self.mode}, {self.brokers} brokers{dedicated}{proxied}{dirs}{sized}, Kafka {self.version}"
            + (f", {config}" if config else "")
        )


def from_markers(kwargs_closest_first: Sequence[Mapping[str, Any]], where: str) -> ClusterOptions:
    """Markers on the test, its class, its module: per key, the closest one wins."""
    merged: dict[str, Any] = {}
    for kwargs in reversed(kwargs_closest_first):
        merged.update(kwargs)
    return parse(merged, where)


def parse(raw: Mapping[str, Any], where: str) -> ClusterOptions:
    """ConfigError with one `<where>: <key>: <what was expected>` line per problem."""
    problems = [
        (key, f"unknown key; allowed: {', '.join(MARKER_KEYS)}")
        for key in raw
        if key not in MARKER_KEYS
    ]
    cluster = {k: v for k, v in raw.items() if k in CLUSTER_KEYS and k not in DERIVED_KEYS}
    problems += _cluster_problems(cluster)
    persistent = raw.get("persistent_data", False)
    if not isinstance(persistent, bool):
        problems.append(("persistent_data", f"expected true or false (got {persistent!r})"))
    shared = raw.get("shared", False)
    if not isinstance(shared, bool):
        problems.append(("shared", f"expected true or false (got {shared!r})"))
    timeout = raw.get("start_timeout_s", DEFAULT_START_TIMEOUT_S)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        problems.append(("start_timeout_s", f"expected a number > 0 (got {timeout!r})"))
    if problems:
        raise ConfigError("\n".join(f"{where}: {key}: {why}" for key, why in problems))
    defaults = ClusterOptions()
    config = dict(cluster.get("broker_config") or {})
    return ClusterOptions(
        mode=cluster.get("mode", defaults.mode),
        brokers=cluster.get("brokers", defaults.brokers),
        version=cluster.get("version", defaults.version),
        broker_config=tuple(sorted(config.items())),
        controllers=cluster.get("controllers", defaults.controllers),
        link_proxies=bool(cluster.get("link_proxies") or False),
        log_dirs=cluster.get("log_dirs", defaults.log_dirs),
        log_dir_size_mb=cluster.get("log_dir_size_mb", defaults.log_dir_size_mb),
        fake_clock=bool(cluster.get("fake_clock") or False),
        persistent_data=persistent,
        start_timeout_s=float(timeout),
        shared=shared,
    )


def _cluster_problems(cluster: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The spec's `cluster:` model (types, bounds), then the cluster's cross-key rules."""
    from pydantic import ValidationError  # the spec's models load pydantic: only when checking

    from harness.spec.load import validation_problems
    from harness.spec.models import ClusterSpec

    try:
        spec = ClusterSpec.model_validate(dict(cluster))
    except ValidationError as exc:
        return validation_problems(exc)
    try:
        validate(
            spec.mode,
            spec.brokers,
            spec.version,
            spec.controllers,
            dict(spec.broker_config),
            log_dirs=spec.log_dirs,
            log_dir_size_mb=spec.log_dir_size_mb,
        )
    except ConfigError as exc:
        return [(_key_of(str(exc)), str(exc))]
    return []


def _key_of(message: str) -> str:
    """The key a rule of `validate` is about (what the model let through: mode vs version,
    controllers vs mode, the wiring keys)."""
    for word, key in (
        ("broker_config", "broker_config"),
        ("controllers", "controllers"),
        ("log_dirs", "log_dirs"),
        ("log_dir_size_mb", "log_dir_size_mb"),
    ):
        if word in message:
            return key
    return "mode"
