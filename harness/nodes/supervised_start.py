"""Starting a Kafka node as systemd or Kubernetes would: again while it exits early.

A ZooKeeper-mode broker killed less than zookeeper.session.timeout.ms ago finds its old
registration still there and exits (NodeExistsException); a supervisor starts it again, and
so does the harness, until the timeout: at a kill's or a stop's heal, and when an upgrade or
a migration roll has just put the node on a new container (a kill planned during that step
leaves the same registration behind).
"""

from __future__ import annotations

import time
from typing import Protocol

from harness.common.waiting import wait_until
from harness.errors import ClusterStartError, WaitTimeout
from harness.results import events as ev
from harness.results.history import History

RESTART_BACKOFF_S = 2.0
# A node that exits before its start-up line this many times in a row is one Kafka refuses
# to start (a log directory it cannot read takes the broker down at every start): a
# supervisor stops trying after a burst (systemd's StartLimitBurst is 5), and so does the
# harness, instead of restarting it until the timeout. A ZooKeeper-mode registration left by
# a kill expires within zookeeper.session.timeout.ms (18 s by default): 3-5 early exits.
MAX_EARLY_EXITS = 8


class NodeRefusedStart(ClusterStartError):
    """Kafka's process exited before its start-up line MAX_EARLY_EXITS times in a row: the
    node's own outcome (KAFKA-16541's unreadable checkpoint), not the harness's failure."""


class Startable(Protocol):
    @property
    def name(self) -> str: ...
    def start(self) -> None: ...
    def wait_started(self, timeout_s: float) -> None: ...
    def is_up(self) -> bool: ...


def start_supervised(
    node: Startable, history: History, timeout_s: float, *, started: bool = False
) -> None:
    """Start `node` (not the first time when `started`: its container was just started) and
    wait for its start-up line, starting it again while it exits before logging it; each
    early exit is a `node.start_failed` event. A node running but silent is not restarted:
    its ClusterStartError is raised at once; one that exits early MAX_EARLY_EXITS times in a
    row, NodeRefusedStart."""
    deadline = time.monotonic() + timeout_s
    pending_start = [not started]
    exits = [0]

    def start_once() -> ClusterStartError | None:
        """None once started; the error if the node exited before logging start-up."""
        if pending_start[0]:
            node.start()
        pending_start[0] = True
        try:
            node.wait_started(max(1.0, deadline - time.monotonic()))
        except ClusterStartError as exc:
            if node.is_up():
                raise  # running but silent: starting it again would not help
            exits[0] += 1
            if exits[0] >= MAX_EARLY_EXITS:
                reason = str(exc).splitlines()[0]
                raise NodeRefusedStart(
                    f"{node.name} exited before its start-up line {exits[0]} times in a row; "
                    f"the last: {reason}"
                ) from None
            return exc
        return None

    def record(failure: object) -> None:
        reason = str(failure).splitlines()[0]
        history.append(ev.NODE_START_FAILED, node=node.name, error=reason)

    try:
        wait_until(
            start_once,
            timeout_s,
            f"{node.name} started (restarted while it exits early)",
            done=lambda failure: failure is None,
            interval_s=RESTART_BACKOFF_S,
            on_retry=record,
        )
    except WaitTimeout as exc:
        raise ClusterStartError(str(exc)) from None
