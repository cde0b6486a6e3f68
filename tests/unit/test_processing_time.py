"""`consumer.processing_ms`: from the spec, through the consumer sets, into a member process
(its own spec model crosses the process boundary, harness.workload.member_process)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.nodes.topology import DEFAULT_VERSION
from harness.results.history import History
from harness.spec import GroupConsumerSpec, SpecError, load_spec
from harness.workload.consumer_sets import ConsumerSets
from harness.workload.group.member import GroupMember
from harness.workload.group.supervisor import GroupSupervisor
from harness.workload.member_process import parse_member_args
from harness.workload.runtime import Runtime

SPEC = """\
name: slow
producer: {records: 10}
consumer: {kind: group, members: 2, commit: before-process, processing_ms: 2500}
"""


def test_processing_ms_defaults_to_zero() -> None:
    assert GroupConsumerSpec().processing_ms == 0


def test_negative_processing_ms_is_a_spec_error(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text(SPEC.replace("2500", "-1"))
    with pytest.raises(SpecError) as info:
        load_spec(path)
    assert any("consumer.processing_ms" in line for line in info.value.lines), info.value.lines


def _group(tmp_path: Path, spec_text: str, seed: int = 0) -> GroupSupervisor:
    path = tmp_path / "x.yaml"
    path.write_text(spec_text)
    sets = ConsumerSets(load_spec(path), "b:9092", tmp_path / "cell", History(), 60, seed=seed)
    group = sets.sets["group"]
    assert isinstance(group, GroupSupervisor)
    return group


def test_spec_value_reaches_the_member_command_line(tmp_path: Path) -> None:
    group = _group(tmp_path, SPEC)
    assert group.names == ["group/m0", "group/m1"]
    cmd = group.command("group/m1")
    assert cmd[1:3] == ["-m", "harness.workload.group.member"]
    args = parse_member_args(GroupConsumerSpec, cmd[3:], None)
    assert args.spec == load_spec(tmp_path / "x.yaml").consumer  # the spec's own model
    assert (args.spec.processing_ms, args.spec.commit, args.spec.group) == (
        2500,
        "before-process",
        "chaos-group",
    )
    assert args.name == "group/m1"
    assert args.runtime == Runtime(
        "b:9092", "chaos", tmp_path / "cell" / "consumers", 60.0, 0, DEFAULT_VERSION
    )


def test_a_member_refuses_a_spec_its_model_refuses() -> None:
    runtime = Runtime("b", "t", Path("/tmp/x"), 1.0, 0).to_json()
    with pytest.raises(ValueError, match="processing_ms"):
        parse_member_args(
            GroupConsumerSpec,
            ["--spec", '{"processing_ms": -5}', "--runtime", runtime, "--consumer", "group/m0"],
            None,
        )


def test_jitter_and_seed_reach_the_member_and_make_work_times_repeatable(tmp_path: Path) -> None:
    text = SPEC.replace("processing_ms: 2500", "processing_ms: 0, processing_jitter_ms: 900")
    group = _group(tmp_path, text, seed=7)
    args = parse_member_args(GroupConsumerSpec, group.command("group/m1")[3:], None)
    assert (args.spec.processing_jitter_ms, args.runtime.seed) == (900, 7)

    def draws(consumer: str, seed: int) -> list[int]:
        a = parse_member_args(GroupConsumerSpec, group.command(consumer)[3:], None)
        runtime = Runtime(**{**vars(a.runtime), "seed": seed})
        member = GroupMember(a.spec, runtime, a.name, commit=a.spec.commit)
        return [member.rng.randint(0, a.spec.processing_jitter_ms) for _ in range(20)]

    assert draws("group/m1", 7) == draws("group/m1", 7)  # a re-run repeats the work times
    assert draws("group/m1", 7) != draws("group/m0", 7)  # members differ
    assert draws("group/m1", 7) != draws("group/m1", 8)  # seeds differ
    assert all(0 <= d <= 900 for d in draws("group/m1", 7)) and len(set(draws("group/m1", 7))) > 1


def test_default_jitter_is_none() -> None:
    assert GroupConsumerSpec().processing_jitter_ms == 0
