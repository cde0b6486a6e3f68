"""Each kind's drawing (harness.faults.drawing): what explore draws of it is a fault its own rules
accept, with options in the ranges its module states, on cells of several shapes."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

import pytest

from harness.explore.generator import schedule_problems
from harness.faults.clock import DRAWN_OFFSETS_S
from harness.faults.drawing import OWN_TARGET, spread
from harness.faults.registry import SPEC_KINDS, is_operation
from harness.spec import Spec, expand_cells, parse_spec
from harness.spec.explore_roles import Entry, role_entries
from harness.spec.explore_rules import drawable_pairs, pair_problem
from harness.spec.problems import cell_view

DRAWS = 50
DRAWN_KINDS = sorted(k.name for k in SPEC_KINDS.values() if k.drawing is not None)
SCOPES = {"all", "clients", "replication", "controller"}


def spec_of(**over: Any) -> Spec:
    data: dict[str, Any] = {
        "name": "drawings-unit",
        "cluster": {"mode": "kraft", "version": "3.9.2", "brokers": 3},
        "topic": {"name": "chaos", "partitions": 3, "replication_factor": 3},
        "producer": {"acks": "all", "rate": 100, "duration_s": 60},
        "expect": {"lost": 0},
    }
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    return expand_cells(parse_spec(data))[0].spec


# Cells of several shapes: the default (combined KRaft nodes), dedicated controllers with a
# dynamic quorum, spares, JBOD and several consumer sets and a pipeline; ZooKeeper with a
# Java producer; a single broker.
CELLS: dict[str, Callable[[], Spec]] = {
    "kraft-3": lambda: spec_of(),
    "kraft-dedicated": lambda: spec_of(
        cluster={
            "brokers": 4,
            "controllers": 3,
            "dynamic_quorum": True,
            "spare_brokers": 1,
            "spare_controllers": 1,
            "log_dirs": 2,
        },
        topic={"partitions": 6, "replication_factor": 3},
        consumers=[{"kind": "group", "members": 2}, {"kind": "group", "group": "g2"}],
        pipeline={"guarantee": "exactly-once", "members": 3},
    ),
    "zookeeper-5": lambda: spec_of(
        cluster={"mode": "zookeeper", "version": "3.7.2", "brokers": 5},
        topic={"partitions": 2, "replication_factor": 2},
        producer={"client": "java"},
    ),
    "kraft-1": lambda: spec_of(
        cluster={"brokers": 1, "broker_config": {"offsets.topic.replication.factor": 1}},
        topic={"partitions": 1, "replication_factor": 1},
    ),
}


@pytest.fixture(scope="module", params=sorted(CELLS))
def spec(request: pytest.FixtureRequest) -> Spec:
    return CELLS[request.param]()


def timed(entries: list[Entry], at_s: float = 10.0, duration_s: float = 12.0) -> list[Entry]:
    """The entries as the generator writes them: at one instant, a duration unless an operation."""
    return [
        {"at_s": at_s, **e, **({} if is_operation(e["kind"]) else {"duration_s": duration_s})}
        for e in entries
    ]


def in_range(value: Any, low: float, high: float) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and low <= value <= high


def range_problems(entry: Entry, spec: Spec) -> list[str]:
    """What of a drawn entry's options lies outside the range its kind's module states."""
    kind, target = entry["kind"], str(entry["target"])
    options = {k: v for k, v in entry.items() if k not in ("kind", "target", "side")}
    view = cell_view(spec)
    checks: dict[str, Callable[[Any], bool]] = {}
    if kind in ("restart", "rolling-restart"):
        checks = {"hard": lambda v: v in (False, True)}
    elif kind == "lossy":
        checks = {
            "loss": lambda v: in_range(v, 0.05, 0.5),
            "scope": lambda v: v in {"all", "clients", "replication"},
        }
    elif kind == "latency":
        checks = {
            "delay_ms": lambda v: in_range(v, 100, 3000),
            "jitter_ms": lambda v: in_range(v, 0, options["delay_ms"] // 2),
            "scope": lambda v: v in SCOPES,
        }
    elif kind == "bandwidth":
        checks = {"rate_kbit": lambda v: in_range(v, 64, 8000), "scope": lambda v: v in SCOPES}
    elif kind == "reset":
        checks = {"every_s": lambda v: in_range(v, 2, 10), "scope": lambda v: v in SCOPES}
    elif kind == "clock-skew":
        checks = {"offset_s": lambda v: abs(v) in DRAWN_OFFSETS_S}
    elif kind == "disk-full":
        checks = {"log_dir": lambda v: in_range(v, 0, view.log_dirs - 1) and view.log_dirs > 1}
    elif kind == "corrupt":
        high = 16 if options.get("mode") == "bitflip" else 8192
        checks = {
            "mode": lambda v: v in ("bitflip", "truncate"),
            "bytes": lambda v: in_range(v, 1, high),
        }
    elif kind == "remove-controller":
        checks = {"keep_running": lambda v: v in (False, True)}
    elif kind == "reassign":
        rf = view.replication_factor
        checks = {
            "to": lambda v: len(v) == rf and len(set(v)) == rf and set(v) <= set(view.brokers)
        }
    elif kind == "add-partitions":
        checks = {"count": lambda v: in_range(v, view.partitions + 1, view.partitions + 3)}
    elif kind == "power-loss":
        checks = {
            "writeback_s": lambda v: in_range(v, 1, 10),
            "unsynced_tail": lambda v: v in ("drop", "zeros"),
        }
    out = [f"{kind}: unexpected option {k}" for k in options if k not in checks]
    out += [
        f"{kind}: {k}={v!r} out of range"
        for k, v in options.items()
        if k in checks and not checks[k](v)
    ]
    # Targets the kind picks itself (roles client and cluster).
    if kind == "reassign" and not re.fullmatch(rf"{view.topic}/\d+", target):
        out.append(f"reassign: target {target!r}")
    if kind == "add-partitions" and target != view.topic:
        out.append(f"add-partitions: target {target!r}")
    if kind in ("consumer-crash", "pipeline-crash", "clock-skew") and target.startswith(
        "consumer:"
    ):
        m = re.fullmatch(r"consumer:([\w.-]+)/(\d+)", target)
        assert m is not None, target
        assert int(m[2]) < view.member_counts[m[1]]
        if kind != "clock-skew":  # a skew may take a pipeline member, a crash only its own
            assert (m[1] == "pipeline") == (kind == "pipeline-crash"), target
    return out


def test_every_drawn_entry_is_a_fault_its_rules_accept_with_options_in_range(spec: Spec) -> None:
    view = cell_view(spec)
    pairs = drawable_pairs(spec, view)
    assert pairs
    failures: list[str] = []
    for kind, role in pairs:
        for seed in range(DRAWS):
            entries = role_entries(kind, role, view, random.Random(seed))
            assert entries, (kind, role)
            found = schedule_problems(spec, timed(entries))
            found += [p for e in entries for p in range_problems(e, spec)]
            if found:
                failures.append(f"{kind} on {role}, seed {seed}: {entries}: {found}")
    assert not failures, "\n".join(failures[:20])


def test_every_kind_with_a_drawing_is_drawable_somewhere() -> None:
    specs = [make() for make in CELLS.values()]
    drawn = {k for s in specs for k, _ in drawable_pairs(s, cell_view(s))}
    # add-broker, add-controller, remove-controller, decommission, pipeline-crash: only where
    # the cell has spares, a dynamic quorum, room for the replicas, a pipeline (kraft-dedicated).
    assert drawn == set(DRAWN_KINDS)


def test_only_cluster_and_client_roles_pick_their_own_targets() -> None:
    for name in DRAWN_KINDS:
        drawing = SPEC_KINDS[name].drawing
        assert drawing is not None
        own = [r for r in drawing.roles if r in OWN_TARGET]
        assert not own or own == [drawing.roles[-1]], name  # node roles first, one own role


def test_subject_changing_kinds_are_never_drawn() -> None:
    assert SPEC_KINDS["upgrade"].drawing is None
    assert SPEC_KINDS["migrate-to-kraft"].drawing is None


def test_a_three_broker_kraft_cell_draws_power_loss_on_the_whole_site() -> None:
    spec = CELLS["kraft-3"]()
    view = cell_view(spec)
    assert pair_problem(spec, "power-loss", "all", view) is None
    assert ("power-loss", "all") in drawable_pairs(spec, view)
    assert role_entries("power-loss", "all", view, None) == [
        {"kind": "power-loss", "target": "all", "unsynced_tail": "drop"}
    ]


def test_consumer_crash_is_drawn_on_a_consumer_member() -> None:
    spec = CELLS["kraft-dedicated"]()
    view = cell_view(spec)
    assert ("consumer-crash", "client") in drawable_pairs(spec, view)
    assert ("pipeline-crash", "client") in drawable_pairs(spec, view)
    targets = {
        e["target"]
        for seed in range(DRAWS)
        for e in role_entries("consumer-crash", "client", view, random.Random(seed))
    }
    assert targets == {"consumer:group/0", "consumer:group/1", "consumer:group2/0"}
    # Every spec has a consumer set (the default group): consumer-crash is always drawable,
    # pipeline-crash only with a pipeline.
    plain = CELLS["kraft-3"]()
    assert ("consumer-crash", "client") in drawable_pairs(plain, cell_view(plain))
    said = pair_problem(plain, "pipeline-crash", "client", cell_view(plain))
    assert said is not None and "needs a pipeline" in said


def test_what_each_cell_cannot_play_is_left_out() -> None:
    plain = CELLS["kraft-3"]()
    view = cell_view(plain)
    for kind in ("add-broker", "add-controller", "remove-controller", "decommission"):
        assert not [r for k, r in drawable_pairs(plain, view) if k == kind], kind
    dedicated = CELLS["kraft-dedicated"]()
    pairs = drawable_pairs(dedicated, cell_view(dedicated))
    # A dedicated controller has no client or replication links, and a link fault's probe
    # is its clients scope: the link faults leave the controller role out there.
    for kind in ("latency", "bandwidth", "reset", "lossy", "disk-full"):
        assert (kind, "one") in pairs and (kind, "controller") not in pairs, kind
    assert ("remove-controller", "controller") in pairs
    assert ("restart", "controller") in pairs
    single = CELLS["kraft-1"]()
    pairs = drawable_pairs(single, cell_view(single))
    assert ("latency", "one") in pairs and ("corrupt", "leader") in pairs
    # A Java producer keeps its schedule by its own clock: a client skew takes a consumer.
    zk = CELLS["zookeeper-5"]()
    skewed = {
        e["target"]
        for seed in range(DRAWS)
        for e in role_entries("clock-skew", "client", cell_view(zk), random.Random(seed))
    }
    assert skewed == {"consumer:group/0"}
    librdkafka = {
        e["target"]
        for seed in range(DRAWS)
        for e in role_entries("clock-skew", "client", view, random.Random(seed))
    }
    assert librdkafka == {"producer", "consumer:group/0"}


def test_log_uniform_spread_covers_its_range() -> None:
    rng = random.Random(7)
    drawn = [spread(rng, 100, 3000) for _ in range(2000)]
    assert min(drawn) >= 100 and max(drawn) <= 3000
    low = sum(1 for d in drawn if d < 548)  # the geometric middle of 100 and 3000
    assert 0.4 < low / len(drawn) < 0.6
    assert spread(None, 100, 3000) == 100


def test_more_add_brokers_than_spares_is_a_problem() -> None:
    """What keeps a schedule of two drawn add-brokers on one spare from failing at run time."""
    spec = CELLS["kraft-dedicated"]()  # one spare broker
    view = cell_view(spec)
    one = role_entries("add-broker", "cluster", view, None)
    assert schedule_problems(spec, timed(one)) == []
    two = timed(one, at_s=10.0) + timed(one, at_s=20.0)
    said = schedule_problems(spec, two)
    assert said == [
        "faults[1].kind: no spare broker left for this add-broker: 2 planned by at_s 20, "
        "cluster.spare_brokers is 1"
    ]


def test_a_link_fault_is_not_drawn_on_a_cluster_that_migrates_to_kraft() -> None:
    spec = spec_of(cluster={"mode": "zookeeper", "version": "3.9.2", "migration_controllers": 3})
    view = cell_view(spec)
    for kind in ("latency", "bandwidth", "reset"):
        said = pair_problem(spec, kind, "one", view)
        assert said is not None and "migrates to KRaft" in said, kind
    assert pair_problem(spec, "kill", "one", view) is None
