"""An at-least-once pipeline end to end against a real cluster: its members commit their input
offsets every 30 s (pipeline.commit_interval_ms), member 0 is SIGKILLed at 8 s, and every record
it had delivered since its last commit is in the output twice - none lost."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tests.experiments.cli import HERE, not_passed, run_single_cell

# make test-slow (nightly): the pipeline members (one module, both guarantees), a member
# SIGKILLed and restarted, the output read, are test_pipeline's path; an at-least-once pipeline
# losing nothing across member crashes, test_command_pipeline's; the commit interval,
# tests/unit/test_commit_interval.py's.
pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.slow_lane]


def test_a_crash_writes_again_what_was_delivered_since_the_last_commit(tmp_path: Path) -> None:
    done, cell, cell_dir = run_single_cell(HERE / "pipeline-at-least-once.yaml", tmp_path)
    assert done.returncode == 0, f"{not_passed(cell)}\n{done.stderr[-3000:]}"
    assert cell["verdict"] == "pass"

    history = [json.loads(line) for line in (cell_dir / "history.jsonl").open()]
    (crash,) = [e for e in history if e["kind"] == "consumer.crash"]
    assert crash["consumer"] == "pipeline/m0"
    consumed = pd.read_parquet(cell_dir / "consumed.parquet")
    commits = pd.read_parquet(cell_dir / "commits.parquet")
    output = pd.read_parquet(cell_dir / "output.parquet")

    # What member 0 delivered (its `consumed` lines) after its last commit of that partition
    # before the SIGKILL: uncommitted, so the group read and wrote it again.
    before = consumed[(consumed["consumer"] == "pipeline/m0") & (consumed["ts"] < crash["ts"])]
    own = commits[(commits["consumer"] == "pipeline/m0") & (commits["ts"] < crash["ts"])]
    last = own.groupby("partition")["offset"].max()
    uncommitted = before[before["offset"] >= before["partition"].map(last).fillna(0)]
    assert len(uncommitted) >= 50, len(uncommitted)  # 8 s at 150 records/s, a share of it

    visible = output[output["committed"]]
    counted = visible["seq"].value_counts()
    twice = set(counted[counted >= 2].index)
    assert set(uncommitted["seq"]) <= twice
    assert cell["counts"]["output_duplicates"] >= len(uncommitted)
    assert cell["counts"]["output_lost"] == 0 and cell["counts"]["lost"] == 0
