"""Seeded fault schedules: same spec + seed + cell gives the same faults and targets."""

from __future__ import annotations

from pathlib import Path

import yaml

from harness.faults.targets import Target
from harness.nemesis.schedule import PlannedFault, describe_schedule, plan_faults
from harness.spec import Cell, expand_cells, load_spec, parse_spec

EXPERIMENTS = Path(__file__).parents[2] / "experiments"

RANDOM_FAULTS = """
name: r
cluster: {brokers: 5}
producer: {duration_s: 30}
consumers:
  - {kind: group, group: g, members: 3}
  - {kind: spark}
faults:
  - {at_s: 20, kind: pause, target: random, duration_s: 3}
  - {at_s: 5, kind: kill, target: random}
  - {at_s: 5, kind: consumer-crash, target: random, duration_s: 2}
  - {at_s: 1, kind: restart, target: "leader-of:chaos/2"}
  - {at_s: 9, kind: stop, target: coordinator-of, duration_s: 4}
  - {at_s: 31, kind: partition, target: controller}
matrix:
  producer.acks: [1, all]
"""


def cells() -> list[Cell]:
    return expand_cells(parse_spec(yaml.safe_load(RANDOM_FAULTS)))


def test_sorted_by_start_then_spec_order() -> None:
    cell = cells()[0]
    plan = plan_faults(cell, seed=1)
    assert [(p.at_s, p.index) for p in plan] == [(1, 3), (5, 1), (5, 2), (9, 4), (20, 0), (31, 5)]
    assert plan[0] == PlannedFault(3, 1, "restart", "leader-of:chaos/2", None, cell.spec.faults[3])
    assert plan[-1].kind == "isolate" and plan[-1].duration_s is None


def test_symbolic_targets_stay_symbolic_and_parse() -> None:
    plan = {p.index: p for p in plan_faults(cells()[0], seed=1)}
    assert plan[3].target == "leader-of:chaos/2"
    assert plan[4].target == "coordinator-of:g"  # plain coordinator-of: the first group set's
    assert plan[5].target == "controller"
    for p in plan.values():
        if not p.is_consumer_fault:
            Target.parse(p.target)


def test_random_targets_resolve_within_the_cluster_and_the_consumer_sets() -> None:
    valid_members = {f"consumer:group/{i}" for i in range(3)} | {"consumer:spark/0"}
    for seed in range(50):
        plan = {p.index: p for p in plan_faults(cells()[0], seed)}
        for i in (0, 1):
            assert plan[i].target in {f"broker:{b}" for b in range(1, 6)}
        assert plan[2].target in valid_members


def test_same_seed_same_schedule() -> None:
    for cell in cells():
        assert plan_faults(cell, 42) == plan_faults(cell, 42)
    again = cells()
    assert [plan_faults(c, 42) for c in again] == [plan_faults(c, 42) for c in cells()]


def test_seed_and_cell_change_the_draws() -> None:
    one, two = cells()
    targets = {tuple(p.target for p in plan_faults(one, s)) for s in range(30)}
    assert len(targets) > 1
    assert any(plan_faults(one, s) != plan_faults(two, s) for s in range(30))


def test_global_rng_is_untouched() -> None:
    import random

    random.seed(5)
    expected = random.random()
    random.seed(5)
    plan_faults(cells()[0], 3)
    assert random.random() == expected


def test_heal_time() -> None:
    plan = {p.index: p for p in plan_faults(cells()[0], 1)}
    assert plan[0].heal_at_s == 23
    assert plan[1].heal_at_s is None


def test_describe_schedule() -> None:
    text = describe_schedule(cells(), 9)
    lines = text.splitlines()
    assert lines[0] == "seed 9; 2 cell(s)"
    assert "01_acks=1" in lines and "02_acks=all" in lines
    assert any("leader-of:chaos/2" in line and "instant" in line for line in lines)
    assert any("coordinator-of:g" in line and "for 4s" in line for line in lines)
    assert any("until heal" in line and "after the workload ends at 30s" in line for line in lines)
    assert "expect: (nothing: verdict unknown)" in text


def test_shipped_experiments_have_schedules() -> None:
    for path in sorted(EXPERIMENTS.rglob("*.yaml")):
        if "suites" in path.relative_to(EXPERIMENTS).parts:
            continue  # suite files (harness.suite), not experiments
        for cell in expand_cells(load_spec(path)):
            plan = plan_faults(cell, 0)
            assert plan, path
            assert all(p.at_s < cell.spec.producer.planned_duration_s for p in plan), path
