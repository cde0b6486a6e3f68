"""Log directories on plfs: a FUSE filesystem that remembers what was never fsynced.

What a power loss acts on (harness.faults.power_loss): a wrapper entry point, mounted
(docker/plfs-entrypoint.sh), serves each Kafka node's log directory from a backing folder
on the container's own disk through plfs (tools/plfs, built by `make plfs`), which writes
through at once and keeps an undo journal of everything since each file's (and directory's)
last fsync; a power loss rolls it back before the node dies. Only cells that plan a power
loss get it: plfs costs a user-space round trip per write, so every other cell runs exactly
as without it. Needs `/dev/fuse` and CAP_SYS_ADMIN in the container. Spec
`cluster.power_loss_fs` (default: on when a planned fault needs it),
`KafkaCluster(power_loss_fs=True)`, marker key `power_loss_fs`, `with_power_loss_fs()`;
`cluster.start` carries `power_loss_fs: true`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Self, TypedDict

from harness.common.built_binary import built_binary
from harness.common.spec_base import StrictModel
from harness.nodes.capabilities.base import (
    BuilderMethods,
    Entrypoint,
    Problem,
    Shape,
    Switch,
    Wiring,
)
from harness.nodes.topology import DATA_DIR, NodeSpec

ROOT = Path(__file__).resolve().parents[3]
PLFS = "plfs"
PLFS_DIR = "/opt/kafka-chaos-plfs"  # plfs and its entry point, mounted read-only
ENTRYPOINT = ROOT / "docker" / "plfs-entrypoint.sh"
CONTROL = "/run/kafka-chaos-plfs.sock"  # plfs's control socket inside the node
STATE_DIR = "/var/lib/kafka-chaos-plfs"  # backing folders, graveyards, reports (not mounted)
LOG = "/var/log/kafka-chaos-plfs.log"
DIRS_ENV = "KAFKA_CHAOS_PLFS_DIRS"  # the log directories it serves, colon-separated


class Options(TypedDict, total=False):
    power_loss_fs: bool


class SpecKeys(StrictModel):
    # Log directories on plfs (harness.faults.power_loss). None: when a planned fault needs it.
    power_loss_fs: bool | None = None


class Builder(BuilderMethods):
    def with_power_loss_fs(self, on: bool = True) -> Self:
        """Log directories on plfs: what a power loss drops unsynced writes from."""
        return self._set(power_loss_fs=on)


def plfs_binary() -> Path:
    """The plfs `make plfs` built (into the virtualenv's bin)."""
    return built_binary(PLFS, "a power loss", "plfs")


class PowerLossFs(Switch[SpecKeys], builder=Builder):
    key = "power_loss_fs"
    title = "power-loss filesystem"
    doc = (
        "every Kafka node's log directory on plfs, a FUSE filesystem that can drop what was "
        "never fsynced"
    )
    missing = (
        "{kind} needs log directories on plfs: start the cluster with power_loss_fs=True "
        "(a spec that plans a {kind} gets it)"
    )
    refused = "{kind} drops unsynced writes through plfs; cluster.power_loss_fs is false"
    _binary: Path | None = None

    def spec_problems(self, shape: Shape) -> list[Problem]:
        if self.on and shape.migration_controllers:
            return [
                (
                    "power_loss_fs",
                    "expected off with migration_controllers (a migration replaces nodes)",
                )
            ]
        return []

    def prepare(self) -> None:
        if self.on:
            self._binary = plfs_binary()

    def wire(self, node: NodeSpec, nodes: Sequence[NodeSpec], run_id: str) -> Wiring:
        """plfs and its wrapper entry point mounted, /dev/fuse and CAP_SYS_ADMIN (a FUSE mount
        inside the container), the log directory it serves."""
        if not self.on:
            return Wiring()
        binary = self._binary or plfs_binary()
        return Wiring(
            env={DIRS_ENV: DATA_DIR},
            mounts={str(binary): f"{PLFS_DIR}/plfs", str(ENTRYPOINT): f"{PLFS_DIR}/entrypoint"},
            entrypoints=(Entrypoint(f"{PLFS_DIR}/entrypoint", wraps=True),),
            devices=("/dev/fuse:/dev/fuse:rwm",),
            cap_add=("SYS_ADMIN",),
            # Docker's AppArmor profile (Ubuntu hosts, GitHub's runners) denies every mount,
            # FUSE's included; a host without AppArmor ignores this.
            security_opt=("apparmor=unconfined",),
            # Docker's archive API sees the container's own disk, not the FUSE mount on it:
            # segment copies read the backing folder, which plfs keeps equal (write-through).
            archive_dirs=(f"{STATE_DIR}/0/data",),
        )
