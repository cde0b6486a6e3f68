"""The nightly's explore part: scripts/nightly_explore.py picks the catalogue's cells whose
property should hold (a spec with `explore:`, `lost: 0`, acks=all with min.insync.replicas 2 and
RF 3), the shares of the workflow's jobs cover them all once, and the Makefile target spreads
one budget over them."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import yaml

from harness.experiment import make_plan

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import nightly_explore  # noqa: E402

SKIP = frozenset({"experiments/explore/site-power-loss.yaml"})


def makefile_skip() -> frozenset[str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    (line,) = re.findall(r"^EXPLORE_SKIP \?= (.+)$", text, re.MULTILINE)
    return frozenset(line.split())


def test_the_makefile_leaves_out_the_demonstration_that_finds_its_loss_by_design() -> None:
    assert makefile_skip() == SKIP
    assert "experiments/explore/site-power-loss.yaml" not in " ".join(
        nightly_explore.entries(ROOT, SKIP)
    )


def test_each_entry_is_cells_of_a_valid_spec_whose_property_should_hold() -> None:
    entries = nightly_explore.entries(ROOT, SKIP)
    specs = [e.split(":", 1)[0] for e in entries]
    assert {
        "experiments/incidents/acks1-leader-loss.yaml",
        "experiments/operations/split-brain.yaml",
        "experiments/explore/site-power-loss-fsync.yaml",
    } <= set(specs)
    for entry in entries:
        spec, cells = entry.split(":", 1)
        plan = make_plan(ROOT / spec, 1, cells)
        assert plan.spec.explore is not None and plan.cells, entry
        assert len(plan.cells) == len(cells.split(",")), entry
        for cell in plan.cells:
            s = cell.spec
            assert s.producer.acks == "all", cell.id
            assert nightly_explore.holds_no_loss(s.expect["lost"]), cell.id
            min_isr = s.topic.config.get("min.insync.replicas") or s.cluster.broker_config.get(
                "min.insync.replicas"
            )
            assert int(str(min_isr)) >= 2 and s.topic.replication_factor >= 3, cell.id


def test_the_unsafe_cells_are_never_searched() -> None:
    joined = " ".join(nightly_explore.entries(ROOT, SKIP))
    assert "acks=1" not in joined


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_the_shares_cover_every_entry_once(n: int) -> None:
    items = [f"e{i}" for i in range(7)]
    shares = [nightly_explore.shard(items, f"{k}/{n}") for k in range(1, n + 1)]
    assert sorted(x for s in shares for x in s) == sorted(items)
    with pytest.raises(SystemExit):
        nightly_explore.shard(items, f"{n + 1}/{n}")


def test_the_workflow_jobs_are_the_shares_of_the_makefile_target() -> None:
    flow = yaml.safe_load((ROOT / ".github" / "workflows" / "nightly.yml").read_text())
    job = flow["jobs"]["explore"]
    shards = [e["shard"] for e in job["strategy"]["matrix"]["include"]]
    n = len(shards)
    assert shards == [f"{k}/{n}" for k in range(1, n + 1)]
    runs = " ".join(str(s.get("run", "")) for s in job["steps"])
    assert 'make nightly-explore EXPLORE_SHARD="${{ matrix.shard }}"' in runs
    assert "EXPLORE_MINUTES=30" in runs and "minimal-repro.yaml" in runs
    assert "explore" in flow["jobs"]["results"]["needs"]
