"""One container of a cluster (broker, controller or ZooKeeper) and what can be done to it."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from docker.errors import NotFound
from docker.models.containers import Container
from testcontainers.core.config import testcontainers_config
from testcontainers.core.container import DockerContainer
from testcontainers.core.network import Network
from testcontainers.core.wait_strategies import WaitStrategy
from testcontainers.core.waiting_utils import WaitStrategyTarget

from harness.common.waiting import wait_until
from harness.errors import ClusterStartError, FaultError, WaitTimeout
from harness.nodes.capabilities.base import NEXT_ENTRYPOINT_ENV, Wiring
from harness.nodes.container_files import read_folder, write_file
from harness.nodes.disks import DiskPlan, NodeDisks
from harness.nodes.dynamic_quorum import FORMAT_ARGS_ENV
from harness.nodes.ports import host_ephemeral_range, inner_port_range
from harness.nodes.reaper import run_labels
from harness.nodes.segment_copy import copy_topic
from harness.nodes.topology import METRICS_PORT, NodeSpec

_STARTED = {
    "zookeeper": re.compile(r"binding to port"),
    "kafka": re.compile(r"Kafka Server started|\] started \(kafka\.server\.KafkaServer\)"),
}
HEAPS = {"zookeeper": "256m", "controller": "256m", "broker": "512m", "combined": "512m"}
# Set in the harness's environment, it replaces the nodes' tuned JVM flags (docker/entrypoint.sh):
# how benchmarks/cell_overhead.py runs the JVM's defaults beside them.
JVM_OPTS_ENV = "KAFKA_CHAOS_JVM_OPTS"


class StartedCountWait(WaitStrategy):
    """Ready when the start-up line has been logged once per start of the container.

    Docker keeps a container's log across restarts, so a restarted node is ready
    only when the line appears once more than before.
    """

    def __init__(self, pattern: re.Pattern[str], times: int) -> None:
        super().__init__()
        self._pattern = pattern
        self._times = times

    def wait_until_ready(self, container: WaitStrategyTarget) -> None:
        """WaitTimeout (the count seen) if too slow; RuntimeError at once if the container died."""

        def logged() -> int:
            out, err = container.get_logs()
            text = out.decode(errors="replace") + err.decode(errors="replace")
            count = len(self._pattern.findall(text))
            if count < self._times:
                container.reload()
                if container.status not in ("running", "created", "restarting"):
                    raise RuntimeError(f"container is {container.status} before it logged start-up")
            return count

        wait_until(
            logged,
            self._startup_timeout,
            f"start-up line /{self._pattern.pattern}/ logged {self._times} time(s)",
            done=lambda count: count >= self._times,
            interval_s=self._poll_interval,
        )


def disable_ryuk() -> None:
    """Ryuk's image is not reachable here: we do its job (RunGuard, the watchdog).

    Called when a cluster starts, not at import: importing the harness changes nothing.
    """
    testcontainers_config.ryuk_disabled = True


NodeRef = int | str  # broker or controller id, or a node name such as "zookeeper"


class ClusterNode:
    """A started container plus the Kafka identity it runs with."""

    def __init__(
        self,
        spec: NodeSpec,
        image: str,
        network: Network,
        run_id: str,
        properties: str,
        cluster_id: str | None,
        wiring: Wiring | None = None,
        version: str | None = None,
        format_args: str | None = None,
    ) -> None:
        self.spec = spec
        self.run_id = run_id
        self.image = image
        # The Kafka version it runs (the cluster's; an upgrade replaces the container).
        self.version = version
        # What its cluster's capabilities add (harness.nodes.capabilities): none by default.
        self.wiring = wiring or Wiring()
        w = self.wiring
        self.disk_plan = DiskPlan(w.log_dirs, w.log_dir_mb, persistent=w.persistent)
        self.archive_dirs = w.archive_dirs or w.log_dirs  # where copies read them
        self._disks: NodeDisks | None = None
        self.network = network
        self.starts = 0
        self._earlier_logs = ""  # the logs of the containers it ran in before a replace()
        self._log_mark = 0  # logs() starts here: a reused cluster's trial sees its own lines
        self.earlier_ids: list[str] = []  # ... and their ids (the machine table names them)
        role = "zookeeper" if spec.role == "zookeeper" else "kafka"
        self._pattern = _STARTED[role]
        self._env = {
            "KAFKA_CHAOS_ROLE": role,
            "KAFKA_CHAOS_CONFIG": properties,
            "KAFKA_CHAOS_HEAP": HEAPS[spec.role],
        }
        if cluster_id:
            self._env["KAFKA_CHAOS_CLUSTER_ID"] = cluster_id
        if format_args:  # a dynamic quorum's (harness.nodes.dynamic_quorum); static: unset
            self._env[FORMAT_ARGS_ENV] = format_args
        if JVM_OPTS_ENV in os.environ:  # benchmarks: the JVM flags of the entry point, replaced
            self._env[JVM_OPTS_ENV] = os.environ[JVM_OPTS_ENV]
        if spec.metrics_port is not None:  # the JMX exporter agent in the server JVM
            self._env["KAFKA_CHAOS_METRICS_PORT"] = str(METRICS_PORT)
        self.container = self._container(image)

    def _container(self, image: str) -> DockerContainer:
        """The (not yet created) container of this node on `image`: everything but its image
        is the node's own, so a replaced container is the same node."""
        spec = self.spec
        container = (
            DockerContainer(image)
            .with_name(f"kc-{self.run_id}-{spec.name}")
            .with_network(self.network)
            .with_network_aliases(spec.name)
            .with_envs(**self._env)
        )
        base: dict[str, Any] = {
            "labels": run_labels(self.run_id),
            "cap_add": ["NET_ADMIN"],
            "hostname": spec.name,
        }
        inner = inner_port_range(host_ephemeral_range())
        if inner is not None:  # outgoing connections never hold a listener's port
            base["sysctls"] = {"net.ipv4.ip_local_port_range": inner}
        if spec.host_port is not None:
            # Same port inside and out, on loopback only: the advertised address stays valid.
            container.ports[f"{spec.host_port}/tcp"] = ("127.0.0.1", spec.host_port)  # type: ignore[assignment]
        if spec.metrics_port is not None:
            container.ports[f"{METRICS_PORT}/tcp"] = ("127.0.0.1", spec.metrics_port)  # type: ignore[assignment]
        wiring = self.wiring
        for host, inside in wiring.mounts.items():
            container.with_volume_mapping(host, inside)
        for name, value in wiring.env.items():
            container.with_env(name, value)
        kwargs: dict[str, Any] = {}
        if wiring.devices:
            kwargs["devices"] = list(wiring.devices)
        if wiring.cap_add:
            kwargs["cap_add"] = ["NET_ADMIN", *wiring.cap_add]
        if wiring.security_opt:
            kwargs["security_opt"] = list(wiring.security_opt)
        if wiring.extra_hosts is not None:
            kwargs["extra_hosts"] = dict(wiring.extra_hosts)
        if wiring.entrypoints:  # the outermost runs; a wrapping one execs the next
            kwargs["entrypoint"] = [wiring.entrypoints[0].path]
            if len(wiring.entrypoints) > 1:
                chain = ":".join(e.path for e in wiring.entrypoints[1:])
                container.with_env(NEXT_ENTRYPOINT_ENV, chain)
        container.with_kwargs(**{**base, **kwargs})
        if self._disks is not None:
            for volume, bind in self._disks.volumes.items():
                container.with_volume_mapping(volume, bind["bind"], "rw")
        return container

    @property
    def name(self) -> str:
        return self.spec.name

    # Read-only views of the spec: what harness.faults.control.Node asks of a node.
    @property
    def node_id(self) -> int | None:
        return self.spec.node_id

    @property
    def is_broker(self) -> bool:
        return self.spec.is_broker

    @property
    def is_controller(self) -> bool:
        return self.spec.is_controller

    @property
    def host_port(self) -> int | None:
        return self.spec.host_port

    @property
    def metrics_port(self) -> int | None:
        return self.spec.metrics_port

    @property
    def docker(self) -> Container:
        return self.container.get_wrapped_container()

    def create(self) -> None:
        """Create and start the container without waiting (nodes of a quorum start together).

        Log directories on volumes of their own first (and the keeper holding tmpfs ones)."""
        if self.disk_plan.on_volumes and self._disks is None:
            name = f"kc-{self.run_id}-{self.spec.name}"
            self._disks = NodeDisks(
                self.container.get_docker_client().client, name, self.run_id, self.disk_plan
            )
            self._disks.create(self.image)
            for volume, bind in self._disks.volumes.items():
                self.container.with_volume_mapping(volume, bind["bind"], "rw")
        self.container.start()
        self.starts = 1

    def replace(self, image: str, properties: str | None = None) -> None:
        """Run the node on another image (an upgrade or a downgrade), or with other
        `properties` (a migration's roll), with its data: the stopped container is removed,
        a new one with the same name, address, ports and log-directory volumes starts (not
        awaited). Its log so far is kept for logs()."""
        if self._disks is None:
            raise FaultError(
                f"{self.name}: its log directories are on its container's own disk and would "
                "go with the container (the cluster needs persistent log directories)"
            )
        if self.status() not in ("exited", "created", "dead"):
            raise FaultError(f"{self.name}: stop it before replacing its container")
        self._earlier_logs += self._own_logs()
        self.earlier_ids.append(str(self.docker.id))
        self.docker.remove(force=True)
        if properties is not None:
            self._env["KAFKA_CHAOS_CONFIG"] = properties
        self.image = image
        container = self._container(image)
        container.start()  # then swapped in: a reader never sees a container not started
        self.container = container
        self.starts = 1

    def status(self) -> str:
        try:
            self.docker.reload()
        except NotFound:  # replace() removed it and is creating its successor right now
            return "removed"
        return str(self.docker.status)

    def is_up(self) -> bool:
        return self.status() == "running"

    def wait_started(self, timeout_s: float) -> None:
        wait = StartedCountWait(self._pattern, self.starts).with_startup_timeout(int(timeout_s))
        try:
            wait.with_poll_interval(0.5).wait_until_ready(self.container)
        except (WaitTimeout, RuntimeError) as exc:
            raise ClusterStartError(
                f"{self.name}: {exc}\n--- last log lines of {self.name} ---\n{self.logs(40)}"
            ) from exc

    # --- what faults do to the container ---------------------------------------------------
    def kill(self) -> None:
        self.docker.kill(signal="SIGKILL")

    def stop(self, timeout_s: int = 30) -> None:
        self.docker.stop(timeout=timeout_s)

    def signal(self, name: str) -> None:
        """Send the container's main process a signal from the host (SIGSTOP reaches a PID 1
        that way, which a signal from inside its namespace would not)."""
        self.docker.kill(signal=name)

    def start(self) -> None:
        # Counted from the log, not incremented: a start that died before its start-up
        # line (and was retried) must not leave the count one ahead for ever.
        self.starts = len(self._pattern.findall(self._own_logs())) + 1
        self.docker.start()

    def pause(self) -> None:
        self.docker.pause()

    def unpause(self) -> None:
        self.docker.unpause()

    def ip(self) -> str | None:
        """Address on the cluster network; None while the container is not running."""
        self.docker.reload()
        networks: dict[str, Any] = self.docker.attrs["NetworkSettings"]["Networks"]
        address = networks.get(self.network.name, {}).get("IPAddress")
        return str(address) if address else None

    def exec(self, *argv: str) -> tuple[int, str]:
        code, output = self.docker.exec_run(list(argv), demux=False)
        text = output.decode(errors="replace") if isinstance(output, bytes) else ""
        return (-1 if code is None else int(code)), text

    # --- its log directories (disk-full, kill wipe) ------------------------------------------
    @property
    def log_dirs(self) -> tuple[str, ...]:
        return self.disk_plan.paths

    @property
    def log_dir_mb(self) -> int | None:
        """Each log directory's size (its own tmpfs); None: unbounded, on the container's disk."""
        return self.disk_plan.size_mb

    def _sized(self) -> NodeDisks:
        if self._disks is None or self.disk_plan.size_mb is None:
            raise FaultError(
                f"{self.name}: its log directories have no size of their own "
                "(cluster.log_dir_size_mb): filling them would fill the machine's disk"
            )
        return self._disks

    def fill_log_dir(self, index: int) -> int:
        """Fill log directory `index` until writes fail; the bytes written."""
        return self._sized().fill(index)

    def free_log_dir(self, index: int) -> int:
        return self._sized().free(index)

    def clear_log_dir(self, index: int) -> tuple[int, int]:
        """Empty log directory `index` (the broker is down): (bytes, partitions) it held."""
        return self._sized().clear(index)

    def disk_usage(self) -> list[tuple[int, int]]:
        """(used, size) bytes of each size-limited log directory."""
        return self._sized().usage()

    def partition_files(self, topic: str, partition: int) -> dict[str, bytes]:
        """The files of its directory of this partition (first log directory), read through
        Docker's archive API: a stopped broker's too."""
        folder = f"{self.archive_dirs[0]}/{topic}-{partition}"
        return {name: f.data for name, f in read_folder(self.docker, folder).items()}

    def replace_partition_file(self, topic: str, partition: int, name: str, data: bytes) -> None:
        """Write `data` over one file of that directory (its owner and mode kept)."""
        folder = f"{self.archive_dirs[0]}/{topic}-{partition}"
        files = read_folder(self.docker, folder)
        if name not in files:
            raise FaultError(f"{self.name}: no {folder}/{name}")
        try:
            write_file(self.docker, folder, files[name], data)
        except OSError as exc:
            raise FaultError(str(exc)) from exc

    def copy_partitions(
        self, topics: dict[str, int], dest: Path, suffix: str = ""
    ) -> tuple[int, int]:
        """Copy the segment files of these topics' partition directories (topic -> the
        partitions it has at least) into dest/<topic>-<p>: (partitions, bytes). Read from
        the keeper for size-limited log directories, else from the container (any state),
        each log directory + `suffix` (kill wipe's set-aside copy)."""
        sources = (self._disks.sources() if self._disks is not None else None) or [
            (self.docker, path + suffix) for path in self.archive_dirs
        ]
        partitions = copied = 0
        for topic, at_least in topics.items():
            found, size = copy_topic(sources, topic, at_least, dest)
            partitions += len(found)
            copied += size
        return partitions, copied

    def logs(self, tail: int | None = None) -> str:
        """Its log across restarts, and across replaced containers when `tail` is None."""
        if tail is not None:
            return self._own_logs(tail)
        return (self._earlier_logs + self._own_logs())[self._log_mark :]

    def mark_logs(self) -> None:
        """From now on logs() starts here (a cluster reused by the next cell: its broker logs,
        the lines its checks count, are its own)."""
        self._log_mark += len(self.logs())

    def _own_logs(self, tail: int | None = None) -> str:
        """The current container's log only (what its start-up lines are counted in)."""
        raw: bytes = self.docker.logs(tail=tail if tail is not None else "all")
        return raw.decode(errors="replace")
