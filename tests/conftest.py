"""Markers say what a test needs (pyproject.toml lists them): `docker` (an engine and the
broker images: real clusters), `spark` (a Spark JVM), `browser` (headless Chromium), `slow`
(minutes: whole experiment cells). The second lane of `make test` is `integration`: every
test marked `docker` or `slow` is marked `integration` too, so `-m "not integration"` is the
quick lane whatever folder a test sits in."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from harness.pytest_plugin import shared_options
from harness.pytest_plugin.options import ClusterOptions

# Bounds per test: a `docker` test starts real clusters; a `slow` one runs a whole cell, then
# Spark. A test's own timeout marker wins.
TIMEOUTS = {"slow": 900, "docker": 600}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    run_shared_clusters_users_together(items)
    for item in items:
        needs = [name for name in TIMEOUTS if item.get_closest_marker(name)]
        if not needs:
            continue
        item.add_marker(pytest.mark.integration)
        if item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(TIMEOUTS[needs[0]]))


def run_shared_clusters_users_together(items: list[pytest.Item]) -> None:
    """The tests sharing a cluster (`kafka_cluster(shared=True)`, one per options) run one
    after another, where the first of them was collected; the others keep their order. The
    plugin removes a shared cluster after its last test: it is up only while they run."""
    first: dict[ClusterOptions, int] = {}
    places = []
    for index, item in enumerate(items):
        options = shared_options(item)
        place = index if options is None else first.setdefault(options, index)
        places.append((place, index))
    order = sorted(range(len(items)), key=places.__getitem__)
    items[:] = [items[i] for i in order]


@pytest.fixture(scope="session", autouse=True)
def spark_connect_master(request: pytest.FixtureRequest) -> Iterator[str | None]:
    """A run that selected integration tests: one warm Spark Connect server for every
    check they run (tests/spark_connect.py); any other run: nothing."""
    if not any(item.get_closest_marker("integration") for item in request.session.items):
        yield None
        return
    from tests.spark_connect import connect_master

    with connect_master() as url:
        yield url


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:  # a SparkSession, imported late: only a Spark test starts the JVM
    """One local Spark session for every test module that checks on Spark (marked `spark`),
    started once per test run; skipped without a Java runtime."""
    import os
    import shutil

    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Spark needs a Java runtime (java on PATH or JAVA_HOME); none found")
    from spark_jobs.session import local_session
    from tests.spark_jvm import short_lived_jvm

    # C1 only: the checks' few rows do not pay back C2's compiles (tests/spark_jvm.py).
    with short_lived_jvm():
        session = local_session("kafka-chaos-tests")
    yield session
    session.stop()
