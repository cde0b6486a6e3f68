"""Report layer: a hand-built cell folder renders to one static HTML file; run summaries aggregate."""

from __future__ import annotations

import base64
import io
import json
import xml.etree.ElementTree as ET
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.report import overall_verdict, render_table, write_cell_report, write_run_summary
from harness.report.log_tails import LogEntry, parse_log, tail_around
from harness.report.timeline import fault_windows, per_second_series, timeline_figure
from harness.results.tables import CONSUMED, COUNT_NAMES, LEDGER

T0 = int(datetime(2024, 5, 1, 12, 0, 0, tzinfo=timezone.utc).timestamp() * 1000)


BROKER_1_LOG = """\
preamble line without a timestamp
[2024-05-01 12:00:01,000] INFO outside-window line (kafka.server.KafkaServer)
[2024-05-01 12:00:09,500] WARN near-kill <script>alert(1)</script> (kafka.network.Processor)
java.io.IOException: continuation-of-near-kill
\tat kafka.network.Processor.run(Processor.scala:1)
[2024-05-01 12:00:40,000] INFO late-line outside every window (kafka.log.LogManager)
"""
BROKER_2_LOG = """\
[2024-05-01 12:00:11,000] ERROR broker-2 shutting-down-now (kafka.server.KafkaServer)
[2024-05-01 12:00:21,000] INFO broker-2 started-again (kafka.server.KafkaServer)
"""

SUMMARY: dict[str, Any] = {
    "cell": "acks=all,offsets_rf=1",
    "params": {"acks": "all", "offsets_rf": 1, "mode": "kraft"},
    "verdict": "fail",
    "counts": {
        "attempted": 60,
        "acked": 54,
        "lost": None,
        "lost_never_consumed": 7,
        "duplicated": 0,
        "reprocessed": 3,
        "unacked_present": 1,
        "out_of_order": 0,
    },
    "max_stall_s": 12.5,
    "unavailable_s": 4.25,
    "checks": [
        {"name": "lost", "verdict": "unknown", "detail": "log read incomplete"},
        {"name": "max_stall_s < 10", "verdict": "fail", "detail": "group stalled 12.5 s"},
        {"name": "duplicated == 0", "verdict": "pass", "detail": ""},
    ],
    "stalls_by_set": {"group": 12.5, "spark": None},
    "reprocessed_by_generation": [{"set": "group", "generation": 2, "records": 3}],
    "ownership_by_set": {
        "group": {"assignments": 4, "revocations": 2, "unowned_s": 9.25, "longest_unowned_s": 6.0}
    },
    "generation_waits": [
        {
            "set": "group",
            "consumer": "group/m1",
            "generation": 4,
            "ts": T0 + 20_000,
            "partitions": [0, 1],
            "waited_s": 6.0,
            "reprocessed": 3,
        },
        "not a row",  # a hand-edited summary still renders
    ],
    "resumptions": [
        {"consumer": "spark/q", "generation": 2, "committed": 30, "resumed_at": 30, "exact": True}
    ],
    "undecided": {"lost": "log read incomplete"},
    "duration_s": 45.0,
    "pipeline": {
        "guarantee": "exactly-once",
        "output_records": 8200,
        "output_uncommitted": 31,
        "origin_mismatch": 0,
    },
}


def _write_cell(cell_dir: Path) -> None:
    cell_dir.mkdir(parents=True)
    (cell_dir / "summary.json").write_text(json.dumps(SUMMARY))
    ledger: list[dict[str, Any]] = []
    for seq in range(60):
        send = T0 + 1_000 + seq * 500
        status = "fail" if 20 <= seq < 25 else "unknown" if seq == 25 else "ok"
        ack = None if status == "unknown" else send + 10
        ledger.append(
            {
                "seq": seq,
                "key": f"k{seq}",
                "partition": None if status != "ok" else seq % 3,
                "offset": None if status != "ok" else seq // 3,
                "status": status,
                "error": "timeout" if status == "fail" else None,
                "send_ts": send,
                "ack_ts": ack,
            }
        )
    pq.write_table(pa.Table.from_pylist(ledger, LEDGER), cell_dir / "ledger.parquet")
    consumed = [
        {
            "seq": r["seq"],
            "partition": r["partition"],
            "offset": r["offset"],
            "consumer": f"group/m{r['seq'] % 2}",
            "ts": r["ack_ts"] + 100,
            "generation": 1,
        }
        for r in ledger
        if r["status"] == "ok"
    ]
    consumed += [{**row, "consumer": "spark/q"} for row in consumed[:30]]
    pq.write_table(pa.Table.from_pylist(consumed, CONSUMED), cell_dir / "consumed.parquet")
    events = [
        {"ts": T0, "kind": "phase", "phase": "steady-state"},
        {"ts": T0 + 1_000, "kind": "phase", "phase": "workload"},
        {
            "ts": T0 + 10_000,
            "kind": "fault.inject",
            "fault_id": 1,
            "fault": "kill",
            "target": "broker-2",
        },
        {"ts": T0 + 12_000, "kind": "producer.errors", "count": 5, "error": "timeout"},
        {
            "ts": T0 + 20_000,
            "kind": "fault.heal",
            "fault_id": 1,
            "fault": "kill",
            "target": "broker-2",
        },
        {
            "ts": T0 + 25_000,
            "kind": "fault.inject",
            "fault_id": 2,
            "fault": "pause",
            "target": "broker-3",
        },
        {"ts": T0 + 40_000, "kind": "phase", "phase": "heal"},
        {"ts": T0 + 45_000, "kind": "phase", "phase": "done"},
    ]
    (cell_dir / "history.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    (cell_dir / "brokers").mkdir()
    (cell_dir / "brokers" / "broker-1.log").write_text(BROKER_1_LOG)
    (cell_dir / "brokers" / "broker-2.log").write_text(BROKER_2_LOG)


def test_cell_report_has_verdict_counts_plot_faults_and_log_tails(tmp_path: Path) -> None:
    cell_dir = tmp_path / "cells" / "c1"
    _write_cell(cell_dir)

    path = write_cell_report(cell_dir)

    assert path == cell_dir / "report.html"
    html = path.read_text()
    assert 'class="badge fail">fail<' in html
    assert "acks=all,offsets_rf=1" in html
    assert '<td>attempted</td><td class="num">60</td>' in html
    assert '<td>lost</td><td class="num">?</td><td>log read incomplete</td>' in html
    assert "group stalled 12.5 s" in html
    assert "12.5" in html and "4.2" in html  # stall and unavailability, one decimal
    assert "resumed_at" in html and "spark/q" in html  # resumption table
    assert "Reprocessed by generation" in html
    assert "Partition ownership and generations" in html
    assert "<td>group</td><td>4</td><td>2</td><td>9.2</td><td>6.0</td>" in html
    assert "<td>group/m1</td><td>4</td>" in html and "<td>0,1</td><td>6.0</td><td>3</td>" in html
    assert "not a row" in html
    assert "<h2>Pipeline</h2>" in html and "<td>8200</td><td>31</td><td>0</td>" in html
    prefix = '<img alt="timeline'
    assert prefix in html
    uri = html.split('src="data:image/png;base64,', 1)[1].split('"', 1)[0]
    assert base64.b64decode(uri).startswith(b"\x89PNG")
    assert "kill broker-2" in html and "pause broker-3" in html and "not healed" in html
    # log lines within ±5 s of a fault event, continuation lines kept with their entry
    assert "near-kill" in html and "continuation-of-near-kill" in html
    assert "shutting-down-now" in html and "started-again" in html
    assert "outside-window" not in html and "late-line" not in html
    assert "preamble line" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<script>" not in html
    assert "http://" not in html and "https://" not in html  # self-contained
    assert "Incomplete inputs" not in html


def test_cell_report_with_missing_inputs_still_renders_and_names_them(tmp_path: Path) -> None:
    cell_dir = tmp_path / "c2"
    _write_cell(cell_dir)
    (cell_dir / "ledger.parquet").unlink()
    (cell_dir / "consumed.parquet").unlink()
    (cell_dir / "summary.json").unlink()
    (cell_dir / "history.jsonl").write_text('{"ts": 1, "kind": "phase", "phase": "x"}\nnot json\n')

    html = write_cell_report(cell_dir).read_text()

    assert 'class="badge unknown">unknown<' in html
    assert "c2" in html
    assert "missing: ledger.parquet" in html
    assert "missing: consumed.parquet" in html
    assert "missing: summary.json" in html
    assert "1 line(s) of history.jsonl skipped" in html
    assert "data:image/png;base64," in html


def test_cell_report_of_an_empty_folder(tmp_path: Path) -> None:
    html = write_cell_report(tmp_path).read_text()
    for name in ("summary.json", "ledger.parquet", "consumed.parquet", "history.jsonl", "brokers"):
        assert f"missing: {name}" in html
    assert "data:image/png;base64," in html


def test_unreadable_parquet_is_reported(tmp_path: Path) -> None:
    (tmp_path / "ledger.parquet").write_bytes(b"not parquet")
    html = write_cell_report(tmp_path).read_text()
    assert "unreadable: ledger.parquet" in html


def test_tail_keeps_entries_nearest_the_event_up_to_the_cap() -> None:
    entries = [LogEntry(1_000 + i * 100, (f"line {i}",)) for i in range(101)]  # 1 s .. 11 s
    lines, omitted = tail_around(entries, center_ms=6_000, window_ms=5_000, max_lines=40)
    assert len(lines) == 40 and omitted == 61
    kept = [int(line.split()[1]) for line in lines]
    assert kept == sorted(kept)  # log order
    assert max(abs(1_000 + i * 100 - 6_000) for i in kept) <= 2_000


def test_parse_log_attaches_continuations_and_reads_utc() -> None:
    entries = parse_log(BROKER_1_LOG)
    assert [e.ts - T0 for e in entries] == [1_000, 9_500, 40_000]
    assert len(entries[1].lines) == 3


def test_fault_windows_pair_by_id_and_leave_unhealed_open() -> None:
    events = [
        {"ts": 5, "kind": "fault.inject", "fault_id": 2, "fault": "pause", "target": "b3"},
        {"ts": 1, "kind": "fault.inject", "fault_id": 1, "fault": "kill", "target": "b2"},
        {"ts": 3, "kind": "fault.heal", "fault_id": 1},
    ]
    windows = fault_windows(events)
    assert [(w.label, w.start_ms, w.end_ms) for w in windows] == [
        ("kill b2", 1, 3),
        ("pause b3", 5, None),
    ]


def test_consumer_crash_is_a_window_until_that_consumer_is_launched_again() -> None:
    events = [
        {"ts": 1, "kind": "consumer.launch", "consumer": "group/m0", "pid": 10},
        {"ts": 1, "kind": "consumer.launch", "consumer": "group/m1", "pid": 11},
        {"ts": 5, "kind": "consumer.crash", "consumer": "group/m0", "pid": 10},
        {"ts": 6, "kind": "consumer.launch", "consumer": "group/m1", "pid": 12},  # another member
        {"ts": 9, "kind": "consumer.launch", "consumer": "group/m0", "pid": 13},
        {"ts": 12, "kind": "consumer.crash", "consumer": "spark/q", "pid": 20},  # never relaunched
        # not faults: a member that did not stop on SIGTERM, a crash of one that was not running
        {"ts": 30, "kind": "consumer.crash", "consumer": "group/m1", "note": "did not stop"},
    ]
    windows = fault_windows(events)
    assert [(w.label, w.start_ms, w.end_ms) for w in windows] == [
        ("consumer-crash group/m0", 5, 9),
        ("consumer-crash spark/q", 12, None),
    ]


def test_cell_report_shows_a_consumer_crash_as_a_fault(tmp_path: Path) -> None:
    cell_dir = tmp_path / "c3"
    _write_cell(cell_dir)
    events = [
        {"ts": T0 + 1_000, "kind": "phase", "phase": "workload"},
        {"ts": T0 + 1_500, "kind": "consumer.launch", "consumer": "group/m0", "pid": 7},
        {"ts": T0 + 10_000, "kind": "consumer.crash", "consumer": "group/m0", "pid": 7},
        {"ts": T0 + 15_000, "kind": "consumer.launch", "consumer": "group/m0", "pid": 8},
        {
            "ts": T0 + 16_000,
            "kind": "fault.skipped",
            "index": 1,
            "fault": "kill",
            "target": "leader-of:chaos/0",
            "reason": "partition chaos/0 has no leader",
        },
    ]
    (cell_dir / "history.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))

    html = write_cell_report(cell_dir).read_text()

    assert "No faults in the history" not in html
    assert "consumer-crash group/m0" in html
    assert '<td class="num">5.0 s</td>' in html
    assert "kill leader-of:chaos/0" in html and "skipped: partition chaos/0 has no leader" in html


def _isr_history() -> list[dict[str, Any]]:
    """Two partitions of RF 3: p0's follower 2 leaves the ISR and returns, p1 loses its
    leader for a while; the watch ends at 40 s."""

    def state(s: float, p: int, leader: int | None, isr: list[int]) -> dict[str, Any]:
        return {
            "ts": T0 + int(s * 1000),
            "kind": "partition.state",
            "topic": "chaos",
            "partition": p,
            "leader": leader,
            "isr": isr,
            "replicas": [1, 2, 3],
        }

    return [
        {"ts": T0, "kind": "phase", "phase": "steady-state"},
        state(0.5, 0, 1, [1, 2, 3]),
        state(0.5, 1, 3, [1, 2, 3]),
        {"ts": T0 + 10_000, "kind": "fault.inject", "fault_id": 1, "fault": "kill", "target": "b2"},
        state(16, 0, 1, [1, 3]),
        state(18, 1, None, [3]),
        {"ts": T0 + 20_000, "kind": "fault.heal", "fault_id": 1, "fault": "kill", "target": "b2"},
        state(24, 1, 3, [1, 2, 3]),
        state(30, 0, 1, [1, 2, 3]),
        {"ts": T0 + 40_000, "kind": "partition.watch_end", "topic": "chaos", "failed": 1},
        {"ts": T0 + 41_000, "kind": "phase", "phase": "collect"},
    ]


def test_timeline_draws_an_isr_band_per_partition_under_the_series() -> None:
    fig = timeline_figure(None, None, _isr_history())
    rates, _lag, band = fig.axes
    assert band.get_shared_x_axes().joined(band, rates)  # one time axis, the fault shaded on it
    assert [t.get_text() for t in band.get_yticklabels()] == ["p0", "p1"]
    assert band.get_ylabel() == "ISR size"
    legend = band.get_legend()
    assert legend is not None
    # p1's ISR [3] without a leader is drawn as leaderless (and counts as a shrink)
    assert [t.get_text() for t in legend.get_texts()] == [
        "ISR full",
        "ISR 1 replica short",
        "no leader",
        "ISR shrank",
        "ISR grew",
    ]
    # one bar per state, each up to the partition's next state or the watch's end (40 s)
    bars = [
        path.get_extents() for collection in band.collections for path in collection.get_paths()
    ]
    spans = sorted((round(b.x0, 1), round(b.x1, 1), round(b.y0 + b.height / 2)) for b in bars)
    assert spans == [
        (0.5, 16.0, 0),
        (0.5, 18.0, 1),
        (16.0, 30.0, 0),
        (18.0, 24.0, 1),
        (24.0, 40.0, 1),
        (30.0, 40.0, 0),
    ]
    # the ISR's size written at each state; a mark where it shrank (v) or grew (^)
    assert sorted(t.get_text() for t in band.texts) == ["1", "2", "3", "3", "3", "3"]
    marks = [line.get_marker() for line in band.lines if line.get_marker() in ("v", "^")]
    assert sorted(marks) == ["^", "^", "v", "v"]


def test_timeline_without_partition_states_has_no_isr_band() -> None:
    history = [e for e in _isr_history() if e["kind"] != "partition.state"]
    assert len(timeline_figure(None, None, history).axes) == 2


def test_timeline_draws_the_machine_overloaded_spans_as_a_strip_under_the_rates() -> None:
    history = _isr_history()
    t0 = min(int(e["ts"]) for e in history)
    fig = timeline_figure(None, None, history, [(t0 + 5_000, t0 + 8_000)])
    top = fig.axes[0]
    strips = [p for p in top.patches if p.get_label() == "machine overloaded"]
    assert len(strips) == 1
    x0, width = strips[0].get_x(), strips[0].get_width()  # type: ignore[attr-defined]
    assert (round(x0, 2), round(width, 2)) == (5.0, 3.0)  # seconds since the timeline's start
    assert not [
        p
        for p in timeline_figure(None, None, history).axes[0].patches
        if p.get_label() == "machine overloaded"
    ]


def test_cell_report_shows_the_isr_figures_and_band(tmp_path: Path) -> None:
    cell_dir = tmp_path / "c4"
    _write_cell(cell_dir)
    isr = {
        "isr_shrinks": 2,
        "isr_expands": 2,
        "min_isr_size": 1,
        "under_replicated_s": 14.0,
        "failed_polls": 1,
    }
    (cell_dir / "summary.json").write_text(json.dumps({**SUMMARY, "isr": isr}))
    (cell_dir / "history.jsonl").write_text("".join(json.dumps(e) + "\n" for e in _isr_history()))

    html = write_cell_report(cell_dir).read_text()

    assert "<h2>ISR of the topic</h2>" in html
    assert (
        "<td><code>under_replicated_s</code></td>" in html and '<td class="num">14.0</td>' in html
    )
    assert "<td><code>min_isr_size</code></td>" in html
    assert "timeline plot failed" not in html
    # An old summary (no `isr`) or one of another shape: no section, no crash.
    for other in (None, [1, 2], "x"):
        summary = {**SUMMARY, **({} if other is None else {"isr": other})}
        (cell_dir / "summary.json").write_text(json.dumps(summary))
        assert "ISR of the topic" not in write_cell_report(cell_dir).read_text()


def test_lag_is_acked_minus_distinct_consumed() -> None:
    import pandas as pd

    ledger = pd.DataFrame(
        {
            "seq": [0, 1, 2],
            "status": ["ok", "ok", "fail"],
            "send_ts": [0, 0, 0],
            "ack_ts": [100, 1_100, 1_200],
        }
    )
    consumed = pd.DataFrame(
        {
            "seq": [0, 0, 1],
            "consumer": ["group/m0", "group/m1", "group/m0"],
            "ts": [200, 300, 2_500],
        }
    )
    rates, lag = per_second_series(ledger, consumed, t0=0, t_end=2_500)
    assert list(rates["acked/s"]) == [1, 1, 0]
    assert list(rates["errors/s"]) == [0, 1, 0]
    assert list(rates["consumed/s group"]) == [2, 0, 1]
    assert list(lag["lag group"]) == [0, 1, 0]


def _cell(name: str, verdict: str, **extra: Any) -> dict[str, Any]:
    return {
        "cell": name,
        "verdict": verdict,
        "counts": dict.fromkeys(COUNT_NAMES, 0),
        "max_stall_s": 1.26,
        "unavailable_s": 0.0,
        "checks": [],
        "stalls_by_set": {},
        "duration_s": 10.0,
        **extra,
    }


@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [
        (["pass", "pass"], "pass"),
        (["pass", "unknown"], "unknown"),
        (["unknown", "fail", "pass"], "fail"),
        (["pass", "bogus"], "unknown"),
        ([], "unknown"),
    ],
)
def test_overall_verdict(tmp_path: Path, verdicts: list[str], expected: str) -> None:
    cells = [_cell(f"c{i}", v) for i, v in enumerate(verdicts)]
    assert overall_verdict(cells) == expected
    info = {"run_id": "r1", "spec": "default", "seed": 7, "started": "now", "duration_s": 1.0}
    write_run_summary(tmp_path, info, cells)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["verdict"] == expected
    assert list(summary)[:6] == ["run_id", "spec", "seed", "verdict", "started", "duration_s"]
    assert summary["cells"] == cells


def _run_cells() -> list[dict[str, Any]]:
    failed = _cell(
        "acks=1",
        "fail",
        checks=[
            {"name": "lost == 0", "verdict": "fail", "detail": "3 acked records lost"},
            {"name": "duplicated == 0", "verdict": "pass", "detail": ""},
        ],
        stalls_by_set={"group": 12.5},
    )
    failed["counts"]["lost"] = 3
    unknown = _cell(
        "acks=all",
        "unknown",
        checks=[{"name": "order", "verdict": "unknown", "detail": "drain timed out"}],
        stalls_by_set={"group": None, "spark": 2.0},
        spark_by_set={
            "spark": {
                "read_twice": 40,
                "sink_duplicates": 0,
                "data_loss_stop": 1,
                "consumed_then_lost": None,
            }
        },
    )
    unknown["counts"]["lost"] = None
    return [_cell("acks=0", "pass"), failed, unknown]


def test_summary_markdown_rows(tmp_path: Path) -> None:
    write_run_summary(tmp_path, {"run_id": "r1", "spec": "default", "seed": 7}, _run_cells())
    md = (tmp_path / "summary.md").read_text().splitlines()
    header = next(line for line in md if line.startswith("| cell"))
    columns = [c.strip() for c in header.strip("|").split("|")]
    assert columns == [
        "cell",
        "verdict",
        "attempted",
        "acked",
        "lost",
        "lost_never_consumed",
        "duplicated",
        "reprocessed",
        "unacked_present",
        "out_of_order",
        "failed",
        "aborted_read",
        "torn_transaction",
        "inconsistent_offsets",
        "poll_skip",
        "nonmonotonic_send",
        "output_duplicates",
        "output_lost",
        "output_aborted",
        "max_stall_s",
        "unavailable_s",
        "ack_p99_ms",
        "stall_s.group",
        "stall_s.spark",
        "read_twice.spark",
        "sink_duplicates.spark",
        "data_loss_stop.spark",
        "consumed_then_lost.spark",
    ]
    rows = {
        cells[0]: cells
        for line in md
        if line.startswith("| acks")
        for cells in [[c.strip() for c in line.strip("|").split("|")]]
    }
    stall, sets = columns.index("max_stall_s"), columns.index("stall_s.group")
    spark = columns.index("read_twice.spark")
    assert rows["acks=1"][1] == "fail" and rows["acks=1"][4] == "3"
    assert rows["acks=1"][stall] == "1.3"  # one decimal
    assert rows["acks=1"][stall + 2] == "?"  # no ack latency in that cell
    assert rows["acks=1"][sets:] == ["12.5", "-", "-", "-", "-", "-"]  # no Spark set in that cell
    assert rows["acks=all"][spark:] == ["40", "0", "1", "?"]
    assert rows["acks=all"][4] == "?"
    assert rows["acks=all"][sets:spark] == ["?", "2.0"]
    assert rows["acks=0"][sets:] == ["-"] * 6
    notes = [line for line in md if line.startswith("- ")]
    assert len(notes) == 2
    assert "lost == 0" in notes[0] and "3 acked records lost" in notes[0]
    assert "order" in notes[1] and "drain timed out" in notes[1]


def test_junit_counts_and_messages(tmp_path: Path) -> None:
    write_run_summary(
        tmp_path, {"run_id": "r1", "spec": "default", "seed": 7, "duration_s": 30}, _run_cells()
    )
    root = ET.parse(tmp_path / "junit.xml").getroot()
    suites = root.findall("testsuite")
    assert len(suites) == 1
    suite = suites[0]
    assert suite.get("name") == "default"
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("3", "1", "1")
    cases = {case.get("name"): case for case in suite.findall("testcase")}
    assert set(cases) == {"acks=0", "acks=1", "acks=all"}
    assert all(
        c.get("classname") == "default" and c.get("time") == "10.000" for c in cases.values()
    )
    assert cases["acks=0"].find("failure") is None and cases["acks=0"].find("error") is None
    failure = cases["acks=1"].find("failure")
    assert failure is not None and "lost == 0" in (failure.get("message") or "")
    assert "duplicated" not in (failure.get("message") or "")
    error = cases["acks=all"].find("error")
    assert error is not None and "order" in (error.get("message") or "")
    out = cases["acks=1"].findtext("system-out") or ""
    assert "lost=3" in out and "stall_s.group=12.5" in out


def test_terminal_table_fits_100_columns_and_keeps_what_matters() -> None:
    """The end-of-run table: cell, verdict, acked, the figures that are not zero or that an
    expectation judged (undecided as `?`), stall, unavailable; every figure is in summary.md."""
    from rich.console import Console

    from harness.report.run_summary import TERMINAL_WIDTH, terminal_rows

    cells = _run_cells()
    cells[2]["checks"].append({"name": "read_twice.spark", "verdict": "pass", "detail": ""})
    table = render_table(cells)
    assert [c.header for c in table.columns] == [
        "cell", "verdict", "acked", "figures", "stall_s", "unavail_s"
    ]  # fmt: skip
    rows = {row[0]: row for row in terminal_rows(cells)}
    assert rows["acks=1"][1] == "fail" and "lost 3" in rows["acks=1"][3]
    assert "lost ?" in rows["acks=all"][3]  # undecided is never blank
    assert "read_twice.spark 40" in rows["acks=all"][3]  # an expectation's figure
    assert "lost" not in rows["acks=0"][3]  # zero and not expected: left to summary.md
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(table, width=TERMINAL_WIDTH)
    lines = console.export_text().splitlines()
    assert lines and max(len(line) for line in lines) <= TERMINAL_WIDTH
    assert sum("fail" in line for line in lines) == 1


@given(
    st.lists(st.tuples(st.integers(0, 300), st.integers(0, 10_000)), min_size=1, max_size=200),
    st.integers(0, 5_000_000),  # a far seq: the array path's bound, then pandas' groupby
)
def test_first_consumption_per_seq_is_groupbys_minimum(
    rows: list[tuple[int, int]], far: int
) -> None:
    import pandas as pd

    from harness.report.timeline import first_consumed

    for pairs in (rows, [*rows, (far, 7)]):
        seq = pd.Series([s for s, _ in pairs], dtype="int64")
        ts = pd.Series([t for _, t in pairs], dtype="int64")
        expected = sorted(ts.groupby(seq).min())
        assert sorted(first_consumed(seq, ts)) == expected
    with_nulls = pd.Series([float(t) for _, t in rows] + [float("nan")])
    seq = pd.Series([s for s, _ in rows] + [0], dtype="int64")
    # Null times (a float column) take the groupby: the same minimum, nulls skipped.
    got, want = first_consumed(seq, with_nulls), with_nulls.groupby(seq).min()
    assert sorted(got.fillna(-1)) == sorted(want.fillna(-1))
