"""A cell's verdict from a hand-built result folder: recovery is a check, asserting nothing is unknown."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.results.metrics import COUNT_NAMES
from harness.spec import expand_cells, load_spec, spec_to_yaml
from harness.verdict.cell_verdict import summarize

T = 1_700_000_000_000
PHASES = ("cluster", "steady-state", "workload", "heal", "recovery", "drain", "collect")


def spec_file(tmp_path: Path, expect: str, faults: str = "") -> Path:
    path = tmp_path / "spec.yaml"
    planned = f"faults: {faults}\n" if faults else ""
    path.write_text(f"name: cellverdict\nproducer: {{records: 10}}\n{planned}expect: {expect}\n")
    return path


def kills(*at_s: float, optional: bool = False) -> str:
    """A faults list of kills at these times (YAML flow style)."""
    flag = ", optional: true" if optional else ""
    return "[" + ", ".join(f"{{kind: kill, at_s: {a}{flag}}}" for a in at_s) + "]"


def history(recovered: bool | None, detail: str = "") -> list[dict[str, Any]]:
    events = [{"ts": T + i * 1000, "kind": "phase", "phase": p} for i, p in enumerate(PHASES)]
    if recovered is not None:
        events.append(
            {"ts": T + 4500, "kind": "recovery.end", "recovered": recovered, "detail": detail}
        )
    return sorted(events, key=lambda e: e["ts"])


def metrics(lost: int = 0) -> dict[str, Any]:
    counts = dict.fromkeys(
        COUNT_NAMES,
        0,
    )
    counts["lost"] = lost
    evidence = {"compared": ["ledger 10 rows = producer.end attempted 10"], "disagreements": []}
    return {
        "counts": counts,
        "max_stall_s": 1.0,
        "unavailable_s": 0.0,
        "undecided": {},
        "evidence": evidence,
    }


def verdict_of(
    tmp_path: Path, expect: str, events: list[dict[str, Any]], lost: int = 0, faults: str = ""
) -> dict[str, Any]:
    [cell] = expand_cells(load_spec(spec_file(tmp_path, expect, faults)))
    cell_dir = tmp_path / "cells" / cell.id
    cell_dir.mkdir(parents=True)
    (cell_dir / "history.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    summary = summarize(cell, cell_dir, metrics(lost))
    assert json.loads((cell_dir / "summary.json").read_text())["verdict"] == summary["verdict"]
    return summary


def checks(summary: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {c["name"]: (c["verdict"], c["detail"]) for c in summary["checks"]}


def test_a_cluster_that_did_not_heal_makes_the_cell_unknown(tmp_path: Path) -> None:
    detail = "not every partition led with a full ISR after 120 s"
    summary = verdict_of(tmp_path, "{lost: 0}", history(False, detail))
    assert summary["verdict"] == "unknown"
    verdict, why = checks(summary)["recovery"]
    assert verdict == "unknown" and detail in why
    assert checks(summary)["lost"][0] == "pass"
    assert summary["recovered"] is False


def test_no_recovery_event_is_unknown(tmp_path: Path) -> None:
    summary = verdict_of(tmp_path, "{lost: 0}", history(None))
    assert summary["verdict"] == "unknown"
    assert checks(summary)["recovery"][0] == "unknown"
    assert summary["recovered"] is None


def test_a_healed_cluster_passes_recovery(tmp_path: Path) -> None:
    summary = verdict_of(tmp_path, "{lost: 0}", history(True, "every partition led"))
    assert summary["verdict"] == "pass"
    assert [c["name"] for c in summary["checks"]] == [
        "run",
        "faults",
        "recovery",
        "evidence",
        "lost",
    ]
    assert checks(summary)["recovery"] == ("pass", "the cluster healed: every partition led")


def state(ts: int, isr: list[int]) -> dict[str, Any]:
    return {
        "ts": ts,
        "kind": "partition.state",
        "topic": "chaos",
        "partition": 0,
        "leader": 1,
        "isr": isr,
        "replicas": [1, 2, 3],
    }


def test_the_summary_holds_the_isr_figures_of_the_history_and_unbounded_they_decide_nothing(
    tmp_path: Path,
) -> None:
    events = [*history(True), state(T + 2100, [1, 2, 3]), state(T + 2600, [1, 3])]
    events += [state(T + 4100, [1, 2, 3]), {"ts": T + 5500, "kind": "partition.watch_end"}]
    summary = verdict_of(tmp_path, "{lost: 0}", sorted(events, key=lambda e: e["ts"]))
    assert summary["isr"] == {
        "isr_shrinks": 1,
        "isr_expands": 1,
        "min_isr_size": 2,
        "under_replicated_s": 1.5,
        "failed_polls": None,
    }
    assert summary["verdict"] == "pass"  # a figure to read, not a check
    assert not any("isr" in c["name"] for c in summary["checks"])
    # A history without partition states (older than the watch): undecided figures.
    (tmp_path / "old").mkdir()
    assert verdict_of(tmp_path / "old", "{lost: 0}", history(True))["isr"]["isr_shrinks"] is None


@pytest.mark.parametrize(
    ("isr", "expect", "verdict"),
    [
        ([1], "'>= 2'", "fail"),  # KAFKA-15665's fixed side: the ISR never down to one replica
        ([1, 2], "'>= 2'", "pass"),
        ([1], "1", "pass"),  # its affected side: a reassignment completed with one in sync
        ([1, 2], "1", "fail"),
        (None, "1", "unknown"),  # no partition.state event: nothing seen, nothing decided
    ],
)
def test_an_isr_figure_bounded_by_an_expectation_decides_the_verdict(
    tmp_path: Path, isr: list[int] | None, expect: str, verdict: str
) -> None:
    events = history(True)
    if isr is not None:
        events += [state(T + 2100, [1, 2, 3]), state(T + 2600, isr)]
    summary = verdict_of(tmp_path, f"{{isr.min_isr_size: {expect}}}", events)
    assert summary["verdict"] == verdict
    assert checks(summary)["isr.min_isr_size"][0] == verdict


def test_a_cell_that_expects_nothing_is_unknown(tmp_path: Path) -> None:
    summary = verdict_of(tmp_path, "{}", history(True))
    assert summary["verdict"] == "unknown"
    assert checks(summary)["run"][0] == "pass" and checks(summary)["recovery"][0] == "pass"
    assert checks(summary)["expect"][0] == "unknown"


def test_only_null_bounds_is_expecting_nothing(tmp_path: Path) -> None:
    summary = verdict_of(tmp_path, "{lost: null}", history(True))
    assert summary["verdict"] == "unknown"


@pytest.mark.parametrize(
    ("expected", "recovered", "verdict"),
    [
        ("false", False, "pass"),
        ("false", True, "fail"),
        ("true", True, "pass"),
        ("true", False, "fail"),
    ],
)
def test_an_expected_recovery_outcome_decides(
    tmp_path: Path, expected: str, recovered: bool, verdict: str
) -> None:
    summary = verdict_of(tmp_path, f"{{recovered: {expected}}}", history(recovered, "d"))
    assert summary["verdict"] == verdict
    assert checks(summary)["recovery"][0] == verdict
    assert f"expected recovered = {expected}" in checks(summary)["recovery"][1]
    assert "expect" not in checks(summary)  # recovered: false is an expectation


def test_an_expected_outcome_without_a_recovery_event_is_unknown(tmp_path: Path) -> None:
    summary = verdict_of(tmp_path, "{recovered: false}", history(None))
    assert summary["verdict"] == "unknown"


def test_recovered_expectation_round_trips_through_spec_yaml(tmp_path: Path) -> None:
    spec = load_spec(spec_file(tmp_path, "{recovered: false, lost: 0}"))
    text = spec_to_yaml(spec, 3)
    assert "recovered: false" in text
    again = tmp_path / "again.yaml"
    again.write_text(text)
    assert load_spec(again).expect == spec.expect


def test_recovered_in_a_matrix_override(tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(
        "name: m\nproducer: {records: 10}\nexpect: {lost: 0}\n"
        "matrix:\n  producer.acks: [1, all]\n"
        "  expect:\n    - when: {producer.acks: 1}\n      expect: {recovered: false}\n"
    )
    flags = [str(c.spec.expect.get("recovered")) for c in expand_cells(load_spec(path))]
    assert flags == ["false", "None"]


@pytest.mark.parametrize(
    ("expect", "message"),
    [
        ("{lost: true}", "expect.lost: true/false applies only to recovered"),
        ("{recovered: 1}", "expect.recovered: expected true or false"),
        ("{recovered: '< 3'}", "expect.recovered: expected true or false"),
    ],
)
def test_flags_only_for_recovered(tmp_path: Path, expect: str, message: str) -> None:
    from harness.errors import ConfigError

    with pytest.raises(ConfigError, match=message):
        load_spec(spec_file(tmp_path, expect))


@pytest.mark.parametrize(
    ("event", "said"),
    [
        (
            {"kind": "fault.skipped", "index": 1, "fault": "kill", "reason": "no coordinator"},
            "fault #1 kill skipped: no coordinator",
        ),
        (
            {"kind": "fault.error", "index": 0, "error": "fault #0 reassign inject: timed out"},
            "fault #0 failed: fault #0 reassign inject: timed out",
        ),
    ],
)
def test_a_planned_fault_that_did_not_happen_makes_the_cell_unknown(
    tmp_path: Path, event: dict[str, Any], said: str
) -> None:
    events = [*history(True, "every partition led"), {"ts": T + 2500, **event}]
    summary = verdict_of(tmp_path, "{lost: 0}", events, faults=kills(10, 20))
    assert summary["verdict"] == "unknown"  # lost 0 passed, but the cell did not do its faults
    verdict, why = checks(summary)["faults"]
    assert verdict == "unknown" and said in why
    assert checks(summary)["lost"][0] == "pass"


def test_an_optional_fault_that_was_skipped_does_not_undecide_the_cell(tmp_path: Path) -> None:
    skipped = {"ts": T + 2500, "kind": "fault.skipped", "index": 0, "fault": "kill"}
    events = [*history(True, "ok"), {**skipped, "reason": "no leader", "optional": True}]
    summary = verdict_of(tmp_path, "{lost: 0}", events, faults=kills(10, optional=True))
    assert summary["verdict"] == "pass"
    verdict, why = checks(summary)["faults"]
    assert verdict == "pass" and "optional ones missed: fault #0 kill skipped: no leader" in why


def inject(index: int, at_s: float, late_s: float) -> dict[str, Any]:
    ts = T + int((at_s + late_s) * 1000)
    fault = {"fault": "kill", "fault_id": index + 1}
    return {"ts": ts, "kind": "fault.inject", **fault, "index": index, "at_s": at_s}


def heal(index: int, at_s: float) -> dict[str, Any]:
    return {
        "ts": T + int(at_s * 1000),
        "kind": "fault.heal",
        "fault": "kill",
        "fault_id": index + 1,
    }


@pytest.mark.parametrize(
    ("injects", "verdict", "said"),
    [
        # On time and in order: the pass detail names the latest start.
        (
            [(0, 10, 0.4), (1, 11, 1.2)],
            "pass",
            "the latest, fault #1, started 1.2 s after its time",
        ),
        # The controller lookup took 28 s: the second kill landed first (controller-failover).
        (
            [(0, 10, 28.1), (1, 11, 0.3)],
            "unknown",
            "fault #0 kill started 28.1 s after its planned 10 s (more than 10 s late); "
            "fault #0 kill (planned 10 s) started at 38.1 s, after fault #1 kill "
            "(planned 11 s, started 11.3 s): the plan's order was not kept",
        ),
        # Late by less than LATE_S, yet after a fault planned a second later.
        (
            [(0, 10, 3.2), (1, 11, 0.1)],
            "unknown",
            "fault #0 kill (planned 10 s) started at 13.2 s, after fault #1 kill "
            "(planned 11 s, started 11.1 s): the plan's order was not kept",
        ),
        # Faults planned at the same time claim no order.
        ([(0, 10, 3.0), (1, 10, 0.1)], "pass", "the latest, fault #0, started 3.0 s"),
    ],
)
def test_faults_started_late_or_out_of_order_undecide_the_cell(
    tmp_path: Path, injects: list[tuple[int, float, float]], verdict: str, said: str
) -> None:
    events = history(True, "ok") + [
        {**inject(i, at, late), "late_s": late} for i, at, late in injects
    ]
    events += [heal(i, 60) for i, _, _ in injects]
    planned = kills(*[at for _, at, _ in sorted(injects)])
    summary = verdict_of(
        tmp_path, "{lost: 0}", sorted(events, key=lambda e: e["ts"]), faults=planned
    )
    assert summary["verdict"] == verdict
    got, why = checks(summary)["faults"]
    assert got == verdict and said in why


def test_an_optional_fault_may_be_late(tmp_path: Path) -> None:
    late = {**inject(0, 10, 28.0), "late_s": 28.0, "optional": True}
    events = [*history(True, "ok"), late, heal(0, 60)]
    summary = verdict_of(tmp_path, "{lost: 0}", events, faults=kills(10, optional=True))
    assert summary["verdict"] == "pass" and checks(summary)["faults"][0] == "pass"


def crash(index: int | None, ts: int, pid: bool = True) -> dict[str, Any]:
    event: dict[str, Any] = {"ts": ts, "kind": "consumer.crash", "consumer": "group/m0"}
    event.update({"pid": 42} if pid else {"note": "was not running"})
    return event if index is None else {**event, "index": index}


LAUNCH = {"kind": "consumer.launch", "consumer": "group/m0", "pid": 43}
CRASH_PLAN = "[{kind: consumer-crash, at_s: 5, target: 'consumer:group/0', duration_s: 2}]"


@pytest.mark.parametrize(
    ("faults", "events", "verdict", "said"),
    [
        # The case: a planned fault and no fault line at all.
        (kills(10), [], "unknown", "fault #0 kill has no fault.inject in the history"),
        # Injected, never healed (duration 1e12 before bounds; a heal_all that failed).
        (kills(10), [inject(0, 10, 0.1)], "unknown", "fault #0 kill was injected but has no"),
        (kills(10), [inject(0, 10, 0.1), heal(0, 30)], "pass", "every planned fault was done"),
        # An inject with no plan index (rolling-restart's own steps) is not the planned one.
        (
            kills(10),
            [{**inject(0, 10, 0.1), "index": None}, heal(0, 30)],
            "unknown",
            "fault #0 kill has no fault.inject",
        ),
        # Another kind under the planned index; a heal before the inject.
        (
            kills(10),
            [{**inject(0, 10, 0.1), "spec_kind": "pause"}, heal(0, 30)],
            "unknown",
            "fault #0 kill was planned, but the history's fault #0 is a pause",
        ),
        (kills(10), [inject(0, 10, 0.1), heal(0, 5)], "unknown", "it was never healed"),
        # A folder whose history is another spec's.
        (
            kills(10),
            [inject(0, 10, 0.1), heal(0, 30), {**inject(3, 12, 0.1)}, heal(3, 30)],
            "unknown",
            "the history names fault #3, which the spec does not plan (1 planned)",
        ),
        # Consumer crashes: by index, with the pid killed, then launched again.
        (CRASH_PLAN, [crash(0, T + 5000), {"ts": T + 7000, **LAUNCH}], "pass", "was done"),
        (
            CRASH_PLAN,
            [crash(0, T + 5000, pid=False), {"ts": T + 7000, **LAUNCH}],
            "unknown",
            "fault #0 consumer-crash crashed no process: group/m0 was not running",
        ),
        (
            CRASH_PLAN,
            [crash(0, T + 5000)],
            "unknown",
            "crashed group/m0, which was never launched again",
        ),
        (CRASH_PLAN, [], "unknown", "fault #0 consumer-crash has no consumer.crash"),
        # A history written before crashes carried their index.
        (CRASH_PLAN, [crash(None, T + 5000), {"ts": T + 7000, **LAUNCH}], "pass", "was done"),
        # No fault planned and none done.
        ("", [], "pass", "no fault was planned"),
    ],
)
def test_a_planned_fault_counts_only_with_its_evidence(
    tmp_path: Path, faults: str, events: list[dict[str, Any]], verdict: str, said: str
) -> None:
    every = sorted([*history(True, "ok"), *events], key=lambda e: e["ts"])
    summary = verdict_of(tmp_path, "{lost: 0}", every, faults=faults)
    got, why = checks(summary)["faults"]
    assert (got, said in why) == (verdict, True), why
    assert summary["verdict"] == verdict


def test_history_lines_with_a_time_that_is_not_a_finite_number_are_not_events(
    tmp_path: Path,
) -> None:
    """`{"ts": Infinity}` made summarize's duration raise OverflowError (a traceback, exit 1)."""
    odd = [{"ts": float("inf"), "kind": "phase"}, {"ts": True, "kind": "phase"}]
    summary = verdict_of(tmp_path, "{lost: 0}", [*history(True, "ok"), *odd])
    assert summary["verdict"] == "pass" and summary["duration_s"] == 6.0
