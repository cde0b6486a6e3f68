"""The Spark streaming consumer against a real cluster: killed with SIGKILL, restarted on its
checkpoint, it resumes exactly where the checkpoint says and its sink holds every record once."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from harness.results.checkpoint import Checkpoint, sink_files
from tests.experiments.cli import HERE, harness, not_passed

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_spark_query_killed_and_restarted_resumes_exactly(tmp_path: Path) -> None:
    done = harness("run", HERE / "spark-kill.yaml", "--out", tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    (cell,) = json.loads((run_dir / "summary.json").read_text())["cells"]
    cell_dir = run_dir / "cells" / cell["cell"]
    assert cell["verdict"] == "pass", not_passed(cell)

    # The kill happened, and the restart resumed where the checkpoint had committed.
    history = [json.loads(line) for line in (cell_dir / "history.jsonl").read_text().splitlines()]
    crashes = [e for e in history if e["kind"] == "consumer.crash" and e.get("pid")]
    assert [e["consumer"] for e in crashes] == ["spark/q"]
    resumes = [e for e in history if e["kind"] == "spark.resume"]
    assert [e["generation"] for e in resumes] == [1, 2]
    assert resumes[1]["committed_batch"] is not None
    rows = cell["resumptions"]
    assert rows and all(r["set"] == "spark" and r["generation"] == 2 for r in rows)
    assert all(r["exact"] and r["skipped"] == 0 for r in rows), rows
    committed = {str(r["partition"]): r["committed"] for r in rows}
    assert committed == resumes[1]["committed_end"]

    # Every acknowledged record is in the sink exactly once, read through its commit log.
    ledger = pq.read_table(cell_dir / "ledger.parquet").to_pydict()
    acked = {s for s, st in zip(ledger["seq"], ledger["status"], strict=True) if st == "ok"}
    assert len(acked) == cell["counts"]["acked"] > 0
    sink = cell_dir / "spark" / "spark" / "sink"
    seqs = [
        s
        for f in sink_files(sink)
        for s in pq.read_table(sink / Path(f.path).name)["seq"].to_pylist()
    ]
    assert len(seqs) == len(set(seqs)) and set(seqs) == acked
    spark = cell["spark_by_set"]["spark"]
    assert spark["sink_duplicates"] == 0 and spark["starts"] == 2

    # The query drained: its last committed batch ends at the log end of every partition.
    log = pq.read_table(cell_dir / "log.parquet").to_pydict()
    ends: dict[int, int] = {}
    for p, o in zip(log["partition"], log["offset"], strict=True):
        ends[p] = max(ends.get(p, 0), o + 1)
    checkpoint = Checkpoint(cell_dir / "spark" / "spark" / "checkpoint")
    last = max(checkpoint.committed())
    assert checkpoint.planned()[last].end == ends
