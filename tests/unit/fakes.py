"""Stand-ins for the cluster, its nodes, the consumers and time: faults and the nemesis
tested without Docker (they depend on harness.faults.control's protocols only)."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from harness.errors import ConfigError
from harness.faults.control import ActiveFaults, NodeRef
from harness.faults.kind import FaultKind
from harness.nodes import capabilities as caps
from harness.nodes.topology import DATA_DIR
from harness.results.history import History


class FakeClock:
    """Virtual time: the nemesis's threads sleep on it, the test moves it forward.

    `play(until, busy)` steps from one sleeper's deadline to the next, each time after
    every busy thread has gone back to sleep, so what happens at t=5 happens at t=5.
    """

    def __init__(self) -> None:
        self.now = 0.0
        self._cond = threading.Condition()
        self._deadlines: list[float] = []

    def monotonic(self) -> float:
        with self._cond:
            return self.now

    def wait(self, event: threading.Event, seconds: float) -> bool:
        with self._cond:
            deadline = self.now + seconds
            self._deadlines.append(deadline)
            self._cond.notify_all()
            try:
                while self.now < deadline and not event.is_set():
                    self._cond.wait(0.005)
            finally:
                self._deadlines.remove(deadline)
            return event.is_set()

    def _asleep(self) -> list[float]:
        with self._cond:
            return [d for d in self._deadlines if d > self.now]

    def settle(self, busy: Callable[[], int], timeout_s: float = 10) -> None:
        """Until every one of `busy()` threads sleeps on this clock (real time, bounded)."""
        give_up = time.monotonic() + timeout_s
        while len(self._asleep()) != busy():
            if time.monotonic() > give_up:
                raise AssertionError(f"{busy()} thread(s) busy, {len(self._asleep())} asleep")
            time.sleep(0.002)

    def advance(self, to: float) -> None:
        with self._cond:
            self.now = max(self.now, to)
            self._cond.notify_all()

    def play(self, until: float, busy: Callable[[], int]) -> None:
        while True:
            self.settle(busy)
            upcoming = [d for d in self._asleep() if d <= until]
            if not upcoming:
                self.advance(until)
                self.settle(busy)
                return
            self.advance(min(upcoming))


class FakeNode:
    """A node whose container is a state word; every operation is logged with the time."""

    def __init__(self, cluster: FakeCluster, name: str, node_id: int | None, role: str) -> None:
        self.cluster = cluster
        self.name = name
        self.node_id = node_id
        self.is_broker = role in ("broker", "combined")
        self.is_controller = role in ("controller", "combined")
        self.host_port = 9000 + node_id if self.is_broker and node_id is not None else None
        self.state = "running"
        self.fail: dict[str, Exception] = {}  # operation -> what it raises (once)
        self.hold: dict[str, threading.Event] = {}  # operation -> blocks until set
        self.inside = threading.Event()  # set while an operation is under way
        self._busy = threading.Lock()
        self.commands: list[tuple[str, ...]] = []
        self.chains: set[str] = set()  # iptables chains in the node (KC_<fault id>)
        self.log_dirs: tuple[str, ...] = (DATA_DIR,)
        self.log_dir_mb: int | None = None
        self.log_text = ""  # what the container logged (a test appends Kafka's lines)
        self.filled: dict[int, int] = {}  # log dir index -> bytes disk-full wrote there
        self.on_fill: list[str] = []  # log lines "Kafka" writes when a directory fills
        self.plfs_answer: tuple[int, str] = (0, '{"mounts": []}')  # `plfs ctl cut`'s
        self.partition_dirs: dict[str, dict[str, bytes]] = {}  # "<topic>-<p>" -> its files

    def logs(self, tail: int | None = None) -> str:
        return self.log_text

    def fill_log_dir(self, index: int) -> int:
        self._op(f"fill {index}")
        assert self.log_dir_mb is not None, "filled a log directory without a size"
        self.filled[index] = self.log_dir_mb * 1024 * 1024
        self.log_text += "".join(line + "\n" for line in self.on_fill)
        return self.filled[index]

    def free_log_dir(self, index: int) -> int:
        self._op(f"free {index}")
        return self.filled.pop(index, 0)

    def clear_log_dir(self, index: int) -> tuple[int, int]:
        self._op(f"clear {index}")
        return 1000, 2

    def partition_files(self, topic: str, partition: int) -> dict[str, bytes]:
        return dict(self.partition_dirs.get(f"{topic}-{partition}", {}))

    def replace_partition_file(self, topic: str, partition: int, name: str, data: bytes) -> None:
        self._op(f"write {name}")
        self.partition_dirs[f"{topic}-{partition}"][name] = data

    def _op(self, op: str, state: str | None = None) -> None:
        if not self._busy.acquire(blocking=False):
            self.cluster.overlaps.append(f"{op} on {self.name} while another operation ran")
            self._busy.acquire()
        try:
            self.inside.set()
            self.cluster.log.append((self.cluster.clock.monotonic(), op, self.name))
            if op in self.hold:
                assert self.hold[op].wait(10), f"{op} on {self.name} held for ever"
            if op in self.fail:
                raise self.fail.pop(op)
            if state is not None:
                self.state = state
        finally:
            self.inside.clear()
            self._busy.release()

    def kill(self) -> None:
        self._op("kill", "exited")

    def stop(self) -> None:
        self._op("stop", "exited")

    def signal(self, name: str) -> None:
        self._op(name, "paused" if name == "SIGSTOP" else None)

    def start(self) -> None:
        self._op("start", "running")

    def pause(self) -> None:
        self._op("pause", "paused")

    def unpause(self) -> None:
        self._op("unpause", "running")

    def status(self) -> str:
        return self.state

    def is_up(self) -> bool:
        return self.state == "running"

    def wait_started(self, timeout_s: float) -> None:
        assert self.state == "running", f"{self.name} awaited while {self.state}"

    def ip(self) -> str | None:
        return f"10.0.0.{self.node_id or 99}" if self.is_up() else None

    def exec(self, *argv: str) -> tuple[int, str]:
        """Enough of iptables for harness.faults.iptables: chains made, listed, dropped; and
        `plfs ctl cut` answers `plfs_answer` (logged as an operation: `cut`)."""
        self.commands.append(argv)
        if "cut" in argv and "ctl" in argv:
            self._op("cut")
            return self.plfs_answer
        script = " ".join(argv)
        if argv[:3] == ("iptables", "-w", "-S"):
            return 0, "".join(f"-N {c}\n-A INPUT -j {c}\n" for c in sorted(self.chains))
        self.chains |= set(re.findall(r"iptables -w -N (\S+)", script))
        self.chains -= set(re.findall(r"iptables -w -X (\S+)", script))
        return 0, ""


@dataclass
class FakeCluster:
    """NodeControl + ClusterView over fake nodes: brokers 1..n, optionally ZooKeeper."""

    brokers_n: int = 3
    mode: str = "kraft"
    clock: FakeClock = field(default_factory=FakeClock)
    leaders_of: dict[tuple[str, int], int | None] = field(default_factory=dict)
    coordinators: dict[str, int | None] = field(default_factory=dict)
    controller_id: int = 1
    start_timeout_s: float = 5.0
    link_proxies: bool = False
    fake_clock: bool = False
    power_loss_fs: bool = False
    history: History = field(default_factory=History)
    faults: ActiveFaults = field(default_factory=ActiveFaults)
    log: list[tuple[float, str, str]] = field(default_factory=list)
    overlaps: list[str] = field(default_factory=list)
    nodes: list[FakeNode] = field(default_factory=list)
    captures: list[tuple[str, str, str, str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.nodes = [
            FakeNode(self, f"broker-{i}", i, "combined") for i in range(1, self.brokers_n + 1)
        ]
        if self.mode == "zookeeper":
            self.nodes.append(FakeNode(self, "zookeeper", None, "zookeeper"))

    @property
    def broker_nodes(self) -> list[FakeNode]:
        return [n for n in self.nodes if n.is_broker]

    def has(self, capability: type[caps.Capability[Any]]) -> bool:
        """The capabilities these fakes model: link proxies, a fake clock, plfs."""
        built = {
            caps.LinkProxies: self.link_proxies,
            caps.FakeClock: self.fake_clock,
            caps.PowerLossFs: self.power_loss_fs,
        }
        return built.get(capability, False)

    def capture_segments(
        self, node: FakeNode, reason: str, fault: dict[str, object], suffix: str = ""
    ) -> None:
        """Broker forensics' copies, as (node, reason, fault kind, state then, suffix)."""
        self.captures.append((node.name, reason, str(fault.get("fault")), node.state, suffix))

    @property
    def brokers(self) -> list[int]:
        return [n.node_id for n in self.broker_nodes if n.is_up() and n.node_id is not None]

    def node(self, ref: NodeRef) -> FakeNode:
        for n in self.nodes:
            if ref in (n.node_id, n.name):
                return n
        raise ConfigError(f"no node {ref!r} in this cluster")

    def controller(self) -> int:
        return self.controller_id

    def leader(self, topic: str, partition: int) -> int | None:
        return self.leaders_of.get((topic, partition), 1)

    def leaders(self, topic: str) -> dict[int, int | None]:
        return {p: leader for (t, p), leader in sorted(self.leaders_of.items()) if t == topic}

    def coordinator(self, group: str) -> int | None:
        return self.coordinators.get(group, 1)

    def txn_coordinator(self, transactional_id: str) -> int | None:
        return self.coordinators.get(f"txn:{transactional_id}", 2)

    def share_coordinator(self, group: str, topic: str, partition: int) -> int | None:
        return self.coordinators.get(f"share:{group}/{topic}/{partition}", 3)

    def ops(self) -> list[tuple[float, str, str]]:
        """(time, operation, node) of every node operation so far."""
        return list(self.log)


@dataclass(frozen=True)
class Planned:
    index: int
    at_s: float
    kind: str
    target: str
    duration_s: float | None = None
    spec: FaultKind | None = None
    optional: bool = False
    after_step: str | None = None


class FakeConsumers:
    """ConsumerControl: crash and restart logged with the time."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.log: list[tuple[float, str, str]] = []

    def crash_member(self, ref: str, index: int | None = None) -> str:
        name = ref.replace("/", "-")
        self.log.append((self.clock.monotonic(), "crash", name))
        return name

    def restart_member(self, name: str) -> None:
        self.log.append((self.clock.monotonic(), "restart", name))


def wait_for(condition: Callable[[], object], what: str, timeout_s: float = 5) -> None:
    give_up = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > give_up:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.002)


class FakeProducer:
    """ProducerControl: SIGKILL, restart, SIGSTOP and SIGCONT logged with the time."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.log: list[tuple[float, str]] = []

    def crash(self) -> None:
        self.log.append((self.clock.monotonic(), "crash"))

    def restart(self) -> None:
        self.log.append((self.clock.monotonic(), "restart"))

    def pause(self) -> None:
        self.log.append((self.clock.monotonic(), "pause"))

    def resume(self) -> None:
        self.log.append((self.clock.monotonic(), "resume"))
