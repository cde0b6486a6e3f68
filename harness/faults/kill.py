"""Hard kill: SIGKILL the JVM; the container stays, so heal restarts it with its data.

With wipe=True the broker comes back with empty log directories, like a replaced
machine with a new disk and the same broker id. Each log directory is renamed aside
(one atomic rename each) and recreated empty just before the SIGKILL, so nothing the broker
wrote survives (a size-limited log directory is its own filesystem and cannot be renamed:
it is emptied right after the SIGKILL, through the keeper that holds it, harness.nodes.disks); at heal it starts on the empty directory (KRaft: the entry point formats
it again with the cluster's id, ZooKeeper mode: the broker writes a new meta.properties),
and the old copy is deleted once the node is back. Only a broker without a controller role
may be wiped (a KRaft voter losing its metadata log is another story): the spec rules
(`Kill.rules`) and the constructor both refuse the rest.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from harness.errors import ConfigError, FaultError
from harness.faults.base import Fault, NodeFault
from harness.faults.control import ChaosTarget, NodeControl, NodeRef
from harness.faults.drawing import Drawing
from harness.faults.kind import CellView, FaultKind, Problem, required
from harness.nodes.topology import CONTROLLER_ID_BASE

WIPED = ".wiped"  # <log dir>.wiped: where an old log directory waits for deletion


class KillFault(NodeFault):
    """History with wipe: `wipe: true` on inject; the heal adds `disk_wiped`, and
    `wiped_bytes` / `wiped_partitions` (what the old log directory held)."""

    kind = "kill"
    captures_on_heal = True

    def __init__(self, cluster: NodeControl, target: NodeRef, wipe: bool = False) -> None:
        super().__init__(cluster, target)
        self.wipe = wipe
        if wipe and (not self.node.is_broker or self.node.is_controller):
            role = "a KRaft controller" if self.node.is_controller else "not a broker"
            raise ConfigError(
                f"kill wipe: {self.node.name} is {role}; only a broker without a controller "
                "role can lose its disk (KRaft: give the cluster dedicated controllers)"
            )
        self.wiped: dict[str, Any] = {}

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        return {**out, "wipe": True, **self.wiped} if self.wipe else out

    def _inject(self) -> None:
        sized = self.wipe and self.node.log_dir_mb is not None
        if self.wipe and not sized:
            self._set_aside()
        self.node.kill()
        if self.wipe:
            # What the disk held, copied before it goes (unsized: from the set-aside copy).
            fault = {"fault": self.kind, "fault_id": self.id}
            self.cluster.capture_segments(self.node, "wipe", fault, "" if sized else WIPED)
        if sized:
            held = [self.node.clear_log_dir(i) for i in range(len(self.node.log_dirs))]
            self.wiped = {
                "disk_wiped": True,
                "wiped_bytes": sum(b for b, _ in held),
                "wiped_partitions": sum(p for _, p in held),
            }

    def _heal(self) -> None:
        self._bring_back()
        if self.wipe and self.node.log_dir_mb is None:
            self._delete_old_copy()

    def _set_aside(self) -> None:
        for path in self.node.log_dirs:
            old = path + WIPED
            # Its contents, not the directory: it may be a volume's mount point (persistent
            # log directories), which cannot be renamed.
            script = (
                f"rm -rf {old} && mkdir -p {old} {path} && "
                f"find {path} -mindepth 1 -maxdepth 1 -exec mv -t {old} {{}} +"
            )
            code, out = self.node.exec("sh", "-c", script)
            if code != 0:
                raise FaultError(f"kill wipe: could not empty {path} on {self.node.name}: {out}")

    def _delete_old_copy(self) -> None:
        olds = " ".join(path + WIPED for path in self.node.log_dirs)
        script = (
            f"du -scB1 {olds} | tail -1 | cut -f1; "  # space used, not apparent size
            f"find {olds} -mindepth 1 -maxdepth 1 -type d -name '*-[0-9]*' | wc -l; "
            f"rm -rf {olds}"
        )
        code, out = self.node.exec("sh", "-c", script)
        numbers = [int(w) for w in out.split() if w.isdigit()]
        self.wiped = {"disk_wiped": code == 0 and len(numbers) == 2}
        if len(numbers) == 2:
            self.wiped.update(wiped_bytes=numbers[0], wiped_partitions=numbers[1])


class Kill(FaultKind):
    """`{kind: kill, target: ..., wipe: true}`: SIGKILL, back at heal (with wipe: on an empty disk)."""

    name: ClassVar[str] = "kill"
    drawing: ClassVar[Drawing | None] = Drawing()
    zookeeper_target: ClassVar[bool] = True

    wipe: bool | None = None  # the broker returns with empty log directories

    def leaves_changed(self) -> bool:
        """A wiped broker came back on a new disk."""
        return bool(self.wipe)

    def rules(self, cell: CellView) -> list[Problem]:
        """wipe empties a broker's log directories: only a broker that holds no controller state."""
        if not self.wipe:
            return []
        why = "wipe empties a broker's log directories"
        if self.target == "zookeeper":
            return [("wipe", f"{why}; ZooKeeper's data cannot be wiped")]
        if cell.mode != "kraft":
            return []
        if not cell.controllers:
            return [
                (
                    "wipe",
                    f"{why}; in KRaft with combined nodes every broker is a controller voter and "
                    "its metadata log would go too: give the cluster dedicated controllers "
                    "(cluster.controllers >= 1) or use mode zookeeper",
                )
            ]
        m = re.fullmatch(r"broker:(\d+)", self.target)
        if self.target == "controller" or (m is not None and int(m[1]) > CONTROLLER_ID_BASE):
            return [
                (
                    "wipe",
                    f"{why}; a dedicated KRaft controller holds the metadata log, not a broker's",
                )
            ]
        return []

    def make(self, cluster: ChaosTarget, target: NodeRef | None) -> Fault:
        return KillFault(cluster, required(target), wipe=bool(self.wipe))
