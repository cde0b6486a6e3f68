"""The reaper's job, done by us: Testcontainers' Ryuk image cannot be pulled here.

Every container, network and volume carries `kafka-chaos.run=<run id>` and an owner
label naming the process that made it. Resources of a run are removed when it
ends (context exit, atexit, SIGINT/SIGTERM); when its owner process is killed
with SIGKILL, the run's watchdog (harness.nodes.watchdog) removes them within
seconds, and anything left whose owner is gone is removed at the next start or by
`python -m harness cleanup`.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import socket
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from types import FrameType

import docker
from docker.errors import APIError, NotFound
from docker.models.containers import Container

from harness.common.processes import ManagedProcess
from harness.nodes.fuse_connections import abort_fuse

WATCHDOG_STOP_S = 5.0

RUN_LABEL = "kafka-chaos.run"
OWNER_LABEL = "kafka-chaos.owner"


def _process_start_time(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def owner_label(pid: int | None = None) -> str:
    """host:pid:start-time, so a reused pid is not mistaken for the owner."""
    pid = os.getpid() if pid is None else pid
    return f"{socket.gethostname()}:{pid}:{_process_start_time(pid)}"


def owner_is_alive(label: str) -> bool:
    try:
        host, pid, started = label.rsplit(":", 2)
    except ValueError:
        return False
    if host != socket.gethostname():
        return True  # another machine's run on a shared engine: not ours to judge
    return _process_start_time(int(pid)) == started


def run_labels(run_id: str) -> dict[str, str]:
    return {RUN_LABEL: run_id, OWNER_LABEL: owner_label()}


def remove_run(
    client: docker.DockerClient, run_id: str | None = None, *, networks: bool = True
) -> list[str]:
    """Remove containers, then networks and volumes of one run (or of every run); their names."""
    selector = f"{RUN_LABEL}={run_id}" if run_id else RUN_LABEL
    return _remove(client, selector, lambda _labels: True, networks)


def remove_dead_runs(client: docker.DockerClient) -> list[str]:
    """Remove resources whose owner process no longer exists."""
    return _remove(
        client, RUN_LABEL, lambda labels: not owner_is_alive(labels.get(OWNER_LABEL, ""))
    )


def _remove(
    client: docker.DockerClient,
    selector: str,
    doomed: Callable[[dict[str, str]], bool],
    networks: bool = True,
) -> list[str]:
    def remove(container: Container, again: bool = True) -> str | None:
        try:
            container.remove(force=True, v=True)
        except NotFound:
            return None
        except APIError as exc:
            if exc.status_code == 409:  # another remover (the watchdog) got there first
                return None
            # A frozen FUSE daemon (plfs mid-cut) holds the container's processes: free
            # them, then try once more.
            if again and container.id and abort_fuse(container.id):
                return remove(container, again=False)
            raise
        return str(container.name)

    containers = client.containers.list(all=True, filters={"label": selector})
    doomed_containers = [c for c in containers if doomed(c.labels)]
    # At once: each removal mostly waits on the engine (SIGKILL, then the layer's deletion).
    with ThreadPoolExecutor(max_workers=max(1, min(8, len(doomed_containers)))) as pool:
        removed = [name for name in pool.map(remove, doomed_containers) if name is not None]
    for network in client.networks.list(filters={"label": selector}) if networks else []:
        if doomed(network.attrs.get("Labels") or {}):
            with contextlib.suppress(NotFound, APIError):
                network.remove()
                removed.append(str(network.name))
    # Size-limited log directories (harness.nodes.disks): free once their containers are gone.
    for volume in client.volumes.list(filters={"label": selector}) if networks else []:
        if doomed(volume.attrs.get("Labels") or {}):
            with contextlib.suppress(NotFound, APIError):
                volume.remove(force=True)
                removed.append(str(volume.name))
    return removed


class RunGuard:
    """Removes one run's resources at exit and turns SIGTERM into a clean exit.

    A run's watchdog, if given, covers the one exit no handler sees (SIGKILL); release()
    stops it once the resources are gone.
    """

    _lock = threading.Lock()
    _active: dict[str, RunGuard] = {}  # noqa: RUF012 - process-wide registry
    _handlers_installed = False

    def __init__(
        self, client: docker.DockerClient, run_id: str, watchdog: ManagedProcess | None = None
    ) -> None:
        self.client = client
        self.run_id = run_id
        self.watchdog = watchdog

    def __enter__(self) -> RunGuard:
        with RunGuard._lock:
            RunGuard._active[self.run_id] = self
            RunGuard._install_handlers()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def release(self) -> None:
        with RunGuard._lock:
            RunGuard._active.pop(self.run_id, None)
        remove_run(self.client, self.run_id)
        # Only once removed: if removal failed, the watchdog retries when this process ends.
        if self.watchdog is not None:
            self.watchdog.stop(WATCHDOG_STOP_S)

    @classmethod
    def _install_handlers(cls) -> None:
        if cls._handlers_installed:
            return
        cls._handlers_installed = True
        atexit.register(cls._release_all)
        if threading.current_thread() is threading.main_thread():
            previous = signal.getsignal(signal.SIGTERM)
            if previous in (signal.SIG_DFL, None):
                signal.signal(signal.SIGTERM, _raise_system_exit)

    @classmethod
    def _release_all(cls) -> None:
        for guard in list(cls._active.values()):
            with contextlib.suppress(Exception):
                guard.release()


def _raise_system_exit(signum: int, _frame: FrameType | None) -> None:
    """SIGTERM unwinds like Ctrl-C does, so every context manager cleans up."""
    raise SystemExit(128 + signum)
