"""`harness explore` end to end on a real cluster: acks=1 with min.insync.replicas 1 (the
unsafe configuration, tests/experiments/explore-acks1.yaml) within 8 drawn schedules finds a
violation of `lost: 0`, shrinks it to at most 2 faults, confirms it at least 2 times in 3, and
writes a minimal-repro.yaml the spec loader and `validate` accept.

Long: 8 trial cells plus the shrink's candidates and its confirmation, at most 30 cells of about
1.5-3 min each (30 s of workload), so 30-90 minutes. Run it alone on a quiet machine:

    .venv/bin/python -m pytest tests/integration/test_explore.py -m slow_lane -q

make test leaves it out (slow_lane; make test-slow, the nightly workflow, runs it): each of its
parts is covered there by a shorter path - a drawn schedule run as an ordinary cell is any cell
of tests/experiments (the plan runner), an acks=1 leader cut off losing acknowledged records is
tests/integration/test_forensics.py's, and the search, the shrinker, the oracle and the repro
writer are tests/unit/test_explore_*.py's against fake runners.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from harness.explore.states import STATES
from harness.spec import load_spec
from tests.experiments.cli import HERE, ROOT, harness, harness_command

pytestmark = [
    pytest.mark.docker,
    pytest.mark.slow,
    pytest.mark.slow_lane,
    pytest.mark.timeout(3 * 3600),
]

SPEC = HERE / "explore-acks1.yaml"
MAX_TRIALS = 8
BUDGET_CELLS = 30  # trials, shrink candidates and the confirmation (3 kept back for it)
SEED = 7
EXIT_FAIL = 1


def test_explore_finds_shrinks_and_confirms_an_acks1_loss(tmp_path: Path) -> None:
    out = tmp_path / "explore"
    done = subprocess.run(
        harness_command(
            "explore", SPEC, "--max-trials", MAX_TRIALS, "--budget-cells", BUDGET_CELLS,
            "--seed", SEED, "--out", out,
        ),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=3 * 3600,
    )  # fmt: skip
    assert done.returncode == EXIT_FAIL, done.stderr[-4000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["verdict"] == "fail" and summary["seed"] == SEED
    assert 1 <= len(summary["trials"]) <= MAX_TRIALS
    assert summary["budget"]["cells_run"] <= BUDGET_CELLS

    # every trial is an ordinary cell with an ordinary result folder
    for trial in summary["trials"]:
        if trial["folder"] is not None:
            (cell,) = (Path(trial["folder"]) / "cells").iterdir()
            assert (cell / "summary.json").is_file() and (cell / "history.jsonl").is_file()

    lost = [v for v in summary["violations"] if v["property"] == "lost"]
    assert lost, summary["violations"]
    first = lost[0]
    shrunk = first["shrunk"]
    assert shrunk is not None, "the budget ended before the shrink began"
    assert 1 <= len(shrunk["faults"]) <= 2, shrunk
    assert len(shrunk["faults"]) <= len(first["original"])
    hits, runs = (int(n) for n in shrunk["reproduced"].split("/"))
    assert runs == 3 and hits >= 2, shrunk["reproduced"]
    assert shrunk["file"] is not None
    repro = Path(shrunk["file"])
    repro = repro if repro.is_absolute() else ROOT / repro
    assert repro.is_file() and Path(shrunk["log"]).name == "shrink-log.json"

    # the repro is a complete experiment file: the loader and `validate` take it
    spec = load_spec(repro)
    assert list(spec.expect) == ["lost"] and spec.seed is not None
    assert spec.producer.acks == "1" and spec.explore is None and spec.matrix is None
    assert 1 <= len(spec.faults) <= 2
    assert spec.incident is not None and f"{hits}/3" in spec.incident.measured
    valid = harness("validate", repro)
    assert valid.returncode == 0, valid.stderr[-2000:]

    # coverage and the "sometimes" states are filled
    assert summary["coverage"] and {r["kind"] for r in summary["coverage"]} <= {
        "kill",
        "isolate",
        "pause",
    }
    assert set(summary["reached"]) == set(STATES)
