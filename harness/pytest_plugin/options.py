"""The cluster a test asks for: the `kafka_cluster` marker's keywords or a builder's `with_*` calls.

Checked before Docker is touched, with the spec's own cluster model (`ClusterSpec`) and the
cluster's own rules (`harness.nodes.topology.validate`, its capabilities'), so a wrong marker
fails the test's set-up in a second, naming the key, instead of after a minute of container
start-up. The capabilities' keys and `with_*` methods are theirs (harness.nodes.capabilities).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness.errors import ConfigError
from harness.nodes import capabilities
from harness.nodes.capabilities import CAPABILITY_KEYS, MARKER_ONLY_KEYS, Capabilities, Shape
from harness.nodes.topology import DEFAULT_VERSION, validate

if TYPE_CHECKING:
    from harness.spec.models import ClusterSpec

MARKER = "kafka_cluster"
CORE_KEYS = (
    "mode",
    "brokers",
    "version",
    "broker_config",
    "controllers",
    "dynamic_quorum",
    "spare_controllers",
)
# What the cluster is: its shape, then its capabilities (harness.nodes.capabilities).
CLUSTER_KEYS = (*CORE_KEYS, *CAPABILITY_KEYS)
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
    dynamic_quorum: bool = False  # KIP-853: voters formatted with --initial-controllers
    spare_controllers: int = 0  # controllers add-controller starts
    # Its capabilities' KafkaCluster keywords, every one, in the registry's order.
    capabilities: tuple[tuple[str, Any], ...] = capabilities.DEFAULTS
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
            "dynamic_quorum": self.dynamic_quorum,
            "spare_controllers": self.spare_controllers,
            "start_timeout_s": self.start_timeout_s,
            **dict(self.capabilities),
        }

    def describe(self) -> str:
        config = ", ".join(f"{k}={v}" for k, v in self.broker_config)
        dedicated = f" + {self.controllers} controllers" if self.controllers else ""
        if self.dynamic_quorum:
            dedicated += f" (dynamic quorum, {self.spare_controllers} spare)"
        built = Capabilities(dict(self.capabilities)).describe()
        return f"{self.mode}, {self.brokers} brokers{dedicated}{built}, Kafka {self.version}" + (
            f", {config}" if config else ""
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
    cluster = {k: v for k, v in raw.items() if k in CLUSTER_KEYS and k not in MARKER_ONLY_KEYS}
    spec, cluster_problems = _cluster_spec(cluster)
    problems += cluster_problems
    problems += capabilities.marker_problems(raw)  # what the spec has no key for
    shared = raw.get("shared", False)
    if not isinstance(shared, bool):
        problems.append(("shared", f"expected true or false (got {shared!r})"))
    timeout = raw.get("start_timeout_s", DEFAULT_START_TIMEOUT_S)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        problems.append(("start_timeout_s", f"expected a number > 0 (got {timeout!r})"))
    if problems or spec is None:
        raise ConfigError("\n".join(f"{where}: {key}: {why}" for key, why in problems))
    defaults = ClusterOptions()
    config = dict(cluster.get("broker_config") or {})
    return ClusterOptions(
        mode=cluster.get("mode", defaults.mode),
        brokers=cluster.get("brokers", defaults.brokers),
        version=cluster.get("version", defaults.version),
        broker_config=tuple(sorted(config.items())),
        controllers=cluster.get("controllers", defaults.controllers),
        dynamic_quorum=cluster.get("dynamic_quorum", defaults.dynamic_quorum),
        spare_controllers=cluster.get("spare_controllers", defaults.spare_controllers),
        capabilities=tuple(capabilities.from_marker(spec, raw).items()),
        start_timeout_s=float(timeout),
        shared=shared,
    )


def _cluster_spec(cluster: Mapping[str, Any]) -> tuple[ClusterSpec | None, list[tuple[str, str]]]:
    """The spec's `cluster:` model (types, bounds), then the cluster's cross-key rules."""
    from pydantic import ValidationError  # the spec's models load pydantic: only when checking

    from harness.spec.load import validation_problems
    from harness.spec.models import ClusterSpec

    try:
        spec = ClusterSpec.model_validate(dict(cluster))
    except ValidationError as exc:
        return None, validation_problems(exc)
    try:
        validate(
            spec.mode,
            spec.brokers,
            spec.version,
            spec.controllers,
            dict(spec.broker_config),
            dynamic_quorum=spec.dynamic_quorum,
            spare_controllers=spec.spare_controllers,
        )
    except ConfigError as exc:
        key, message = _key_of(str(exc)), str(exc)
        return spec, [(key, message.removeprefix(f"{key}: "))]
    built = Capabilities(capabilities.from_marker(spec, {}))
    return spec, built.problems(Shape(spec.mode, spec.version))[:1]


def _key_of(message: str) -> str:
    """The key a rule of `validate` is about (what the model let through: mode vs version,
    controllers vs mode, the wiring keys)."""
    for word, key in (
        ("broker_config", "broker_config"),
        ("spare_controllers", "spare_controllers"),
        ("dynamic_quorum", "dynamic_quorum"),
        ("controllers", "controllers"),
    ):
        if word in message:
            return key
    return "mode"
