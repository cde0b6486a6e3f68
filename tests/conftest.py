"""Tests under integration/ and experiments/ need Docker and the broker images: marked `integration`."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).parent
# Bounds per test (they start real clusters; an experiment runs a whole cell, then Spark).
TIMEOUTS = {HERE / "integration": 600, HERE / "experiments": 900}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for folder, timeout in TIMEOUTS.items():
            if folder in Path(item.fspath).parents:
                item.add_marker(pytest.mark.integration)
                item.add_marker(pytest.mark.timeout(timeout))


@pytest.fixture(scope="session")
def spark():  # an Iterator[SparkSession]: imported here, so only a Spark test starts the JVM
    """One local Spark session for every test module that checks on Spark (marked `spark`),
    started once per test run; skipped without a Java runtime."""
    import os
    import shutil

    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Spark needs a Java runtime (java on PATH or JAVA_HOME); none found")
    from spark_jobs.session import local_session

    session = local_session("kafka-chaos-tests")
    yield session
    session.stop()
