"""The nightly's explore part: the Makefile's NIGHTLY_EXPLORE entries and the workflow's explore
jobs name the same SPEC:CELLS; each spec validates with an `explore:` section and its cells
hold the property the nightly expects to hold (`lost: 0`, acks=all, min.insync.replicas 2)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from harness.experiment import make_plan
from harness.spec.expect import Bound

ROOT = Path(__file__).resolve().parents[2]


def makefile_entries() -> list[str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    (line,) = re.findall(r"^NIGHTLY_EXPLORE \?= (.+)$", text, re.MULTILINE)
    return line.split()


def test_the_workflow_runs_each_makefile_entry_as_a_job_of_its_own() -> None:
    flow = yaml.safe_load((ROOT / ".github" / "workflows" / "nightly.yml").read_text())
    job = flow["jobs"]["explore"]
    entries = [e["entry"] for e in job["strategy"]["matrix"]["include"]]
    assert entries == makefile_entries()
    runs = " ".join(str(s.get("run", "")) for s in job["steps"])
    assert 'make nightly-explore NIGHTLY_EXPLORE="${{ matrix.entry }}"' in runs
    assert "EXPLORE_MINUTES=30" in runs and "minimal-repro.yaml" in runs
    assert "explore" in flow["jobs"]["results"]["needs"]


def test_each_entry_is_cells_of_a_valid_spec_whose_property_should_hold() -> None:
    for entry in makefile_entries():
        spec, cells = entry.split(":", 1)
        plan = make_plan(ROOT / spec, 1, cells)
        assert plan.spec.explore is not None, spec
        assert plan.cells, entry
        for cell in plan.cells:
            s = cell.spec
            assert s.producer.acks == "all", cell.id
            assert s.explore is not None and set(s.explore.kinds or []) >= {"kill", "pause"}
            assert dict(s.expect) == {"lost": Bound(op="==", value=0.0)}, cell.id
            min_isr = s.topic.config.get("min.insync.replicas") or s.cluster.broker_config.get(
                "min.insync.replicas"
            )
            assert int(str(min_isr)) >= 2 and s.topic.replication_factor >= 3, cell.id
