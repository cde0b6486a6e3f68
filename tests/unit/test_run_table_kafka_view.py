"""The run table's columns of Kafka's own view: shown when a cell has them, `?` undecided."""

from __future__ import annotations

from typing import Any

from harness.report.run_summary import figure, table_columns, table_rows, terminal_figures


def _cell(**extra: Any) -> dict[str, Any]:
    return {"cell": "c1", "verdict": "pass", "counts": {"lost": 5}, **extra}


def test_a_run_without_kafka_figures_keeps_the_older_table() -> None:
    columns = table_columns([_cell()])
    assert not any(c.startswith(("broker", "lost_where")) for c in columns)


def test_broker_and_lost_where_columns_read_their_sections() -> None:
    cells = [
        _cell(
            broker={"under_replicated_s": 12.5, "offline_partitions_s": None},
            broker_errors=3,
            lost_where={"truncated": 4, "never_appended": 0, "deleted": 0, "unknown": 1},
        ),
        _cell(cell="c2"),
    ]
    columns = table_columns(cells)
    rows = [dict(zip(columns, r, strict=True)) for r in table_rows(cells)]
    assert rows[0]["broker.under_replicated_s"] == "12.5"
    assert rows[0]["broker.offline_partitions_s"] == "?"  # undecided, never 0
    assert (rows[0]["broker_errors"], rows[0]["lost_where.truncated"]) == ("3", "4")
    assert rows[1]["broker.under_replicated_s"] == "?"  # that cell has no section at all


def test_a_judged_section_figure_shows_at_a_glance() -> None:
    cell = _cell(
        broker={"offline_partitions_s": 88.0},
        checks=[{"name": "broker.offline_partitions_s", "verdict": "pass", "detail": ""}],
    )
    assert figure(cell, "broker.offline_partitions_s") == 88.0
    assert "broker.offline_partitions_s 88" in terminal_figures(cell)


def test_the_unsynced_and_corrupted_columns_show_only_where_a_cell_counts_one() -> None:
    quiet = {"truncated": 4, "never_appended": 0, "deleted": 0, "unsynced": 0, "corrupted": 0}
    columns = table_columns([_cell(lost_where=quiet)])
    assert "lost_where.truncated" in columns
    assert "lost_where.unsynced" not in columns and "lost_where.corrupted" not in columns
    cells = [_cell(lost_where=quiet), _cell(cell="c2", lost_where={**quiet, "unsynced": 7})]
    columns = table_columns(cells)
    rows = [dict(zip(columns, r, strict=True)) for r in table_rows(cells)]
    assert "lost_where.corrupted" not in columns
    assert [r["lost_where.unsynced"] for r in rows] == ["0", "7"]
