"""Which Kafka version each node runs, replacing a node's image, and the cluster's features.

Mixed into KafkaCluster: the `Upgradable` face of harness.faults.control that the upgrade
operation acts through. A node is moved to another version as an operator does it: stopped
(controlled shutdown), started on the new software with the same log directories, awaited.
Feature levels (metadata.version ...) are read and raised with Kafka's own FeatureCommand
(kafka-features.sh) inside a broker, as an operator runs it.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from typing import Protocol

import docker

from harness.common.waiting import wait_until
from harness.errors import HarnessError
from harness.nodes.images import require_image
from harness.nodes.node import ClusterNode, NodeRef
from harness.nodes.supervised_start import start_supervised
from harness.nodes.topology import INTERNAL_PORT, version_tuple
from harness.results import events as ev
from harness.results.history import History

FEATURE_TOOL = "org.apache.kafka.tools.FeatureCommand"
JAVA = ("java", "-Xmx128m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")
# `describe` prints one line per feature: "Feature: metadata.version\tSupportedMinVersion: ...
# \tFinalizedVersionLevel: 3.9-IV0\tEpoch: 7".
_FEATURE = re.compile(r"Feature:\s*(?P<name>\S+).*?FinalizedVersionLevel:\s*(?P<level>\S+)")
RELEASE_VERSION_SINCE = (4, 0)  # `upgrade --release-version` (all features); before: --metadata


class Versioned(Protocol):
    """What the mixin needs of the cluster it is mixed into."""

    version: str
    nodes: list[ClusterNode]

    @property
    def history(self) -> History: ...
    @property
    def start_timeout_s(self) -> float: ...
    def node(self, ref: NodeRef) -> ClusterNode: ...
    def trusted_brokers(self) -> list[ClusterNode]: ...
    def wait_registered(self, deadline: float) -> None: ...


class NodeVersions:
    """Per-node versions, replace_node, feature levels (the `Upgradable` face)."""

    def node_versions(self: Versioned) -> dict[str, str]:
        """Kafka node name -> the version it runs (ZooKeeper is not a Kafka node)."""
        return {n.name: n.version or self.version for n in self.nodes if n.node_id is not None}

    def replace_node(self: Versioned, ref: NodeRef, version: str) -> None:
        """Stop the node, start it on `version`'s image with its log directories, and wait
        until it logged start-up (started again while it exits early, as after a kill) and
        (a broker) registered again. The cluster's `version` is the new one once every Kafka
        node runs it."""
        node = self.node(ref)
        image = require_image(docker.from_env(), version)
        before = node.version or self.version
        if node.status() in ("running", "paused"):
            if node.status() == "paused":
                node.unpause()
            node.stop()
        node.replace(image)
        node.version = version
        deadline = time.monotonic() + self.start_timeout_s
        start_supervised(node, self.history, self.start_timeout_s, started=True)
        if node.is_broker:
            self.wait_registered(deadline)
        self.history.append(
            ev.NODE_REPLACED, node=node.name, from_version=before, to_version=version
        )
        versions = {n.version or self.version for n in self.nodes if n.node_id is not None}
        if versions == {version}:
            self.version = version

    def features(self: Versioned) -> dict[str, str]:
        """Feature name -> finalized level (metadata.version: '3.9-IV0'), as a broker says."""
        out = _feature_tool(self.trusted_brokers(), "describing features", ["describe"])
        return {m["name"]: m["level"] for m in _FEATURE.finditer(out)}

    def finalize_features(self: Versioned, release: str, timeout_s: float) -> dict[str, str]:
        """Raise the cluster's features to `release` (e.g. "4.3"), run with the tool of the
        version the brokers run: from 4.0 `--release-version` (every feature the release
        defaults to), before it `--metadata` (metadata.version only). The levels after."""
        flag = (
            "--release-version"
            if version_tuple(self.version) >= RELEASE_VERSION_SINCE
            else "--metadata"
        )
        wait_until(
            lambda: _feature_tool(
                self.trusted_brokers(),
                f"upgrading features to {release}",
                ["upgrade", flag, release],
            ),
            timeout_s,
            f"features upgraded to {release}",
            retry_on=HarnessError,
            interval_s=2.0,
        )
        return NodeVersions.features(self)


def _feature_tool(brokers: Sequence[ClusterNode], what: str, args: list[str]) -> str:
    """FeatureCommand's output from the first broker it succeeds in; HarnessError otherwise."""
    errors: list[str] = []
    for node in brokers:
        code, out = node.exec(
            *JAVA,
            "-cp",
            "/opt/kafka/libs/*",
            FEATURE_TOOL,
            "--bootstrap-server",
            f"{node.name}:{INTERNAL_PORT}",
            *args,
        )
        if code == 0:
            return out
        lines = [ln for ln in out.splitlines() if ln.strip() and not ln.startswith("log4j:")]
        errors.append(f"{node.name}: exit {code}: {' | '.join(lines[-2:]) or 'no output'}")
    raise HarnessError(f"{what}: {errors or 'no running broker'}")
