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
