"""Log directories: each broker's (JBOD), and a size of their own (harness.nodes.disks).

Sized, each log directory is its own tmpfs, held by a keeper container: what disk-full fills
(never the machine's disk). Spec `cluster.log_dirs` and `cluster.log_dir_size_mb` (default:
unbounded, or DEFAULT_FILLABLE_MB when a planned fault fills disks), the same KafkaCluster
keywords and marker keys, `with_log_dirs(count, size_mb)`; `cluster.start` carries
`log_dirs` (more than one) and `log_dir_size_mb`. A dedicated controller has one, unsized.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Self, TypedDict

from pydantic import Field

from harness.common.spec_base import StrictModel
from harness.nodes.capabilities.base import BuilderMethods, Capability, Problem, Shape, Wiring
from harness.nodes.topology import (
    DATA_DIR,
    JBOD_KRAFT_SINCE,
    MAX_LOG_DIRS,
    NodeSpec,
    log_dir_paths,
    version_tuple,
)

# A size-limited log directory is a tmpfs (harness.nodes.disks): memory, so bounded.
MIN_LOG_DIR_MB = 16
MAX_LOG_DIR_MB = 4096
DEFAULT_FILLABLE_MB = 256  # a log directory's size when disk-full is planned and none given


class Options(TypedDict, total=False):
    log_dirs: int
    log_dir_size_mb: int | None


class SpecKeys(StrictModel):
    log_dirs: int = Field(default=1, ge=1, le=MAX_LOG_DIRS)  # each broker's (JBOD)
    # Each log directory its own filesystem of this size (harness.nodes.disks). None:
    # unbounded, on the container's disk, unless a planned fault fills disks (then the default).
    log_dir_size_mb: int | None = Field(default=None, ge=MIN_LOG_DIR_MB, le=MAX_LOG_DIR_MB)


class Builder(BuilderMethods):
    def with_log_dirs(self, count: int, size_mb: int | None = None) -> Self:
        """Each broker's log directories (JBOD) and, with `size_mb`, each its own filesystem of
        that size: what disk-full fills."""
        return self._set(log_dirs=count, log_dir_size_mb=size_mb)


class LogDirs(Capability[SpecKeys], builder=Builder):
    title = "sized log directories"
    doc = "each broker's log directories (JBOD) and, sized, each its own tmpfs held by a keeper"
    defaults: ClassVar[dict[str, Any]] = {"log_dirs": 1, "log_dir_size_mb": None}
    missing = "{kind} needs log directories with a size of their own (cluster.log_dir_size_mb)"

    @classmethod
    def from_spec(cls, fields: SpecKeys, needed: bool) -> dict[str, Any]:
        size = fields.log_dir_size_mb
        if size is None and needed:
            size = DEFAULT_FILLABLE_MB  # filling must never fill the machine's disk
        return {"log_dirs": fields.log_dirs, "log_dir_size_mb": size}

    @property
    def count(self) -> int:
        return int(self.values["log_dirs"])

    @property
    def size_mb(self) -> int | None:
        size: int | None = self.values["log_dir_size_mb"]
        return size

    @property
    def on(self) -> bool:
        """Sized: what a fault filling disks needs."""
        return self.size_mb is not None

    def problems(self, shape: Shape) -> list[Problem]:
        out: list[Problem] = []
        count, size = self.values["log_dirs"], self.size_mb
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_LOG_DIRS:
            out.append(
                ("log_dirs", f"log_dirs must be an integer from 1 to {MAX_LOG_DIRS}, not {count!r}")
            )
        elif (
            count > 1 and shape.mode == "kraft" and version_tuple(shape.version) < JBOD_KRAFT_SINCE
        ):
            out.append(
                (
                    "log_dirs",
                    f"log_dirs {count}: KRaft brokers take several log directories from Kafka 3.7 "
                    f"(KIP-858), not {shape.version}; use one log directory or mode='zookeeper'",
                )
            )
        if size is not None and not MIN_LOG_DIR_MB <= size <= MAX_LOG_DIR_MB:
            out.append(
                (
                    "log_dir_size_mb",
                    f"log_dir_size_mb must be from {MIN_LOG_DIR_MB} to {MAX_LOG_DIR_MB}, "
                    f"not {size!r}",
                )
            )
        return out

    def record(self) -> dict[str, Any]:
        return {
            **({"log_dirs": self.count} if self.count > 1 else {}),
            **({"log_dir_size_mb": self.size_mb} if self.size_mb else {}),
        }

    def describe(self) -> str:
        dirs = f", {self.count} log dirs" if self.count > 1 else ""
        return dirs + (f" of {self.size_mb} MB" if self.size_mb else "")

    def wire(self, node: NodeSpec, nodes: Sequence[NodeSpec], run_id: str) -> Wiring:
        """A broker's directories, sized; a dedicated controller's one (metadata only)."""
        if not node.is_broker:
            return Wiring(log_dirs=(DATA_DIR,))
        return Wiring(log_dirs=log_dir_paths(self.count), log_dir_mb=self.size_mb)
