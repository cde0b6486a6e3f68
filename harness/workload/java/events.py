"""Kafka's verifiable clients' JSON events as the harness's rows: one mapping for
org.apache.kafka.tools.VerifiableConsumer (and VerifiableProducer) and for our own Java
clients, which print the same events (io.kafkachaos.clients).

Each stdout line of a Java client is one event `{"timestamp": ms, "name": ..., ...}`; what
it becomes is the same file line a librdkafka member would have written, so every table,
check and report reads a Java client's cell unchanged:

- producer: `producer_send` (ours, printed before the client gets the record) -> a
  `sends.csv` row; `producer_send_success` -> an `ok` acks row at its partition and offset;
  `producer_send_error` -> a `fail` row when the exception says the record was never
  written, else `unknown` (it may have been); `startup_complete` / `shutdown_complete` ->
  `producer.start` / `producer.end` (with `blocked_ms`: all time inside send());
  `producer_schedule` -> `producer.schedule`; `producer_send_blocked` -> `producer.blocked`
  (seq, ms: one send() call of 10 ms or more).
- consumer: `record_data` -> a `consumed` row (printed is processed), in the generation of
  the latest `partitions_assigned` (-> `consumer.assign`); `offsets_committed` -> `commits`
  rows, or `consumer.commit_failed`; `partitions_revoked` -> `consumer.revoke`;
  `startup_complete` / `shutdown_complete` -> `consumer.start` / `consumer.stop`.

A line that is not a JSON event is never a row (a consumer's is a `consumer.error` event);
a line torn by a SIGKILL is never read (harness.workload.java.follow reads whole lines and
seals a dead process's file before its restart appends to it).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from harness.results import events as ev
from harness.results.member_files import CommitLine, ConsumedLine
from harness.workload.records import decode_seq

# Exceptions after which the record was certainly not appended (refused before or by the
# leader's validation); any other error may come after the leader wrote it (a timeout, a
# lost connection, NotEnoughReplicasAfterAppend), so the record is `unknown`, as for
# librdkafka's POSSIBLY_WRITTEN codes (harness.workload.producer.core).
NOT_WRITTEN = frozenset(
    {
        "RecordTooLargeException",
        "RecordBatchTooLargeException",
        "InvalidTopicException",
        "InvalidRecordException",
        "CorruptRecordException",
        "SerializationException",
        "TopicAuthorizationException",
        "ClusterAuthorizationException",
        "TransactionalIdAuthorizationException",
        "UnsupportedVersionException",
        "UnsupportedForMessageFormatException",
        "InvalidRequiredAcksException",
        "NotEnoughReplicasException",
        "NotLeaderOrFollowerException",  # the broker refused it: not its leader
        "UnknownTopicOrPartitionException",
        "InterruptException",
    }
)

Row = tuple[Any, ...]


def parse(line: str) -> dict[str, Any] | None:
    """One event, or None for a line that is not one."""
    try:
        event = json.loads(line)
    except ValueError:
        return None
    return event if isinstance(event, dict) and isinstance(event.get("name"), str) else None


def record_seq(event: dict[str, Any]) -> int | None:
    """The seq an event's record carries: ours say it; Kafka's tools give the value (our
    20-digit head, or VerifiableProducer's counter, `<prefix>.<n>` with --value-prefix)."""
    seq = event.get("seq")
    if isinstance(seq, int):
        return seq
    value = event.get("value")
    if not isinstance(value, str):
        return None
    found = decode_seq(value.encode())
    if found is not None:
        return found
    tail = value.rsplit(".", 1)[-1]
    return int(tail) if tail.isdigit() else None


def exception_name(event: dict[str, Any]) -> str:
    return str(event.get("exception") or "").rsplit(".", 1)[-1]


def send_status(event: dict[str, Any]) -> str:
    """`fail` (never written) or `unknown` (maybe written) for a producer_send_error."""
    return "fail" if exception_name(event) in NOT_WRITTEN else "unknown"


@dataclass
class ProducerRows:
    """What producer lines became: rows of the sends and acks files, and events."""

    sends: list[Row] = field(default_factory=list)
    acks: list[Row] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)


def map_producer(lines: list[str], start_fields: dict[str, Any]) -> ProducerRows:
    """A producer's events (whole lines, in order) as rows; `start_fields` go into its
    `producer.start` (acks, rate, idempotence: what the spec asked of it)."""
    out = ProducerRows()
    for line in lines:
        event = parse(line)
        if event is None:
            continue  # our producer prints only events; a torn line is never whole
        ts, name = int(event.get("timestamp", 0)), event["name"]
        seq = record_seq(event)
        if name == "producer_send" and seq is not None:
            out.sends.append((seq, None, ts))
        elif name == "producer_send_success" and seq is not None:
            out.acks.append((seq, event.get("partition"), event.get("offset"), "ok", ts, None))
        elif name == "producer_send_error" and seq is not None:
            error = f"{exception_name(event)}: {event.get('message')}"
            out.acks.append((seq, None, None, send_status(event), ts, error))
        elif name == "startup_complete":
            fields: dict[str, Any] = {
                k: event[k] for k in ("client", "pid", "first_seq") if k in event
            }
            out.events.append({"ts": ts, "kind": ev.PRODUCER_START, **start_fields, **fields})
        elif name == "shutdown_complete":
            counts: dict[str, Any] = {
                k: event[k] for k in ("attempted", "acked", "failed", "blocked_ms") if k in event
            }
            out.events.append({"ts": ts, "kind": ev.PRODUCER_END, **counts})
        elif name == "producer_schedule":
            plan = {k: event.get(k) for k in ("first_seq", "rate", "end_ms", "planned")}
            out.events.append({"ts": ts, "kind": ev.PRODUCER_SCHEDULE, **plan})
        elif name == "producer_send_blocked" and seq is not None:
            ms = event.get("blocked_ms")
            out.events.append({"ts": ts, "kind": ev.PRODUCER_BLOCKED, "seq": seq, "ms": ms})
        elif name == "producer_error":
            error = f"{exception_name(event)}: {event.get('message')}"
            out.events.append({"ts": ts, "kind": ev.PRODUCER_CRASH, "error": error})
    return out


@dataclass
class ConsumerRows:
    consumed: list[ConsumedLine] = field(default_factory=list)
    commits: list[CommitLine] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class ConsumerMapper:
    """One member's events, line by line (it keeps the generation across calls).

    `next_generation` numbers an assignment within the set (shared by its members, like
    harness.results.member_files.next_generation); `start_fields` go into `consumer.start`
    (isolation, and pid for Kafka's tool, which does not print its own)."""

    next_generation: Callable[[], int]
    start_fields: Callable[[], dict[str, Any]]
    generation: int = 0

    def map(self, lines: list[str]) -> ConsumerRows:
        out = ConsumerRows()
        for line in lines:
            event = parse(line)
            if event is None:
                if line.strip():
                    out.events.append({"kind": ev.CONSUMER_ERROR, "error": line[:200]})
                continue
            self._one(event, out)
        return out

    def _one(self, event: dict[str, Any], out: ConsumerRows) -> None:
        ts, name = int(event.get("timestamp", 0)), event["name"]
        if name == "record_data":
            seq = record_seq(event)
            part, offset = event.get("partition"), event.get("offset")
            if seq is not None and isinstance(part, int) and isinstance(offset, int):
                out.consumed.append(ConsumedLine(seq, part, offset, ts, self.generation))
        elif name == "offsets_committed":
            if event.get("success", True):
                for o in event.get("offsets") or []:
                    if int(o.get("offset", -1)) >= 0:
                        out.commits.append(CommitLine(int(o["partition"]), int(o["offset"]), ts))
            else:
                out.events.append(
                    {"ts": ts, "kind": ev.CONSUMER_COMMIT_FAILED, "error": event.get("error")}
                )
        elif name in ("partitions_assigned", "partitions_revoked"):
            parts = sorted(int(p["partition"]) for p in event.get("partitions") or [])
            if name == "partitions_assigned":
                self.generation = self.next_generation()
                kind = ev.CONSUMER_ASSIGN
            else:
                kind = ev.CONSUMER_REVOKE
            out.events.append(
                {"ts": ts, "kind": kind, "generation": self.generation, "partitions": parts}
            )
        elif name == "startup_complete":
            fields = {**self.start_fields(), **{k: event[k] for k in ("pid",) if k in event}}
            out.events.append({"ts": ts, "kind": ev.CONSUMER_START, "client": "java", **fields})
        elif name == "shutdown_complete":
            out.events.append({"ts": ts, "kind": ev.CONSUMER_STOP, "generation": self.generation})
