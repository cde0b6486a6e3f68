"""results/history.parquet: rows from a suite summary, appended; a missing file starts anew."""

from __future__ import annotations

import math
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from harness.results.tables import FIGURE_HISTORY
from harness.suite.history import append_history, history_rows, read_history
from tests.unit.suite_folders import cell_summary


def suite_summary(run_id: str = "R1", **cells: dict[str, Any]) -> dict[str, Any]:
    return {
        "suite": "nightly",
        "run_id": run_id,
        "started": "2026-11-23T01:00:00+00:00",
        "experiments": [
            {
                "experiment": "acks",
                "run_id": "20261123T010000Z-acks",
                "seed": 5,
                "planned_by_cell": {"01_version=3.9.2": 90.0},
                "cells": [
                    cell_summary("01_version=3.9.2", stalls={"group": 4.5, "spark": None}),
                    cell_summary(
                        "02_version=4.3.1",
                        "fail",
                        lost=12,
                        version="4.3.1",
                        unavailable_s=None,
                        duration_s=None,
                    ),
                ],
            },
            {"experiment": "left", "cells": []},
        ],
    }


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_a_count_that_is_not_finite_is_no_count(value: float) -> None:
    """summary.json may hold Infinity or NaN (Python's json reads both): `harness index`
    crashed with OverflowError on `lost: Infinity` (found by test_input_fuzz)."""
    summary = suite_summary()
    summary["experiments"][0]["cells"][1]["counts"]["lost"] = value
    assert history_rows(summary)[1]["lost"] is None


def test_one_row_per_cell_with_its_figures() -> None:
    rows = history_rows(suite_summary())
    assert [r["cell"] for r in rows] == ["01_version=3.9.2", "02_version=4.3.1"]
    first, second = rows
    assert first["suite_run"] == "R1" and first["suite"] == "nightly"
    assert first["started"] == datetime(2026, 11, 23, 1, tzinfo=timezone.utc)
    assert first["experiment"] == "acks" and first["experiment_run"] == "20261123T010000Z-acks"
    assert (first["kafka_version"], first["mode"], first["seed"]) == ("3.9.2", "kraft", 5)
    assert first["verdict"] == "pass" and first["lost"] == 0 and first["duplicated"] == 0
    assert first["stall_s"] == [("group", 4.5), ("spark", None)]
    assert first["max_stall_s"] == 4.5 and first["planned_s"] == 90.0
    assert second["verdict"] == "fail" and second["lost"] == 12
    assert second["unavailable_s"] is None and second["duration_s"] is None
    assert second["planned_s"] is None  # no estimate recorded for it


def test_a_missing_history_starts_a_new_one_then_appends(tmp_path: Path) -> None:
    path = tmp_path / "results" / "history.parquet"
    assert read_history(path).num_rows == 0
    assert append_history(path, history_rows(suite_summary("R1"))) == 2
    assert append_history(path, history_rows(suite_summary("R2"))) == 4
    table = pq.read_table(path)
    assert table.schema.equals(FIGURE_HISTORY)
    assert table.column("suite_run").to_pylist() == ["R1", "R1", "R2", "R2"]
    assert table.column("lost").to_pylist() == [0, 12, 0, 12]
    assert table.column("stall_s").to_pylist()[0] == [("group", 4.5), ("spark", None)]
    assert not list(path.parent.glob(".*.tmp"))  # written aside, then moved in place


def test_an_older_history_with_fewer_columns_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "history.parquet"
    old = pa.table({"suite_run": ["R0"], "cell": ["01_main"], "verdict": ["pass"]})
    pq.write_table(old, path)
    assert append_history(path, history_rows(suite_summary("R1"))) == 3
    table = pq.read_table(path)
    assert table.column("suite_run").to_pylist() == ["R0", "R1", "R1"]
    assert table.column("lost").to_pylist() == [None, 0, 12]


def test_a_history_that_is_not_parquet_is_an_error_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "history.parquet"
    path.write_text("not parquet")
    with pytest.raises(Exception, match=r"(?i)parquet|magic"):
        append_history(path, history_rows(suite_summary()))
    assert path.read_text() == "not parquet"


def test_an_empty_suite_appends_nothing_but_creates_the_file(tmp_path: Path) -> None:
    path = tmp_path / "history.parquet"
    assert append_history(path, []) == 0
    assert pq.read_table(path).schema.equals(FIGURE_HISTORY)
