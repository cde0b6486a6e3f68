"""The pytest plugin without Docker: marker and builder options, fault dicts checked like a
spec's faults, faults on a fake cluster healed at teardown, and the plugin as pytest loads it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from harness.errors import ConfigError, FaultError
from harness.pytest_plugin.builder import ClusterBuilder
from harness.pytest_plugin.chaos import Chaos
from harness.pytest_plugin.fault_dict import ClusterFacts, FaultDictError, parse_fault
from harness.pytest_plugin.options import ClusterOptions, from_markers, parse
from tests.unit.fakes import FakeCluster

REPO = Path(__file__).resolve().parents[2]
KRAFT = ClusterFacts(mode="kraft", brokers=(1, 2, 3))


# --- marker and builder options ------------------------------------------------------------
def test_marker_defaults_are_the_clusters() -> None:
    assert from_markers([], "m") == ClusterOptions(mode="kraft", brokers=3, shared=False)


def test_closest_marker_wins_per_key() -> None:
    test_level = {"brokers": 1, "broker_config": {"min.insync.replicas": 1}}
    module_level = {"mode": "zookeeper", "brokers": 3, "version": "3.9.2", "shared": True}
    options = from_markers([test_level, module_level], "m")
    assert (options.mode, options.brokers, options.version, options.shared) == (
        "zookeeper",
        1,
        "3.9.2",
        True,
    )
    assert options.cluster_kwargs()["broker_config"] == {"min.insync.replicas": 1}


@pytest.mark.parametrize(
    ("raw", "line"),
    [
        ({"broker": 3}, "m: broker: unknown key; allowed: mode, brokers, version, broker_config"),
        ({"brokers": "3"}, "m: brokers: expected an integer (got '3')"),
        ({"brokers": 6}, "m: brokers: expected <= 5 (got 6)"),
        ({"mode": "raft"}, "m: mode: expected one of kraft, zookeeper (got 'raft')"),
        ({"version": "4"}, "m: version: expected the form X.Y.Z"),
        ({"mode": "zookeeper", "version": "4.3.1"}, "m: mode: Kafka 4.3.1 has no ZooKeeper mode"),
        ({"mode": "zookeeper", "controllers": 1}, "m: controllers: dedicated controllers exist"),
        ({"broker_config": {"listeners": "x"}}, "m: broker_config: broker_config sets listeners"),
        ({"shared": "yes"}, "m: shared: expected true or false (got 'yes')"),
        ({"start_timeout_s": 0}, "m: start_timeout_s: expected a number > 0 (got 0)"),
    ],
)
def test_a_wrong_option_is_named(raw: dict[str, Any], line: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse(raw, "m")
    assert any(got.startswith(line) for got in str(caught.value).splitlines()), str(caught.value)


def test_every_wrong_option_is_named_at_once() -> None:
    with pytest.raises(ConfigError) as caught:
        parse({"brokers": 0, "shared": 1, "colour": "red"}, "m")
    keys = [line.split(": ")[1] for line in str(caught.value).splitlines()]
    assert sorted(keys) == ["brokers", "colour", "shared"]


def test_builder_with_calls_make_the_options() -> None:
    builder = (
        ClusterBuilder()
        .with_mode("zookeeper")
        .with_brokers(2)
        .with_version("3.9.2")
        .with_broker_config({"min.insync.replicas": 2})
        .with_broker_config(num_partitions=4)
        .with_start_timeout(90)
    )
    assert builder.options == ClusterOptions(
        mode="zookeeper",
        brokers=2,
        version="3.9.2",
        broker_config=(("min.insync.replicas", 2), ("num_partitions", 4)),
        start_timeout_s=90.0,
    )
    cluster = builder.build()  # built, not started: no Docker asked
    assert (cluster.mode, cluster.broker_count, cluster.nodes) == ("zookeeper", 2, [])


def test_builder_refuses_before_docker() -> None:
    with pytest.raises(ConfigError, match="kafka_cluster builder: brokers: expected >= 1"):
        ClusterBuilder().with_brokers(0).start()


# --- fault dicts ---------------------------------------------------------------------------
def problems(data: object, facts: ClusterFacts = KRAFT) -> list[tuple[str, str]]:
    with pytest.raises(FaultDictError) as caught:
        parse_fault(data, facts)
    return caught.value.problems


def test_a_fault_dict_is_the_spec_kinds_model() -> None:
    fault = parse_fault({"kind": "kill", "target": "leader-of:orders/0", "wipe": False}, KRAFT)
    assert (type(fault).__name__, fault.kind, fault.target, fault.wipe) == (
        "ParsedKill",
        "kill",
        "leader-of:orders/0",
        False,
    )
    assert parse_fault({"kind": "partition", "target": "controller"}, KRAFT).kind == "isolate"
    assert parse_fault({"kind": "kill", "target": "txn-coordinator-of:app-1"}, KRAFT).target


def test_fault_dict_errors_name_the_key() -> None:
    assert problems(["kill"])[0][0] == "(fault)"
    (key, why), *_ = problems({"kind": "explode"})
    assert key == "kind" and why.startswith("expected one of kill, stop, restart")
    assert problems({"kind": "kill", "loss": 0.3}) == [
        ("loss", "kill takes no loss (it takes: wipe)")
    ]
    ((key, why),) = problems({"kind": "kill", "colour": "red"})
    assert key == "colour" and why.startswith("unknown key; allowed: kind, target, to,")
    assert "at_s" not in why
    assert problems({"kind": "lossy", "target": "broker:1", "loss": 2}) == [
        ("loss", "expected <= 1 (got 2)")
    ]


def test_schedule_keys_are_refused_in_a_test() -> None:
    got = problems({"kind": "pause", "target": "broker:1", "at_s": 5, "duration_s": 10})
    assert [k for k, _ in got] == ["at_s", "duration_s"]
    assert "no duration_s" in got[1][1]


def test_targets_and_modes_are_checked_on_the_cluster() -> None:
    assert problems({"kind": "kill", "target": "broker:7"}) == [
        ("target", "no node 7; ids: 1, 2, 3 (got 'broker:7')")
    ]
    ((key, why),) = problems({"kind": "kill", "target": "leader-of"})
    assert key == "target" and why.startswith("expected broker:<id> | controller")
    ((key, why),) = problems({"kind": "cut-zookeeper", "target": "broker:1"})
    assert (key, why) == ("kind", "cut-zookeeper exists only in mode zookeeper")
    ((key, why),) = problems({"kind": "kill", "target": "coordinator-of"})
    assert key == "target" and "name the group" in why
    one_partition = ClusterFacts(mode="kraft", brokers=(1, 2, 3), partitions_of=lambda t: 1)
    ((key, why),) = problems({"kind": "kill", "target": "leader-of:orders/3"}, one_partition)
    assert key == "target" and "(got 3)" in why
    ((key, why),) = problems({"kind": "reassign", "replication_factor": 3})
    assert (key, why) == ("target", "reassign needs a topic: <topic> or <topic>/<partition>")


def test_workload_faults_are_refused() -> None:
    ((key, why),) = problems({"kind": "consumer-crash"})
    assert key == "kind" and why.startswith("consumer-crash acts on an experiment's consumer")


# --- faults on a (fake) cluster -------------------------------------------------------------
class HealingFake(FakeCluster):
    healed_all = 0

    def heal_all(self) -> None:
        self.healed_all += 1


def test_a_fault_records_what_it_did_and_heals_in_its_with_block() -> None:
    cluster = HealingFake(leaders_of={("orders", 0): 2})
    with (
        Chaos(cluster) as chaos,
        chaos.fault({"kind": "kill", "target": "leader-of:orders/0"}) as f,
    ):
        assert (f.resolved, f.active, cluster.node(2).state) == (2, True, "exited")
        assert f.injected_at is not None and f.healed_at is None
    assert (f.active, cluster.node(2).state) == (False, "running")
    assert f.healed_at is not None and f.injected_at <= f.healed_at
    assert [e["kind"] for e in f.events] == ["fault.inject", "fault.heal"]
    assert f.events[0]["target"] == "broker-2"


def test_teardown_heals_what_the_test_left_newest_first() -> None:
    cluster = HealingFake()
    chaos = Chaos(cluster)
    pause = chaos.inject({"kind": "pause", "target": "broker:1"})
    kill = chaos.inject({"kind": "kill", "target": "broker:3"})
    chaos.close()
    assert not pause.active and not kill.active
    heals = [e.fields["target"] for e in cluster.history.events if e.kind == "fault.heal"]
    assert heals == ["broker-3", "broker-1"]
    assert cluster.healed_all == 0


def test_a_target_that_names_nothing_fails_the_inject_and_is_recorded() -> None:
    cluster = HealingFake(leaders_of={("orders", 0): None})
    chaos = Chaos(cluster)
    with pytest.raises(FaultError, match="orders/0 has no leader"):
        chaos.inject({"kind": "kill", "target": "leader-of:orders/0"})
    (handle,) = chaos.faults
    assert handle.error is not None and handle.injected_at is None and not handle.active
    chaos.close()


def test_a_failed_heal_sweeps_with_heal_all_and_says_which() -> None:
    cluster = HealingFake()
    chaos = Chaos(cluster)
    chaos.inject({"kind": "pause", "target": "broker:2"})
    cluster.node(2).fail["unpause"] = RuntimeError("docker said no")
    with pytest.raises(FaultError, match="docker said no"):
        chaos.close()
    assert cluster.healed_all == 1


def test_random_targets_follow_the_seed() -> None:
    picks = [
        Chaos(HealingFake(), seed=7).inject({"kind": "kill", "target": "random"}).resolved
        for _ in range(3)
    ]
    assert len(set(picks)) == 1 and picks[0] in (1, 2, 3)


# --- the shared pool ------------------------------------------------------------------------
class PooledFake(HealingFake):
    closed = 0

    def close(self) -> None:
        self.closed += 1


def test_a_shared_cluster_goes_after_its_last_counted_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.pytest_plugin.pool import ClusterPool

    started: list[PooledFake] = []

    def start(_builder: ClusterBuilder) -> PooledFake:
        started.append(PooledFake())
        return started[-1]

    monkeypatch.setattr(ClusterBuilder, "start", start)
    kraft, zk, uncounted = (
        ClusterOptions(mode=m, shared=True) for m in ("kraft", "zookeeper", "x")
    )
    pool = ClusterPool(tmp_path, {kraft: 2, zk: 1})
    first = pool.acquire(kraft)
    pool.release(kraft)
    assert pool.acquire(kraft) is first and first.closed == 0  # one user still to come
    pool.release(kraft)
    assert (first.healed_all, first.closed, kraft in pool.clusters) == (2, 1, False)
    pool.acquire(zk)
    pool.release(zk)
    assert started[1].closed == 1
    other = pool.acquire(uncounted)  # not counted: kept until the session's end
    pool.release(uncounted)
    assert other.closed == 0
    pool.close_all()
    assert other.closed == 1 and first.closed == 1


def test_tests_sharing_a_cluster_run_together_and_count_as_its_users(tmp_path: Path) -> None:
    result = run_pytest(
        tmp_path,
        "--collect-only",
        "-q",
        "-p",
        "tests.conftest",
        test="""
        import pytest

        @pytest.mark.kafka_cluster(shared=True)
        def test_a(kafka_cluster):
            pass

        def test_b():
            pass

        @pytest.mark.kafka_cluster(mode="zookeeper", shared=True)
        def test_c(kafka_cluster):
            pass

        @pytest.mark.kafka_cluster(shared=True)
        def test_d(kafka_cluster):
            pass

        @pytest.mark.kafka_cluster(shared=True)
        def test_not_using_it():
            pass
        """,
    )
    order = [line.split("::")[-1] for line in result.stdout.splitlines() if "::" in line]
    assert order == ["test_a", "test_d", "test_b", "test_c", "test_not_using_it"], result.stdout

    from harness.pytest_plugin import shared_users

    class Item:
        def __init__(self, shared: bool, fixtures: tuple[str, ...] = ("kafka_cluster",)) -> None:
            self.fixturenames = fixtures
            self.nodeid = "t"
            self._marker = pytest.mark.kafka_cluster(shared=shared).mark

        def get_closest_marker(self, name: str) -> Any:
            return self._marker if name == "kafka_cluster" else None

        def iter_markers(self, name: str) -> Any:
            return iter([self._marker] if name == "kafka_cluster" else [])

    items: Any = [Item(True), Item(True), Item(False), Item(True, fixtures=())]
    assert shared_users(items) == {ClusterOptions(shared=True): 2}


# --- the plugin as pytest loads it -----------------------------------------------------------
def run_pytest(tmp_path: Path, *args: str, test: str = "") -> subprocess.CompletedProcess[str]:
    if test:
        (tmp_path / "test_user.py").write_text(textwrap.dedent(test))
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "harness.pytest_plugin",
            "-p",
            "no:cacheprovider",
            *args,
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_pytest_lists_the_fixtures_and_the_marker(tmp_path: Path) -> None:
    fixtures = run_pytest(tmp_path, "--fixtures").stdout
    for name in ("kafka_cluster", "kafka_cluster_factory", "chaos"):
        assert f"\n{name} -- " in fixtures or f"\n{name} [" in fixtures, name
    assert (
        "@pytest.mark.kafka_cluster(mode='kraft', brokers=3"
        in run_pytest(tmp_path, "--markers").stdout
    )


def test_wrong_options_fail_naming_the_key_before_docker(tmp_path: Path) -> None:
    result = run_pytest(
        tmp_path,
        "--strict-markers",
        "-q",
        test="""
        import pytest

        @pytest.mark.kafka_cluster(brokers=9)
        def test_too_many(kafka_cluster):
            pass

        @pytest.mark.kafka_cluster("kraft")
        def test_positional(kafka_cluster):
            pass

        def test_factory_not_shared(kafka_cluster_factory):
            kafka_cluster_factory(brokers=1, shared=True)
        """,
    )
    assert "1 failed, 2 errors" in result.stdout, result.stdout
    assert "kafka_cluster_factory: shared: a factory's clusters are the test's own" in result.stdout
    assert "@pytest.mark.kafka_cluster: brokers: expected <= 5 (got 9)" in result.stdout
    assert "takes keywords only (got ('kraft',))" in result.stdout
    assert "docker" not in result.stdout.lower()


def test_persistent_data_reaches_the_cluster_and_must_be_a_bool() -> None:
    from harness.pytest_plugin.options import parse

    assert parse({"persistent_data": True}, "m").cluster_kwargs()["persistent_data"] is True
    assert parse({}, "m").cluster_kwargs()["persistent_data"] is False
    with pytest.raises(ConfigError, match="m: persistent_data: expected true or false"):
        parse({"persistent_data": "yes"}, "m")


def test_a_dynamic_quorum_reaches_the_cluster_and_its_rules_name_the_key() -> None:
    from harness.pytest_plugin.options import parse

    kwargs = parse(
        {"controllers": 3, "dynamic_quorum": True, "spare_controllers": 1}, "m"
    ).cluster_kwargs()
    assert kwargs["dynamic_quorum"] is True and kwargs["spare_controllers"] == 1
    assert parse({}, "m").cluster_kwargs()["dynamic_quorum"] is False
    with pytest.raises(ConfigError, match=r"m: dynamic_quorum: expected dedicated controllers"):
        parse({"dynamic_quorum": True}, "m")
    with pytest.raises(ConfigError, match="m: spare_controllers: expected 0 without"):
        parse({"controllers": 3, "spare_controllers": 1}, "m")
