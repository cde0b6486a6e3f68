"""The pipeline without Kafka: its spec rules, its faults' targets, the member's command line
and how an output record carries the input record it came from."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.nemesis.schedule import plan_faults
from harness.results.history import History
from harness.spec.consumers import PipelineSpec
from harness.spec.matrix import expand_cells
from harness.workload.member_process import parse_member_args
from harness.workload.pipeline.member import PipelineMember
from harness.workload.pipeline.supervisor import PipelineSupervisor
from harness.workload.records import decode_origin, decode_seq, encode_output_value, encode_value
from harness.workload.runtime import Runtime
from tests.unit.test_producer_process import load, problems

ROOT = Path(__file__).resolve().parents[2]

BASE = """
name: t
producer: {acks: all, rate: 10, duration_s: 5}
consumer: {kind: group}
pipeline: {guarantee: exactly-once, members: 3}
"""


def test_an_output_record_carries_its_seq_and_where_it_was_read() -> None:
    value = encode_output_value(42, 2, 1234, 100)
    assert len(value) == 100
    assert decode_seq(value) == 42  # every reader decodes it as an input record
    assert decode_origin(value) == (2, 1234)
    assert decode_origin(encode_value(42, 100)) is None  # an input record has no origin
    assert decode_origin(b"garbage") is None


def test_defaults_and_member_transactional_ids() -> None:
    spec = load(BASE)
    p = spec.pipeline
    assert p is not None
    assert (p.kind, p.output, p.group, p.timeout_ms) == (
        "transform",
        "chaos-out",
        "chaos-pipeline",
        60000,
    )
    assert [p.member_transactional_id(i) for i in range(p.members)] == [
        "chaos-pipeline-0",
        "chaos-pipeline-1",
        "chaos-pipeline-2",
    ]
    assert problems(BASE) == []


def test_pipeline_faults_resolve_to_pipeline_members() -> None:
    spec = load(
        BASE
        + "faults:\n"
        + "  - {at_s: 1, kind: pipeline-crash, duration_s: 1}\n"
        + "  - {at_s: 2, kind: pipeline-crash, target: 'consumer:pipeline/2'}\n"
        + "  - {at_s: 3, kind: consumer-crash, target: 'consumer:pipeline/1'}\n"
        + "  - {at_s: 4, kind: kill, target: 'txn-coordinator-of:chaos-pipeline-2'}\n"
        + "  - {at_s: 5, kind: kill, target: 'coordinator-of:chaos-pipeline'}\n"
    )
    for seed in range(5):
        plan = plan_faults(expand_cells(spec)[0], seed=seed)
        first = plan[0].target
        assert first.startswith("consumer:pipeline/") and int(first.rsplit("/", 1)[1]) < 3
        assert [f.target for f in plan[1:]] == [
            "consumer:pipeline/2",
            "consumer:pipeline/1",
            "txn-coordinator-of:chaos-pipeline-2",
            "coordinator-of:chaos-pipeline",
        ]


def test_at_least_once_members_name_the_broker_that_would_coordinate_them() -> None:
    text = BASE.replace("exactly-once", "at-least-once")
    assert (
        problems(
            text
            + "faults: [{at_s: 1, kind: kill, target: 'txn-coordinator-of:chaos-pipeline-0'}]\n"
        )
        == []
    )


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ("pipeline: {input: other}", "pipeline.input: expected the spec's topic 'chaos'"),
        ("pipeline: {output: chaos}", "pipeline.output: expected a topic other than the input"),
        ("pipeline: {group: chaos-group}", "group 'chaos-group' is a consumer set's"),
        (
            "pipeline: {config: {group.id: x}}",
            "pipeline.config.group.id: set through pipeline.group",
        ),
        (
            "pipeline: {producer_config: {transactional.id: x}}",
            "set through pipeline.transactional_id",
        ),
        ("pipeline: {producer_config: {acks: 1}}", "the pipeline (always all)"),
        ("pipeline: {guarantee: maybe-once}", "exactly-once"),
        ("pipeline: {members: 0}", "pipeline.members: expected >= 1 (got 0)"),
        ("pipeline: {kind: filter}", "transform"),
        (
            "pipeline: {}\nfaults: [{at_s: 1, kind: pipeline-crash, target: 'consumer:pipeline/2'}]",
            "set 'pipeline' has 2 member(s)",
        ),
        (
            "pipeline: {}\nfaults: [{at_s: 1, kind: pipeline-crash, target: 'consumer:group/0'}]",
            "expected consumer:pipeline/<member index> or random",
        ),
        (
            "faults: [{at_s: 1, kind: pipeline-crash}]",
            "pipeline-crash needs a pipeline",
        ),
        (
            "pipeline: {}\nfaults: [{at_s: 1, kind: kill, target: 'txn-coordinator-of:chaos-pipeline-5'}]",
            "expected one of the transactional ids chaos-pipeline-0, chaos-pipeline-1",
        ),
        ("pipeline: {}\nexpect: {stall_s.pipeline: '< 5', stall_s.nope: '< 5'}", "nope"),
    ],
)
def test_pipeline_spec_mistakes_are_named(change: str, expected: str) -> None:
    head = "name: t\nproducer: {acks: all, rate: 10, duration_s: 5}\nconsumer: {kind: group}\n"
    found = problems(head + change + "\n")
    assert any(expected in line for line in found), found
    if "stall_s.nope" in change:  # the pipeline's set is a set the expectations may name
        assert not any("stall_s.pipeline" in line for line in found), found


def test_a_member_runs_the_pipeline_module_with_its_own_transactional_id(tmp_path: Path) -> None:
    spec = PipelineSpec(
        group="chaos-pipeline",
        members=2,
        output="out",
        guarantee="at-least-once",
        transactional_id="tid",
        timeout_ms=9000,
        producer_config={"linger.ms": 7},
    )
    runtime = Runtime("127.0.0.1:1", "chaos", tmp_path, max_s=60, seed=3)
    members = PipelineSupervisor("pipeline", spec, runtime, History())
    assert members.names == ["pipeline/m0", "pipeline/m1"]
    cmd = members.command("pipeline/m1")
    assert cmd[1:3] == ["-m", "harness.workload.pipeline.member"]
    args = parse_member_args(PipelineSpec, cmd[3:], None)
    assert (args.spec, args.runtime, args.name) == (spec, runtime, "pipeline/m1")
    # What the process makes of them (no producer started: at-least-once needs no broker).
    member = PipelineMember(args.spec, args.runtime, args.name)
    assert (member.transactional_id, member.commit_mode) == ("tid-1", "after-process")
    conf = member.producer_config()
    assert (conf["linger.ms"], conf["client.id"], conf["bootstrap.servers"]) == (
        7,
        "pipeline/m1/out",
        "127.0.0.1:1",
    )
    assert member.config()["group.id"] == "chaos-pipeline"
    assert member.config()["enable.auto.commit"] is False
    member.exactly_once = True
    exactly_once = member.producer_config()
    assert (exactly_once["transactional.id"], exactly_once["transaction.timeout.ms"]) == (
        "tid-1",
        9000,
    )
