"""`after_step`: a fault whose at_s counts from an operation step's start (the step's own
fault.inject in the history), with the spec's rules and the verdict's order check."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.faults.step_trigger import starts_step
from harness.spec import load_spec
from harness.verdict.planned_faults import off_schedule
from tests.unit.fakes import FakeCluster, Planned
from tests.unit.test_nemesis import kinds, nemesis_for
from tests.unit.test_spec import errors_of, write


@pytest.mark.parametrize(
    ("word", "fields", "starts"),
    [
        ("broker-kraft", {"step_of": 1, "phase": "broker-kraft", "target": "broker-2"}, True),
        ("broker-2", {"step_of": 1, "phase": "broker-kraft", "target": "broker-2"}, True),
        ("broker", {"step_of": 1, "target": "broker-3"}, True),
        ("controller", {"step_of": 1, "target": "controller-101"}, True),
        ("controller", {"step_of": 1, "phase": "controllers", "target": "cluster"}, False),
        ("broker", {"target": "broker-3"}, False),  # a kill on broker-3: no operation's step
        ("broker-1", {"step_of": 1, "target": "broker-12"}, False),
    ],
)
def test_which_events_start_a_step(word: str, fields: dict[str, object], starts: bool) -> None:
    assert starts_step(word, "fault.inject", fields) is starts
    assert starts_step(word, "fault.heal", fields) is False


def _step(cluster: FakeCluster, target: str, phase: str) -> None:
    cluster.history.append("fault.inject", fault_id=9, step_of=8, target=target, phase=phase)


def test_at_s_counts_from_the_step_the_fault_waits_for() -> None:
    cluster = FakeCluster()
    nemesis, _ = nemesis_for(
        cluster,
        Planned(0, at_s=5, kind="kill", target="broker:2", duration_s=3, after_step="broker-kraft"),
    )
    nemesis.start()
    cluster.clock.play(40, lambda: nemesis.playing)
    assert cluster.ops() == [] and nemesis.playing == 1  # no such step yet: nothing at 5 s
    _step(cluster, "broker-1", "broker-migrating")  # another phase: still waiting
    cluster.clock.play(50, lambda: nemesis.playing)
    assert cluster.ops() == []
    _step(cluster, "broker-1", "broker-kraft")
    cluster.clock.play(100, lambda: nemesis.playing)
    # Seen at the first read after 50 s (reads every 0.2 s), then 5 s; healed 3 s later.
    [(t_kill, kill, killed), (t_start, start, started)] = cluster.ops()
    assert (kill, killed, start, started) == ("kill", "broker-2", "start", "broker-2")
    assert 55.0 <= t_kill <= 55.0 + 0.2 + 1e-6 and t_start == pytest.approx(t_kill + 3)
    [inject] = [f for k, f in kinds(cluster) if k == "fault.inject" and f.get("index") == 0]
    assert inject["after_step"] == "broker-kraft" and inject["at_s"] == 5
    assert inject["step_at_s"] == pytest.approx(t_kill - 5) and inject["late_s"] == 0.0
    assert off_schedule([{"kind": "fault.inject", **inject}]) == []


def test_a_step_that_never_begins_skips_the_fault() -> None:
    cluster = FakeCluster()
    nemesis, _ = nemesis_for(
        cluster, Planned(0, at_s=1, kind="kill", target="broker:1", after_step="broker-kraft")
    )
    nemesis.start()
    cluster.clock.play(30, lambda: nemesis.playing)
    nemesis.stop()  # the workload ended
    nemesis.join(5)
    assert nemesis.done
    assert cluster.ops() == []
    [(kind, fields)] = kinds(cluster)
    assert kind == "fault.skipped" and "'broker-kraft' began" in str(fields["reason"])


def test_the_order_check_counts_from_the_step() -> None:
    early = {"kind": "fault.inject", "index": 0, "fault": "kill", "at_s": 5, "late_s": 0.1}
    stepped = {
        "kind": "fault.inject",
        "index": 1,
        "fault": "kill",
        "at_s": 2,  # planned 2 s after a step that began at 100 s: due at 102 s
        "after_step": "broker",
        "step_at_s": 100.0,
        "late_s": 0.1,
    }
    assert off_schedule([early, stepped]) == []
    late = stepped | {"late_s": 12.5}
    [problem] = off_schedule([early, late])
    assert "12.5 s after its planned 2 s after step broker (began at 100 s)" in problem


MIGRATION = """name: x
cluster: {{mode: zookeeper, brokers: 3, migration_controllers: 3}}
producer: {{records: 100}}
faults:
  - {{at_s: 10, kind: migrate-to-kraft}}
  - {{{fault}}}
"""


def test_the_spec_names_a_step_of_its_own_operation(tmp_path: Path) -> None:
    ok = MIGRATION.format(fault="at_s: 5, kind: kill, target: controller, after_step: broker-kraft")
    spec = load_spec(write(tmp_path, ok))
    assert spec.faults[1].after_step == "broker-kraft"
    wrong = MIGRATION.format(fault="at_s: 5, kind: kill, target: controller, after_step: dual")
    [error] = errors_of(tmp_path, wrong)
    assert "faults[1].after_step" in error and "'dual'" in error and "broker-kraft" in error
    op = MIGRATION.format(fault="at_s: 5, kind: rolling-restart, after_step: broker")
    assert any("is an operation" in e for e in errors_of(tmp_path, op))


def test_after_step_needs_an_operation_with_steps(tmp_path: Path) -> None:
    text = """name: x
cluster: {mode: kraft, brokers: 3}
producer: {records: 100}
faults: [{at_s: 5, kind: kill, target: broker:1, after_step: broker}]
"""
    [error] = errors_of(tmp_path, text)
    assert "faults[0].after_step" in error and "no fault of this spec has steps" in error
