"""The `explore:` section and its generator: seeded, bounded, only what the cluster supports."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.explore.coverage import coverage_table, phase_of
from harness.explore.generator import draw, schedule_problems
from harness.spec import Spec, SpecError, expand_cells, load_spec, parse_spec
from harness.spec.explore_roles import role_entries, role_of, simpler_targets
from harness.spec.explore_rules import drawable_pairs
from harness.spec.problems import cell_view


def spec_of(**over: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": "explore-unit",
        "cluster": {"mode": "kraft", "version": "3.9.2", "brokers": 3},
        "topic": {"name": "chaos", "partitions": 3, "replication_factor": 3},
        "producer": {"acks": 1, "rate": 100, "duration_s": 60},
        "expect": {"lost": 0},
        "explore": {"kinds": ["kill", "isolate", "pause"], "max_faults": 3},
    }
    for key, value in over.items():
        if value is None:
            data.pop(key, None)
        elif isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    return data


def cell(tmp_path: Path, **over: Any) -> Spec:
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec_of(**over)), encoding="utf-8")
    return expand_cells(load_spec(path), str(path))[0].spec


def problems(tmp_path: Path, **over: Any) -> str:
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(spec_of(**over)), encoding="utf-8")
    with pytest.raises(SpecError) as err:
        load_spec(path)
    return str(err.value)


# --- the section --------------------------------------------------------------------------
def test_a_spec_without_explore_has_none_and_defaults_apply(tmp_path: Path) -> None:
    spec = cell(tmp_path, explore=None)
    assert spec.explore is None
    pairs = drawable_pairs(spec, cell_view(spec))
    kinds = {k for k, _ in pairs}
    assert {"kill", "pause", "isolate", "split", "cut-quorum"} <= kinds
    assert "cut-zookeeper" not in kinds  # KRaft: no ZooKeeper to cut


def test_bad_values_name_their_key(tmp_path: Path) -> None:
    assert "explore.kinds[1]: 'upgrade': never drawn" in problems(
        tmp_path, explore={"kinds": ["kill", "upgrade"]}
    )
    assert "explore.kinds[0]: 'nap': no fault kind" in problems(
        tmp_path, explore={"kinds": ["nap"]}
    )
    assert "explore.targets[0]: expected one of one, minority" in problems(
        tmp_path, explore={"targets": ["everyone"]}
    )
    assert "explore.max_faults: expected >= 1" in problems(tmp_path, explore={"max_faults": 0})
    assert "explore.duration_s: expected min <= max" in problems(
        tmp_path, explore={"duration_s": [9, 3]}
    )
    assert "explore.gap_s: expected [min, max]" in problems(tmp_path, explore={"gap_s": [1]})
    assert "explore.quiet.start: unknown key; allowed: start_s, end_s" in problems(
        tmp_path, explore={"quiet": {"start": 3}}
    )
    assert "explore.kinds: expected each at most once" in problems(
        tmp_path, explore={"kinds": ["kill", "kill"]}
    )


def test_what_the_cluster_cannot_play_is_a_problem_of_the_cell(tmp_path: Path) -> None:
    zk = {"mode": "zookeeper"}
    said = problems(tmp_path, cluster=zk, explore={"kinds": ["kill", "cut-quorum"]})
    assert "explore.kinds[1]: cut-quorum cannot be drawn here" in said
    assert "exists only in mode kraft" in said
    said = problems(
        tmp_path,
        cluster={"brokers": 1, "broker_config": {"offsets.topic.replication.factor": 1}},
        topic={"replication_factor": 1},
        explore={"kinds": ["kill"], "targets": ["minority"]},
    )
    assert "explore.targets[0]: no kind drawn can target minority here" in said
    said = problems(tmp_path, producer={"duration_s": 8})
    assert "explore.quiet: the workload's 8 s leave no time" in said


def test_a_matrix_axis_may_set_an_explore_key(tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(
        yaml.safe_dump(spec_of(matrix={"explore.max_faults": [1, 2]})), encoding="utf-8"
    )
    cells = expand_cells(load_spec(path), str(path))
    assert [c.spec.explore.max_faults for c in cells if c.spec.explore] == [1, 2]


# --- roles ----------------------------------------------------------------------------------
def test_roles_as_fault_entries(tmp_path: Path) -> None:
    view = cell_view(cell(tmp_path, cluster={"brokers": 5}))
    assert role_entries("kill", "one", view, None) == [{"kind": "kill", "target": "broker:1"}]
    assert len(role_entries("kill", "minority", view, None)) == 2
    assert len(role_entries("kill", "majority", view, None)) == 3
    assert role_entries("kill", "leader", view, None) == [
        {"kind": "kill", "target": "leader-of:chaos/0"}
    ]
    split = role_entries("split", "majority", view, None)
    assert split == [{"kind": "split", "target": "broker:1", "side": "majority"}]
    assert role_of(split[0]) == "majority"
    assert simpler_targets(split[0], view) == [{**split[0], "side": "minority"}]
    leader = {"kind": "kill", "target": "leader-of:chaos/2"}
    assert simpler_targets(leader, view) == [{"kind": "kill", "target": "broker:1"}]


# --- the generator --------------------------------------------------------------------------
def test_same_seed_same_schedules(tmp_path: Path) -> None:
    spec = cell(tmp_path)
    first = [draw(spec, 42, t).faults for t in range(10)]
    assert first == [draw(spec, 42, t).faults for t in range(10)]
    assert first != [draw(spec, 43, t).faults for t in range(10)]
    assert draw(spec, 42, 7).faults == first[7]  # a trial does not depend on the ones before


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    trial=st.integers(0, 1000),
    mode=st.sampled_from(["kraft", "zookeeper"]),
    brokers=st.integers(1, 5),
    controllers=st.sampled_from([0, 3]),
    max_faults=st.integers(1, 5),
    kinds=st.lists(
        st.sampled_from(
            [
                "kill",
                "stop",
                "pause",
                "isolate",
                "split",
                "cut-quorum",
                "cut-zookeeper",
                "cut-replication",
                "restart",
            ]
        ),
        min_size=1,
        max_size=4,
        unique=True,
    ),
)
def test_schedules_are_bounded_and_only_what_the_cluster_supports(
    seed: int,
    trial: int,
    mode: str,
    brokers: int,
    controllers: int,
    max_faults: int,
    kinds: list[str],
) -> None:
    data = spec_of(
        cluster={
            "mode": mode,
            "brokers": brokers,
            "controllers": controllers if mode == "kraft" else 0,
            "broker_config": {"offsets.topic.replication.factor": min(3, brokers)},
        },
        topic={"replication_factor": min(3, brokers)},
        explore={"kinds": kinds, "max_faults": max_faults, "duration_s": [2, 30]},
    )
    try:
        spec = expand_cells(parse_spec(data))[0].spec
    except SpecError as exc:  # the cluster supports none of these kinds: `validate` says so
        assert all(": explore." in line for line in exc.lines), exc.lines
        return
    schedule = draw(spec, seed, trial)
    faults = schedule.faults
    assert 1 <= len(faults) <= max_faults
    assert {f["kind"] for f in faults} <= set(kinds)
    assert schedule_problems(spec, faults) == []  # a runnable cell by the spec's own rules
    symbolic = ("controller", "leader-of:")
    for a, b in itertools.combinations(faults, 2):  # never two faults that may hit one node
        a_end, b_end = (f["at_s"] + f.get("duration_s", 0.0) for f in (a, b))
        overlap = a["at_s"] <= b_end and b["at_s"] <= a_end
        first = min((a, b), key=lambda f: f["at_s"])
        resolved_late = any(str(f["target"]).startswith(symbolic) for f in (a, b))
        down = ("kill", "stop")
        at_once = a["at_s"] == b["at_s"] and (a["kind"] in down or b["kind"] in down)
        clash = a["kind"] == b["kind"] or first["kind"] in down or at_once
        same_node = a["target"] == b["target"] or (resolved_late and clash)
        assert not (overlap and same_node), faults
    for f in faults:
        if mode == "zookeeper":
            assert f["kind"] not in ("cut-quorum",)
        else:
            assert f["kind"] != "cut-zookeeper"
        target = str(f["target"])
        if target.startswith("broker:"):
            assert 1 <= int(target.split(":")[1]) <= brokers
        assert 5 <= f["at_s"] <= 55  # inside the quiet periods of a 60 s workload
        if f["kind"] != "restart":
            assert 2 <= f["duration_s"] <= 30
        else:
            assert "duration_s" not in f


def test_coverage_of_what_was_tried(tmp_path: Path) -> None:
    spec = cell(tmp_path)
    tried = [t for n in range(20) for t in draw(spec, 1, n).tried()]
    table = coverage_table(tried)
    assert sum(int(r["trials"]) for r in table) == len(tried)
    assert {r["phase"] for r in table} <= {"early", "middle", "late"}
    assert phase_of(0, 60) == "early" and phase_of(30, 60) == "middle"
    assert phase_of(59, 60) == "late" and phase_of(80, 60) == "late"
