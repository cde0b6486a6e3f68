"""Producer ack latency and failed sends on hand-built cells whose answers are known."""

from __future__ import annotations

import json
import math
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from harness.report import render_table, write_cell_report
from harness.report.run_summary import table_columns, table_rows
from harness.results.machine import HOST, MACHINE_SCHEMA
from harness.results.metrics import COUNT_NAMES, LATENCY_METRICS
from harness.results.tables import LEDGER, write_table
from harness.results.windows import fault_windows
from harness.spec.expect import ALLOWED_METRICS, metric_problem, parse_bound
from harness.verdict.checks import evaluate
from tests.unit.test_verify import as_written

pytestmark = pytest.mark.spark
needs_java = pytest.mark.skipif(
    shutil.which("java") is None and not os.environ.get("JAVA_HOME"),
    reason="Spark needs a Java runtime (java on PATH or JAVA_HOME); none found",
)

T = 1_700_000_000_000
Row = tuple[Any, ...]


def rec(seq: int, send: int, latency: int | None, status: str = "ok") -> Row:
    """A ledger row sent at `send`, acked `latency` ms later (None: no ack time)."""
    ack = None if latency is None else send + latency
    error = None if status == "ok" else "timed out"
    return (seq, f"k{seq}", 0, seq if status == "ok" else None, status, error, send, ack)


def write_cell(root: Path, ledger: list[Row] | None, history: list[dict[str, Any]] | None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    if ledger is not None:
        columns: list[Any] = list(zip(*ledger, strict=True)) if ledger else [()] * 8
        names = LEDGER.names[: len(columns)]  # the columns after them are null
        write_table(root / "ledger.parquet", LEDGER, dict(zip(names, columns, strict=True)))
    if history is not None:
        written = as_written(history, ledger, None)  # the producer.end a run writes
        (root / "history.jsonl").write_text("".join(json.dumps(e) + "\n" for e in written))
    return root


def ev(ts: int, kind: str, **fields: Any) -> dict[str, Any]:
    return {"ts": T + ts, "kind": kind, **fields}


PHASES = [ev(0, "phase", phase="workload"), ev(5000, "phase", phase="collect")]

# Records 0..299 sent every 10 ms. Kill 1 is open over [1000, 2000) ms: records 100..199;
# kill 2 from 2500 ms and never healed: records 250..299. So 150 faulted, 150 steady.
# A consumer crash over the whole run must not count (it is not on the producer's path).
# The partition watch saw every partition led with its full ISR: no heal leaves a recovery.
WATCHED = [
    ev(
        0,
        "partition.state",
        topic="chaos",
        partition=0,
        leader=1,
        isr=[1, 2, 3],
        replicas=[1, 2, 3],
    )
]

SPLIT_HISTORY = [
    *PHASES,
    *WATCHED,
    ev(0, "consumer.crash", consumer="group/m0", pid=7),
    ev(1000, "fault.inject", fault_id=1, fault="kill", target="kafka-1"),
    ev(1500, "fault.heal", fault_id=9, fault="kill", target="kafka-3"),  # heals nothing open
    ev(2000, "fault.heal", fault_id=1, fault="kill", target="kafka-1"),
    ev(2500, "fault.inject", fault_id=2, fault="kill", target="kafka-2"),
    ev(4000, "consumer.launch", consumer="group/m0", pid=8),
]


def split_ledger() -> list[Row]:
    """Steady records take 1..150 ms and faulted ones 1001..1150 ms, in send order; three
    more records failed or are unknown during kill 1 (never in the latency)."""
    rows: list[Row] = []
    steady = faulted = 0
    for i in range(300):
        if 100 <= i < 200 or i >= 250:
            faulted += 1
            rows.append(rec(i, T + 10 * i, 1000 + faulted))
        else:
            steady += 1
            rows.append(rec(i, T + 10 * i, steady))
    rows += [rec(300, T + 1200, 30_000, "fail"), rec(301, T + 1300, None, "fail")]
    rows += [rec(302, T + 1400, None, "unknown")]
    return rows


def verify(spark: Any, cell: Path) -> dict[str, Any]:
    from spark_jobs.verify import verify_cell

    return verify_cell(spark, cell)


@needs_java
def test_percentiles_are_exact_nearest_rank(tmp_path: Path, spark: Any) -> None:
    # Latencies 1..100 ms in shuffled send order, plus failures that must not count.
    ledger = [rec(i, T + 10 * i, (i * 37) % 100 + 1) for i in range(100)]
    ledger += [rec(100, T + 2000, 9_999, "fail"), rec(101, T + 2010, None, "fail")]
    ledger += [rec(102, T + 2020, None, "unknown")]
    out = verify(spark, write_cell(tmp_path, ledger, PHASES))
    assert (out["ack_p50_ms"], out["ack_p99_ms"], out["ack_max_ms"]) == (50, 99, 100)
    assert out["counts"]["failed"] == 2 and out["counts"]["acked"] == 100
    # No fault: every record is steady but record 0, sent before the first ack (its own):
    # 99 records of 2..100 ms, rank ceil(98.01) = 99.
    assert out["ack_p99_ms_steady"] == 100
    assert out["ack_p99_ms_faulted"] is None
    assert "no fault.inject" in out["undecided"]["ack_p99_ms_faulted"]
    assert not {"ack_p50_ms", "ack_p99_ms", "ack_max_ms", "failed"} & set(out["undecided"])


@needs_java
def test_percentiles_with_ties_are_latencies_records_had(tmp_path: Path, spark: Any) -> None:
    from spark_jobs.cell_data import LEDGER_SCHEMA, read_parquet
    from spark_jobs.checks.latency import latency_by_part

    # Ranks: p50 -> 3rd of 5 (5 ms), p99 -> 5th (200 ms); no interpolated 102.5. All five
    # were sent before the first ack (T + 6): the producer's start, none steady.
    ledger = [rec(i, T + i, lat) for i, lat in enumerate([200, 5, 10, 5, 5])]
    frame = read_parquet(
        spark, write_cell(tmp_path, ledger, None) / "ledger.parquet", LEDGER_SCHEMA
    )
    assert frame is not None
    parts = latency_by_part(frame, [])
    assert parts == {
        "all": {"acked": 5, "p50_ms": 5, "p99_ms": 200, "max_ms": 200},
        "start": {"acked": 5, "p50_ms": 5, "p99_ms": 200, "max_ms": 200},
    }


@needs_java
def test_faulted_and_steady_split_by_fault_windows(tmp_path: Path, spark: Any) -> None:
    out = verify(spark, write_cell(tmp_path, split_ledger(), SPLIT_HISTORY))
    assert out["ack_latency"] == {
        # 300 records: rank 150 is the slowest steady one, rank 297 the 147th faulted one.
        "all": {"acked": 300, "p50_ms": 150, "p99_ms": 1147, "max_ms": 1150},
        # 150 each (the window's start is in it, its heal is not): rank ceil(148.5) = 149.
        "faulted": {"acked": 150, "p50_ms": 1075, "p99_ms": 1149, "max_ms": 1150},
        # Record 0 was sent before the first ack (its own, 1 ms later): the start, not steady;
        # 149 steady ones take 2..150 ms: ranks ceil(74.5) = 75 and ceil(147.51) = 148.
        "steady": {"acked": 149, "p50_ms": 76, "p99_ms": 149, "max_ms": 150},
        "start": {"acked": 1, "p50_ms": 1, "p99_ms": 1, "max_ms": 1},
    }
    assert (out["ack_p99_ms_faulted"], out["ack_p99_ms_steady"]) == (1149, 149)
    assert (out["ack_p50_ms"], out["ack_p99_ms"], out["ack_max_ms"]) == (150, 1147, 1150)
    assert out["counts"]["failed"] == 2
    assert set(LATENCY_METRICS) & set(out["undecided"]) == {"ack_p99_ms_recovering"}
    assert "no recovery to measure" in out["undecided"]["ack_p99_ms_recovering"]


def state(ts: int, leader: int | None, isr: list[int]) -> dict[str, Any]:
    return ev(
        ts,
        "partition.state",
        topic="chaos",
        partition=0,
        leader=leader,
        isr=isr,
        replicas=[1, 2, 3],
    )


@needs_java
def test_records_sent_after_a_heal_until_the_full_isr_is_back_are_recovering(
    tmp_path: Path, spark: Any
) -> None:
    """Records every 10 ms: faulted while broker 1 is down [1000, 2000), recovering from
    its heal until the watch shows its ISR whole again at 2400 (leader 2 still: the
    preferred leader is not waited for), steady otherwise: the seconds after a heal no
    longer make the baseline's p99."""
    history = [
        *PHASES,
        state(0, 1, [1, 2, 3]),
        ev(1000, "fault.inject", fault_id=1, fault="kill", target="broker-1"),
        state(1300, 2, [2, 3]),
        ev(2000, "fault.heal", fault_id=1, fault="kill", target="broker-1"),
        state(2100, 2, [2, 3]),  # a poll after the heal, not yet whole
        state(2400, 2, [1, 2, 3]),
    ]
    ledger = []
    for i in range(300):
        latency = 1000 if 100 <= i < 200 else 500 if 200 <= i < 240 else 5
        ledger.append(rec(i, T + 10 * i, latency))
    out = verify(spark, write_cell(tmp_path, ledger, history))
    parts = out["ack_latency"]
    assert parts["recovering"] == {"acked": 40, "p50_ms": 500, "p99_ms": 500, "max_ms": 500}
    assert parts["faulted"]["acked"] == 100 and parts["start"]["acked"] == 1
    assert parts["steady"] == {"acked": 159, "p50_ms": 5, "p99_ms": 5, "max_ms": 5}
    assert (out["ack_p99_ms_recovering"], out["ack_p99_ms_steady"]) == (500, 5)
    assert not set(LATENCY_METRICS) & set(out["undecided"])


@needs_java
def test_without_a_partition_watch_a_heal_is_followed_by_a_capped_recovery(
    tmp_path: Path, spark: Any
) -> None:
    """A history without partition.state (before the watch) cannot say when the cluster
    recovered: RECOVERY_CAP_MS (30 s) after each heal is `recovering`."""
    history = [
        *PHASES,
        ev(1000, "fault.inject", fault_id=1, fault="kill", target="broker-1"),
        ev(2000, "fault.heal", fault_id=1, fault="kill", target="broker-1"),
    ]
    ledger = [rec(i, T + 10 * i, 5) for i in range(300)]
    out = verify(spark, write_cell(tmp_path, ledger, history))
    assert out["ack_latency"]["recovering"]["acked"] == 100  # 2000 .. 2990 ms
    assert out["ack_latency"]["steady"]["acked"] == 99  # 10 .. 990 ms (record 0: start)


@needs_java
def test_the_producer_s_start_up_is_no_part_of_the_steady_baseline(
    tmp_path: Path, spark: Any
) -> None:
    """Records sent before the first ack wait for connections and a producer id (1.2-1.6 s
    measured through link proxies on a loaded machine): were they steady, the baseline's
    p99 would be the start-up's, above an 800 ms latency fault's delay."""
    history = [
        *PHASES,
        ev(3000, "fault.inject", fault_id=1, fault="latency", target="broker-1"),
        ev(4000, "fault.heal", fault_id=1, fault="latency", target="broker-1"),
    ]
    start = [rec(i, T + 10 * i, 1500 - 10 * i) for i in range(50)]  # all acked at T + 1500
    steady = [rec(i, T + 10 * i, 10) for i in range(150, 300)]
    faulted = [rec(i, T + 10 * i, 900) for i in range(300, 400)]
    out = verify(spark, write_cell(tmp_path, [*start, *steady, *faulted], history))
    assert out["ack_p99_ms_steady"] == 10 and out["ack_p99_ms_faulted"] == 900
    assert out["ack_latency"]["start"] == {
        "acked": 50,
        "p50_ms": 1250,
        "p99_ms": 1500,
        "max_ms": 1500,
    }
    # The run's own p99 keeps every record: rank 297 of 300 is the 47th start-up one, 1470.
    assert out["ack_p99_ms"] == 1470


@needs_java
def test_every_acked_record_inside_a_fault_leaves_steady_undecided(
    tmp_path: Path, spark: Any
) -> None:
    history = [*PHASES, ev(0, "fault.inject", fault_id=1, fault="pause", target="kafka-1")]
    ledger = [rec(i, T + 10 * i, 20 + i) for i in range(10)]
    out = verify(spark, write_cell(tmp_path, ledger, history))
    assert out["ack_p99_ms_faulted"] == 29 and out["ack_p99_ms_steady"] is None
    assert "every acked record" in out["undecided"]["ack_p99_ms_steady"]
    assert out["ack_p99_ms_recovering"] is None
    assert "no heal left a partition" in out["undecided"]["ack_p99_ms_recovering"]


@needs_java
def test_empty_ledger_is_undecided_and_fails_nothing(tmp_path: Path, spark: Any) -> None:
    out = verify(spark, write_cell(tmp_path, [], SPLIT_HISTORY))
    assert out["counts"]["failed"] == 0 and out["ack_latency"] == {}
    for name in LATENCY_METRICS:
        assert out[name] is None
        assert out["undecided"][name] == "no acked record with an ack_ts: no ack latency"


@needs_java
def test_only_failures_give_no_latency(tmp_path: Path, spark: Any) -> None:
    ledger = [rec(i, T + i, None, "fail") for i in range(3)]
    out = verify(spark, write_cell(tmp_path, ledger, SPLIT_HISTORY))
    assert out["counts"]["failed"] == 3 and out["ack_p99_ms"] is None
    assert "no acked record" in out["undecided"]["ack_p99_ms"]


@needs_java
def test_missing_ledger_or_history(tmp_path: Path, spark: Any) -> None:
    out = verify(spark, write_cell(tmp_path / "a", None, SPLIT_HISTORY))
    assert out["counts"]["failed"] is None
    for name in ("failed", *LATENCY_METRICS):
        assert out["undecided"][name] == "ledger.parquet missing"
    out = verify(spark, write_cell(tmp_path / "b", split_ledger(), None))
    assert out["ack_p99_ms"] == 1147  # the run as a whole is still decided
    assert out["ack_p99_ms_faulted"] is None and out["ack_p99_ms_steady"] is None
    assert set(out["ack_latency"]) == {"all"}
    assert "history.jsonl missing" in out["undecided"]["ack_p99_ms_steady"]


# --- the machine's overloaded seconds: the ack figures over the samples outside them ---------
# Measured (issue 62): `ack_p99_ms_steady: "< 150"` over a ~35 s steady window, the machine
# saturated (CPU busy 96-100 %) for the first ~9 s of the workload: ack p99 557-1,237 ms in
# those seconds, 110-192 ms after them; the whole window's p99 513 ms, the verdict `fail`.
# Here: 200 records/s for 35 s; those sent in the first 9 s take 100-1,200 ms, the others
# 20-140 ms (under the bound, so the outcome is not a matter of a few ms).
SLOW_S = 9
BURST = [ev(0, "phase", phase="workload"), *WATCHED]


def burst_latency(i: int) -> int:
    return 100 + (i * 37) % 1101 if i < SLOW_S * 200 else 20 + (i * 37) % 121


def burst_ledger() -> list[Row]:
    return [rec(i, T + 5 * i, burst_latency(i)) for i in range(35 * 200)]


def write_machine(cell: Path, overloaded: tuple[int, int] | None) -> None:
    """Host rows every 100 ms over the run: those in (from, to] ms after T saturated (CPU
    busy 100 %, a sleep woke 400 ms late), the others quiet (busy 30 %, no lag)."""
    ts = list(range(T - 1_000, T + 36_001, 100))
    hot = [overloaded is not None and overloaded[0] < t - T <= overloaded[1] for t in ts]
    columns: dict[str, list[Any]] = {
        "ts_ms": ts,
        "source": [HOST] * len(ts),
        "lag_ms": [400.0 if h else 0.5 for h in hot],
        "load1": [6.0 if h else 1.0 for h in hot],
        "busy_pct": [100.0 if h else 30.0 for h in hot],
        "steal_pct": [0.0] * len(ts),
        "pressure_pct": [None] * len(ts),
        "running": [4] * len(ts),
        "cpu_ms": [None] * len(ts),
        "throttled_ms": [None] * len(ts),
    }
    pq.write_table(pa.table(columns, schema=MACHINE_SCHEMA), cell / "machine.parquet")


def nearest_rank(values: list[int], p: int) -> int:
    ordered = sorted(values)
    return ordered[math.ceil(len(ordered) * p / 100) - 1]


def steady_latencies(keep: Callable[[int], bool] = lambda i: True) -> list[int]:
    """The steady records' latencies (the first 20, sent before the first ack, are the
    start), those `keep` keeps by index."""
    return [burst_latency(i) for i in range(20, 35 * 200) if keep(i)]


STEADY_BOUND = {"ack_p99_ms_steady": parse_bound("< 150")}


@needs_java
def test_a_start_up_overload_leaves_the_steady_p99_to_the_samples_outside_it(
    tmp_path: Path, spark: Any
) -> None:
    """(a) The first 9 s of 35 overloaded (26 %: under the window share): the steady p99 is
    judged over the records sent after them, and passes; the detail names both figures."""
    cell = write_cell(tmp_path, burst_ledger(), BURST)
    write_machine(cell, (0, SLOW_S * 1000))
    out = verify(spark, cell)
    whole = nearest_rank(steady_latencies(), 99)
    outside = nearest_rank(steady_latencies(lambda i: i >= SLOW_S * 200), 99)
    assert whole > 1_000 and outside < 150  # the same records, the overload's 1 % left out
    assert out["ack_p99_ms_steady"] == whole  # the top-level figure keeps its meaning
    assert out["outside_overload"]["ack_p99_ms_steady"] == {
        "value": outside,
        "whole": whole,
        "samples": 6_980,
        "overloaded_samples": 1_780,
    }
    assert out["outside_overload"]["ack_p99_ms"]["overloaded_samples"] == 1_800
    assert out["overloaded"] == {}  # 5,200 samples outside: enough, and over half
    (check,) = evaluate(STEADY_BOUND, out)
    assert (check.verdict, check.detail) == (
        "pass",
        f"ack_p99_ms_steady = {outside} over the 5,200 samples outside the machine's overloaded"
        f" seconds ({whole} over all 6,980; 1,780 taken while overloaded), expected < 150",
    )


@needs_java
def test_an_overload_over_the_whole_window_leaves_the_ack_figures_undecided(
    tmp_path: Path, spark: Any
) -> None:
    """(b) Every sample taken while the machine was overloaded: nothing left to judge by."""
    cell = write_cell(tmp_path, burst_ledger(), BURST)
    write_machine(cell, (-1_000, 36_000))
    out = verify(spark, cell)
    entry = out["outside_overload"]["ack_p99_ms_steady"]
    assert (entry["value"], entry["overloaded_samples"]) == (None, 6_980)
    assert set(out["overloaded"]) >= {"ack_p50_ms", "ack_p99_ms", "ack_max_ms"} | set(STEADY_BOUND)
    (check,) = evaluate(STEADY_BOUND, out)
    assert check.verdict == "unknown"
    assert check.detail.startswith(
        f"ack_p99_ms_steady = {out['ack_p99_ms_steady']} undecided: machine overloaded for"
    )
    assert "(CPU busy p50 100 %" in check.detail
    assert "6,980 of the figure's 6,980 samples were taken while it was overloaded" in check.detail


@needs_java
def test_without_overloaded_seconds_the_whole_figure_is_judged_and_can_fail(
    tmp_path: Path, spark: Any
) -> None:
    """(c) A quiet machine: the same slow seconds are Kafka's, and the bound fails."""
    cell = write_cell(tmp_path, burst_ledger(), BURST)
    write_machine(cell, None)
    out = verify(spark, cell)
    assert out["outside_overload"] == {} and out["overloaded"] == {}
    whole = nearest_rank(steady_latencies(), 99)
    (check,) = evaluate(STEADY_BOUND, out)
    assert (check.verdict, check.detail) == ("fail", f"ack_p99_ms_steady = {whole}, expected < 150")


# --- plain Python: the windows, the bounds, the tables ---------------------------------------


def test_consumer_crashes_are_windows_but_not_producer_faults() -> None:
    windows = fault_windows(SPLIT_HISTORY)
    assert [(w.label, w.consumer_crash) for w in windows] == [
        ("consumer-crash group/m0", True),
        ("kill kafka-1", False),
        ("kill kafka-2", False),
    ]


def summary(**top: Any) -> dict[str, Any]:
    counts = dict.fromkeys(COUNT_NAMES, 0)
    counts["failed"] = 12
    latency = dict.fromkeys(LATENCY_METRICS)
    return {"counts": counts, **latency, "undecided": {}, **top}


def test_expectations_bound_latency_and_failed() -> None:
    assert {"failed", *LATENCY_METRICS} <= set(ALLOWED_METRICS)
    assert metric_problem("ack_p99_ms_faulted", parse_bound("< 5000"), []) is None
    assert "unknown metric" in str(metric_problem("ack_p98_ms", parse_bound(1), []))
    expect = {"ack_p99_ms": parse_bound("< 5000"), "failed": parse_bound("<= 10")}
    reason = {"ack_p99_ms_faulted": "no acked record was sent during the 1 fault window(s)"}
    checks = evaluate(
        {**expect, "ack_p99_ms_faulted": parse_bound("> 100")},
        summary(ack_p99_ms=4200, undecided=reason),
    )
    assert [(c.name, c.verdict) for c in checks] == [
        ("ack_p99_ms", "pass"),
        ("failed", "fail"),
        ("ack_p99_ms_faulted", "unknown"),
    ]
    assert checks[0].detail == "ack_p99_ms = 4200, expected < 5000"
    assert "no acked record was sent" in checks[2].detail


def test_run_table_shows_failed_and_ack_p99_only() -> None:
    cell = {"cell": "c1", "verdict": "pass", **summary(ack_p99_ms=870, ack_max_ms=9000)}
    columns = table_columns([cell])
    assert columns[-2:] == ["unavailable_s", "ack_p99_ms"] and "ack_max_ms" not in columns
    row = dict(zip(columns, table_rows([cell])[0], strict=True))
    assert (row["failed"], row["ack_p99_ms"]) == ("12", "870")
    assert len(render_table([cell]).columns) == 6  # the terminal's: summary.md has them all


def test_cell_report_shows_latency_with_reasons(tmp_path: Path) -> None:
    cell = {
        "cell": "c1",
        "verdict": "pass",
        **summary(ack_p50_ms=12, ack_p99_ms=870, ack_max_ms=9000, ack_p99_ms_steady=40),
        "ack_latency": {"all": {"acked": 5, "p50_ms": 12, "p99_ms": 870, "max_ms": 9000}},
        "undecided": {"ack_p99_ms_faulted": "no fault.inject in history.jsonl: nothing sent"},
    }
    (tmp_path / "summary.json").write_text(json.dumps(cell))
    html = write_cell_report(tmp_path).read_text()
    section = html.split("<h2>Producer acks</h2>", 1)[1].split("<h2>", 1)[0]
    assert "870" in section and "9000" in section and ">40<" in section
    assert "no fault.inject in history.jsonl" in section
    assert "<td>failed</td>" in html  # a count, in the counts table
