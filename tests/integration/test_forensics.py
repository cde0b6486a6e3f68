"""Broker forensics on a real cluster: an acks=1 leader cut off from the rest keeps
acknowledging writes no follower copies; after the cut heals it truncates them. Every lost
record is placed `truncated`: those acknowledged before the copy of its log taken at heal
are in that copy; those it acknowledged after (it keeps leading for seconds after the cut
heals, until it learns it was deposed) are placed by its own log's "Truncating to offset"
line."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.experiments.cli import HERE, harness, not_passed

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_acks1_lost_records_are_all_placed_truncated_by_the_deposed_leaders_copy_or_log(
    tmp_path: Path,
) -> None:
    done = harness("run", HERE / "acks1-truncated.yaml", "--out", tmp_path)
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert (run_dir / "summary.json").is_file(), done.stderr[-3000:]
    (cell,) = json.loads((run_dir / "summary.json").read_text())["cells"]
    lost = cell["counts"]["lost"]
    # not_passed first: CI shows an assertion's first characters (a `run` check names why
    # the cell did not run its course, e.g. a cluster that did not start).
    assert lost is not None and lost >= 1, f"{not_passed(cell)}\n{done.stderr[-3000:]}"
    where = cell["lost_where"]
    assert where["truncated"] == lost, (where, cell["lost_where_reasons"])
    sample = cell["lost_where_sample"]
    assert sample and {s["where"] for s in sample} == {"truncated"}
    by_log = [s for s in sample if s["evidence"] == "log"]
    sample = [s for s in sample if s["evidence"] == "copy"]
    assert sample, cell["lost_where_sample"]
    # The evidence is a copy taken at heal, of the broker the isolate cut off.
    folder: Path = run_dir / "cells" / cell["cell"]
    events = [json.loads(line) for line in (folder / "history.jsonl").read_text().splitlines()]
    (inject,) = [e for e in events if e["kind"] == "fault.inject"]
    heal_copies = [e for e in events if e["kind"] == "segments.captured" and e["reason"] == "heal"]
    assert [e["node"] for e in heal_copies] == [inject["target"]]
    assert {s["broker"] for s in sample} == {inject["target"]}
    assert {s["capture"] for s in sample} == {heal_copies[0]["label"]}
    # What the log placed: the same broker's truncation, after the heal, to an offset at or
    # below each record's and at or below every record the copy holds.
    (heal,) = [e for e in events if e["kind"] == "fault.heal"]
    for s in by_log:
        assert s["broker"] == inject["target"] and s["log_ts"] >= heal["ts"], s
        assert s["truncated_to"] <= s["offset"] and s["truncated_to"] <= min(
            c["offset"] for c in sample
        ), s
    # Every broker copied at collect, decoded, and the raw copies gone.
    collect = [e for e in events if e["kind"] == "segments.captured" and e["reason"] == "collect"]
    assert len(collect) == 3 and all(e["complete"] for e in collect)
    (decoded,) = [e for e in events if e["kind"] == "segments.decoded"]
    assert decoded["complete"] is True and decoded["kept"] is False
    assert not (folder / "segments").exists()
    segments = pq.read_table(folder / "segments.parquet").to_pydict()
    assert len(set(segments["capture"])) == 4
    checks = {c["name"]: c["verdict"] for c in cell["checks"]}
    assert checks["lost_where.truncated"] == "pass"
    assert done.returncode in (0, 1), done.stderr[-3000:]
