"""A share-group member on Kafka's Java KafkaShareConsumer (io.kafkachaos.clients.ShareMember):
its command, and its events mapped onto the files the librdkafka member writes
(harness/workload/share/member.py), so share.parquet and every check read both alike.

The mapping (one event per stdout line, harness.workload.java.events's shape):
`share_delivered` -> a `delivered` share line (the broker's delivery count: the record's
deliveryCount()); `share_consumed` -> a `consumed` line (printed before its ACCEPT is sent);
`share_acked` -> an `acked` share line (error: the exception's simple name, e.g.
InvalidRecordStateException for an expired lock; none when the broker took it; ack `renew`:
a RENEW the broker refused, written only then);
`startup_complete` / `shutdown_complete` -> `consumer.start` (with the share fields) /
`consumer.stop`; `consumer_error` and any line that is not an event -> `consumer.error`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.results import events as ev
from harness.results.member_files import (
    ACKED,
    DELIVERED,
    ConsumedLine,
    MemberPaths,
    ShareLine,
    open_for_append,
)
from harness.spec.consumers import ShareConsumerSpec
from harness.workload.java.events import parse
from harness.workload.java.follow import Follower, append_events
from harness.workload.java.launch import PACKAGE, SHARE_JAR, java_command, write_properties
from harness.workload.runtime import Runtime

SHARE_MEMBER = f"{PACKAGE}.ShareMember"


def stdout_path(paths: MemberPaths) -> Path:
    return paths.directory / f"{paths.stem}.java.jsonl"


def command(spec: ShareConsumerSpec, runtime: Runtime, paths: MemberPaths) -> list[str]:
    props = write_properties(
        paths.directory / f"{paths.stem}.java.properties", dict(spec.client_settings)
    )
    args = [
        *("--bootstrap", runtime.bootstrap, "--topic", runtime.topic),
        *("--group-id", spec.group, "--name", paths.consumer, "--ack", spec.ack),
        *("--processing-ms", str(spec.processing_ms)),
        *("--jitter-ms", str(spec.processing_jitter_ms)),
        *("--release-every", str(spec.release_every), "--reject-every", str(spec.reject_every)),
        *("--renew-ms", str(spec.renew_ms)),
        *("--seed", f"{runtime.seed}/{paths.consumer}", "--config", str(props)),
    ]
    return java_command(runtime, SHARE_MEMBER, args, extra=[SHARE_JAR])


@dataclass
class ShareRows:
    share: list[ShareLine] = field(default_factory=list)
    consumed: list[ConsumedLine] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)


def _int(event: dict[str, Any], key: str) -> int | None:
    value = event.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def map_share_events(lines: list[str], start_fields: dict[str, Any]) -> ShareRows:
    """The member's stdout lines as its files' lines (the module's mapping)."""
    out = ShareRows()
    for line in lines:
        event = parse(line)
        if event is None:
            if line.strip():
                out.events.append({"kind": ev.CONSUMER_ERROR, "error": line[:200]})
            continue
        ts, name = int(event.get("timestamp", 0)), event["name"]
        seq, part, offset = _int(event, "seq"), _int(event, "partition"), _int(event, "offset")
        placed = seq is not None and part is not None and offset is not None
        if name == "share_delivered" and placed:
            count = _int(event, "delivery_count") or 1
            out.share.append(ShareLine(DELIVERED, seq, part, offset, count, "", "", ts))  # type: ignore[arg-type]
        elif name == "share_consumed" and placed and seq is not None and seq >= 0:
            out.consumed.append(ConsumedLine(seq, part, offset, ts, 0))  # type: ignore[arg-type]
        elif name == "share_acked" and placed:
            ack, error = str(event.get("ack") or "accept"), str(event.get("error") or "")
            out.share.append(ShareLine(ACKED, seq, part, offset, -1, ack, error, ts))  # type: ignore[arg-type]
        elif name == "startup_complete":
            pid = {k: event[k] for k in ("pid",) if k in event}
            out.events.append({"ts": ts, "kind": ev.CONSUMER_START, **start_fields, **pid})
        elif name == "shutdown_complete":
            out.events.append({"ts": ts, "kind": ev.CONSUMER_STOP, "generation": 0})
        elif name == "consumer_error":
            out.events.append({"ts": ts, "kind": ev.CONSUMER_ERROR, "error": event.get("error")})
    return out


class JavaShareMember:
    """Follows one Java share member's stdout (all its restarts) into its share, consumed
    and events files."""

    def __init__(self, spec: ShareConsumerSpec, paths: MemberPaths, start: dict[str, Any]) -> None:
        self.paths = paths
        self.pid = 0
        self.start_fields = {"client": "java", **start}
        self.follower = Follower(stdout_path(paths), self._write)

    def poll(self) -> None:
        self.follower.poll()

    def _write(self, lines: list[str]) -> None:
        rows = map_share_events(lines, self.start_fields)
        if rows.share:
            with open_for_append(self.paths.share) as f:
                f.writelines(line.csv() for line in rows.share)
        if rows.consumed:
            with open_for_append(self.paths.consumed) as f:
                f.writelines(line.csv() for line in rows.consumed)
        append_events(self.paths.events, {"consumer": self.paths.consumer}, rows.events)
