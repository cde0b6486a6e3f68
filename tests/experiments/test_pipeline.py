"""An exactly-once pipeline end to end against a real cluster: a transactional producer with
aborts writes the input, two pipeline members copy it to the output in transactions that hold
their input offsets, one member is SIGKILLed and restarted, the broker coordinating the other
member's transactions is killed. The output holds every committed input record exactly once,
at the input record's partition and offset, and no aborted one."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tests.experiments.cli import HERE, not_passed, run_single_cell

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_an_exactly_once_pipeline_writes_every_committed_record_once(tmp_path: Path) -> None:
    done, cell, cell_dir = run_single_cell(HERE / "pipeline-short.yaml", tmp_path)
    assert done.returncode == 0, f"{not_passed(cell)}\n{done.stderr[-3000:]}"
    assert cell["verdict"] == "pass"

    ledger = pd.read_parquet(cell_dir / "ledger.parquet")
    log = pd.read_parquet(cell_dir / "log.parquet")
    output = pd.read_parquet(cell_dir / "output.parquet")
    consumed = pd.read_parquet(cell_dir / "consumed.parquet")
    committed = set(ledger.loc[ledger["outcome"] == "committed", "seq"])
    aborted = set(ledger.loc[ledger["outcome"] == "aborted", "seq"])
    assert len(committed) >= 20 and aborted  # a loaded machine commits few (80 seen), never none

    # Every committed input record is visible in the output once, none aborted.
    visible = output[output["committed"]]
    assert visible["seq"].is_unique
    assert (
        committed
        <= set(visible["seq"])
        <= committed | set(ledger.loc[ledger["outcome"] == "unknown", "seq"])
    )
    assert not aborted & set(visible["seq"])
    # ... written where the input log holds it: same partition, from that offset.
    placed = visible.merge(log[log["committed"]], on="seq", suffixes=("", "_in"))
    assert len(placed) == len(visible)
    assert (placed["input_partition"] == placed["partition_in"]).all()
    assert (placed["input_offset"] == placed["offset_in"]).all()
    assert (placed["partition"] == placed["input_partition"]).all()

    # The pipeline's consumer set committed every committed record.
    pipeline = consumed[consumed["consumer"].str.startswith("pipeline/")]
    assert committed <= set(pipeline["seq"])

    counts = cell["counts"]
    assert (counts["output_duplicates"], counts["output_lost"], counts["output_aborted"]) == (
        0,
        0,
        0,
    )
    assert counts["aborted_read"] == 0 and counts["lost"] == 0

    history = [json.loads(line) for line in (cell_dir / "history.jsonl").read_text().splitlines()]
    kinds = [e["kind"] for e in history]
    assert kinds.count("pipeline.start") == 1
    crashed = [e for e in history if e["kind"] == "consumer.crash" and e.get("pid")]
    assert [e["consumer"] for e in crashed] == ["pipeline/m1"]
    launched = [e["consumer"] for e in history if e["kind"] == "consumer.launch"]
    assert launched.count("pipeline/m1") == 2
    reads = [e for e in history if e["kind"] == "output.read"]
    assert [(e["isolation"], e["complete"]) for e in reads] == [
        ("read_uncommitted", True),
        ("read_committed", True),
    ]
    starts = [e for e in history if e["kind"] == "consumer.start" and e.get("guarantee")]
    assert {e["guarantee"] for e in starts} == {"exactly-once"} and len(starts) == 3
