"""Broker log errors: the parser and templates (harness.results.broker_log), the spec's
allow list, the broker_logs check on hand-built cell folders, the expectation and the
report's section. Log lines are copied from real 3.9.2 (log4j 1) and 4.3.1 (log4j2) logs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.report import write_cell_report
from harness.results import broker_log as bl
from harness.results import events as ev
from harness.results.metrics import Figures
from harness.spec import parse_spec
from harness.spec.expect import ALLOWED_METRICS, metric_problem, parse_bound
from harness.verdict.checks import evaluate
from spark_jobs.checks.broker_logs import broker_log_figures

# Kafka 3.9.2: the entrypoint's lines first, an INFO with a multi-line message, two ERRORs
# with an exception line each, an ERROR with a stack trace.
LOG_3 = """\
Formatting metadata directory /var/lib/kafka/data with metadata.version 3.9-IV0.
[2026-11-25 02:13:15,545] INFO KafkaConfig values:
\tadvertised.listeners = INTERNAL://broker-1:9092,EXTERNAL://127.0.0.1:52145
\tauto.create.topics.enable = true
 (kafka.server.KafkaConfig)
[2026-11-25 02:13:26,017] ERROR [ReplicaManager broker=1] Error processing append operation on partition chaos-0 (kafka.server.ReplicaManager)
org.apache.kafka.common.errors.InvalidTimestampException: One or more records have been rejected due to invalid timestamp
[2026-11-25 02:13:26,032] ERROR [ReplicaManager broker=1] Error processing append operation on partition chaos-2 (kafka.server.ReplicaManager)
org.apache.kafka.common.errors.InvalidTimestampException: One or more records have been rejected due to invalid timestamp
[2026-11-25 02:13:27,000] WARN [RaftManager id=1] Connection to node 2 (broker-2/172.18.0.3:9093) could not be established. Node may not be available. (org.apache.kafka.clients.NetworkClient)
[2026-11-25 02:13:28,419] ERROR [ControllerApis nodeId=1] Unexpected error handling request RequestHeader(apiKey=CONTROLLER_REGISTRATION, apiVersion=0, clientId=1, correlationId=0, headerVersion=2) -- ControllerRegistrationRequestData(controllerId=1, incarnationId=c9TT34JLStmCh2zP9Jo28Q) with context RequestContext(principalSerde=Optional[org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder@19abbc5e]) (kafka.server.ControllerApis)
java.util.concurrent.CompletionException: org.apache.kafka.common.errors.NotControllerException: The active controller appears to be node 3.
\tat java.base/java.util.concurrent.CompletableFuture.encodeThrowable(CompletableFuture.java:332)
\tat java.base/java.util.concurrent.CompletableFuture.uniApplyNow(CompletableFuture.java:674)
Caused by: org.apache.kafka.common.errors.NotControllerException: The active controller appears to be node 3.
[2026-11-25 02:13:29,000] INFO [KafkaRaftServer nodeId=1] Kafka Server started (kafka.server.KafkaRaftServer)
"""
# Kafka 4.3.1 prints a partition with its topic id; another broker, another partition.
LOG_4 = """\
[2026-11-25 02:25:08,032] ERROR [ReplicaManager broker=2] Error processing append operation on partition lqhTHmJQQQi32pxUgTslww:chaos-1 (kafka.server.ReplicaManager)
org.apache.kafka.common.errors.NotEnoughReplicasException: The size of the current ISR : 1 is insufficient to satisfy the min.isr requirement of 2 for partition chaos-1
[2026-11-25 02:25:09,100] FATAL [ReplicaManager broker=2] Shutdown broker because the metadata log dir /var/lib/kafka/data has failed (kafka.server.ReplicaManager)
"""
START = 1795572794526  # 2026-11-25 02:13:14.526 UTC: the history's first event


def _events(text: str, node: str = "1") -> list[bl.LogEvent]:
    return list(bl.parse_events(text, node))


# --- parsing --------------------------------------------------------------------------------


def test_errors_of_a_log4j_1_log_with_their_continuation_lines_attached() -> None:
    events = _events(LOG_3)
    assert [(e.level, e.logger) for e in events] == [
        ("ERROR", "kafka.server.ReplicaManager"),
        ("ERROR", "kafka.server.ReplicaManager"),
        ("ERROR", "kafka.server.ControllerApis"),
    ]
    first = events[0]
    assert first.ts == 1795572806017  # 2026-11-25 02:13:26,017 read as UTC
    assert first.message == (
        "[ReplicaManager broker=1] Error processing append operation on partition chaos-0"
    )
    assert first.detail == (
        "org.apache.kafka.common.errors.InvalidTimestampException: One or more records have"
        " been rejected due to invalid timestamp",
    )
    # The stack trace is the event's (4 lines), not events of their own.
    assert len(events[2].detail) == 4 and events[2].detail[1].startswith("\tat ")


def test_a_multi_line_error_message_finds_its_logger_on_its_last_line() -> None:
    text = (
        "[2026-11-25 02:13:26,017] ERROR Some values:\n"
        "\ta = 1\n"
        " (kafka.server.Something)\n"
        "\tat kafka.X.y(X.scala:12)\n"
    )
    (event,) = _events(text)
    assert event.logger == "kafka.server.Something"
    assert event.message == "Some values:"


def test_levels_other_than_error_and_fatal_are_left_out_unless_asked_for() -> None:
    assert {e.level for e in _events(LOG_3 + LOG_4)} == {"ERROR", "FATAL"}
    warns = list(bl.parse_events(LOG_3, "1", levels=("WARN",)))
    assert [e.logger for e in warns] == ["org.apache.kafka.clients.NetworkClient"]


# --- templates ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (
            "[ReplicaManager broker=2] Error processing append operation on partition"
            " lqhTHmJQQQi32pxUgTslww:chaos-1",
            "[ReplicaManager broker=<n>] Error processing append operation on partition"
            " <id>:chaos-<n>",
        ),
        (
            "Connection to node 2 (broker-2/172.18.0.3:9093) failed",
            "Connection to node <n> (broker-<n>/<n>:<n>) failed",
        ),
        (
            "member rdkafka-6b1c2a3e-0d4f-4c5e-9a8b-1234567890ab left, hash @19abbc5e",
            "member rdkafka-<uuid> left, hash @<hex>",
        ),
        ("owner '72057594037927937' does not match \"x y\"", "owner <str> does not match <str>"),
        # a word ending in digits stays a word; a 22-char name with no digit inside is no id
        (
            "metadata.version 3.9-IV0 on ReplicaFetcherThread-0",
            "metadata.version <n>-IV0 on ReplicaFetcherThread-<n>",
        ),
        ("offset 0x1f of segment 00000000000000000042", "offset <hex> of segment <n>"),
    ],
)
def test_a_template_normalises_what_varies(message: str, expected: str) -> None:
    assert bl.template(message) == expected


def test_a_long_template_and_example_are_cut() -> None:
    shape = bl.template("Unexpected error " + "x" * 1000)
    assert len(shape) == bl.TEMPLATE_CHARS and shape.endswith("...")
    line = "[2026-11-25 02:13:26,017] ERROR " + "y" * 5000 + " (a.B)"
    (row,) = bl.group(_events(line))
    assert len(row["example"]) == bl.LINE_CHARS and row["logger"] == "a.B"


def test_one_failure_on_two_brokers_and_partitions_is_one_row() -> None:
    log_b = LOG_3.replace("broker=1", "broker=3").replace("02:13:26,017", "02:13:25,500")
    rows = bl.group([*_events(LOG_3, "1"), *_events(log_b, "3"), *_events(LOG_4, "2")])
    top = rows[0]
    assert top["template"].endswith("on partition chaos-<n>")
    assert (top["count"], top["nodes"], top["level"]) == (4, ["1", "3"], "ERROR")
    assert top["first_ts"] == 1795572805500  # broker 3's, the earliest
    assert top["example"].startswith("[2026-11-25 02:13:25,500] ERROR [ReplicaManager broker=3]")
    assert top["detail"].startswith("org.apache.kafka.common.errors.InvalidTimestampException")
    # 4.x's topic-id form is a template of its own (the id normalised); FATAL is its own row
    shapes = {(r["level"], r["template"]) for r in rows}
    assert (
        "ERROR",
        "[ReplicaManager broker=<n>] Error processing append operation on partition <id>:chaos-<n>",
    ) in shapes
    assert sum(r["count"] for r in rows) == 8 and len(rows) == 4


# --- the allow list -------------------------------------------------------------------------


def test_an_allow_pattern_is_searched_in_the_template_and_the_raw_message() -> None:
    allowed = bl.allowed_by(bl.compile_allow([r"partition chaos-<n>$", "nodeId=1"]))
    events = _events(LOG_3)
    assert [allowed(e) for e in events] == [True, True, True]  # the last: its raw message
    assert not bl.allowed_by(bl.compile_allow(["chaos-0$"]))(_events(LOG_4)[0])
    # the exception line: one template, several causes
    by_cause = bl.allowed_by(bl.compile_allow(["NotEnoughReplicasException"]))
    assert [by_cause(e) for e in _events(LOG_4)] == [True, False]
    assert not any(by_cause(e) for e in events)


@pytest.mark.parametrize(
    "pattern",
    [
        r"^\[ReplicaManager broker=\d\]",  # anchored on the message's start
        r"chaos-0$",  # and on its end (the line goes on with the logger)
        r"partition chaos-<n>$",  # the template
        "NotEnoughReplicasException",  # the exception line
        r"^Error processing",  # found nowhere: the message starts with the bracket
    ],
)
def test_a_recorded_row_is_allowed_exactly_where_its_event_was(pattern: str) -> None:
    """A calibration record re-judges rows (row_allowed) that a run judged as events
    (allowed_by): each pattern must agree on both, anchored ones too."""
    compiled = bl.compile_allow([pattern])
    for event in [*_events(LOG_3), *_events(LOG_4, "2")]:
        (row,) = bl.group([event])
        assert bl.row_allowed(compiled, row) == bl.allowed_by(compiled)(event), event.line


def test_a_bad_allow_regex_is_refused_at_load_naming_it() -> None:
    with pytest.raises(ValueError, match=r"'Error \(append' is not a regular expression"):
        bl.compile_allow(["fine", "Error (append"])
    data: dict[str, Any] = {
        "name": "x",
        "producer": {"records": 10},
        "broker_logs": {"allow": ["ok", "Error (append"]},
    }
    with pytest.raises(Exception, match=r"broker_logs\.allow.*'Error \(append' is not a regular"):
        parse_spec(data)
    data["broker_logs"]["allow"] = ["Error processing append", r"NotController\w+"]
    assert parse_spec(data).broker_logs.allow == ["Error processing append", r"NotController\w+"]


# --- the check on hand-built cell folders ---------------------------------------------------


def _cell(tmp_path: Path, logs: dict[str, str], history: list[dict[str, Any]]) -> Path:
    cell = tmp_path / "cell"
    (cell / "brokers").mkdir(parents=True)
    for name, text in logs.items():
        (cell / "brokers" / f"{name}.log").write_text(text, encoding="utf-8")
    return cell


def _saved(files: dict[str, str], failed: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "ts": START + 60_000,
        "kind": ev.BROKER_LOGS_SAVED,
        "files": files,
        "failed": failed or {},
    }


SAVED_ALL = _saved({"broker-1": "1.log", "broker-2": "2.log"})


def test_the_check_counts_errors_and_lists_templates(tmp_path: Path) -> None:
    cell = _cell(tmp_path, {"1": LOG_3, "2": LOG_4}, [])
    out = broker_log_figures(cell, [SAVED_ALL])
    assert out["broker_errors"] == 5
    assert "undecided" not in out
    rows = out["broker_errors_by_template"]
    assert [r["count"] for r in rows] == [2, 1, 1, 1]
    assert not any(r["allowed"] for r in rows)


def test_allowed_events_are_listed_but_not_counted(tmp_path: Path) -> None:
    cell = _cell(tmp_path, {"1": LOG_3, "2": LOG_4}, [])
    allow = {
        "ts": START,
        "kind": ev.BROKER_LOGS_ALLOW,
        "allow": ["InvalidTimestamp|on partition chaos-<n>$", "CONTROLLER_REGISTRATION"],
    }
    out = broker_log_figures(cell, [allow, SAVED_ALL])
    assert out["broker_errors"] == 2  # 4.x's append error and the FATAL
    allowed = [(r["count"], r["logger"]) for r in out["broker_errors_by_template"] if r["allowed"]]
    assert allowed == [(2, "kafka.server.ReplicaManager"), (1, "kafka.server.ControllerApis")]


def test_no_broker_logs_is_undecided_never_zero(tmp_path: Path) -> None:
    out = broker_log_figures(tmp_path, [])
    assert out["broker_errors"] is None
    assert "no broker logs" in out["undecided"]["broker_errors"]
    empty = _cell(tmp_path, {}, [])
    assert broker_log_figures(empty, [])["broker_errors"] is None


def test_a_log_not_saved_makes_the_count_a_lower_bound_or_undecided(tmp_path: Path) -> None:
    cell = _cell(tmp_path, {"1": LOG_3}, [])
    saved = _saved({"broker-1": "1.log"}, {"broker-2": "NotFound: no such container"})
    out = broker_log_figures(cell, [saved])
    assert out["broker_errors"] == 3
    assert out["undecided"]["broker_errors"].startswith(
        "a lower bound (broker-2's log was not saved"
    )
    clean = _cell(tmp_path / "b", {"1": "[2026-11-25 02:13:29,000] INFO ok (x.Y)\n"}, [])
    out = broker_log_figures(clean, [saved])
    assert out["broker_errors"] is None and "broker-2" in out["undecided"]["broker_errors"]


def test_an_older_history_without_the_saved_event_checks_the_node_count(tmp_path: Path) -> None:
    cell = _cell(tmp_path, {"1": LOG_3}, [])
    started = {"ts": START, "kind": ev.CLUSTER_START, "nodes": ["broker-1", "broker-2"]}
    out = broker_log_figures(cell, [started])
    assert (
        out["broker_errors"] == 3
        and "1 log(s) in brokers/ for 2 node(s)" in out["undecided"]["broker_errors"]
    )
    started["nodes"] = ["broker-1"]
    assert "undecided" not in broker_log_figures(cell, [started])


# --- the expectation and the report -----------------------------------------------------------


def test_broker_errors_is_a_count_bound() -> None:
    assert "broker_errors" in ALLOWED_METRICS
    assert metric_problem("broker_errors", parse_bound("< 5"), []) is None
    assert metric_problem("broker_errors", parse_bound(0), []) is None
    bound = {"broker_errors": parse_bound(0)}
    summary: Figures = {"broker_errors": 3}
    assert [c.verdict for c in evaluate(bound, summary)] == ["fail"]
    assert [c.verdict for c in evaluate({"broker_errors": parse_bound("< 5")}, summary)] == ["pass"]
    undecided: Figures = {"broker_errors": None, "undecided": {"broker_errors": "no broker logs"}}
    (check,) = evaluate(bound, undecided)
    assert check.verdict == "unknown" and "no broker logs" in check.detail


def test_a_spec_may_expect_broker_errors() -> None:
    spec = parse_spec(
        {"name": "x", "producer": {"records": 10}, "expect": {"broker_errors": "< 5"}}
    )
    assert str(spec.expect["broker_errors"]) == "< 5"


def test_the_cell_report_lists_the_top_templates(tmp_path: Path) -> None:
    cell = _cell(tmp_path, {"1": LOG_3, "2": LOG_4}, [])
    figures = broker_log_figures(cell, [SAVED_ALL])
    summary = {"cell": "01_x", "verdict": "fail", **figures}
    (cell / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    (cell / "history.jsonl").write_text(
        json.dumps({"ts": START, "kind": "phase", "phase": "cluster"}) + "\n"
    )
    html = write_cell_report(cell).read_text(encoding="utf-8")
    assert "Broker log errors" in html
    assert "<strong>5</strong>" in html
    assert "Error processing append operation on partition chaos-&lt;n&gt;" in html
    assert "+11.5 s" in html  # 02:13:26,017 against the cell's start at 02:13:14.526
