"""Kafka's own view of a cell: a real 3-broker cell whose partition-0 leader is killed for
15 s. Its metrics.parquet shows under-replicated partitions during the fault and none once
the cell recovered, and the summary's `broker` section is decided."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from harness.results import broker_metrics as bm
from tests.experiments.cli import not_passed, run_single_cell

pytestmark = pytest.mark.docker

SPEC = """
name: broker-metrics-kill
seed: 7
cluster:
  brokers: 3
  broker_config:
    group.initial.rebalance.delay.ms: 0   # not studied here
    min.insync.replicas: 2
topic: {partitions: 3, replication_factor: 3}
producer: {acks: all, records: 2500, rate: 100}
consumer: {kind: group, members: 1, commit: after-process}
faults:
  - {at_s: 3, kind: kill, target: "leader-of:chaos/0", duration_s: 15}
recovery: {timeout_s: 90, drain_timeout_s: 90}
expect:
  lost: 0
  broker.under_replicated_s: "> 0"
"""


def test_a_killed_leader_shows_in_the_brokers_metrics(tmp_path: Path) -> None:
    spec = tmp_path / "broker-metrics-kill.yaml"
    spec.write_text(SPEC)
    _done, cell, cell_dir = run_single_cell(spec, tmp_path / "out")
    assert cell["verdict"] == "pass", not_passed(cell)

    frame = pd.read_parquet(cell_dir / "metrics.parquet")
    history = pd.read_json(cell_dir / "history.jsonl", lines=True)
    (inject,) = history[history["kind"] == "fault.inject"].itertuples()
    (heal,) = history[history["kind"] == "fault.heal"].itertuples()
    urp = frame[frame["metric"] == bm.UNDER_REPLICATED].groupby("ts")["value"].sum()
    assert urp[(urp.index >= inject.ts) & (urp.index <= heal.ts)].max() > 0
    assert urp[urp.index == urp.index.max()].iloc[0] == 0  # the last round, recovered

    up = frame[frame["metric"] == bm.UP]
    failed = up[up["value"] == 0]
    assert set(failed["node"]) == {inject.target}  # only the killed broker missed scrapes

    broker = cell["broker"]
    assert broker["under_replicated_s"] > 0
    assert broker["under_replicated_max"] > 0
    assert broker["offline_partitions_s"] == 0
    assert not [k for k in cell.get("undecided", {}) if k.startswith("broker.under_replicated")]
