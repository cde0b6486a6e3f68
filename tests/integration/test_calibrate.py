"""`harness calibrate` against real clusters: small-kill twice with its seed beside one CPU
burner; two ordinary run folders, calibration.json with every bound's figures per run, and no
burner left running."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness._version import revision
from tests.experiments.cli import HERE, harness

# make test-slow (nightly): the runs are `run_plan`'s, which test_end_to_end runs on this very
# spec; the aggregation, the burners and the CLI glue are tests/unit/test_calibrat*.py's and
# test_burners.py's.
pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.slow_lane]

BOUNDS = ["lost", "duplicated", "lost_never_consumed", "out_of_order"]  # small-kill's expect


def burners_running() -> list[str]:
    """Burner processes on the machine (any harness's)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            argv = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if b"harness.common.burners" in argv:
            found.append(proc.name)
    return found


def test_calibrate_runs_the_cell_twice_and_writes_every_bounds_figures(tmp_path: Path) -> None:
    out = tmp_path / "calibration"
    done = harness(
        "calibrate", HERE / "small-kill.yaml", "--runs", "2", "--load", "1", "--out", out
    )
    assert done.returncode == 0, done.stderr[-4000:]  # count bounds that held: ok
    doc = json.loads((out / "calibration.json").read_text())
    assert (doc["spec"], doc["seed"], doc["runs"], doc["load"]) == ("small-kill", 11, 2, 1)
    assert doc["status"] == "ok"

    folders = [Path(r["folder"]) for r in doc["run_folders"]]
    assert len(set(folders)) == 2 and all(f.parent == out for f in folders)
    for run, folder in zip(doc["run_folders"], folders, strict=True):
        summary = json.loads((folder / "summary.json").read_text())
        assert summary["seed"] == 11 and summary["verdict"] == run["verdict"] == "pass"
        assert summary["harness"] == doc["harness"] == revision()  # the code that ran it
        assert len(run["loadavg_start"]) == 3 and len(run["loadavg_end"]) == 3

    (cell,) = doc["cells"]
    assert cell["verdicts"] == ["pass", "pass"]
    assert [b["metric"] for b in cell["bounds"]] == BOUNDS
    for bound in cell["bounds"]:
        assert bound["figures"] == [0, 0] and bound["verdicts"] == ["pass", "pass"]
        assert bound["kind"] == "count" and bound["status"] == "ok"
        assert bound["suggested"] is None and bound["undecided"] == []
    assert "calibration: ok" in done.stderr
    assert burners_running() == []
