"""Experiment files: defaults, every error form (file, key path, expectation), round trip."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from harness import ConfigError
from harness.spec import (
    Bound,
    GroupConsumerSpec,
    SparkConsumerSpec,
    SpecError,
    choose_seed,
    expand_cells,
    load_spec,
    parse_bound,
    spec_to_yaml,
)

SPECS = Path(__file__).parent / "specs"
EXPERIMENTS = Path(__file__).parents[2] / "experiments"


def write(tmp_path: Path, text: str, name: str = "x.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def errors_of(tmp_path: Path, text: str) -> list[str]:
    path = write(tmp_path, text)
    with pytest.raises(SpecError) as info:
        load_spec(path)
    assert all(line.startswith(str(path)) for line in info.value.lines)
    return [line.removeprefix(f"{path}: ") for line in info.value.lines]


def test_minimal_spec_gets_every_default() -> None:
    spec = load_spec(SPECS / "minimal.yaml")
    assert spec.name == "minimal" and spec.seed is None
    c = spec.cluster
    assert (c.mode, c.version, c.brokers, c.controllers, c.broker_config) == (
        "kraft",
        "3.9.2",
        3,
        0,
        {},
    )
    assert (spec.topic.name, spec.topic.partitions, spec.topic.replication_factor) == (
        "chaos",
        6,
        3,
    )
    p = spec.producer
    assert (p.acks, p.enable_idempotence, p.idempotence) == ("all", None, True)
    assert (p.records, p.duration_s, p.rate, p.record_size) == (100, None, 500, 100)
    assert p.planned_duration_s == pytest.approx(0.2)
    [(name, consumer)] = spec.consumer_sets()
    assert name == "group"
    assert consumer == GroupConsumerSpec(group="chaos-group", members=1, commit="after-process")
    assert spec.faults == [] and spec.expect == {} and spec.matrix is None
    assert (spec.recovery.timeout_s, spec.recovery.drain_timeout_s) == (120, 120)


def test_full_spec() -> None:
    spec = load_spec(SPECS / "full.yaml")
    assert spec.seed == 42 and spec.producer.acks == "all"
    assert spec.producer.planned_duration_s == 5  # 1000 records at 200/s before 20 s
    names = [name for name, _ in spec.consumer_sets()]
    assert names == ["group", "group2", "spark"]
    spark = spec.consumer_sets()[2][1]
    assert isinstance(spark, SparkConsumerSpec)
    assert (spark.trigger_ms, spark.max_offsets_per_trigger, spark.fail_on_data_loss) == (
        500,
        100,
        False,
    )
    assert spec.faults[0].kind == "isolate"  # 'partition' is its alias
    assert spec.expect["lost"] == Bound("==", 0)
    assert spec.expect["stall_s.spark"] == Bound("<", 10.5)
    assert spec.expect["resumption"] == Bound("exact")
    assert spec.default_group() == "g1"


@pytest.mark.parametrize(
    ("raw", "acks", "idempotence"),
    [(0, "0", False), ("0", "0", False), (1, "1", False), ("all", "all", True), (-1, "all", True)],
)
def test_acks_spellings(tmp_path: Path, raw: object, acks: str, idempotence: bool) -> None:
    spec = load_spec(
        write(tmp_path, yaml.safe_dump({"name": "a", "producer": {"acks": raw, "records": 1}}))
    )
    assert (spec.producer.acks, spec.producer.idempotence) == (acks, idempotence)


def test_idempotence_off_with_acks_all_is_allowed(tmp_path: Path) -> None:
    spec = load_spec(
        write(tmp_path, "name: a\nproducer: {records: 1, enable_idempotence: false}\n")
    )
    assert spec.producer.idempotence is False


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("name: a b\nproducer: {records: 1}\n", "name: expected letters, digits"),
        ("producer: {records: 1}\n", "name: required key missing"),
        (
            "name: a\nproducer: {records: 1}\nbogus: 1\n",
            "bogus: unknown key; allowed: name, description, seed",
        ),
        (
            "name: a\nproducer: {records: 1, acks: 2}\n",
            "producer.acks: expected one of 0, 1, all (got 2)",
        ),
        (
            "name: a\nproducer: {records: 1, acks: 0, enable_idempotence: true}\n",
            "producer.enable_idempotence: true needs acks=all",
        ),
        ("name: a\nproducer: {rate: 5}\n", "producer: expected records, duration_s or both"),
        ("name: a\nproducer: {records: 1, rate: 0}\n", "producer.rate: expected > 0 (got 0)"),
        (
            "name: a\nproducer: {records: 1, record_size: 8}\n",
            "producer.record_size: expected >= 24 (got 8)",
        ),
        (
            "name: a\nproducer: {records: 1, config: {acks: 1}}\n",
            "producer.config.acks: set through producer.acks instead",
        ),
        ("name: a\nproducer: {records: x}\n", "producer.records: expected an integer (got 'x')"),
        (
            "name: a\nproducer: {records: 1}\ncluster: {mode: kraftt}\n",
            "cluster.mode: expected one of kraft, zookeeper",
        ),
        (
            "name: a\nproducer: {records: 1}\ncluster: {brokers: 6}\n",
            "cluster.brokers: expected <= 5 (got 6)",
        ),
        (
            "name: a\nproducer: {records: 1}\ncluster: {version: '3.9'}\n",
            "cluster.version: expected the form X.Y.Z",
        ),
        (
            "name: a\nproducer: {records: 1}\ncluster: {mode: zookeeper, version: 4.0.0}\n",
            "cluster.version: expected a 3.x version in zookeeper mode",
        ),
        (
            "name: a\nproducer: {records: 1}\ncluster: {mode: zookeeper, controllers: 1}\n",
            "cluster.controllers: expected 0 in zookeeper mode (got 1)",
        ),
        (
            "name: a\nproducer: {records: 1}\ncluster: {broker_config: {listeners: x}}\n",
            "cluster.broker_config.listeners: the harness sets this",
        ),
        (
            "name: a\nproducer: {records: 1}\ncluster: {broker_config: {a: [1]}}\n",
            "cluster.broker_config.a",
        ),
        (
            "name: a\nproducer: {records: 1}\ntopic: {replication_factor: 4}\n",
            "topic.replication_factor: expected <= cluster.brokers (3) (got 4)",
        ),
        (
            "name: a\nproducer: {records: 1}\ncluster: {brokers: 1}\ntopic: {replication_factor: 1}\n"
            "consumer: {kind: group}\n",
            "cluster.broker_config.offsets.topic.replication.factor: expected <= cluster.brokers (1)"
            " (Kafka's default 3): a consumer group needs __consumer_offsets",
        ),
        (
            "name: a\nproducer: {records: 1}\ncluster: {brokers: 2, broker_config: "
            "{offsets.topic.replication.factor: 3}}\ntopic: {replication_factor: 1}\n",
            "cluster.broker_config.offsets.topic.replication.factor: expected <= cluster.brokers (2)"
            " (got 3)",
        ),
        (
            "name: a\nproducer: {records: 1}\nconsumer: {kind: flink}\n",
            "consumer: expected kind group or spark or share (got 'flink')",
        ),
        (
            "name: a\nproducer: {records: 1}\nconsumer: {kind: group, trigger_ms: 5}\n",
            "consumer.trigger_ms: unknown key; allowed: kind, client, group, members, commit, processing_ms, processing_jitter_ms, config, client_config",
        ),
        (
            "name: a\nproducer: {records: 1}\nconsumer: {commit: sometimes}\n",
            "consumer.commit: expected one of auto, after-process, before-process",
        ),
        (
            "name: a\nproducer: {records: 1}\nconsumers: [{kind: spark, starting_offsets: now}]\n",
            "consumers[0].starting_offsets: expected one of earliest, latest",
        ),
        (
            "name: a\nproducer: {records: 1}\nconsumer: {}\nconsumers: [{}]\n",
            "consumers: give either consumer or consumers, not both",
        ),
        (
            "name: a\nproducer: {records: 1}\nconsumers: [{}, {}]\n",
            "consumers[1].group: group 'chaos-group' is already used by set group",
        ),
        (
            "name: a\nproducer: {records: 1}\nconsumer: {config: {group.id: x}}\n",
            "consumer.config.group.id: set through consumer.group instead",
        ),
        (
            "name: a\nproducer: {records: 1}\nfaults: [{at_s: 1, kind: explode}]\n",
            "faults[0].kind: expected one of kill, stop, restart, pause, isolate, partition, "
            "cut-clients, cut-replication, cut-quorum, cut-zookeeper, split, lossy, latency, bandwidth, reset, disk-full, power-loss, corrupt, reassign, "
            "add-partitions, add-broker, decommission, add-controller, remove-controller, rolling-restart, upgrade, migrate-to-kraft, clock-skew, consumer-crash, pipeline-crash, producer-crash, producer-pause (got 'explode')",
        ),
        (
            "name: a\nproducer: {records: 1}\nfaults: [{kind: kill}]\n",
            "faults[0].at_s: required key missing",
        ),
        (
            "name: a\nproducer: {records: 1}\nfaults: [{at_s: -1, kind: kill}]\n",
            "faults[0].at_s: expected >= 0 (got -1)",
        ),
        (
            "name: a\nproducer: {records: 1}\nfaults: [{at_s: 1, kind: kill, duration_s: 0}]\n",
            "faults[0].duration_s: expected > 0 (got 0)",
        ),
        (
            "name: a\nproducer: {records: 1}\nfaults: [{at_s: 1, kind: restart, duration_s: 3}]\n",
            "faults[0].duration_s: restart takes no duration",
        ),
        (
            "name: a\nproducer: {records: 1}\nfaults: [{at_s: 1, kind: kill}, {at_s: 1, kind: kill, target: 'broker:4'}]\n",
            "faults[1].target: no node 4; ids: 1, 2, 3 (got 'broker:4')",
        ),
        (
            "name: a\nproducer: {records: 1}\nfaults: [{at_s: 1, kind: kill, target: 'leader-of:other/0'}]\n",
            "faults[0].target: expected the spec's topic 'chaos' (got 'other')",
        ),
        (
            "name: a\nproducer: {records: 1}\nfaults: [{at_s: 1, kind: kill, target: 'leader-of:chaos/6'}]\n",
            "faults[0].target: expected a partition below topic.partitions (6) (got 6)",
        ),
        (
            "name: a\nproducer: {records: 1}\nfaults: [{at_s: 1, kind: kill, target: zookeeper}]\n",
            "faults[0].target: target zookeeper exists only in mode zookeeper",
        ),
        (
            "name: a\nproducer: {records: 1}\nfaults: [{at_s: 1, kind: kill, target: leader}]\n",
            "faults[0].target: expected broker:<id> | controller",
        ),
        (
            "name: a\nproducer: {records: 1}\nfaults: [{at_s: 1, kind: kill, target: 'consumer:group/0'}]\n",
            "faults[0].target: 'consumer:group/0' is a consumer target",
        ),
        (
            "name: a\nproducer: {records: 1}\nfaults: [{at_s: 1, kind: consumer-crash, target: 'broker:1'}]\n",
            "faults[0].target: expected consumer:<set>/<member index> or random",
        ),
        (
            "name: a\nproducer: {records: 1}\nfaults: [{at_s: 1, kind: consumer-crash, target: 'consumer:spark/0'}]\n",
            "faults[0].target: no consumer set named 'spark'; sets: group",
        ),
        (
            "name: a\nproducer: {records: 1}\nconsumer: {members: 2}\nfaults: [{at_s: 1, kind: consumer-crash, target: 'consumer:group/2'}]\n",
            "faults[0].target: set 'group' has 2 member(s), indexes 0..1 (got 2)",
        ),
        (
            "name: a\nproducer: {records: 1}\nconsumer: {kind: spark}\nfaults: [{at_s: 1, kind: kill, target: coordinator-of}]\n",
            "faults[0].target: plain coordinator-of needs a group consumer set",
        ),
        (
            "name: a\nproducer: {records: 1}\nexpect: {lots: 0}\n",
            "expect.lots: unknown metric; allowed: attempted, acked, lost",
        ),
        (
            "name: a\nproducer: {records: 1}\nexpect: {lost: 'about 3'}\n",
            "expect.lost: expected a number, 'exact', '<op> <number>' or '<op> [factor *] <spec path>",
        ),
        (
            "name: a\nproducer: {records: 1}\nexpect: {lost: exact}\n",
            "expect.lost: 'exact' applies only to resumption",
        ),
        (
            "name: a\nproducer: {records: 1}\nexpect: {resumption: 1}\n",
            "expect.resumption: expected 'exact' (got '== 1')",
        ),
        (
            "name: a\nproducer: {records: 1}\nexpect: {stall_s.spark: '< 3'}\n",
            "expect.stall_s.spark: no consumer set named 'spark'; sets: group",
        ),
        (
            "name: a\nproducer: {records: 1}\nconsumer: {kind: spark}\n"
            "expect: {data_loss_stop.q: 1}\n",
            "expect.data_loss_stop.q: no consumer set named 'q'; sets: spark",
        ),
        (
            "name: a\ncluster: {mode: zookeeper}\nproducer: {records: 1}\n"
            "faults: [{at_s: 1, kind: cut-replication, target: zookeeper}]\n",
            "faults[0].target: cut-replication acts on a broker; ZooKeeper cannot be its target",
        ),
        (
            "name: a\nproducer: {records: 1}\nrecovery: {timeout_s: 0}\n",
            "recovery.timeout_s: expected > 0 (got 0)",
        ),
        (
            "name: a\nproducer: {records: true}\n",
            "producer.records: expected an integer (got True)",
        ),
        ("name: a\nseed: '7'\nproducer: {records: 1}\n", "seed: expected an integer (got '7')"),
        (
            "name: a\nproducer: {records: 1}\nmatrix: {producer.acks: all}\n",
            "matrix.producer.acks: expected a list (got 'all')",
        ),
        (
            "name: a\nproducer: {records: 1}\nmatrix: {expect: [{when: {}, expect: {}, x: 1}]}\n",
            "matrix.expect[0].x: unknown key; allowed: when, expect",
        ),
        ("- a\n- b\n", "expected a mapping of experiment keys (got list)"),
        ("", "expected a mapping of experiment keys (got an empty file)"),
    ],
)
def test_error_names_file_path_and_expectation(tmp_path: Path, text: str, expected: str) -> None:
    lines = errors_of(tmp_path, text)
    assert any(line.startswith(expected) for line in lines), lines


def test_all_problems_are_reported_at_once(tmp_path: Path) -> None:
    lines = errors_of(
        tmp_path,
        "name: a\nproducer: {records: 0, acks: 3}\nfaults: [{at_s: 1, kind: nope}]\n",
    )
    assert [line.split(":")[0] for line in lines] == [
        "producer.acks",
        "producer.records",
        "faults[0].kind",
    ]


def test_spec_error_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        load_spec(write(tmp_path, "name: [\n"))


def test_yaml_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, "name: a\nproducer:\n  records: 1\n  rate: [1, 2\n")
    with pytest.raises(SpecError, match=rf"^{path}:5: YAML syntax error"):
        load_spec(path)


def test_duplicate_key_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, "name: a\nproducer: {records: 1}\nname: b\n")
    with pytest.raises(SpecError, match=rf"^{path}:3: YAML syntax error: duplicate key 'name'"):
        load_spec(path)


def test_missing_file_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match=rf"^{tmp_path}/nope.yaml: no such experiment file"):
        load_spec(tmp_path / "nope.yaml")


def test_dedicated_controller_ids_are_targets(tmp_path: Path) -> None:
    spec = load_spec(
        write(
            tmp_path,
            "name: a\nproducer: {records: 1}\ncluster: {controllers: 3}\n"
            "faults: [{at_s: 1, kind: kill, target: 'broker:102'}]\n",
        )
    )
    assert spec.faults[0].target == "broker:102"


@pytest.mark.parametrize(
    ("raw", "bound"),
    [
        (0, Bound("==", 0)),
        (2.5, Bound("==", 2.5)),
        ("== 0", Bound("==", 0)),
        ("<30", Bound("<", 30)),
        (" >= 1e3 ", Bound(">=", 1000)),
        ("!= 4", Bound("!=", 4)),
        ("7", Bound("==", 7)),
        ("exact", Bound("exact")),
        (None, None),
    ],
)
def test_bound_parsing(raw: object, bound: Bound | None) -> None:
    assert parse_bound(raw) == bound


@pytest.mark.parametrize("raw", [True, "<", "~ 3", "< 2 *", "x", [1]])
def test_bad_bounds(raw: object) -> None:
    with pytest.raises(ValueError, match="expected"):
        parse_bound(raw)


def test_bound_text() -> None:
    assert [str(Bound("<", 30)), str(Bound(">=", 0.25)), str(Bound("exact"))] == [
        "< 30",
        ">= 0.25",
        "exact",
    ]


def test_choose_seed_is_in_range() -> None:
    seeds = {choose_seed() for _ in range(20)}
    assert all(0 <= s <= 2**31 - 1 for s in seeds) and len(seeds) > 1


@pytest.mark.parametrize("source", [SPECS / "minimal.yaml", SPECS / "full.yaml"])
def test_spec_to_yaml_round_trip(tmp_path: Path, source: Path) -> None:
    spec = load_spec(source)
    text = spec_to_yaml(spec, 1234)
    again = load_spec(write(tmp_path, text, "expanded.yaml"))
    assert again.seed == 1234
    assert again.model_copy(update={"seed": spec.seed}) == spec
    assert [(c.id, c.spec.model_dump(exclude={"seed"})) for c in expand_cells(again)] == [
        (c.id, c.spec.model_dump(exclude={"seed"})) for c in expand_cells(spec)
    ]


# Suite files (experiments/suites/, harness.suite) are not experiments.
EXPERIMENT_FILES = sorted(
    p for p in EXPERIMENTS.rglob("*.yaml") if "suites" not in p.relative_to(EXPERIMENTS).parts
)


def test_shipped_experiments_exist() -> None:
    names = {p.relative_to(EXPERIMENTS).as_posix() for p in EXPERIMENT_FILES}
    assert {
        "default-matrix.yaml",
        "incidents/consumer-offsets-rf1.yaml",
        "incidents/acks1-leader-loss.yaml",
    } <= names


@pytest.mark.parametrize("path", EXPERIMENT_FILES, ids=lambda p: p.name)
def test_every_shipped_experiment_loads_and_round_trips(tmp_path: Path, path: Path) -> None:
    spec = load_spec(path)
    cells = expand_cells(spec, str(path))
    assert cells
    again = load_spec(write(tmp_path, spec_to_yaml(spec, 7), "expanded.yaml"))
    assert [(c.id, c.spec.expect) for c in expand_cells(again)] == [
        (c.id, c.spec.expect) for c in cells
    ]
