"""Size-limited log directories (the LogDirs capability): each its own tmpfs, held by a keeper.

A Docker volume of type tmpfs gives a directory its own capacity, so filling it gives the
broker real ENOSPC errors without touching the host's disk. Docker unmounts such a volume
when no running container uses it, which would empty it whenever the broker stops: a
keeper container (`sleep`, no network) mounts the node's volumes for the whole run, so a
killed or restarted broker keeps its data as on a real disk. The keeper is also where the
disk is filled and freed: it reaches the volumes while the broker is down.

A node whose container is replaced (an upgrade: the same node on another image) needs its
log directories to outlive the container without any size: `DiskPlan.persistent` puts each on
a plain local volume, on the machine's disk, which Docker keeps until it is removed; no keeper.

Keepers and volumes carry the run's labels: the reaper removes them with the containers.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

import docker
from docker.models.containers import Container

from harness.errors import FaultError
from harness.nodes.reaper import run_labels

KEEP_DIR = "/keep"  # where the keeper mounts a node's volumes: /keep/<index>
FILL_FILE = "kafka-chaos-fill"  # what disk-full writes into a log directory (a plain file:
# Kafka only reads the directories of a log directory)


@dataclass(frozen=True)
class DiskPlan:
    """A node's log directories: their paths in the broker, and the size of each (None: on
    the container's own filesystem, unbounded). `persistent`: unsized, but on volumes that
    outlive the container (a sized one always does)."""

    paths: tuple[str, ...]
    size_mb: int | None = None
    persistent: bool = False

    @property
    def on_volumes(self) -> bool:
        """Whether the log directories are volumes of their own (sized or persistent)."""
        return self.size_mb is not None or self.persistent


def volume_name(container: str, index: int) -> str:
    return f"{container}-log{index}"


class NodeDisks:
    """The volumes of one node and, for tmpfs ones, the keeper that holds them mounted."""

    def __init__(self, client: docker.DockerClient, container: str, run_id: str, plan: DiskPlan):
        assert plan.on_volumes
        self.client = client
        self.container = container  # the broker's container name
        self.run_id = run_id
        self.plan = plan
        self._keeper: Container | None = None

    @property
    def volumes(self) -> dict[str, dict[str, str]]:
        """docker-py's `volumes=` for the broker: each volume at its log directory."""
        return {
            volume_name(self.container, i): {"bind": path, "mode": "rw"}
            for i, path in enumerate(self.plan.paths)
        }

    def create(self, image: str) -> None:
        """The volumes, then the keeper that holds tmpfs ones (before the broker starts)."""
        labels = run_labels(self.run_id)
        sized = self.plan.size_mb is not None
        tmpfs = {"type": "tmpfs", "device": "tmpfs", "o": f"size={self.plan.size_mb}m"}
        for i in range(len(self.plan.paths)):
            self.client.volumes.create(
                volume_name(self.container, i),
                driver="local",
                driver_opts=tmpfs if sized else {},
                labels=labels,
            )
        if not sized:
            return  # a plain local volume keeps its files with no container mounting it
        self._keeper = self.client.containers.run(
            image,
            entrypoint=["sleep", "infinity"],
            name=f"{self.container}-disks",
            detach=True,
            network_mode="none",
            labels=labels,
            volumes={
                volume_name(self.container, i): {"bind": f"{KEEP_DIR}/{i}", "mode": "rw"}
                for i in range(len(self.plan.paths))
            },
        )

    def sources(self) -> list[tuple[Container, str]] | None:
        """(keeper, where it mounts log directory i) for each one: where a copy reads them;
        None without a keeper (persistent volumes: read them through the node's container)."""
        if self._keeper is None:
            return None
        return [(self._keeper, f"{KEEP_DIR}/{i}") for i in range(len(self.plan.paths))]

    def _sh(self, script: str) -> str:
        if self._keeper is None:
            raise FaultError(f"{self.container}: its disks were never created")
        code, out = self._keeper.exec_run(["sh", "-c", script])
        text = out.decode(errors="replace") if isinstance(out, bytes) else ""
        if code != 0:
            raise FaultError(f"{self.container}: disk command failed ({code}): {script}: {text}")
        return text

    def fill(self, index: int) -> int:
        """Write into log directory `index` until its filesystem is full; the bytes written."""
        path = shlex.quote(f"{KEEP_DIR}/{index}/{FILL_FILE}")
        # dd ends with ENOSPC (exit 1) once full, its last block written in part.
        out = self._sh(
            f"dd if=/dev/zero of={path} bs=1M oflag=append conv=notrunc 2>/dev/null; "
            f"stat -c %s {path}"
        )
        return self._last_number(out, "fill")

    def free(self, index: int) -> int:
        """Delete what fill wrote; the bytes freed (0 if there was nothing)."""
        path = shlex.quote(f"{KEEP_DIR}/{index}/{FILL_FILE}")
        out = self._sh(f"s=$(stat -c %s {path} 2>/dev/null || echo 0); rm -f {path}; echo $s")
        return self._last_number(out, "free")

    def _last_number(self, out: str, what: str) -> int:
        """The number a command ended its answer with; a FaultError naming what it said
        instead (seen once, 2026-12-08: a free whose exec answered nothing, code 0, on a
        machine at load 18; it was an IndexError then)."""
        words = out.split()
        if not words or not words[-1].isdigit():
            raise FaultError(f"{self.container}: {what} answered {out!r}, expected a size")
        return int(words[-1])

    def usage(self) -> list[tuple[int, int]]:
        """(used, size) bytes of each log directory."""
        dirs = " ".join(f"{KEEP_DIR}/{i}" for i in range(len(self.plan.paths)))
        out = self._sh(f"df -B1 --output=used,size {dirs} | tail -n +2")
        rows = [line.split() for line in out.splitlines() if line.strip()]
        return [(int(used), int(size)) for used, size in rows]

    def clear(self, index: int) -> tuple[int, int]:
        """Empty log directory `index` (kill wipe on a size-limited disk, broker down):
        (bytes, partition directories) it held."""
        root = shlex.quote(f"{KEEP_DIR}/{index}")
        out = self._sh(
            f"du -sB1 {root} | cut -f1; "
            f"find {root} -mindepth 1 -maxdepth 1 -type d -name '*-[0-9]*' | wc -l; "
            f"find {root} -mindepth 1 -maxdepth 1 -exec rm -rf {{}} +"
        )
        used, partitions = (int(w) for w in out.split()[:2])
        return used, partitions
