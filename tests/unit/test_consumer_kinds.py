"""The consumer kinds' table (harness.workload.consumer_kinds): every kind the spec takes has
a supervisor and a member process laid out by one rule, and a member gets its set's own
spec model, the cell's Runtime and its name, nothing copied field by field."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from harness.results.history import History
from harness.spec import load_spec
from harness.spec.consumers import (
    CONSUMER_KIND_ERROR,
    CONSUMER_TAGS,
    GroupConsumerSpec,
    PipelineSpec,
    ShareConsumerSpec,
    SparkConsumerSpec,
)
from harness.workload.consumer_kinds import KINDS, declared_sets
from harness.workload.consumer_sets import ConsumerSets
from harness.workload.group.supervisor import GroupSupervisor
from harness.workload.member_process import member_index, member_name, parse_member_args
from harness.workload.pipeline.supervisor import PipelineSupervisor
from harness.workload.runtime import Runtime
from harness.workload.spark.member import SparkMember
from harness.workload.spark.supervisor import SparkSupervisor

ROOT = Path(__file__).resolve().parents[2]
LIGHT = "light-processes"


def _member_module(kind: str) -> str:
    module = getattr(KINDS[kind].supervisor, "member_module", None)
    assert isinstance(module, str)
    return module


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_each_kind_is_laid_out_by_one_rule(kind: str) -> None:
    """harness/workload/<kind>/member.py is the child, supervisor.py runs the set."""
    assert _member_module(kind) == f"harness.workload.{kind}.member"
    assert (ROOT / "harness" / "workload" / kind / "member.py").is_file()
    supervisor = KINDS[kind].supervisor
    assert getattr(supervisor, "__module__", None) == f"harness.workload.{kind}.supervisor"


def test_every_member_process_is_under_the_light_processes_contract() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    (light,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["id"] == LIGHT]
    assert {_member_module(k) for k in KINDS} <= set(light["source_modules"])


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_member_process_loads_no_fault_cluster_or_docker_code(kind: str) -> None:
    """At run time too: importing harness.spec.consumers must not run the whole spec
    package (whose fault vocabulary imports harness.faults)."""
    code = (
        f"import sys, {_member_module(kind)}; "
        "print('\\n'.join(m for m in sys.modules if m.split('.')[0] in "
        "('docker', 'testcontainers') or m.startswith(('harness.faults', 'harness.cluster', "
        "'harness.nodes', 'harness.spec.models'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == []


def test_the_set_kinds_are_the_spec_union_and_the_pipeline_a_kind_of_its_own() -> None:
    assert CONSUMER_TAGS == ("group", "spark", "share")
    assert CONSUMER_KIND_ERROR == "expected kind group or spark or share"
    assert (KINDS["group"].spec, KINDS["spark"].spec) == (GroupConsumerSpec, SparkConsumerSpec)
    assert KINDS["share"].spec is ShareConsumerSpec
    assert KINDS["pipeline"].spec is PipelineSpec


def test_a_kind_refuses_another_kinds_spec(tmp_path: Path) -> None:
    runtime = Runtime("b", "t", tmp_path, 1.0, 0)
    with pytest.raises(TypeError, match="SparkConsumerSpec"):
        KINDS["spark"].supervise("spark", GroupConsumerSpec(), runtime, History())


def test_a_spec_declares_its_sets_in_order_the_pipeline_last(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text(
        "name: t\nproducer: {records: 10}\n"
        "consumers: [{kind: group, members: 2}, {kind: spark}, {kind: group, group: g2}]\n"
        "pipeline: {members: 3}\n"
    )
    spec = load_spec(path)
    declared = [(name, type(model).__name__) for name, _, model in declared_sets(spec)]
    assert declared == [
        ("group", "GroupConsumerSpec"),
        ("spark", "SparkConsumerSpec"),
        ("group2", "GroupConsumerSpec"),
        ("pipeline", "PipelineSpec"),
    ]
    sets = ConsumerSets(spec, "b:9092", tmp_path / "cell", History(), 30, seed=5)
    assert [type(s) for s in sets.sets.values()] == [
        GroupSupervisor,
        SparkSupervisor,
        GroupSupervisor,
        PipelineSupervisor,
    ]
    assert sets.sets["pipeline"].names == ["pipeline/m0", "pipeline/m1", "pipeline/m2"]
    assert sets.sets["spark"].names == ["spark/q"]
    assert sets.runtime == Runtime(
        "b:9092", "chaos", tmp_path / "cell" / "consumers", 30, 5, spec.cluster.version
    )


def test_member_names_and_indexes() -> None:
    assert member_name("group2", 3) == "group2/m3"
    assert member_index("group2/m3") == 3 and member_index("pipeline/m12") == 12


def test_the_spark_member_takes_its_source_options_from_its_spec(tmp_path: Path) -> None:
    spec = SparkConsumerSpec(
        config={"kafka.isolation.level": "read_committed", "minPartitions": 4},
        max_offsets_per_trigger=50,
        fail_on_data_loss=False,
        starting_offsets="latest",
        trigger_ms=250,
    )
    cell = tmp_path / "cell"
    runtime = Runtime("b:9092", "chaos", cell / "consumers", 30, 0)
    supervisor = SparkSupervisor("spark2", spec, runtime, History())
    cmd = supervisor._command()
    assert cmd[1:3] == ["-m", "harness.workload.spark.member"]
    args = parse_member_args(SparkConsumerSpec, cmd[3:], None)
    member = SparkMember(args.spec, args.runtime, args.name)
    assert member.options() == {
        "kafka.isolation.level": "read_committed",
        "minPartitions": "4",
        "kafka.bootstrap.servers": "b:9092",
        "subscribe": "chaos",
        "startingOffsets": "latest",
        "failOnDataLoss": "false",
        "maxOffsetsPerTrigger": "50",
    }
    # The query's folder, as the supervisor reads it: <cell>/spark/<set>/
    assert member.query == supervisor.query
    assert member.sink == cell / "spark" / "spark2" / "sink"
    assert "maxOffsetsPerTrigger" not in SparkMember(SparkConsumerSpec(), runtime, "s/q").options()
