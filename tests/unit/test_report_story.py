"""report.html leads with what a person wants to see: the verdict, a three-line story computed
from the summary and history (harness.report.story), then the timeline; the tables below.
Two figures on the page never share a name unless they count the same thing."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from harness.report import write_cell_report
from harness.report.story import done, found, kafka, story
from tests.unit.test_report import SUMMARY, T0, _isr_history, _write_cell

ISR = {"isr_shrinks": 2, "isr_expands": 2, "min_isr_size": 1, "under_replicated_s": 14.0}
BROKER = {"under_replicated_s": 3.0, "isr_shrinks": 0, "offline_partitions_s": 2.5}


def test_the_verdict_and_story_come_before_every_table_and_the_timeline_too(
    tmp_path: Path,
) -> None:
    cell = tmp_path / "c"
    _write_cell(cell)
    html = write_cell_report(cell).read_text()
    first_table = html.index("<table")
    verdict = html.index('class="badge fail">fail<')
    story_at = html.index('<section class="story">')
    timeline = html.index('<img alt="timeline')
    assert verdict < story_at < timeline < first_table
    for line in ("What was done:", "What Kafka did:", "What the checks found:"):
        assert story_at < html.index(line) < timeline
    headings = re.findall(r"<h2>(.*?)</h2>", html)
    assert headings[:3] == ["Timeline", "Faults", "Checks"]


def test_the_story_is_the_cells_own(tmp_path: Path) -> None:
    cell = tmp_path / "c"
    _write_cell(cell)
    html = write_cell_report(cell).read_text()
    told = (
        # the workload phase starts at T0 + 1 s: kill at +9 s for 10 s, pause never healed
        "kill broker-2 at +9.0 s for 10.0 s; pause broker-3 at +24.0 s never healed, while "
        "the producer sent 60 records.",
        "writes went unacknowledged for 4.2 s; consumers stalled up to 12.5 s (group).",
        "FAIL: 1 of 3 checks passed; lost unknown (log read incomplete); max_stall_s &lt; 10 "
        "fail (group stalled 12.5 s). 54 of 60 records acknowledged; lost_never_consumed 7, "
        "reprocessed 3, unacked_present 1; undecided: lost; every other count 0.",
    )
    story = html.split('<section class="story">', 1)[1].split("</section>", 1)[0]
    assert [line in story for line in told] == [True, True, True], story


def test_a_story_from_the_history_alone() -> None:
    events: list[dict[str, Any]] = [
        *_isr_history(),
        {"ts": T0 + 1_000, "kind": "phase", "phase": "workload"},
        {"ts": T0 + 1_000, "kind": "producer.start", "acks": "all", "rate": 300.0},
        {"ts": T0 + 500, "kind": "consumer.launch", "consumer": "group/m0", "pid": 1},
        {"ts": T0 + 500, "kind": "consumer.launch", "consumer": "group/m1", "pid": 2},
        {"ts": T0 + 30_000, "kind": "consumer.launch", "consumer": "group/m1", "pid": 3},
        {"ts": T0 + 2_000, "kind": "fault.skipped", "fault": "kill", "reason": "no leader"},
    ]
    text = done({"counts": {"attempted": 9000}}, events)
    assert text == (
        "kill b2 at +9.0 s for 10.0 s; 1 planned fault skipped, while the producer sent 9000 "
        "records (acks=all, 300 records/s), read by group (2 members)."
    )
    # p1 lost its leader and got the same one back: not a move; p0 kept its leader
    said = kafka({"isr": ISR, "recovered": False}, events)
    assert said.startswith("no leader moved; a partition was left without a leader; ")
    assert "ISRs shrank 2 times (to 1 replica), the topic under-replicated for 14.0 s" in said
    assert said.endswith("the cluster had not healed by the end of recovery.")


def test_a_story_of_nothing_says_so() -> None:
    told = story({}, [])
    assert told.done == "no fault, while the producer sent records."
    assert told.kafka.startswith("nothing measured")
    assert told.found == "UNKNOWN: 0 of 0 checks passed."
    # a hand-edited summary of other shapes is read as nothing, never a crash
    odd = {"counts": [1], "checks": {"a": 1}, "isr": "x", "broker": 3, "stalls_by_set": [2]}
    assert story(odd, []).found == "UNKNOWN: 0 of 0 checks passed."


def test_many_faults_are_counted_not_listed() -> None:
    events = [{"ts": T0, "kind": "phase", "phase": "workload"}]
    for i in range(6):
        events.append({"ts": T0 + i, "kind": "fault.inject", "fault_id": i, "fault": "kill"})
    assert done({}, events).startswith("kill ? at +0.0 s never healed; ")
    assert "; and 2 more, while" in done({}, events)


def test_a_pass_with_every_count_zero() -> None:
    summary = {
        "verdict": "pass",
        "checks": [{"name": "run", "verdict": "pass"}],
        "counts": {"attempted": 5, "acked": 5, "lost": 0, "duplicated": 0},
    }
    assert (
        found(summary) == "PASS: 1 of 1 check passed. 5 of 5 records acknowledged; every count 0."
    )


def first_cells(html: str) -> list[str]:
    """The names in the first column of every figure table: `<tr><td><code>NAME</code></td>`
    or `<tr><td>NAME</td>`."""
    return re.findall(r"<tr><td>(?:<code>)?([^<]+)(?:</code>)?</td><td", html)


def test_no_two_figures_share_a_name(tmp_path: Path) -> None:
    cell = tmp_path / "c"
    _write_cell(cell)
    summary = {**SUMMARY, "isr": ISR, "broker": BROKER}
    (cell / "summary.json").write_text(json.dumps(summary))
    html = write_cell_report(cell).read_text()
    tables = html.split("<h2>Counts</h2>", 1)[1].split("<h2>Parameters</h2>", 1)[0]
    figures = [  # (the checks table above names checks after their figures, on purpose)
        name
        for name in first_cells(tables)
        if re.fullmatch(r"[a-z_.]+", name) and name != "group"  # a set's rows, table by table
    ]
    assert {n for n, c in Counter(figures).items() if c > 1} == set()
    assert "isr_shrinks" in figures and "broker.isr_shrinks" in figures
    assert "under_replicated_s" in figures and "broker.under_replicated_s" in figures
    # and the page says why the two ISR views differ, with this cell's figures
    note = html.split('<p class="note">', 1)[1].split("</p>", 1)[0]
    assert "controller" in note
    assert "<code>isr_shrinks</code> 2" in note and "<code>broker.isr_shrinks</code> 0" in note
