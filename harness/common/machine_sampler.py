"""The machine's own state, sampled beside a cell: `python -m harness.common.machine_sampler`.

A timing figure is only as good as the machine it was taken on: a stall of 40 s measured
while the consumer waited seconds for a core says as much about the machine as about Kafka.
This program (stdlib only: it starts in ~50 ms and costs well under 1 % of a core) writes,
every `--every` seconds, one `host` row: how late a short sleep woke (scheduling lag: the
wait a runnable thread has for a core), the 1-minute load, and the CPU's busy and steal
shares since the last row, the share of that time some runnable task waited for a core
(PSI's cpu `some`, where the kernel has it), the tasks runnable at that moment and the CPU
time the machine used; one row per Docker container with the CPU time it used and the time it
was throttled (cgroup v1 `cpu`/`cpuacct` or v2 `cpu.stat`); and, every second, the CPU time
of the runner's process tree (not CPU burners it started) in two rows: `clients`, the Kafka
clients the workload runs (the member and producer processes with all they started, and the
librdkafka threads inside the runner: its ledger producer's), and `harness`, the rest (the
runner's own threads, Spark's checks, this sampler, the watchdog). Busy time that is none of
these is somebody else's: a neighbour, not the cell's weight. It runs in a process of its
own, not a thread of the runner, so the lag is the machine's and not our GIL's.

Rows go to a CSV (flushed each sample: a killed sampler leaves what it saw); the runner
turns it into the cell's `machine.parquet` (harness.results.machine). It stops on SIGTERM,
when its parent dies (the parent pid changes) and after `--max-s` seconds in any case.
"""

from __future__ import annotations

import argparse
import csv
import os
import signal
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from types import FrameType
from typing import NamedTuple

COLUMNS = (
    "ts_ms",
    "source",
    "lag_ms",
    "load1",
    "busy_pct",
    "steal_pct",
    "pressure_pct",
    "running",
    "cpu_ms",
    "throttled_ms",
)
HOST = "host"
HARNESS = "harness"  # the runner's process tree (its parent's), burners and clients left out
CLIENTS = "clients"  # ... the Kafka clients in that tree (CLIENT_MODULES, CLIENT_JARS, rdk:)
BURNER_MODULE = b"harness.common.burners"  # a burner is load beside the cell, not the cell's
# A process of the tree is one of the workload's Kafka clients, counted with everything it
# started (a Spark query's JVM, a command pipeline's program), when it runs one of these
# modules (`python -m <module>`: harness.workload.member_process.member_command, the
# supervisors' `member_module`, harness.workload.producer.supervisor.MEMBER) ...
CLIENT_MODULES = frozenset(
    {
        b"harness.workload.group.member",
        b"harness.workload.share.member",
        b"harness.workload.pipeline.member",
        b"harness.workload.command.member",  # the launcher of the user's program
        b"harness.workload.spark.member",  # a Spark streaming query: its driver and JVM
        b"harness.workload.producer.member",
    }
)
# ... or is a JVM with our clients' jars on its classpath: every Java client is started that
# way (harness.workload.java.launch.java_command: members, the Java producer, Kafka's
# VerifiableConsumer); Kafka's own tools the runner asks (share group_tool) are not.
CLIENT_JARS = (b"kafka-chaos-clients.jar", b"kafka-chaos-share.jar")
# Inside the runner's own process, librdkafka's threads (rdk:main, rdk:broker<N>, ...) are a
# client's too: the in-process ledger producer's (harness.workload.producer.thread), which
# busy-polls while acks=all writes are held (issue 62: 1-2 cores, the runner's own Python
# 0.17-0.25). The runner's other librdkafka clients' threads are counted too: its
# short-lived admin clients, the warm-up's, a command pipeline's catch-up consumer; small.
CLIENT_THREAD = "rdk:"
BURNER, CLIENT = "burner", "client"  # what process_kind says of a command line
EVERY_S = 0.1
# Where Docker's containers' cgroups are: v1 with the cgroupfs driver (this machine), v1
# with systemd, v2 with either.
CGROUP_ROOTS = (
    "/sys/fs/cgroup/cpu/docker",
    "/sys/fs/cgroup/cpu,cpuacct/docker",
    "/sys/fs/cgroup/cpu/system.slice",
    "/sys/fs/cgroup/system.slice",
    "/sys/fs/cgroup/docker",
)
PRESSURE = "/proc/pressure/cpu"
RESCAN_S = 1.0  # containers come and go: their list is read again this often


@dataclass(frozen=True)
class CpuTimes:
    total: int
    idle: int
    steal: int

    def used(self) -> int:
        """Jiffies spent running something of this machine (steal is the hypervisor's)."""
        return self.total - self.idle - self.steal


def cpu_times(text: str) -> CpuTimes:
    """The aggregate `cpu` line of /proc/stat (jiffies): idle counts iowait too."""
    fields = [int(x) for x in text.split("\n", 1)[0].split()[1:]]
    fields += [0] * (8 - len(fields))
    return CpuTimes(total=sum(fields[:8]), idle=fields[3] + fields[4], steal=fields[7])


class Task(NamedTuple):
    """One /proc/<pid>/stat (a process) or /proc/<pid>/task/<tid>/stat (one of its threads);
    a tuple: ~150 are made a second."""

    name: str  # comm: a thread's name (librdkafka's `rdk:broker1`), a process's program
    ppid: int
    # utime + stime; a process's also its reaped children's (cutime + cstime): a child that
    # exited inside the tree counts once, at its reaper
    jiffies: int
    start: int  # starttime (jiffies after boot): with the id, one process or thread for good


Key = tuple[int, int]  # (pid or tid, start)


def parse_stat(text: str, children: bool = True) -> Task | None:
    """A /proc stat line; `children`: add the reaped children's time (a process's line, not
    a thread's, whose cutime and cstime are its process's). The name is between the first
    `(` and the last `)`: it may hold spaces and parentheses."""
    head, _, tail = text.rpartition(")")
    fields = tail.split()
    try:
        last = 15 if children else 13
        return Task(
            name=head.partition("(")[2],
            ppid=int(fields[1]),
            jiffies=sum(int(x) for x in fields[11:last]),
            start=int(fields[19]),
        )
    except (IndexError, ValueError):
        return None


def process_kind(cmdline: bytes) -> str | None:
    """BURNER, CLIENT, or None (the harness's own) for a /proc/<pid>/cmdline."""
    if BURNER_MODULE in cmdline:
        return BURNER
    args = cmdline.split(b"\0")
    if any(a == b"-m" and b in CLIENT_MODULES for a, b in pairwise(args)):
        return CLIENT
    if args[0].rpartition(b"/")[2] == b"java" and any(j in cmdline for j in CLIENT_JARS):
        return CLIENT
    return None


@dataclass(frozen=True)
class TreeCpu:
    total: int  # jiffies of the root and its descendants, burners' subtrees left out
    clients: dict[Key, int]  # of that: each client process's subtree, each rdk: thread's


def split_tree(
    root: int,
    procs: Mapping[int, Task],
    kind: Callable[[int], str | None],
    threads: Mapping[int, Task],
) -> TreeCpu:
    """The CPU of `root`'s tree, and the clients' part of it: the subtree of each process
    `kind` calls CLIENT (its descendants are not asked), and each of `threads` (the root's)
    named CLIENT_THREAD*. A process is known by its (pid, start), a thread by (tid, start)."""
    children: dict[int, list[int]] = {}
    for pid, task in procs.items():
        children.setdefault(task.ppid, []).append(pid)
    total, clients = 0, dict[Key, int]()
    todo: list[tuple[int, Key | None]] = [(root, None)] if root in procs else []
    while todo:
        pid, client = todo.pop()
        task = procs[pid]
        if client is None:
            what = kind(pid)
            if what == BURNER:
                continue
            if what == CLIENT:
                client = (pid, task.start)
        total += task.jiffies
        if client is not None:
            clients[client] = clients.get(client, 0) + task.jiffies
        todo += [(child, client) for child in children.get(pid, [])]
    for tid, task in threads.items():
        if task.name.startswith(CLIENT_THREAD):
            clients[(tid, task.start)] = task.jiffies
    return TreeCpu(total, clients)


class ProcessTree:
    """The CPU of one process and its descendants, read from /proc, and the clients' part of
    it. A process's own time plus its reaped children's (cutime, cstime) counts a child that
    exited inside the tree once, at its reaper; one that left the tree (reparented) takes its
    time with it. What a process is (process_kind) is read from its command line once, by
    (pid, start)."""

    def __init__(self, root: int, proc: Path = Path("/proc")) -> None:
        self.root = root
        self.proc = proc
        self._kinds: dict[Key, str | None] = {}
        self._root_cmdline: bytes | None = None
        self._last: TreeCpu | None = None

    def read(self) -> TreeCpu:
        procs: dict[int, Task] = {}
        for name in os.listdir(self.proc):
            if name.isdigit() and (task := parse_stat(_read(f"{self.proc}/{name}/stat"))):
                procs[int(name)] = task
        threads: dict[int, Task] = {}
        if self.root in procs:
            task_dir = f"{self.proc}/{self.root}/task"
            try:
                tids = os.listdir(task_dir)
            except OSError:
                tids = []
            for name in tids:
                if task := parse_stat(_read(f"{task_dir}/{name}/stat"), children=False):
                    threads[int(name)] = task
        out = split_tree(self.root, procs, lambda pid: self._kind(pid, procs[pid]), threads)
        live = {(pid, task.start) for pid, task in procs.items()}
        self._kinds = {key: k for key, k in self._kinds.items() if key in live}
        return out

    def _kind(self, pid: int, task: Task) -> str | None:
        key = (pid, task.start)
        if key in self._kinds:
            return self._kinds[key]
        cmdline = self._cmdline(pid)
        kind = process_kind(cmdline)
        if self._root_cmdline is None:
            self._root_cmdline = self._cmdline(self.root)
        # Not kept: a child forked but not exec'd yet has its parent's command line (a member
        # read then would be the harness's for good), and a zombie has none.
        if kind is not None or (cmdline and (pid == self.root or cmdline != self._root_cmdline)):
            self._kinds[key] = kind
        return kind

    def _cmdline(self, pid: int) -> bytes:
        try:
            return (self.proc / str(pid) / "cmdline").read_bytes()
        except OSError:
            return b""

    def used_ms(self, jiffy_ms: float) -> tuple[float, float] | None:
        """(the harness's, the clients') CPU ms since the last call; None the first time.
        Never negative: a process that left the tree takes its time with it. A client (a
        process, a thread) that ended since the last call takes its last part of a second
        with it to the harness's side (its reaper's time, or the runner's); one that began
        counts all it used."""
        now, before = self.read(), self._last
        self._last = now
        if before is None:
            return None
        tree = max(0, now.total - before.total)
        clients = sum(max(0, j - before.clients.get(key, 0)) for key, j in now.clients.items())
        return round(max(0, tree - clients) * jiffy_ms, 1), round(clients * jiffy_ms, 1)


def pressure_us(text: str) -> int | None:
    """The `some` total (µs) of /proc/pressure/cpu: the time at least one runnable task
    waited for a core (PSI); None where the kernel has no PSI."""
    for line in text.splitlines():
        if line.startswith("some "):
            return int(line.rsplit("total=", 1)[1])
    return None


def running(text: str) -> int:
    """/proc/stat's `procs_running`: tasks runnable right now (on a core or waiting)."""
    for line in text.splitlines():
        if line.startswith("procs_running "):
            return int(line.split()[1])
    return 0


def _read(path: str) -> str:
    """A /proc file's text ("" when it is gone): a plain open, ~150 of them a second."""
    try:
        with open(path, "rb") as f:
            return f.read().decode("ascii", "replace")
    except OSError:
        return ""


def shares(before: CpuTimes, after: CpuTimes) -> tuple[float, float]:
    """(busy %, steal %) of the CPU time between two readings."""
    total = after.total - before.total
    if total <= 0:
        return 0.0, 0.0
    idle = after.idle - before.idle
    steal = after.steal - before.steal
    return 100.0 * (total - idle) / total, 100.0 * steal / total


def container_id(directory: str) -> str | None:
    """A container's id (12 hex) from its cgroup directory's name, else None."""
    name = directory.removeprefix("docker-").removesuffix(".scope")
    if len(name) == 64 and all(c in "0123456789abcdef" for c in name):
        return name[:12]
    return None


def container_dirs() -> dict[str, Path]:
    """Each running container's cgroup directory (the first root that has any)."""
    for root in CGROUP_ROOTS:
        try:
            names = os.listdir(root)
        except OSError:
            continue
        found = {cid: Path(root, n) for n in names if (cid := container_id(n)) is not None}
        if found:
            return found
    return {}


def container_cpu(directory: Path) -> tuple[float, float] | None:
    """(CPU used ms, throttled ms) so far; None when the container is gone."""
    try:
        stat = dict(
            (k, int(v))
            for k, v in (line.split() for line in (directory / "cpu.stat").read_text().splitlines())
        )
        if "usage_usec" in stat:  # cgroup v2
            return stat["usage_usec"] / 1000.0, stat.get("throttled_usec", 0) / 1000.0
        usage = directory / "cpuacct.usage"  # cpu and cpuacct mounted together
        if not usage.exists():
            usage = directory.parents[2] / "cpuacct" / directory.parent.name / directory.name
            usage = usage / "cpuacct.usage"
        used_ns = int(usage.read_text())
        return used_ns / 1e6, stat.get("throttled_time", 0) / 1e6
    except (OSError, ValueError):
        return None


def samples(every_s: float, max_s: float, parent: int | None) -> Iterator[list[object]]:
    """Rows until max_s has passed or the parent is gone."""
    start = time.monotonic()
    jiffy_ms = 1000.0 / os.sysconf("SC_CLK_TCK")
    tree = ProcessTree(parent) if parent is not None else None
    cpu = cpu_times(Path("/proc/stat").read_text())
    pressure, pressure_at = pressure_us(_read(PRESSURE)), time.monotonic()
    dirs: dict[str, Path] = {}
    used: dict[str, tuple[float, float]] = {}
    scanned = -RESCAN_S
    while time.monotonic() - start < max_s and (parent is None or os.getppid() == parent):
        asked = time.monotonic()
        time.sleep(every_s)
        lag_ms = max(0.0, (time.monotonic() - asked - every_s) * 1000.0)
        now_ms = int(time.time() * 1000)
        stat = Path("/proc/stat").read_text()
        now_cpu = cpu_times(stat)
        busy, steal = shares(cpu, now_cpu)
        used_ms = round(max(0, now_cpu.used() - cpu.used()) * jiffy_ms, 1)
        cpu = now_cpu
        now_pressure, now_at = pressure_us(_read(PRESSURE)), time.monotonic()
        waited: object = ""
        if pressure is not None and now_pressure is not None and now_at > pressure_at:
            waited = round(min(100.0, (now_pressure - pressure) / (now_at - pressure_at) / 1e4), 1)
        pressure, pressure_at = now_pressure, now_at
        load1 = float(Path("/proc/loadavg").read_text().split()[0])
        yield [
            now_ms,
            HOST,
            round(lag_ms, 2),
            load1,
            round(busy, 1),
            round(steal, 1),
            waited,
            running(stat),
            used_ms,
            "",
        ]
        if time.monotonic() - scanned >= RESCAN_S:
            dirs, scanned = container_dirs(), time.monotonic()
            if tree is not None and (split := tree.used_ms(jiffy_ms)) is not None:
                yield [now_ms, HARNESS, "", "", "", "", "", "", split[0], ""]
                yield [now_ms, CLIENTS, "", "", "", "", "", "", split[1], ""]
        for cid, directory in dirs.items():
            reading = container_cpu(directory)
            if reading is None:
                continue
            before = used.get(cid)
            used[cid] = reading
            if before is not None:
                cpu_ms, throttled_ms = (since(a, b) for a, b in zip(reading, before, strict=True))
                yield [now_ms, cid, "", "", "", "", "", "", cpu_ms, throttled_ms]


def since(now: float, before: float) -> float:
    """A cgroup counter's growth between two readings. A container killed and started again
    keeps its id but gets a new cgroup, whose counter starts from 0: a reading below the one
    before is all new (counted from 0), never a negative use."""
    return round(now - before if now >= before else now, 2)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--every", type=float, default=EVERY_S)
    parser.add_argument("--max-s", type=float, required=True)
    args = parser.parse_args(argv)

    def stop(_signum: int, _frame: FrameType | None) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    with args.out.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(COLUMNS)
        for row in samples(args.every, args.max_s, os.getppid()):
            writer.writerow(row)
            if row[1] == HOST:
                f.flush()


if __name__ == "__main__":
    main()
