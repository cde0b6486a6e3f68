"""The machine's own state, sampled beside a cell: `python -m harness.common.machine_sampler`.

A timing figure is only as good as the machine it was taken on: a stall of 40 s measured
while the consumer waited seconds for a core says as much about the machine as about Kafka.
This program (stdlib only: it starts in ~50 ms and costs well under 1 % of a core) writes,
every `--every` seconds, one `host` row: how late a short sleep woke (scheduling lag: the
wait a runnable thread has for a core), the 1-minute load, and the CPU's busy and steal
shares since the last row, the share of that time some runnable task waited for a core
(PSI's cpu `some`, where the kernel has it), the tasks runnable at that moment and the CPU
time the machine used; one row per Docker container with the CPU time it used and the time it
was throttled (cgroup v1 `cpu`/`cpuacct` or v2 `cpu.stat`); and, every second, one `harness`
row with the CPU time of the runner's own processes (the runner, its clients, Spark, this
sampler; not CPU burners it started). Busy time that is neither the containers' nor the
harness's is somebody else's: a neighbour, not the cell's weight. It runs in a process of its
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
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

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
HARNESS = "harness"  # the runner's process tree (its parent's), burners left out
BURNER_MODULE = b"harness.common.burners"  # a burner is load beside the cell, not the cell's
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


def stat_fields(text: str) -> tuple[int, int] | None:
    """(ppid, jiffies of the process and of its reaped children) from /proc/<pid>/stat: the
    fields after the command's name, which may hold spaces and parentheses."""
    fields = text.rsplit(")", 1)[-1].split()
    try:
        return int(fields[1]), sum(int(x) for x in fields[11:15])
    except (IndexError, ValueError):
        return None


class ProcessTree:
    """The CPU of one process and its descendants, read from /proc. A process's own time plus
    its reaped children's (cutime, cstime) counts a child that exited inside the tree once,
    at its reaper; one that left the tree (reparented) takes its time with it."""

    def __init__(self, root: int, proc: Path = Path("/proc")) -> None:
        self.root = root
        self.proc = proc
        self._burner: dict[int, bool] = {}
        self._last: int | None = None

    def jiffies(self) -> int:
        table: dict[int, tuple[int, int]] = {}
        for name in os.listdir(self.proc):
            if name.isdigit() and (read := stat_fields(_read(f"{self.proc}/{name}/stat"))):
                table[int(name)] = read
        children: dict[int, list[int]] = {}
        for pid, (ppid, _) in table.items():
            children.setdefault(ppid, []).append(pid)
        total, todo = 0, [self.root] if self.root in table else []
        while todo:
            pid = todo.pop()
            if self._is_burner(pid):
                continue
            total += table[pid][1]
            todo += children.get(pid, [])
        self._burner = {pid: b for pid, b in self._burner.items() if pid in table}
        return total

    def _is_burner(self, pid: int) -> bool:
        if pid not in self._burner:
            try:
                cmdline = (self.proc / str(pid) / "cmdline").read_bytes()
            except OSError:
                cmdline = b""
            self._burner[pid] = BURNER_MODULE in cmdline
        return self._burner[pid]

    def used_ms(self, jiffy_ms: float) -> float | None:
        """CPU ms the tree used since the last call (None the first time; never negative)."""
        now, before = self.jiffies(), self._last
        self._last = now
        return None if before is None else round(max(0, now - before) * jiffy_ms, 1)


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
    try:
        return Path(path).read_text()
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
            if tree is not None and (mine := tree.used_ms(jiffy_ms)) is not None:
                yield [now_ms, HARNESS, "", "", "", "", "", "", mine, ""]
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
