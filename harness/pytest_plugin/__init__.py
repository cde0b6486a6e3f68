"""pytest plugin: real Kafka clusters and faults for a team's own integration tests.

Loaded through the `pytest11` entry point once kafka-chaos is installed (or `-p
harness.pytest_plugin`). Fixtures:

* `kafka_cluster` - a running cluster, shaped by `@pytest.mark.kafka_cluster(mode=...,
  brokers=..., version=..., broker_config={...}, controllers=..., dynamic_quorum=...,
  spare_controllers=..., shared=..., start_timeout_s=...)` on the test, its class or its module (per key, the closest marker wins). Function-scoped: a
  test gets a fresh cluster, removed at its end. `shared=True`: one cluster per distinct
  options, healed after each test and removed after the session's last test that asks for
  it (see `pool`).
* `kafka_cluster_factory` - `kafka_cluster_factory(brokers=1)` returns a `ClusterBuilder`
  (`with_mode`, `with_brokers`, ...; `with builder as cluster:` or `builder.start()`); every
  cluster it started is removed at the test's end.
* `chaos` - faults on `kafka_cluster` from spec-like dicts: `with chaos.fault({"kind": "kill",
  "target": "leader-of:orders/0"}) as f:` or `chaos.inject({...})`; every fault still active
  is healed at teardown, before the cluster goes.

Loading the plugin imports neither Docker nor the spec: they load when a fixture is used.
Teardown removes containers and networks also when the test fails; Ctrl-C runs the
teardown too, and a killed pytest leaves it to the cluster's watchdog (docs/cluster-api.md).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from harness.errors import ConfigError
from harness.pytest_plugin.builder import ClusterBuilder
from harness.pytest_plugin.options import MARKER, ClusterOptions, from_markers

if TYPE_CHECKING:
    from harness.cluster import KafkaCluster
    from harness.pytest_plugin.chaos import Chaos
    from harness.pytest_plugin.pool import ClusterPool

__all__ = ["ClusterBuilder", "ClusterOptions"]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(mode='kraft', brokers=3, version=..., broker_config={{}}, controllers=0, "
        "shared=False, start_timeout_s=180): the cluster the kafka_cluster fixture starts "
        "(kafka-chaos)",
    )


def marker_options(node: pytest.Item) -> ClusterOptions:
    """The `kafka_cluster` markers of a test (closest first), checked."""
    markers = list(node.iter_markers(MARKER))
    for m in markers:
        if m.args:
            raise ConfigError(
                f"{node.nodeid}: @pytest.mark.{MARKER} takes keywords only (got {m.args!r})"
            )
    return from_markers([m.kwargs for m in markers], f"@pytest.mark.{MARKER}")


@pytest.fixture
def kafka_cluster(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[KafkaCluster]:
    """A running cluster shaped by the test's `kafka_cluster` marker; broker logs in
    `<tmp_path>/kafka-logs` at the end."""
    try:
        options = marker_options(request.node)
    except ConfigError as exc:
        pytest.fail(str(exc), pytrace=False)
    if options.shared:
        pool: ClusterPool = request.getfixturevalue("kafka_cluster_pool")
        cluster = pool.acquire(options)
        try:
            yield cluster
        finally:
            pool.release(options)
        return
    with ClusterBuilder(options).with_logs_dir(tmp_path / "kafka-logs") as cluster:
        yield cluster


@pytest.fixture(scope="session")
def kafka_cluster_pool(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ClusterPool]:
    """The session's shared clusters (`shared=True`): each removed after the last of the
    session's tests that asks for it, any left when the session ends."""
    from harness.pytest_plugin.pool import ClusterPool

    users = shared_users(request.session.items)
    pool = ClusterPool(tmp_path_factory.mktemp("kafka-clusters"), users)
    try:
        yield pool
    finally:
        pool.close_all()


def shared_options(item: pytest.Item) -> ClusterOptions | None:
    """The options of the shared cluster the test asks for through `kafka_cluster`, if any
    (a marker that does not parse: none, its test fails at set-up)."""
    if "kafka_cluster" not in getattr(item, "fixturenames", ()):
        return None
    if item.get_closest_marker(MARKER) is None:
        return None
    try:
        options = marker_options(item)
    except ConfigError:
        return None
    return options if options.shared else None


def shared_users(items: list[pytest.Item]) -> dict[ClusterOptions, int]:
    """How many of the session's tests ask for each shared cluster."""
    return dict(Counter(o for o in map(shared_options, items) if o is not None))


@pytest.fixture
def kafka_cluster_factory(tmp_path: Path) -> Iterator[Callable[..., ClusterBuilder]]:
    """`kafka_cluster_factory(**marker keywords)` -> a ClusterBuilder; what it starts is
    removed at the test's end, newest first."""
    started: list[KafkaCluster] = []
    numbers = itertools.count(1)

    def factory(**options: Any) -> ClusterBuilder:
        base = from_markers([options], "kafka_cluster_factory")
        if base.shared:
            raise ConfigError(
                "kafka_cluster_factory: shared: a factory's clusters are the test's own; "
                "share one with @pytest.mark.kafka_cluster(shared=True)"
            )
        logs = tmp_path / f"kafka-logs-{next(numbers)}"
        return ClusterBuilder(base, on_start=started.append).with_logs_dir(logs)

    try:
        yield factory
    finally:
        from harness.pytest_plugin.pool import close_clusters

        close_clusters(reversed(started))


@pytest.fixture
def chaos(kafka_cluster: KafkaCluster) -> Iterator[Chaos]:
    """Faults on `kafka_cluster` from spec-like dicts, healed at teardown."""
    from harness.pytest_plugin.chaos import Chaos

    with Chaos(kafka_cluster) as faults:
        yield faults
