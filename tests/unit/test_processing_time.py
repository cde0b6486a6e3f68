"""`consumer.processing_ms`: from the spec, through the consumer sets, onto a member's command line."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.results.history import History
from harness.spec import GroupConsumerSpec, SpecError, load_spec
from harness.workload.consumer_sets import ConsumerSets
from harness.workload.group_consumers import GroupConsumers, GroupSettings, member_command
from harness.workload.group_member import parse_args

SPEC = """\
name: slow
producer: {records: 10}
consumer: {kind: group, members: 2, commit: before-process, processing_ms: 2500}
"""


def test_processing_ms_defaults_to_zero() -> None:
    assert GroupConsumerSpec().processing_ms == 0
    assert GroupSettings("b:9092", "t", "g").processing_ms == 0
    args = parse_args(["--bootstrap", "b", "--topic", "t", "--group", "g", *_rest()])
    assert args.processing_ms == 0


def _rest() -> list[str]:
    return ["--consumer", "group/m0", "--commit", "auto", "--dir", "/tmp/x"]


def test_negative_processing_ms_is_a_spec_error(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text(SPEC.replace("2500", "-1"))
    with pytest.raises(SpecError) as info:
        load_spec(path)
    assert any("consumer.processing_ms" in line for line in info.value.lines), info.value.lines


def test_spec_value_reaches_the_member_command_line(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text(SPEC)
    spec = load_spec(path)
    sets = ConsumerSets(spec, "b:9092", tmp_path / "cell", History(), max_s=60)
    group = sets.sets["group"]
    assert isinstance(group, GroupConsumers)
    assert (group.s.processing_ms, group.s.commit, group.s.members) == (2500, "before-process", 2)
    cmd = member_command(group.s, "group/m1", tmp_path)
    assert cmd[1:3] == ["-m", "harness.workload.group_member"]
    args = parse_args(cmd[3:])
    assert (args.processing_ms, args.commit, args.consumer, args.group) == (
        2500,
        "before-process",
        "group/m1",
        "chaos-group",
    )
    assert (args.dir, args.max_s, args.config) == (tmp_path, 60.0, "{}")


def test_member_rejects_a_negative_processing_time() -> None:
    with pytest.raises(SystemExit):
        parse_args(
            ["--bootstrap", "b", "--topic", "t", "--group", "g", "--processing-ms", "-5", *_rest()]
        )


def test_jitter_and_seed_reach_the_member_and_make_work_times_repeatable(tmp_path: Path) -> None:
    from harness.workload.group_member import Member

    path = tmp_path / "x.yaml"
    path.write_text(
        SPEC.replace("processing_ms: 2500", "processing_ms: 0, processing_jitter_ms: 900")
    )
    sets = ConsumerSets(load_spec(path), "b:9092", tmp_path / "cell", History(), 60, seed=7)
    group = sets.sets["group"]
    assert isinstance(group, GroupConsumers)
    args = parse_args(member_command(group.s, "group/m1", tmp_path)[3:])
    assert (args.processing_jitter_ms, args.seed) == (900, 7)

    def draws(consumer: str, seed: int) -> list[int]:
        argv = member_command(group.s, consumer, tmp_path)[3:]
        member = Member(parse_args([*argv, "--seed", str(seed)]))
        return [member.rng.randint(0, args.processing_jitter_ms) for _ in range(20)]

    assert draws("group/m1", 7) == draws("group/m1", 7)  # a re-run repeats the work times
    assert draws("group/m1", 7) != draws("group/m0", 7)  # members differ
    assert draws("group/m1", 7) != draws("group/m1", 8)  # seeds differ
    assert all(0 <= d <= 900 for d in draws("group/m1", 7)) and len(set(draws("group/m1", 7))) > 1


def test_default_jitter_is_none() -> None:
    assert GroupConsumerSpec().processing_jitter_ms == 0
    args = parse_args(["--bootstrap", "b", "--topic", "t", "--group", "g", *_rest()])
    assert (args.processing_jitter_ms, args.seed) == (0, 0)
