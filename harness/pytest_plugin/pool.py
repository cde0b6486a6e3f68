"""Clusters shared across a session: one per distinct options, for tests marked `shared=True`.

A cluster takes 30-60 s to start; tests that only need *a* healthy cluster of some shape can
share one. After each test its faults are healed (`heal_all`: nothing killed, paused or cut
remains); a cluster that cannot be healed is removed, and the next test gets a new one.
What a test leaves in Kafka (topics, groups, records) stays: shared tests use their own names.
A cluster whose users are counted (`users`, from the session's tests) is removed after its
last one, not at the session's end: it does not idle beside the tests that follow.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from harness.pytest_plugin.builder import ClusterBuilder
from harness.pytest_plugin.options import ClusterOptions

if TYPE_CHECKING:
    from harness.cluster import KafkaCluster


class ClusterPool:
    def __init__(self, logs_root: Path, users: Mapping[ClusterOptions, int] | None = None) -> None:
        self.logs_root = logs_root
        self.clusters: dict[ClusterOptions, KafkaCluster] = {}
        # Tests still to come per options; options not counted stay until close_all.
        self.users = dict(users or {})
        self._started = 0

    def acquire(self, options: ClusterOptions) -> KafkaCluster:
        cluster = self.clusters.get(options)
        if cluster is None:
            self._started += 1
            builder = ClusterBuilder(options).with_logs_dir(
                self.logs_root / f"cluster-{self._started}"
            )
            cluster = builder.start()
            self.clusters[options] = cluster
        return cluster

    def release(self, options: ClusterOptions) -> None:
        """Heal what the test left; a cluster that cannot be healed goes (and the error shows).
        After its last counted user it goes too."""
        last = options in self.users and self._count_down(options)
        cluster = self.clusters.get(options)
        if cluster is None:
            return
        try:
            cluster.heal_all()
        except BaseException:
            del self.clusters[options]
            cluster.close()
            raise
        if last:
            del self.clusters[options]
            cluster.close()

    def _count_down(self, options: ClusterOptions) -> bool:
        """One user fewer; True when none is left."""
        self.users[options] -= 1
        return self.users[options] <= 0

    def close_all(self) -> None:
        clusters, self.clusters = list(self.clusters.values()), {}
        close_clusters(clusters)


def close_clusters(clusters: Iterable[KafkaCluster]) -> None:
    """Close each one, whatever the others do; then raise the first error, if any."""
    errors: list[Exception] = []
    for cluster in clusters:
        try:
            cluster.close()
        except Exception as exc:
            errors.append(exc)
    if errors:
        raise errors[0]
