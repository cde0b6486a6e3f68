"""Run a small experiment through the CLI, check its verdict and folder, re-verify it offline."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from tests.experiments.cli import HERE, harness

pytestmark = [pytest.mark.docker, pytest.mark.slow]

COLUMNS = {
    "ledger.parquet": [
        *("seq", "key", "partition", "offset", "status", "error", "send_ts", "ack_ts"),
        *("txn", "outcome"),  # appended for transactions (null here)
    ],
    "consumed.parquet": ["seq", "partition", "offset", "consumer", "ts", "generation"],
    "log.parquet": ["seq", "partition", "offset", "committed"],
    "commits.parquet": ["consumer", "partition", "offset", "ts"],
}


def test_small_experiment_end_to_end_then_verify(tmp_path: Path) -> None:
    done = harness("run", HERE / "small-kill.yaml", "--out", tmp_path)
    assert done.returncode == 0, done.stderr[-4000:]
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    run = json.loads((run_dir / "summary.json").read_text())
    assert run["verdict"] == "pass" and run["seed"] == 11
    (cell,) = run["cells"]
    cell_dir = run_dir / "cells" / cell["cell"]

    # The contract files, with their columns.
    for name, columns in COLUMNS.items():
        assert pq.read_schema(cell_dir / name).names == columns, name
    for name in ("history.jsonl", "summary.json", "report.html", "brokers/1.log"):
        assert (cell_dir / name).exists(), name
    for name in ("spec.yaml", "summary.md", "junit.xml"):
        assert (run_dir / name).exists(), name

    # The machine, sampled over the cell: the host every ~100 ms, the brokers by name; on
    # this quiet machine no timing figure is left to it (test_machine_overload.py: loaded).
    machine = pq.read_table(cell_dir / "machine.parquet").to_pydict()
    sources = set(machine["source"])
    assert {"host", "broker-1", "broker-2", "broker-3"} <= sources, sources
    summary = json.loads((cell_dir / "summary.json").read_text())
    assert summary["machine"]["samples"] > 100
    assert summary["overloaded"] == {}, summary["machine"]

    # What happened: every record acked, none lost, all consumed, the faults in the history.
    counts = cell["counts"]
    assert counts["attempted"] == 900
    assert counts["acked"] == 900
    assert counts["lost"] == 0 and counts["lost_never_consumed"] == 0
    assert counts["duplicated"] == 0
    ledger = pq.read_table(cell_dir / "ledger.parquet").to_pydict()
    log = pq.read_table(cell_dir / "log.parquet").to_pydict()
    assert sorted(ledger["seq"]) == list(range(900))
    assert sorted(log["seq"]) == list(range(900))
    assert set(ledger["txn"]) == {None} and set(log["committed"]) == {None}  # no transactions
    history = [json.loads(x) for x in (cell_dir / "history.jsonl").read_text().splitlines()]
    kinds = [e["kind"] for e in history]
    assert kinds.count("fault.inject") == 1 and kinds.count("fault.heal") == 1
    assert "consumer.crash" in kinds
    assert {"name": "lost", "verdict": "pass", "detail": "lost = 0, expected == 0"} in cell[
        "checks"
    ]
    # The crashed member came back as a new generation.
    consumed = pq.read_table(cell_dir / "consumed.parquet").to_pydict()
    assert max(consumed["generation"]) > 1

    # verify: the same summary from the folder alone.
    again = harness("verify", run_dir)
    assert again.returncode == 0, again.stderr[-4000:]
    rerun = json.loads((run_dir / "summary.json").read_text())
    (recell,) = rerun["cells"]
    for key in ("counts", "verdict", "checks", "max_stall_s", "unavailable_s", "resumptions"):
        assert recell[key] == cell[key], key

    # An expectation the data breaks turns the verdict to fail, exit code 1.
    spec = yaml.safe_load((run_dir / "spec.yaml").read_text())
    spec["expect"]["acked"] = "< 10"
    (run_dir / "spec.yaml").write_text(yaml.safe_dump(spec))
    failed = harness("verify", run_dir)
    assert failed.returncode == 1, failed.stderr[-4000:]
    verdicts = json.loads((run_dir / "summary.json").read_text())["cells"][0]["checks"]
    assert {"name": "acked", "verdict": "fail", "detail": "acked = 900, expected < 10"} in verdicts
