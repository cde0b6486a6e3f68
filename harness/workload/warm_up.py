"""The warm-up: the cluster and the clients brought to their working pace before second 0.

A freshly started cluster is slow for its first seconds of traffic: the brokers' produce,
replication and fetch paths are still being compiled (C1, harness images), page cache and
purgatories are cold, and the ledger producer's first records wait for its connections and
metadata. Measured 2026-12-07 on a plain acks=all cell: ack p99 649-1,128 ms over the first
8 s of the workload, 95-280 ms after (docs/benchmarks.md, "The warm-up"). Those seconds are
the harness's start-up, not Kafka's behaviour under a fault, yet the first fault lands in
them and a quiet p99 is decided by them. So, as OpenMessaging Benchmark and Kafka's own perf
tools do, the cell runs traffic before it measures:

* a producer with acks=all (replication and the produce purgatory too) writes at the
  workload's rate (`warm_up_rate`) into a topic of its own (`WARM_UP_TOPIC`, shaped like the
  workload's topic: same partitions, replication factor and min.insync.replicas, so every
  broker leads and follows some of it), while a consumer reads it back (the fetch path);
* the ledger producer's own client is created now and loads the workload topic's metadata,
  when it runs in the runner; it never writes to the warm-up topic (a librdkafka producer
  keeps asking for every topic it wrote to, and a broker with auto.create.topics.enable
  re-created the deleted topic with one partition and one replica: CI, 2026-12-07);
* it goes on in windows of WINDOW_S until the windows' ack p99 stops improving (`settled`;
  in a run its last window after the previous cell's checks), at most the spec's
  `warm_up.max_s`; then the topic is deleted, so no figure (the brokers' under-replicated
  counts, a final read) ever sees it.

Nothing of it reaches the ledger, the consumed rows or a figure: its records are in no
file, and its outcome is one `warm_up.end` event (settled or not, seconds, each window's
p99). A warm-up that does not settle leaves the workload to start anyway; its timing figures
are then judged by the overload rule like any other (docs/results.md, "The machine").
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    KafkaError,
    Message,
    Producer,
    TopicPartition,
)

from harness.common.client_log import CLIENT_LOGGER

WARM_UP_TOPIC = "kafka-chaos-warm-up"
# Records/s: the workload's own rate, within these bounds. At 1,000/s on two cores the
# warm-up loaded the brokers to 1.5 cores: its windows settled at a loaded pace (two windows
# of 128 and 135 ms) and its backlog was still being served at second 0 of the workload.
MIN_RATE, MAX_RATE = 200, 1000
RECORD_BYTES = 100
WINDOW_S = 2.0  # 400-2,000 acks a window: its p99 is at least the 4th slowest, not one outlier
# Settled: the last two windows' p99 within SETTLE_RATIO of each other and the last within
# SETTLE_RATIO of the best window so far (the pace stopped improving: two equally slow
# windows early on are not it), or the last two under SETTLED_FLOOR_MS (a warm cluster's
# pace: on 2026-12-07 a run's warm windows spanned 22-60 ms and their ratios 1.2-2.3x, so
# the ratio alone kept one cell warming 12 s longer at that pace); never before MIN_WINDOWS
# windows.
SETTLE_RATIO = 1.5
SETTLED_FLOOR_MS = 60.0
# Four windows (8 s): with three (6 s) a plain cell's first 10 s had an ack p99 1.74x its
# last 10 s' in one run of three (40 vs 23 ms; 2026-12-07), its slowest acks in second 0.
MIN_WINDOWS = 4
# ... and the last window began and ended quiet (a run's previous cell's checks done): the
# windows beside the checks warm the brokers and count as the early, slower ones, but a pace
# measured beside Spark passes for the workload's only when it was fast even there
# (`settled_beside`): the checks only ever slow the brokers down. Nor need a quiet window
# agree with one beside them (inflated by their load: 86-136 ms against 32-35 ms quiet, six
# cells of eight waited a second window on 2026-12-07): after MIN_WINDOWS windows' worth of
# traffic, one quiet window under SETTLED_FLOOR_MS ends it (`settled_after_checks`).
CLOSE_TIMEOUT_S = 5.0
# Beside a previous cell's checks the traffic goes on (it warms the brokers all the same)
# for at most this long; the barrier after the warm-up then waits for the checks.
BESIDE_MAX_S = 900.0


def p99_ms(latencies_ms: Sequence[float]) -> float | None:
    """Nearest-rank p99 (as the latency check's): None without a sample."""
    if not latencies_ms:
        return None
    ordered = sorted(latencies_ms)
    return float(ordered[max(0, math.ceil(len(ordered) * 0.99) - 1)])


def settled(window_p99_ms: Sequence[float | None]) -> bool:
    """Whether the pace stopped improving (the rule above). A window without an ack (a
    stalled broker) is not settled."""
    if len(window_p99_ms) < MIN_WINDOWS:
        return False
    a, b = window_p99_ms[-2], window_p99_ms[-1]
    if a is None or b is None:
        return False
    if settled_beside(window_p99_ms):
        return True
    best = min(w for w in window_p99_ms if w is not None)
    return max(a, b) <= SETTLE_RATIO * min(a, b) and b <= SETTLE_RATIO * best


def settled_beside(window_p99_ms: Sequence[float | None]) -> bool:
    """Whether windows measured beside the previous cell's checks already show a warm
    cluster, so the workload may start the moment the checks end: the last two under
    SETTLED_FLOOR_MS, `settled`'s first way (its ratio way is not enough there: a slow pace
    that merely stopped changing may be the checks')."""
    if len(window_p99_ms) < MIN_WINDOWS:
        return False
    a, b = window_p99_ms[-2], window_p99_ms[-1]
    return a is not None and b is not None and max(a, b) <= SETTLED_FLOOR_MS


def settled_after_checks(window_p99_ms: Sequence[float | None], traffic_s: float) -> bool:
    """Whether the first windows after the previous cell's checks show a warm cluster: the
    last one under SETTLED_FLOOR_MS after at least MIN_WINDOWS windows' worth of traffic (a
    cold cluster's first windows measured 400-2,300 ms: its pace is never this fast)."""
    last = window_p99_ms[-1] if window_p99_ms else None
    return (
        traffic_s >= MIN_WINDOWS * WINDOW_S - 0.01 and last is not None and last <= SETTLED_FLOOR_MS
    )


def warm_up_rate(workload_rate: float) -> int:
    """The warm-up's records/s: the workload's, within MIN_RATE..MAX_RATE."""
    return int(min(max(workload_rate, MIN_RATE), MAX_RATE))


@dataclass(frozen=True)
class WarmUpOutcome:
    settled: bool
    seconds: float
    window_p99_ms: list[float | None]
    records: int  # acked by the warm-up producer
    beside_checks_s: float = 0.0  # of `seconds`, spent beside the previous cell's checks
    error: str | None = None  # why it stopped short (its clients or its topic failed)

    def fields(self) -> dict[str, object]:
        """The `warm_up.end` event's fields."""
        out: dict[str, object] = {
            "settled": self.settled,
            "seconds": round(self.seconds, 3),
            "window_p99_ms": self.window_p99_ms,
            "records": self.records,
            "beside_checks_s": self.beside_checks_s,
        }
        if self.error is not None:
            out["error"] = self.error
        return out


class _Acks:
    """The delivery reports of the current window, as latencies in ms."""

    def __init__(self) -> None:
        self.window: list[float] = []
        self.acked = 0

    def report(self, sent: float) -> Callable[[KafkaError | None, Message], None]:
        def done(err: KafkaError | None, msg: Message) -> None:
            if err is None:
                self.window.append((time.monotonic() - sent) * 1000)
                self.acked += 1

        return done

    def close_window(self) -> float | None:
        p99, self.window = p99_ms(self.window), []
        return None if p99 is None else round(p99, 1)


def warm_up(
    bootstrap: str,
    partitions: int,
    max_s: float,
    *,
    rate: int = MIN_RATE,
    warm_client: Callable[[], None] | None = None,
    quiet: Callable[[], bool] = lambda: True,
) -> WarmUpOutcome:
    """Traffic on WARM_UP_TOPIC (created and deleted by the caller) until it settles, at most
    `max_s` from when the machine is quiet. `warm_client()`: makes the ledger producer's own
    client (ProducerCore.warm; it never touches that topic). `quiet()`: whether the machine is
    the workload's alone (a run's previous cell's checks are done; once true it stays so,
    polled every turn of the loop): the window it turns true in ends there and a fresh one
    begins, so what the checks leave exposed is one window when it is fast
    (`settled_after_checks`), none when the windows beside them already were
    (`settled_beside`); the traffic before still warms the brokers, for up to BESIDE_MAX_S."""
    t0 = time.monotonic()
    acks = _Acks()
    windows: list[float | None] = []
    beside_s = 0.0
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "acks": "all",
            "linger.ms": 5,
            "client.id": "kafka-chaos-warm-up",
            "message.timeout.ms": int(max(max_s, 1) * 1000) + 10_000,
            "logger": CLIENT_LOGGER,  # the cell's clients.log, not the terminal
        }
    )
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "kafka-chaos-warm-up",  # never joined: assign() only, no commits
            "enable.auto.commit": False,
            "client.id": "kafka-chaos-warm-up",
            "logger": CLIENT_LOGGER,
        }
    )
    value = b"w" * RECORD_BYTES
    error: str | None = None
    sent = 0
    done = False
    try:
        consumer.assign(
            [TopicPartition(WARM_UP_TOPIC, p, OFFSET_BEGINNING) for p in range(partitions)]
        )
        if warm_client is not None:
            warm_client()
        start = time.monotonic()
        next_window = start + WINDOW_S
        quiet_from: float | None = start if quiet() else None
        while True:
            now = time.monotonic()
            due = min(int((now - start) * rate) - sent, rate)
            for _ in range(max(due, 0)):
                try:
                    producer.produce(WARM_UP_TOPIC, value, on_delivery=acks.report(now))
                except BufferError:
                    break
                sent += 1
            producer.poll(0)
            consumer.consume(num_messages=1000, timeout=0.01)
            if quiet_from is None and quiet():  # the checks just ended: a fresh window
                quiet_from = now
                beside_s = now - start
                if next_window - now <= WINDOW_S / 2:  # beside them to its end
                    windows.append(acks.close_window())
                else:  # too short to be a window (its p99, a few acks' slowest): warming
                    acks.close_window()
                next_window = now + WINDOW_S
                if settled_beside(windows):
                    done = True
                    break
                continue
            if quiet_from is None and now - t0 >= BESIDE_MAX_S:
                break
            if now < next_window:
                continue
            windows.append(acks.close_window())
            next_window += WINDOW_S
            if quiet_from is None:  # still beside the checks: warming all the same
                beside_s = now - start
                continue
            after_checks = beside_s > 0 and settled_after_checks(windows, now - start)
            if after_checks or settled(windows):  # its last window began and ended quiet
                done = True
                break
            if now - quiet_from >= max_s:
                break
    except Exception as exc:  # the warm-up is no measurement: the workload starts anyway
        error = f"{type(exc).__name__}: {exc}"[:300]
    finally:
        producer.purge()
        producer.flush(CLOSE_TIMEOUT_S)
        consumer.close()
    return WarmUpOutcome(
        done, time.monotonic() - t0, windows, acks.acked, round(beside_s, 3), error
    )
