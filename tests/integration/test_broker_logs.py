"""A real broker logs real ERRORs, and the verdict sees them: a producer whose clock is two
hours behind writes to a topic that bounds the past (message.timestamp.before.max.ms), the
broker refuses the batches and logs `Error processing append operation on partition chaos-0`
with an InvalidTimestampException (kafka.server.ReplicaManager). One cell expects
`broker_errors: 0` and fails; the other allows the exception in `broker_logs.allow` and
passes, its events listed as allowed. `harness verify` decides the same from the folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.experiments.cli import harness

# make test-slow (nightly): every cell copies its brokers' logs and counts their errors
# (broker_errors, by template) in its summary, e.g. test_end_to_end's; a client's clock
# skewed behind a bounded topic and refused, test_clock_skew's; the templates, allow lists and
# check, tests/unit/test_broker_logs.py's.
pytestmark = [pytest.mark.docker, pytest.mark.slow_lane]

SPEC = """\
name: broker-log-errors
seed: 7
cluster:
  brokers: 1
  broker_config:
    group.initial.rebalance.delay.ms: 0
    offsets.topic.replication.factor: 1
    transaction.state.log.replication.factor: 1
topic:
  partitions: 1
  replication_factor: 1
  config: {message.timestamp.before.max.ms: 3600000}
producer: {acks: all, rate: 50, duration_s: 5}
consumer: {kind: group, members: 1}
faults:
  - {at_s: 1, kind: clock-skew, target: producer, offset_s: -7200, duration_s: 2}
recovery: {timeout_s: 60, drain_timeout_s: 60}
expect:
  broker_errors: 0
matrix:
  broker_logs.allow: [[], ["InvalidTimestampException"]]
"""
TEMPLATE = "[ReplicaManager broker=<n>] Error processing append operation on partition chaos-<n>"


def _cells(run_dir: Path) -> list[dict[str, Any]]:
    cells: list[dict[str, Any]] = json.loads((run_dir / "summary.json").read_text())["cells"]
    return cells


def _check(cell: dict[str, Any]) -> dict[str, str]:
    (check,) = [c for c in cell["checks"] if c["name"] == "broker_errors"]
    return check


def test_a_refused_write_is_a_broker_error_unless_the_spec_allows_it(tmp_path: Path) -> None:
    spec = tmp_path / "broker-log-errors.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    out = tmp_path / "results"
    done = harness("run", spec, "--out", out)
    (run_dir,) = [p for p in out.iterdir() if p.is_dir()]
    assert done.returncode == 1, done.stderr[-4000:]  # a cell failed
    counted, allowed = _cells(run_dir)

    # No allow list: the refused batches are broker errors, and `broker_errors: 0` fails.
    assert counted["counts"]["failed"] > 0  # the producer saw its writes refused
    errors = counted["broker_errors"]
    assert errors > 0
    (row,) = [r for r in counted["broker_errors_by_template"] if r["template"] == TEMPLATE]
    assert row["logger"] == "kafka.server.ReplicaManager" and row["level"] == "ERROR"
    assert row["nodes"] == ["1"] and row["allowed"] is False
    assert "InvalidTimestampException" in row["detail"]
    assert sum(r["count"] for r in counted["broker_errors_by_template"]) == errors
    assert _check(counted) == {
        "name": "broker_errors",
        "verdict": "fail",
        "detail": f"broker_errors = {errors}, expected == 0",
    }
    assert counted["verdict"] == "fail"

    # Allowed: listed, not counted.
    rows = allowed["broker_errors_by_template"]
    assert [r["allowed"] for r in rows if r["template"] == TEMPLATE] == [True]
    assert allowed["broker_errors"] == sum(r["count"] for r in rows if not r["allowed"]) == 0
    assert _check(allowed)["verdict"] == "pass"

    # The figures are the folder's: verify decides the same again.
    again = harness("verify", run_dir)
    assert again.returncode == 1, again.stderr[-4000:]
    redone = _cells(run_dir)
    assert [c["broker_errors"] for c in redone] == [errors, 0]
    assert [_check(c)["verdict"] for c in redone] == ["fail", "pass"]
    report = (run_dir / "cells" / counted["cell"] / "report.html").read_text(encoding="utf-8")
    assert "Broker log errors" in report and "InvalidTimestampException" in report
