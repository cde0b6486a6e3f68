"""The workload topic's leaders and ISRs over the cell, as the brokers' metadata has them.

A daemon thread polls the partition states about once a second and records a
`partition.state` event per partition at the first answer, then one each time a partition's
leader or ISR changed; the report draws them on the timeline and the summary counts ISR
shrinks and expands (harness.results.isr). A poll that raises or times out is skipped and
counted, never recorded one by one: the watch only looks, it must not break or slow the cell.
`stop` returns at once (a poll under way is left to finish and is then thrown away) and
records the watch's end with its counts; no event follows it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping

from harness.faults.control import PartitionState
from harness.results import events as ev
from harness.results.history import History

POLL_INTERVAL_S = 1.0
# Asked of each trusted broker in turn (harness.admin): usually one answers at once.
POLL_TIMEOUT_S = 3.0

# What one poll returns: partition -> its state (KafkaCluster.partition_states).
Poll = Callable[[], Mapping[int, PartitionState]]


class PartitionWatch:
    """Polls `poll` every `interval_s` in a daemon thread from `start` until `stop`."""

    def __init__(
        self, topic: str, poll: Poll, history: History, interval_s: float = POLL_INTERVAL_S
    ) -> None:
        self.topic = topic
        self.history = history
        self.interval_s = interval_s
        self.polls = 0  # answered
        self.failed = 0  # raised or timed out: skipped
        self.changes = 0  # partition.state events recorded
        self.error = ""  # the last failure's text
        self._poll = poll
        self._seen: dict[int, tuple[int | None, tuple[int, ...]]] = {}  # partition -> leader, isr
        self._lock = threading.Lock()  # one poll's events at a time, none after stop
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> PartitionWatch:
        if self._thread is None and not self._stop.is_set():
            self._thread = threading.Thread(
                target=self._run, name=f"partition-watch-{self.topic}", daemon=True
            )
            self._thread.start()
        return self

    def stop(self, final_poll: bool = False) -> None:
        """No event after this returns; the watch's end recorded once (if it ever started).

        `final_poll`: one last poll first, so the history ends on the state the cell ends in
        (the loop may be a second from its next poll: an ISR that came back just before the
        drain ended was missed, measured on a loaded machine)."""
        if final_poll and self._thread is not None and not self._stop.is_set():
            self.poll_once()
        with self._lock:
            if self._stop.is_set():
                return
            self._stop.set()
            if self._thread is not None:
                self.history.append(
                    ev.PARTITION_WATCH_END,
                    topic=self.topic,
                    polls=self.polls,
                    failed=self.failed,
                    changes=self.changes,
                    error=self.error,
                )

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _run(self) -> None:
        while not self._stop.is_set():
            started = time.monotonic()
            self.poll_once()
            self._stop.wait(max(0.0, self.interval_s - (time.monotonic() - started)))

    def poll_once(self) -> None:
        """One poll: an event per partition whose leader or ISR is not what was seen last."""
        try:
            states = {
                int(p): (s.leader, tuple(sorted(s.isr)), tuple(s.replicas))
                for p, s in self._poll().items()
            }
        except Exception as exc:  # a broker down, a timeout: the next poll will see
            with self._lock:
                self.failed += 1
                self.error = f"{type(exc).__name__}: {exc}"[:500]
            return
        with self._lock:
            if self._stop.is_set():
                return  # answered after the stop: the history is closed to the watch
            self.polls += 1
            for partition, (leader, isr, replicas) in sorted(states.items()):
                if self._seen.get(partition) == (leader, isr):
                    continue
                self._seen[partition] = (leader, isr)
                self.changes += 1
                self.history.append(
                    ev.PARTITION_STATE,
                    topic=self.topic,
                    partition=partition,
                    leader=leader,
                    isr=list(isr),
                    replicas=list(replicas),
                )
