"""The overload rule on hand-built machine tables: which timing figures it undecides, and
that a count never is (harness.results.machine, harness.verdict.checks)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
from hypothesis import given
from hypothesis import strategies as st

from harness.common.machine_sampler import (
    BURNER,
    CLIENT,
    CLIENT_JARS,
    CLIENT_MODULES,
    COLUMNS,
    CpuTimes,
    ProcessTree,
    Task,
    container_id,
    cpu_times,
    parse_stat,
    process_kind,
    shares,
    since,
    split_tree,
)
from harness.results.machine import (
    LAG_OVERLOADED_MS,
    Machine,
    cores_by_whom,
    machine_summary,
    overlap_ms,
    overloaded_spans,
    read_machine,
    write_machine,
)
from harness.results.metrics import (
    BROKER_FIGURES,
    BROKER_PREFIX,
    ISR_FIGURES,
    LATENCY_METRICS,
    PER_SET_KEYS,
    SCHEDULE_METRICS,
    SHARE_FIGURES,
    TIME_METRICS,
    Figures,
    OutsideOverload,
)
from harness.results.overload_rules import (
    ONE_WINDOW,
    OVERLOAD_MIN_S,
    RULES,
    SAMPLES,
    WINDOW_SHARE,
    figure_windows,
    judged_outside,
    minus,
    overload_reason,
    overloaded_figures,
    recorded_windows,
    rule_of,
)
from harness.spec.expect import ALLOWED_METRICS, parse_bound, split_per_set
from harness.verdict.calibration import CellRun, bound_entry
from harness.verdict.checks import evaluate, margins
from harness.workload.command.supervisor import CommandSupervisor
from harness.workload.group.supervisor import GroupSupervisor
from harness.workload.java.launch import JAR, SHARE_JAR
from harness.workload.pipeline.supervisor import PipelineSupervisor
from harness.workload.producer.supervisor import MEMBER as PRODUCER_MEMBER
from harness.workload.share.supervisor import ShareSupervisor
from harness.workload.spark.supervisor import SparkSupervisor

LATE = LAG_OVERLOADED_MS * 4  # a sample the rule counts as overloaded
QUIET = 0.2  # a quiet machine's lag (ms)


def machine(
    late_from_ms: int = 0, late_to_ms: int = 0, end_ms: int = 100_000, pressed: bool = False
) -> Machine:
    """Samples every 100 ms over [0, end_ms]; those in (late_from, late_to] woke LATE (or,
    `pressed`, saw CPU pressure over the threshold instead)."""
    ts = np.arange(0, end_ms + 1, 100, dtype=np.int64)
    hit = (ts > late_from_ms) & (ts <= late_to_ms)
    lag = np.where(hit & (not pressed), LATE, QUIET)
    pressure = np.where(hit & pressed, 100.0, 10.0)
    return Machine(ts, lag, np.full(ts.shape, 3.0), np.zeros(ts.shape), 0.0, pressure)


def test_spans_cover_what_overloaded_rows_closed_and_merge() -> None:
    ts = [0, 100, 200, 300, 400, 600]
    over = [False, True, True, False, False, True]
    assert overloaded_spans(ts, over) == [(0, 200), (400, 600)]
    assert overloaded_spans([1000], [True], [LATE]) == [(1000 - int(LATE), 1000)]
    assert overloaded_spans(ts, [False] * 6) == []


def test_a_row_is_overloaded_by_its_lag_or_by_a_second_of_cpu_pressure() -> None:
    late = machine(10_000, 12_000)
    assert late.spans == [(10_000, 12_000)]
    pressed = machine(10_000, 12_000, pressed=True)
    # the 1 s mean reaches the threshold a few rows in and stays over it a little after
    ((a, b),) = pressed.spans
    assert 10_000 < a < 11_000 and 12_000 <= b < 13_000
    assert machine().spans == []
    # every core busy for a second: a light cell beside CPU burners shows only this
    quiet = machine()
    busy = np.where((quiet.ts_ms > 10_000) & (quiet.ts_ms <= 12_000), 100.0, 40.0)
    saturated = Machine(
        quiet.ts_ms, quiet.lag_ms, quiet.load1, quiet.steal_pct, 0.0, quiet.pressure_pct, busy
    )
    ((a, b),) = saturated.spans
    assert 10_000 < a < 11_000 and 12_000 <= b < 13_000
    no_psi = Machine(late.ts_ms, late.lag_ms, late.load1, late.steal_pct, 0.0, None)
    assert no_psi.spans == late.spans  # a kernel without PSI: the lag alone


def test_overlap_and_minus() -> None:
    assert overlap_ms([(0, 10), (20, 30)], [(5, 25)]) == 10
    assert overlap_ms([(0, 10)], [(10, 20)]) == 0
    assert minus((0, 100), [(10, 20), (50, 200)]) == [(0, 10), (20, 50)]
    assert minus((0, 100), []) == [(0, 100)]


@given(st.lists(st.tuples(st.integers(0, 1000), st.integers(1, 200)), max_size=6))
def test_minus_keeps_exactly_what_no_hole_covers(holes: list[tuple[int, int]]) -> None:
    spans = [(a, a + n) for a, n in holes]
    pieces = minus((0, 1000), spans)
    assert all(a < b for a, b in pieces)
    assert all(overlap_ms([p], [h]) == 0 for p in pieces for h in spans)
    covered = {t for a, b in spans for t in range(a, b)}
    assert sum(b - a for a, b in pieces) == sum(1 for t in range(1000) if t not in covered)


def test_a_window_inside_overloaded_time_is_undecided_with_the_load_in_its_reason() -> None:
    m = machine(10_000, 30_000)
    reason = overload_reason(m, [(15_000, 25_000)])
    assert reason is not None
    assert reason == (
        "machine overloaded for 10.0 s of this 10.0 s window"
        f" (CPU pressure p50 10 %, wake-up lag p99 {LATE / 1000:.2f} s, load up to 3.0)"
    )
    pressed = overload_reason(machine(10_000, 30_000, pressed=True), [(15_000, 25_000)])
    assert pressed is not None and "(CPU pressure p50 100 %, wake-up lag p99 0.00 s" in pressed


def test_the_reason_says_whose_cpu_it_was_the_cells_nodes_or_other_containers() -> None:
    m = machine(10_000, 30_000)
    ts = np.arange(100, 100_001, 100, dtype=np.int64)
    nodes = (ts, np.full(ts.shape, 150.0))  # 150 ms per 100 ms: 1.5 cores
    others = (ts, np.where(ts > 20_000, 40.0, 0.0))  # 0.4 cores from 20 s on
    mixed = replace(m, node_cpu=nodes, other_cpu=others)
    reason = overload_reason(mixed, [(15_000, 25_000)])
    assert reason is not None
    assert reason.endswith("Kafka's containers 1.50 cores, other containers 0.20 cores)")
    alone = overload_reason(
        replace(mixed, other_cpu=(ts[:0], ts[:0].astype(float))), [(15_000, 25_000)]
    )
    assert alone is not None and alone.endswith("Kafka's containers 1.50 cores)")


def test_a_window_across_overloaded_time_is_undecided_by_its_share() -> None:
    m = machine(10_000, 30_000)
    assert overload_reason(m, [(20_000, 35_000)]) is not None  # 10 s of 15 s
    assert overload_reason(m, [(20_000, 45_000)]) is None  # 10 s of 25 s: under the share
    # 20 s of a 90 s window: over OVERLOAD_MIN_S but under the share
    assert overload_reason(m, [(0, 90_000)]) is None
    # the share over all the windows of a figure together (the steady ack figure's pieces)
    assert overload_reason(m, [(5_000, 12_000), (15_000, 45_000)]) is None  # 17 s of 37 s
    assert overload_reason(m, [(5_000, 12_000), (15_000, 30_000)]) is not None  # 17 of 22


def test_a_window_outside_overloaded_time_and_a_short_overload_stand() -> None:
    m = machine(10_000, 30_000)
    assert overload_reason(m, [(40_000, 90_000)]) is None
    brief = machine(10_000, 10_000 + int(OVERLOAD_MIN_S * 1000) - 200)
    assert overload_reason(brief, [(9_000, 16_000)]) is None  # all of it, but too short
    assert overload_reason(machine(), [(0, 100_000)]) is None  # a quiet machine: nothing


def test_each_figure_is_judged_over_its_own_window() -> None:
    stalls = [
        {"set": "group", "start_ms": 20_000, "end_ms": 60_000, "duration_s": 40.0},
        {"set": "group", "start_ms": 70_000, "end_ms": 72_000, "duration_s": 2.0},
        {"set": "spark", "start_ms": 80_000, "end_ms": 90_000, "duration_s": 10.0},
    ]
    windows = figure_windows((0, 100_000), [(20_000, 50_000)], stalls, ["group", "spark"])
    assert windows["stall_s.group"] == [(20_000, 60_000)]  # the set's longest
    assert windows["max_stall_s"] == [(20_000, 60_000)]
    assert windows["stall_s.spark"] == [(80_000, 90_000)]
    assert windows["ack_p99_ms_faulted"] == [(20_000, 50_000)]
    assert windows["ack_p99_ms_steady"] == [(0, 20_000), (50_000, 100_000)]
    assert windows["unavailable_s"] == [(0, 100_000)]
    # Overloaded during the spark set's stall only: its figure, not the group's.
    found = overloaded_figures(machine(80_000, 90_000), windows)
    assert "stall_s.spark" in found and "stall_s.group" not in found
    assert "max_stall_s" not in found and "ack_p99_ms_faulted" not in found
    assert "ack_p99_ms_steady" not in found  # 10 s of its 70 s: under the share
    found = overloaded_figures(machine(0, 60_000), windows)
    assert {"stall_s.group", "max_stall_s", "unavailable_s"} <= set(found)
    assert "stall_s.spark" not in found
    # Changed with issue 62: the ack figures are judged by their samples, no longer by
    # their window's share (ack_p99_ms_faulted's window was all overloaded here).
    assert not set(LATENCY_METRICS) & set(found)


def test_the_verdict_undecides_an_overloaded_timing_figure_but_judges_counts() -> None:
    summary: Figures = {
        "counts": {"lost": 3},
        "stalls_by_set": {"group": 52.1},
        "overloaded": {"stall_s.group": "machine overloaded for 12.3 s of this 52.1 s window"},
    }
    expect = {"stall_s.group": parse_bound("< 45"), "lost": parse_bound("== 0")}
    stall, lost = evaluate(expect, summary)
    assert stall.verdict == "unknown"
    assert stall.detail == (
        "stall_s.group = 52.1 undecided: machine overloaded for 12.3 s of this 52.1 s window,"
        " expected < 45"
    )
    assert lost.verdict == "fail"  # counts are judged as always
    quiet = evaluate(expect, {**summary, "overloaded": {}})
    assert quiet[0].verdict == "fail"


def sampled(n: int, k: int, value: int | None, whole: int) -> OutsideOverload:
    return {"value": value, "whole": whole, "samples": n, "overloaded_samples": k}


def test_a_sampled_figure_is_undecided_only_when_too_few_samples_remain() -> None:
    """The measured case (issue 62): a steady window of 35 s, its first 9 s overloaded, 26 %
    of it: under the window share, but the p99's slowest 1 % all fell in those seconds."""
    windows = figure_windows((0, 35_000), [], [], [])
    m = machine(0, 9_000)
    entries = {
        "ack_p99_ms_steady": sampled(7_000, 1_800, 140, 513),  # 5,200 left: judged on them
        "ack_p99_ms": sampled(7_000, 6_950, 90, 513),  # 50 left: too few, and under half
        "ack_p50_ms": sampled(1_000, 600, 20, 95),  # 400 left: enough, but under half
        "ack_max_ms": sampled(200, 100, 40, 1_237),  # exactly 100 and half: enough
        "ack_p99_ms_recovering": sampled(50, 50, None, 700),  # none left
    }
    found = overloaded_figures(m, windows, entries)
    assert set(found) == {"ack_p99_ms", "ack_p50_ms", "ack_p99_ms_recovering"}
    assert found["ack_p99_ms"] == (
        "machine overloaded for 9.0 s of this 35.0 s window (CPU pressure p50 10 %, wake-up lag"
        f" p99 {LATE / 1000:.2f} s, load up to 3.0): 6,950 of the figure's 7,000 samples were"
        " taken while it was overloaded, 50 outside (fewer than 100, under half of them): too"
        " few to judge it by"
    )
    assert "400 outside (under half of them)" in found["ack_p50_ms"]
    assert "0 outside (fewer than 100, under half of them)" in found["ack_p99_ms_recovering"]
    assert [judged_outside(entries[k]) for k in ("ack_p99_ms_steady", "ack_max_ms")] == [True] * 2
    assert not judged_outside(entries["ack_p99_ms"]) and not judged_outside(None)
    assert not judged_outside(sampled(7_000, 0, 513, 513))  # none overloaded: the whole
    # Without the latency check's samples (a folder from before it) nothing is excused.
    assert not set(LATENCY_METRICS) & set(overloaded_figures(m, windows))


def test_the_verdict_judges_the_samples_outside_overload_and_names_both_figures() -> None:
    bound = {"ack_p99_ms_steady": parse_bound("< 150")}
    summary: Figures = {
        "ack_p99_ms_steady": 513,
        "outside_overload": {"ack_p99_ms_steady": sampled(7_000, 1_800, 140, 513)},
        "overloaded": {},
    }
    (check,) = evaluate(bound, summary)
    assert (check.verdict, check.detail) == (
        "pass",
        "ack_p99_ms_steady = 140 over the 5,200 samples outside the machine's overloaded"
        " seconds (513 over all 7,000; 1,800 taken while overloaded), expected < 150",
    )
    assert margins(bound, summary) == {"ack_p99_ms_steady": round((150 - 140) / 150, 4)}
    # A calibration reads the figure the verdict judged, not the one it did not.
    entry = bound_entry("ack_p99_ms_steady", bound["ack_p99_ms_steady"], [CellRun(dict(summary))])
    assert (entry["figures"], entry["verdicts"]) == ([140.0], ["pass"])
    # The figure outside overload can fail too: Kafka was slow when the machine was not.
    slow: Figures = {
        **summary,
        "outside_overload": {"ack_p99_ms_steady": sampled(7_000, 1_800, 160, 513)},
    }
    assert evaluate(bound, slow)[0].verdict == "fail"
    # Too few left: the machine check put it under `overloaded`: unknown, naming the load.
    reason = "machine overloaded for 34.0 s of this 35.0 s window (CPU busy p50 100 %): ..."
    few: Figures = {
        **summary,
        "outside_overload": {"ack_p99_ms_steady": sampled(7_000, 6_950, 90, 513)},
        "overloaded": {"ack_p99_ms_steady": reason},
    }
    (check,) = evaluate(bound, few)
    assert check.verdict == "unknown" and reason in check.detail
    assert check.detail.startswith("ack_p99_ms_steady = 513 undecided: machine overloaded")
    # An upper bound the whole figure meets is met: an overload only lengthens latencies.
    met: Figures = {**summary, "ack_p99_ms_steady": 120}
    met["outside_overload"] = {"ack_p99_ms_steady": sampled(7_000, 1_800, 100, 120)}
    (check,) = evaluate(bound, met)
    assert (check.verdict, check.detail) == ("pass", "ack_p99_ms_steady = 120, expected < 150")
    # A lower bound (a fault must hold the acks back): the whole figure missing it fails;
    # met over all samples but missed over the ones outside overload (which lean short) is
    # undecided, not failed; met over both passes.
    low = {"ack_p99_ms_faulted": parse_bound(">= 5000")}
    held = {"ack_p99_ms_faulted": sampled(900, 300, 4_000, 6_000)}
    (check,) = evaluate(low, {"ack_p99_ms_faulted": 6_000, "outside_overload": held})
    assert check.verdict == "unknown" and "over the 600 samples outside" in check.detail
    short = {"ack_p99_ms_faulted": sampled(900, 300, 3_000, 4_500)}
    (check,) = evaluate(low, {"ack_p99_ms_faulted": 4_500, "outside_overload": short})
    assert (check.verdict, check.detail) == ("fail", "ack_p99_ms_faulted = 4500, expected >= 5000")
    kept = {"ack_p99_ms_faulted": sampled(900, 300, 5_500, 6_000)}
    (check,) = evaluate(low, {"ack_p99_ms_faulted": 6_000, "outside_overload": kept})
    assert check.verdict == "pass"
    # No sample overloaded (or no entry at all): the whole figure, exactly as before.
    for quiet in ({}, {"ack_p99_ms_steady": sampled(7_000, 0, 513, 513)}):
        (check,) = evaluate(bound, {**summary, "outside_overload": quiet})
        assert (check.verdict, check.detail) == ("fail", "ack_p99_ms_steady = 513, expected < 150")


def test_a_maximum_is_undecided_when_half_its_own_window_was_overloaded() -> None:
    """The longest redelivery wait and the most a record was behind are one window each: no
    5 s minimum (the figure is that window), the share alone."""
    windows = figure_windows((0, 100_000), [], [], ["share"])
    windows.update(
        recorded_windows(
            {
                "producer_behind_max_s": [[10_000, 12_000]],  # 2 s, all overloaded
                "redelivery_wait_s.share": [[29_000, 31_000]],  # 1 s of 2 s: half
            }
        )
    )
    m = machine(10_000, 30_000)
    found = overloaded_figures(m, windows)
    assert found["producer_behind_max_s"].startswith(
        "machine overloaded for 2.0 s of this 2.0 s window ("
    )
    assert found["redelivery_wait_s.share"].startswith(
        "machine overloaded for 1.0 s of this 2.0 s window ("
    )
    # The sums are judged over the workload: 20 s of 100 s is under the share.
    assert not {"producer_behind_s", "producer_blocked_s"} & set(found)
    elsewhere = recorded_windows(
        {"producer_behind_max_s": [[40_000, 42_000]], "redelivery_wait_s.share": [[29_500, 32_000]]}
    )
    found = overloaded_figures(m, {**windows, **elsewhere})
    assert not {"producer_behind_max_s", "redelivery_wait_s.share"} & set(found)
    # A verdict on the undecided one is unknown; counts and decided figures as always.
    summary: Figures = {
        "producer_behind_max_s": 2.0,
        "overloaded": overloaded_figures(m, windows),
    }
    (check,) = evaluate({"producer_behind_max_s": parse_bound("< 1")}, summary)
    assert check.verdict == "unknown" and "machine overloaded for 2.0 s" in check.detail


# Figures whose unit is time that no overload rule judges, each with why. None today: a new
# time figure needs a rule (harness.results.overload_rules.RULES) or a line here saying why not.
EXEMPT: dict[str, str] = {}


def _leaf(metric: str) -> str:
    """`stall_s.group` -> stall_s, `broker.produce_p99_ms_max` -> produce_p99_ms_max."""
    per_set = split_per_set(metric)
    return per_set[0] if per_set else metric.rpartition(".")[2]


def _time_figures() -> set[str]:
    """Every figure an expectation can name (a per-set one for a set `g`), the summary's
    top-level figures and the ISR section's, whose unit is time (`_s`, `_ms`)."""
    names = {metric.replace("<set>", "g") for metric in ALLOWED_METRICS}
    names |= {*TIME_METRICS, *LATENCY_METRICS, *SCHEDULE_METRICS, *Figures.__annotations__}
    names |= {f"{name}.g" for name in (*PER_SET_KEYS, *SHARE_FIGURES)}
    names |= {f"{BROKER_PREFIX}{name}" for name in BROKER_FIGURES}
    names |= {f"isr.{name}" for name in ISR_FIGURES}
    return {n for n in names if _leaf(n).endswith("_s") or "_ms" in _leaf(n)}


def test_every_time_figure_is_judged_by_an_overload_rule_or_exempt_with_a_reason() -> None:
    figures = _time_figures()
    assert {"stall_s.g", "redelivery_wait_s.g", "broker.fetch_p99_ms_max"} <= figures
    unruled = sorted(f for f in figures if rule_of(f) is None and f not in EXEMPT)
    assert not unruled, f"time figures no overload rule judges (RULES or EXEMPT): {unruled}"
    assert all(EXEMPT.values()), "an exemption says why"
    stale = sorted(f for f in EXEMPT if f not in figures or rule_of(f) is not None)
    assert not stale, f"exempt, but not a time figure or judged by a rule: {stale}"
    # One rule per figure, and every rule's figure is a time figure.
    assert set(RULES.values()) == {WINDOW_SHARE, ONE_WINDOW, SAMPLES}
    assert all(_leaf(f).endswith("_s") or "_ms" in _leaf(f) for f in RULES)
    assert {rule_of(f) for f in ("ack_p99_ms_steady", "redelivery_wait_s.g", "stall_s.g")} == {
        SAMPLES,
        ONE_WINDOW,
        WINDOW_SHARE,
    }
    assert rule_of("lost") is None and rule_of("lost_never_consumed.g") is None


def test_summary_and_the_table_round_trip(tmp_path: Path) -> None:
    csv = tmp_path / "machine.csv"
    rows = [
        ",".join(COLUMNS),
        "1000,host,0.2,1.5,40.0,0.0,10.0,2,,",
        "1100,host,120.0,2.5,99.0,1.0,80.0,5,,",
        "1100,abcdef012345,,,,,,,55.5,0.0",
        "1100,999999999999,,,,,,,10.0,4.0",
        "1200,host,0.3,2.5,50.0",  # torn by a kill: left out
    ]
    csv.write_text("\n".join(rows))
    out = tmp_path / "machine.parquet"
    assert write_machine(csv, out, {"abcdef012345": "broker-1"}) == 4
    sources = pq.read_table(out).column("source").to_pylist()
    assert sources == ["host", "host", "broker-1", "other:999999999999"]
    m = read_machine(out)
    assert m is not None and list(m.ts_ms) == [1000, 1100]
    s = machine_summary(m)
    assert s["lag_max_ms"] == 120.0 and s["overloaded_s"] == 0.1 and s["samples"] == 2
    assert s["pressure_p50_pct"] == 27.5  # of the 1 s means 10 and (10 + 80) / 2
    assert s["load1_max"] == 2.5 and s["steal_max_pct"] == 1.0 and s["throttled_s"] == 0.0
    assert m.node_cpu is not None and m.other_cpu is not None
    assert list(m.node_cpu[1]) == [55.5] and list(m.other_cpu[1]) == [10.0]
    assert read_machine(tmp_path / "none.parquet") is None
    assert write_machine(tmp_path / "none.csv", out, {}) == 0


def test_the_sampler_reads_proc_and_cgroup_names() -> None:
    line = "cpu  100 0 50 800 50 0 0 25 0 0\ncpu0 1 2 3"
    t = cpu_times(line)
    assert t == CpuTimes(total=1025, idle=850, steal=25)
    busy, steal = shares(CpuTimes(0, 0, 0), t)
    assert round(busy, 1) == 17.1 and round(steal, 1) == 2.4
    assert shares(t, t) == (0.0, 0.0)
    cid = "a" * 64
    assert container_id(cid) == "a" * 12
    assert container_id(f"docker-{cid}.scope") == "a" * 12
    assert container_id("cgroup.procs") is None


def test_a_restarted_containers_counter_counts_from_zero_never_negative() -> None:
    """A killed broker started again keeps its container id but gets a new cgroup: its CPU
    counter restarts, and the row after the restart is the new cgroup's use so far (a
    calibration of share-coordinator-loss reported "Kafka's containers -0.79 cores")."""
    assert since(5_000.0, 4_850.0) == 150.0
    assert since(120.0, 9_000.0) == 120.0  # restarted: 120 ms since the new cgroup began


def _whose_load_table(tmp_path: Path, host_ms: float, every_second: dict[str, float]) -> Path:
    """machine.parquet of 10 s: a host row every 100 ms using `host_ms` of CPU, broker-1 at
    0.6 cores and another container at 0.1, and each `every_second` source's row once a
    second with its CPU ms."""
    csv = tmp_path / "machine.csv"
    rows = [",".join(COLUMNS)]
    for t in range(0, 10_001, 100):
        rows.append(f"{t},host,1.0,4.0,100.0,0.0,90.0,4,{host_ms},")
        if t:
            rows.append(f"{t},abcdef012345,,,,,,,60.0,0.0")  # broker-1: 0.6 cores
            rows.append(f"{t},999999999999,,,,,,,10.0,0.0")  # another container: 0.1
        if t and t % 1000 == 0:
            rows += [f"{t},{source},,,,,,,{ms}," for source, ms in every_second.items()]
    csv.write_text("\n".join(rows) + "\n")
    out = tmp_path / "machine.parquet"
    write_machine(csv, out, {"abcdef012345": "broker-1"})
    return out


def test_whose_load_splits_the_machines_cores_between_kafka_the_harness_and_the_rest(
    tmp_path: Path,
) -> None:
    """CI's busy host (2026-12-01) said only "Kafka's containers 0.65 cores" beside CPU busy
    p50 99 %: whether the rest was the cell's own clients or a neighbour was not told. Host rows
    now carry the machine's CPU ms, a `harness` row the runner's process tree's. A folder
    sampled before the `clients` rows (2026-12-07) reads as it did: no clients figure, the
    harness the whole tree."""
    # 10 s saturated on 2 cores, the runner's tree at 0.3 cores
    out = _whose_load_table(tmp_path, host_ms=200.0, every_second={"harness": 300.0})
    assert "harness" in set(pq.read_table(out).column("source").to_pylist())
    m = read_machine(out)
    assert m is not None and m.node_cpu is not None and m.harness_cpu is not None
    assert list(m.node_cpu[1][:2]) == [60.0, 60.0]  # the harness's rows are not a node's
    reason = overload_reason(m, [(0, 10_000)])
    assert reason is not None
    assert reason.endswith(
        "Kafka's containers 0.60 cores, other containers 0.10 cores, "
        "the harness's processes 0.30 cores, the rest of the machine 1.00 cores)"
    ), reason
    assert cores_by_whom(m) == {"kafka_cores": 0.6, "harness_cores": 0.3, "rest_cores": 1.0}
    assert {"kafka_cores", "harness_cores", "rest_cores"} <= set(machine_summary(m))
    assert m.clients_cpu is None and "clients_cores" not in machine_summary(m)
    assert "clients" not in reason


def test_whose_load_names_the_clients_apart_from_the_harness(tmp_path: Path) -> None:
    """Issue 62: the 1-2 cores "the harness's processes" used in acks=all cells were
    librdkafka's broker threads of the ledger producer (inside the runner), busy-polling
    while the brokers held the writes: the client under test. `clients` rows count them, and
    the member and producer processes, apart from the harness's own."""
    # 10 s saturated on 3 cores, the runner's own at 0.2 cores, the clients at 1.2
    out = _whose_load_table(
        tmp_path, host_ms=300.0, every_second={"harness": 200.0, "clients": 1200.0}
    )
    assert set(pq.read_table(out).column("source").to_pylist()) == {
        "host",
        "broker-1",
        "other:999999999999",
        "harness",
        "clients",
    }
    m = read_machine(out)
    assert m is not None and m.clients_cpu is not None and m.node_cpu is not None
    assert list(m.node_cpu[1][:2]) == [60.0, 60.0]  # nor are the clients' rows a node's
    reason = overload_reason(m, [(0, 10_000)])
    assert reason is not None
    assert reason.endswith(
        "Kafka's containers 0.60 cores, other containers 0.10 cores, "
        "the harness's processes 0.20 cores, the clients' processes 1.20 cores, "
        "the rest of the machine 0.90 cores)"
    ), reason
    assert cores_by_whom(m) == {
        "kafka_cores": 0.6,
        "harness_cores": 0.2,
        "clients_cores": 1.2,
        "rest_cores": 0.9,
    }
    summary = machine_summary(m)
    assert [k for k in summary if k.endswith("_cores")] == [
        "kafka_cores",
        "harness_cores",
        "clients_cores",
        "rest_cores",
    ]


def test_a_folder_sampled_before_the_harness_rows_does_not_guess_whose_the_rest_was(
    tmp_path: Path,
) -> None:
    csv = tmp_path / "machine.csv"
    rows = [",".join(COLUMNS)]
    for t in range(0, 10_001, 100):
        rows.append(f"{t},host,1.0,4.0,100.0,0.0,90.0,4,,")
        if t:
            rows.append(f"{t},abcdef012345,,,,,,,60.0,0.0")
    csv.write_text("\n".join(rows) + "\n")
    out = tmp_path / "machine.parquet"
    write_machine(csv, out, {"abcdef012345": "broker-1"})
    m = read_machine(out)
    assert m is not None and m.host_cpu is None and m.harness_cpu is None
    reason = overload_reason(m, [(0, 10_000)])
    assert reason is not None and reason.endswith("Kafka's containers 0.60 cores)"), reason
    assert cores_by_whom(m) == {"kafka_cores": 0.6}


def _stat(pid: int, name: str, ppid: int, jiffies: int, start: int, children: int = 0) -> str:
    """A /proc stat line: utime `jiffies`, cutime `children`, starttime `start`."""
    tail = ["S", str(ppid), *["0"] * 9, str(jiffies), "0", str(children), "0"]
    return f"{pid} ({name}) {' '.join([*tail, *['0'] * 4, str(start)])}\n"


def _proc(
    root: Path,
    pid: int,
    ppid: int,
    jiffies: int,
    cmd: str = "python",
    start: int = 0,
    children: int = 0,
) -> None:
    d = root / str(pid)
    d.mkdir(parents=True, exist_ok=True)
    (d / "stat").write_text(_stat(pid, f"{cmd} (x) y", ppid, jiffies, start, children))
    (d / "cmdline").write_bytes(cmd.replace(" ", "\0").encode())


def _thread(root: Path, pid: int, tid: int, name: str, jiffies: int, start: int = 0) -> None:
    d = root / str(pid) / "task" / str(tid)
    d.mkdir(parents=True, exist_ok=True)
    # a thread's cutime is its process's: never its own
    (d / "stat").write_text(_stat(tid, name, 1, jiffies, start, children=999))


def test_the_process_tree_counts_the_runners_descendants_not_burners_nor_strangers(
    tmp_path: Path,
) -> None:
    line = "7 (a ) b) S 3 0 0 0 0 0 0 0 0 0 10 20 30 40 0 0 0 0 555"
    assert parse_stat(line) == Task("a ) b", 3, 100, 555)
    assert parse_stat(line, children=False) == Task("a ) b", 3, 30, 555)
    assert parse_stat("garbage") is None
    _proc(tmp_path, 100, 1, 10)  # the runner
    _proc(tmp_path, 101, 100, 20)  # a child of the harness
    _proc(tmp_path, 102, 101, 30)  # its child (a JVM)
    _proc(tmp_path, 103, 100, 1000, "python -m harness.common.burners --max-s 9")
    _proc(tmp_path, 104, 103, 1000)  # under a burner: the burner's load, not the cell's
    _proc(tmp_path, 200, 1, 5000)  # a stranger
    (tmp_path / "self").mkdir()  # not a pid
    tree = ProcessTree(100, tmp_path)
    assert tree.read().total == 60
    assert tree.used_ms(10.0) is None  # the first reading has nothing to be since
    _proc(tmp_path, 101, 100, 25)
    assert tree.used_ms(10.0) == (50.0, 0.0)
    (tmp_path / "102" / "stat").unlink()  # exited, reaped outside the tree: never negative
    assert tree.used_ms(10.0) == (0.0, 0.0)
    assert ProcessTree(999, tmp_path).read().total == 0  # the runner gone


RUNNER = "python -m harness run spec.yaml"
GROUP = "python -m harness.workload.group.member --spec {} --runtime {} --consumer g/m0"


def test_a_process_is_a_client_by_its_command_line() -> None:
    """The sampler's names are the supervisors' (it imports nothing of the harness)."""
    modules = {
        s.member_module
        for s in (
            GroupSupervisor,
            ShareSupervisor,
            PipelineSupervisor,
            CommandSupervisor,
            SparkSupervisor,
        )
    }
    assert {m.encode() for m in (*modules, PRODUCER_MEMBER)} == CLIENT_MODULES
    assert {JAR.name.encode(), SHARE_JAR.name.encode()} == set(CLIENT_JARS)

    def kind(cmd: str) -> str | None:
        return process_kind(cmd.replace(" ", "\0").encode())

    assert kind(GROUP) == CLIENT
    assert kind("/v/bin/python -m harness.workload.producer.member --name p0") == CLIENT
    assert kind("python -m harness.workload.spark.member --spec {}") == CLIENT
    java = "java -Xmx512m -cp /r/java_clients/target/kafka-chaos-clients.jar:/r/lib/4.1/* "
    assert kind(java + "io.kafkachaos.clients.Bounded 9 60 io.kafkachaos.clients.GroupMember")
    assert kind("/usr/bin/" + java + "x") == CLIENT
    assert kind("java -cp /r/java_clients/lib/4.2/* kafka.admin.ShareGroupCommand") is None
    assert kind("python -m harness.workload.producer.pause_guard 7 60 1") is None
    assert kind("python -m harness.common.burners --max-s 9") == BURNER
    assert kind(RUNNER) is None and kind("") is None
    # A module named in an argument's value is not the process's module.
    assert kind("python -m harness.nodes.watchdog --x harness.workload.group.member") is None
    assert kind("bash -c java kafka-chaos-clients.jar") is None


def test_the_tree_splits_into_the_clients_and_the_harness() -> None:
    """A pure split: a client's subtree is the client's (its JVM not asked again), the
    runner's librdkafka threads are a client's, the rest of the tree the harness's."""
    procs = {
        100: Task("python", 1, 10, 5),  # the runner: its threads' time is in its own
        101: Task("python", 100, 20, 6),  # a group member
        102: Task("java", 101, 30, 7),  # ... its JVM
        103: Task("python", 100, 40, 8),  # the producer
        104: Task("java", 100, 50, 9),  # Spark's checks JVM: the harness's
        105: Task("python", 100, 1000, 10),  # a burner
        106: Task("python", 105, 1000, 11),  # ... its child
        200: Task("java", 1, 5000, 12),  # a stranger
    }
    kinds = {101: CLIENT, 103: CLIENT, 105: BURNER}
    asked: list[int] = []

    def kind(pid: int) -> str | None:
        asked.append(pid)
        return kinds.get(pid)

    threads = {
        100: Task("python", 1, 2, 5),
        110: Task("rdk:main", 1, 1, 50),
        111: Task("rdk:broker1", 1, 3, 51),
        112: Task("Thread-3", 1, 2, 52),
    }
    split = split_tree(100, procs, kind, threads)
    assert split.total == 150
    assert split.clients == {(101, 6): 50, (103, 8): 40, (110, 50): 1, (111, 51): 3}
    assert sorted(asked) == [100, 101, 103, 104, 105]  # not 102 (a client's), nor 106
    assert split_tree(999, procs, kind, {}).total == 0


def test_the_sampler_counts_a_clients_cpu_while_it_runs_and_what_a_new_one_used(
    tmp_path: Path,
) -> None:
    _proc(tmp_path, 100, 1, 10, RUNNER, start=5)
    _thread(tmp_path, 100, 100, "python", 5, start=5)
    _thread(tmp_path, 100, 110, "rdk:broker1", 5, start=50)
    _proc(tmp_path, 101, 100, 20, GROUP, start=6)
    _proc(tmp_path, 102, 100, 0, RUNNER, start=7)  # forked, not exec'd yet
    tree = ProcessTree(100, tmp_path)
    assert tree.used_ms(10.0) is None
    # The runner used 10 jiffies, 5 of them its librdkafka thread's; the member 7.
    _proc(tmp_path, 100, 1, 20, RUNNER, start=5)
    _thread(tmp_path, 100, 110, "rdk:broker1", 10, start=50)
    _proc(tmp_path, 101, 100, 27, GROUP, start=6)
    assert tree.used_ms(10.0) == (50.0, 120.0)
    # The member exits, reaped by the runner (its 29 jiffies go to the runner's cutime): its
    # last 2 are the harness's side; a new member (a pid used again) counts all it used; the
    # forked child has exec'd a member since: its command line is read again.
    (tmp_path / "101" / "stat").unlink()
    _proc(tmp_path, 100, 1, 20, RUNNER, start=5, children=29)
    _proc(tmp_path, 102, 100, 4, GROUP, start=7)
    _proc(tmp_path, 103, 100, 6, GROUP, start=60)
    assert tree.used_ms(10.0) == (20.0, 100.0)
    # A new librdkafka thread (an admin client's) counts all it used too.
    _thread(tmp_path, 100, 111, "rdk:main", 3, start=70)
    _proc(tmp_path, 100, 1, 23, RUNNER, start=5, children=29)
    assert tree.used_ms(10.0) == (0.0, 30.0)
    # A pid used again by another program is asked again (by its start): the member that
    # had it was reaped by the runner (its 6 jiffies counted already), the new one is not one.
    _proc(tmp_path, 100, 1, 23, RUNNER, start=5, children=35)
    _proc(tmp_path, 103, 100, 1, "python -m harness.nodes.watchdog", start=80)
    assert tree.used_ms(10.0) == (10.0, 0.0)
