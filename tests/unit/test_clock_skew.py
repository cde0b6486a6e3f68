"""clock-skew without Docker: the spec's rules, the offset file's text, the node fault through
fake nodes, the client fault through the cell's clock files as the nemesis plays it, which
processes a spec puts under libfaketime, and a skewed process's true clock."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.common import faketime
from harness.common.processes import ManagedProcess
from harness.errors import ConfigError
from harness.faults.clock import ClockSkew, NodeClockSkewFault, level_of
from harness.faults.registry import make_fault
from harness.nemesis.nemesis import Nemesis
from harness.nodes.capabilities import FakeClock
from harness.results.history import TRUE_CLOCK_ENV
from harness.spec import load_spec
from harness.workload.clocks import ClientClocks
from tests.unit.fakes import FakeCluster, FakeConsumers, Planned
from tests.unit.test_spec import errors_of, write

SPEC = """name: x
cluster: {{mode: {mode}, brokers: 3}}
producer: {{records: 100}}
consumers: [{{kind: group, members: 2}}, {{kind: spark}}]
faults: [{fault}]
"""


def spec_errors(tmp_path: Path, fault: str, mode: str = "kraft") -> list[str]:
    return errors_of(tmp_path, SPEC.format(fault=fault, mode=mode))


def test_the_spec_names_what_a_clock_skew_lacks_or_cannot_do(tmp_path: Path) -> None:
    cases = {
        "{at_s: 1, kind: clock-skew, duration_s: 5}": (
            "faults[0].offset_s: clock-skew needs offset_s"
        ),
        "{at_s: 1, kind: clock-skew, offset_s: 60}": "faults[0].duration_s: clock-skew needs",
        "{at_s: 1, kind: clock-skew, offset_s: 60, duration_s: 5, target: 'consumer:group/2'}": (
            "faults[0].target: set 'group' has 2 member(s)"
        ),
        "{at_s: 1, kind: clock-skew, offset_s: 60, duration_s: 5, target: 'consumer:spark/0'}": (
            "faults[0].target: clock-skew acts on the producer, group or pipeline members"
        ),
        "{at_s: 1, kind: clock-skew, offset_s: 60, duration_s: 5, target: broker:7}": (
            "faults[0].target: no node 7"
        ),
        "{at_s: 1, kind: clock-skew, offset_s: 60, duration_s: 5, loss: 0.1}": (
            "faults[0].loss: clock-skew takes no loss (it takes: offset_s)"
        ),
    }
    for fault, expected in cases.items():
        got = "\n".join(spec_errors(tmp_path, fault))
        assert expected in got, (fault, got)


def test_offset_bounds_are_ten_years_either_way(tmp_path: Path) -> None:
    got = spec_errors(tmp_path, "{at_s: 1, kind: clock-skew, offset_s: -315360001, duration_s: 5}")
    assert got == ["faults[0].offset_s: expected >= -315360000 (got -315360001)"]


def test_zookeeper_is_no_target(tmp_path: Path) -> None:
    fault = "{at_s: 1, kind: clock-skew, offset_s: 60, duration_s: 5, target: zookeeper}"
    assert spec_errors(tmp_path, fault, mode="zookeeper") == [
        "faults[0].target: clock-skew acts on a Kafka node or a client; ZooKeeper cannot be "
        "its target"
    ]


def test_valid_targets_and_the_processes_a_spec_puts_under_libfaketime(tmp_path: Path) -> None:
    faults = ", ".join(
        f"{{at_s: 1, kind: clock-skew, offset_s: {o}, duration_s: 5, target: '{t}'}}"
        for o, t in [(0, "producer"), (-7200, "consumer:group/1"), (3600.5, "controller")]
    )
    spec = load_spec(write(tmp_path, SPEC.format(mode="kraft", fault=faults)))
    assert spec.uses(FakeClock)  # the controller's clock: every Kafka node runs under libfaketime
    assert spec.skewed_clients() == {"producer", "consumer:group/1"}
    clients_only = SPEC.format(
        mode="kraft",
        fault="{at_s: 1, kind: clock-skew, offset_s: 1, duration_s: 5, target: producer}",
    )
    assert not load_spec(write(tmp_path, clients_only, "y.yaml")).uses(FakeClock)
    plain = SPEC.format(mode="kraft", fault="{at_s: 1, kind: kill}")
    spec = load_spec(write(tmp_path, plain, "z.yaml"))
    assert not spec.uses(FakeClock) and spec.skewed_clients() == frozenset()


def test_libfaketime_offsets_are_signed_and_never_a_bare_zero() -> None:
    assert [faketime.offset_text(x) for x in (0, 3600, -7200, 1.5, -0.25)] == [
        "+0",
        "+3600",
        "-7200",
        "+1.500",
        "-0.250",
    ]
    assert level_of(3600) == "+3600 s" and level_of(-7200.0) == "-7200 s"


def test_a_node_skew_writes_the_offset_in_the_node_and_heals_to_zero() -> None:
    cluster = FakeCluster(fake_clock=True)
    fault = make_fault("clock-skew", cluster, 2, {"offset_s": 3600})  # type: ignore[arg-type]
    fault.inject()
    fault.heal()
    scripts = [" ".join(c) for c in cluster.node(2).commands]
    assert "'+3600' > /var/lib/kafka-chaos-clock/offset.tmp" in scripts[0]
    assert "'+0' > /var/lib/kafka-chaos-clock/offset.tmp" in scripts[1]
    inject, heal = (e.fields for e in cluster.history.events)
    assert (inject["target"], inject["offset_s"], inject["level"]) == ("broker-2", 3600, "+3600 s")
    assert heal["level"] == "+3600 s"


def test_a_node_skew_needs_the_fake_clock() -> None:
    with pytest.raises(ConfigError, match="fake_clock=True"):
        NodeClockSkewFault(FakeCluster(), 1, 60)  # type: ignore[arg-type]


def test_the_nemesis_skews_a_client_through_its_offset_file(tmp_path: Path) -> None:
    cluster = FakeCluster()
    clocks = ClientClocks.of(tmp_path, ["producer"])
    spec = ClockSkew.of("producer", offset_s=-7200, duration_s=3)
    seen: list[str] = []
    path = clocks.file_of("producer")
    nemesis = Nemesis(
        cluster,  # type: ignore[arg-type]
        [Planned(0, at_s=2, kind="clock-skew", target="producer", duration_s=3, spec=spec)],
        FakeConsumers(cluster.clock),
        cluster.history,
        seed=1,
        default_group="g",
        clock=cluster.clock,
        clocks=clocks,
    )
    nemesis.start()
    cluster.clock.play(4, lambda: nemesis.playing)
    seen.append(path.read_text().strip())
    cluster.clock.play(10, lambda: nemesis.playing)
    seen.append(path.read_text().strip())
    assert seen == ["-7200", "+0"]
    inject = next(e.fields for e in cluster.history.events if e.kind == "fault.inject")
    assert (inject["target"], inject["level"], inject["file"]) == (
        "producer",
        "-7200 s",
        "producer.offset",
    )
    assert clocks.file_of("consumer:group/0").name == "consumer-group-0.offset"
    with pytest.raises(ConfigError, match="does not run with a fake clock"):
        clocks.clock_file("consumer:group/0")


def test_without_client_clocks_a_client_skew_is_skipped() -> None:
    cluster = FakeCluster()
    spec = ClockSkew.of("consumer:group/0", offset_s=5, duration_s=1)
    nemesis = Nemesis(
        cluster,  # type: ignore[arg-type]
        [Planned(0, at_s=1, kind="clock-skew", target="consumer:group/0", duration_s=1, spec=spec)],
        FakeConsumers(cluster.clock),
        cluster.history,
        seed=1,
        default_group="g",
        clock=cluster.clock,
    )
    nemesis.start()
    cluster.clock.play(5, lambda: nemesis.playing)
    assert [e.kind for e in cluster.history.events] == ["fault.skipped"]


def test_a_skewed_process_keeps_true_time_for_its_own_books(tmp_path: Path) -> None:
    """The anchor alone (no preload needed): now_ms counts from the true start it was given."""
    anchor_ms = int(time.time() * 1000) - 10_000_000  # pretend the true time is 10^7 ms earlier
    env = {**os.environ, TRUE_CLOCK_ENV: f"{anchor_ms * 1_000_000}:{time.monotonic_ns()}"}
    code = "from harness.results.history import now_ms; print(now_ms())"
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert anchor_ms <= int(out.stdout) < anchor_ms + 600_000


def test_a_managed_process_gets_the_environment_made_at_its_start(tmp_path: Path) -> None:
    out = tmp_path / "out"
    starts = iter(["first", "second"])
    proc = ManagedProcess(
        [sys.executable, "-c", "import os; print(os.environ['MARK'])"],
        stdout=out,
        env=lambda: {**os.environ, "MARK": next(starts)},
    )
    for _ in range(2):
        proc.start()
        assert proc.wait(30)
    assert out.read_text().split() == ["first", "second"]


def test_the_client_environment_preloads_libfaketime_and_keeps_an_offset(tmp_path: Path) -> None:
    path = tmp_path / "clocks" / "producer.offset"
    faketime.write_offset(path, -60)
    try:
        env = faketime.environment(path)
    except ConfigError:
        pytest.skip("no libfaketime on this machine")
    assert path.read_text() == "-60\n"  # an existing offset is kept (a restarted process)
    assert "libfaketime.so.1" in env["LD_PRELOAD"]
    assert env["FAKETIME_TIMESTAMP_FILE"] == str(path)
    assert env["FAKETIME_DONT_FAKE_MONOTONIC"] == "1"
    assert env["FAKETIME_CACHE_DURATION"] == "1"
    assert env["FAKETIME_FORCE_MONOTONIC_FIX"] == "0"
    assert TRUE_CLOCK_ENV in env


def test_a_node_skew_needs_fake_clock_and_a_java_producer_cannot_be_skewed(
    tmp_path: Path,
) -> None:
    node = "{at_s: 1, kind: clock-skew, offset_s: 60, duration_s: 5, target: broker:1}"
    text = SPEC.format(mode="kraft", fault=node).replace(
        "brokers: 3", "brokers: 3, fake_clock: false"
    )
    assert errors_of(tmp_path, text) == [
        "faults[0].kind: clock-skew on a node needs cluster.fake_clock"
    ]
    producer = "{at_s: 1, kind: clock-skew, offset_s: 60, duration_s: 5, target: producer}"
    text = SPEC.format(mode="kraft", fault=producer).replace(
        "{records: 100}", "{records: 100, client: java}"
    )
    assert any(
        e.startswith("faults[0].target: clock-skew on the producer needs client librdkafka")
        for e in errors_of(tmp_path, text)
    )


def test_the_pytest_plugin_takes_fake_clock() -> None:
    from harness.pytest_plugin.builder import ClusterBuilder
    from harness.pytest_plugin.options import parse

    options = parse({"brokers": 1, "fake_clock": True}, "test")
    assert options.cluster_kwargs()["fake_clock"] is True
    assert "fake clock" in options.describe()
    assert ClusterBuilder().with_fake_clock()._raw["fake_clock"] is True


def test_time_sleep_works_in_a_skewed_process(tmp_path: Path) -> None:
    """libfaketime makes Python's time.sleep fail (EINVAL); a skewed process gets a working one."""
    path = tmp_path / "offset"
    faketime.write_offset(path, 7200)
    try:
        env = faketime.environment(path)
    except ConfigError:
        pytest.skip("no libfaketime on this machine")
    code = (
        "import time; from harness.results.history import now_ms; t = time.monotonic(); "
        "time.sleep(0.2); print(time.monotonic() - t >= 0.2, time.time() * 1000 - now_ms() > 7e6)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["True", "True"]
