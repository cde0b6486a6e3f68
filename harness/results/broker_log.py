"""A node's log (`<cell>/brokers/<node>.log`) read as events, and its ERROR/FATAL events
grouped by what failed rather than where.

The images print every logger with one pattern, `[%d] %p %m (%c)%n` (docker/log4j.properties
for 3.x, docker/log4j2.properties for 4.x), to stdout, so the file is `docker logs`: a line
`[2026-11-25 02:13:26,017] ERROR <message> (<logger>)` starts an event; any other line (a
stack trace, a multi-line message, the entrypoint's own output) belongs to the event above
it. The time is the node's clock as printed: UTC in the containers, and skewed on a node
whose clock a `clock-skew` fault moved (libfaketime): it is read as printed, not corrected.

A template is the first line's message with what differs between brokers, partitions and
runs replaced (numbers, UUIDs and Kafka's base64 ids, hex, quoted strings) and cut to
TEMPLATE_CHARS, so that one failure on three brokers or partitions is one template.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from harness.results.metrics import BrokerLogTemplate

# The levels whose events count as broker errors.
ERROR_LEVELS = ("ERROR", "FATAL")
_LEVELS = "TRACE|DEBUG|INFO|WARN|ERROR|FATAL"
_START = re.compile(
    rf"^\[(\d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d)(?:[,.](\d{{1,3}}))?\] ({_LEVELS}) ?(.*)$"
)
# ` (kafka.server.ReplicaManager)` at the end of a message line: the logger (%c). A stack
# frame's `(File.java:12)` has a colon, `(Native Method)` a space: neither matches.
_LOGGER = re.compile(r"\s\(([A-Za-z_$][\w$]*(?:\.[\w$]+)*)\)\s*$")
_FRAME = re.compile(r"^\s+(?:at |\.\.\. \d+ more)")
# How many continuation lines an event keeps (a stack trace's first lines say enough), and
# how much of a line a summary row keeps (a request's dump can run to kilobytes).
DETAIL_LINES = 8
LINE_CHARS = 2000


@dataclass(frozen=True)
class LogEvent:
    """One event of a node's log: its first line and the lines that followed it."""

    node: str
    ts: int | None  # ms since the epoch, the node's clock as printed (None: unreadable)
    level: str
    logger: str  # "" when the pattern's `(logger)` was not found
    message: str  # the first line's message, without the logger
    line: str  # the first line as printed
    detail: tuple[str, ...] = field(default=())  # continuation lines (up to DETAIL_LINES)


def _ts(stamp: str, millis: str | None) -> int | None:
    try:
        at = datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
    except ValueError:
        return None
    return int(at.timestamp()) * 1000 + int((millis or "0").ljust(3, "0"))


def _split_logger(text: str) -> tuple[str, str]:
    """A first line's text after the level as (logger, message): the logger "" when the
    line does not end in one."""
    found = _LOGGER.search(text)
    if found is None:
        return "", text
    return found.group(1), text[: found.start()]


def _message_of(line: str) -> str:
    """The message of an event's first line as printed (`LogEvent.message`): the line itself
    when it does not start an event."""
    match = _START.match(line)
    return line if match is None else _split_logger(match.group(4))[1].rstrip()


class _Open:
    """An event being read: its first line, then its continuation lines."""

    def __init__(self, match: re.Match[str], line: str) -> None:
        self.match = match
        self.line = line
        self.rest: list[str] = []

    def close(self, node: str) -> LogEvent:
        stamp, millis, level, rest = self.match.groups()
        logger, text = _split_logger(rest)
        if not logger:  # a multi-line message: the logger ends its last line, before any trace
            for extra in self.rest:
                if _FRAME.match(extra):
                    break
                found = _LOGGER.search(extra)
                if found is not None:
                    logger = found.group(1)
                    break
        return LogEvent(
            node=node,
            ts=_ts(stamp, millis),
            level=level,
            logger=logger,
            message=text.rstrip(),
            line=self.line,
            detail=tuple(self.rest[:DETAIL_LINES]),
        )


def parse_events(
    text: str | Iterable[str], node: str, levels: Iterable[str] = ERROR_LEVELS
) -> Iterator[LogEvent]:
    """The events of one node's log whose level is in `levels`, with their continuation
    lines; the lines before the first event (the entrypoint's) belong to none."""
    wanted = frozenset(levels)
    lines = text.splitlines() if isinstance(text, str) else (s.rstrip("\r\n") for s in text)
    current: _Open | None = None
    for line in lines:
        match = _START.match(line)
        if match is None:
            if current is not None and len(current.rest) < DETAIL_LINES and line.strip():
                current.rest.append(line)
            continue
        if current is not None:
            yield current.close(node)
        current = _Open(match, line) if match.group(3) in wanted else None
    if current is not None:
        yield current.close(node)


# --- templates ------------------------------------------------------------------------------
_NORMALISE: tuple[tuple[re.Pattern[str], str], ...] = (
    # 123e4567-e89b-12d3-a456-426614174000 (librdkafka member ids, transactional ids...)
    (
        re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"),
        "<uuid>",
    ),
    # Kafka's Uuid text: 22 url-safe base64 chars (a topic id: `lqhTHmJQQQi32pxUgTslww:chaos-0`)
    # with a digit before a letter somewhere (ReplicaFetcherThread-0 is 22 chars too)
    (re.compile(r"(?<![\w-])(?=[\w-]*\d[\w-]*[A-Za-z])[A-Za-z0-9_-]{22}(?![\w-])"), "<id>"),
    # a Java object's identity hash: Name@6d06d69c
    (re.compile(r"(?<=\w)@[0-9a-f]{1,8}\b"), "@<hex>"),
    # 0x1f, and hex of 8 or more digits with a letter and a digit (object hashes, ids)
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "<hex>"),
    (re.compile(r"(?<![\w-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{8,}(?![\w-])"), "<hex>"),
    # quoted strings: 'x', "x" (an apostrophe inside a word is no quote)
    (re.compile(r"(?<!\w)'[^'\n]*'(?!\w)"), "<str>"),
    (re.compile(r'"[^"\n]*"'), "<str>"),
    # numbers, dotted ones too (addresses, versions, decimals), unless a word ends in them
    # (IV0, log4j): `broker=1`, `chaos-0`, `/172.18.0.3:9092`, `epoch 12`
    (re.compile(r"(?<![A-Za-z0-9_])\d+(?:\.\d+)*"), "<n>"),
)


# A template's length: past it a message is a payload (a request's data dumped after
# `Unexpected error handling request RequestHeader(...) --`), whose shape varies by version.
TEMPLATE_CHARS = 240


def template(message: str) -> str:
    """The message with what varies between brokers, partitions and runs normalised, cut to
    TEMPLATE_CHARS (then ending in "...")."""
    for pattern, placeholder in _NORMALISE:
        message = pattern.sub(placeholder, message)
    if len(message) > TEMPLATE_CHARS:
        return message[: TEMPLATE_CHARS - 3] + "..."
    return message


# --- the allow list ---------------------------------------------------------------------------


def compile_allow(patterns: Iterable[str]) -> list[re.Pattern[str]]:
    """The spec's `broker_logs.allow` regexes; ValueError naming the first bad one."""
    compiled = []
    for pattern in patterns:
        try:
            compiled.append(re.compile(pattern))
        except re.error as exc:
            raise ValueError(f"{pattern!r} is not a regular expression ({exc})") from None
    return compiled


def allowed_by(patterns: Iterable[re.Pattern[str]]) -> Callable[[LogEvent], bool]:
    """Whether an event is allowed: a pattern is found (re.search) in its template, its raw
    message or its first continuation line (the exception: one template, `Error processing
    append operation on partition <topic>-<n>`, has several causes)."""
    compiled = list(patterns)

    def allowed(event: LogEvent) -> bool:
        return _found(compiled, (template(event.message), event.message, *event.detail[:1]))

    return allowed


def _found(patterns: Iterable[re.Pattern[str]], texts: Sequence[str]) -> bool:
    return any(p.search(text) for p in patterns for text in texts)


def row_allowed(patterns: Iterable[re.Pattern[str]], row: Mapping[str, Any]) -> bool:
    """Whether a grouped row (`group`'s template, example line and detail, as a summary or a
    calibration record keeps them) is allowed by `patterns`: re-judging a recorded count
    under an allow-list changed since (harness.verdict.calibrated). The example is the whole
    first line; the message is read back out of it, so that a pattern judges a row as
    `allowed_by` judged its event (a line cut at LINE_CHARS keeps its first 2,000 chars)."""
    example = str(row.get("example") or "")
    texts = (str(row.get("template") or ""), _message_of(example), str(row.get("detail") or ""))
    return _found(patterns, texts)


# --- grouping ---------------------------------------------------------------------------------


def group(
    events: Iterable[LogEvent], allowed: Callable[[LogEvent], bool] = lambda _e: False
) -> list[BrokerLogTemplate]:
    """One row per (logger, template, level, allowed): count, nodes, the first time and the
    earliest event's first line (and its first continuation line); the most frequent first."""
    rows: dict[tuple[str, str, str, bool], BrokerLogTemplate] = {}
    firsts: dict[tuple[str, str, str, bool], tuple[int, int]] = {}
    for index, event in enumerate(events):
        shape = template(event.message)
        key = (event.logger, shape, event.level, allowed(event))
        order = (event.ts if event.ts is not None else 2**62, index)
        row = rows.get(key)
        if row is None:
            row = rows[key] = {
                "logger": event.logger,
                "template": shape,
                "level": event.level,
                "count": 0,
                "nodes": [],
                "first_ts": event.ts,
                "example": event.line[:LINE_CHARS],
                "detail": _first(event.detail),
                "allowed": key[3],
            }
            firsts[key] = order
        row["count"] += 1
        if event.node not in row["nodes"]:
            row["nodes"] = sorted([*row["nodes"], event.node], key=_node_order)
        if order < firsts[key]:
            firsts[key] = order
            row["first_ts"] = event.ts
            row["example"] = event.line[:LINE_CHARS]
            row["detail"] = _first(event.detail)
    return sorted(
        rows.values(),
        key=lambda r: (-r["count"], r["first_ts"] if r["first_ts"] is not None else 2**62),
    )


def _first(detail: tuple[str, ...]) -> str:
    return detail[0].strip()[:LINE_CHARS] if detail else ""


def _node_order(node: str) -> tuple[int, int, str]:
    return (0, int(node), "") if node.isdigit() else (1, 0, node)
