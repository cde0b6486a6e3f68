"""Power loss: the node dies at once and every write to its log directory since that file's
last fsync is gone, as are creations, renames and deletions its directory never fsynced
(lazyfs's lose-unfsynced-writes, stricter on directories); `target: all` is a whole site.

Kafka never fsyncs a log by default (`flush.messages` is effectively infinite): it trusts
replication and the page cache, and every other kind keeps the page cache. Here each Kafka
node's log directory is on plfs (harness.nodes.capabilities.power_loss_fs), which journals
what was not fsynced. The cut, for each target: SIGSTOP its JVM from the host (plfs, its
child, keeps serving), `plfs ctl cut --exit` (plfs freezes, rolls back, reports what it
dropped, and exits: the FUSE connection is aborted, nothing more reaches the disk), SIGKILL. With `all`, every node is frozen before any is rolled back: one instant for the site.
`writeback_s`: what the kernel would have written back by itself after that many seconds
survives (unset: only what was fsynced, lazyfs's worst case). `unsynced_tail: zeros`: a
file's unsynced growth keeps its size and reads as NUL bytes instead of being cut off - the
inode's size reached the disk, its data did not (XFS, or ext4 with data=writeback, after a
crash): what a file renamed into place without an fsync looks like then (KAFKA-16541's
corrupt leader-epoch checkpoint). The heal starts the nodes;
Kafka finds no clean-shutdown marker and recovers its logs, and its own log lines say how.

History: `fault.discarded` right after the cut, per node what plfs dropped (`discarded`:
files, bytes, entry operations, the segments that lost bytes, the report's path in the node);
the heal repeats it, with `came_back` per node and `recovery`: the counts of Kafka's recovery
lines after the restart.
"""

from __future__ import annotations

import json
import random
import re
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar, Literal

from pydantic import Field

from harness.common.spec_base import MAX_SECONDS
from harness.errors import ConfigError, FaultError
from harness.faults.base import Fault, bring_back
from harness.faults.control import ChaosTarget, Node, NodeControl, NodeRef
from harness.faults.drawing import Drawing, between, pick
from harness.faults.kind import CellView, FaultKind, Problem
from harness.nodes.capabilities.power_loss_fs import CONTROL, PLFS_DIR, STATE_DIR, PowerLossFs
from harness.results.events import CLUSTER_READY, FAULT_DISCARDED, PHASE, PHASE_WORKLOAD

ALL = "all"
# Kafka's own words for what its log recovery did (UnifiedLog, LogLoader, LogSegment).
RECOVERY_LINES = {
    "unflushed_segments": re.compile(r"Recovering unflushed segment"),
    "invalid_bytes_truncated": re.compile(r"Found invalid messages|invalid bytes at the end"),
    "unclean_shutdown": re.compile(r"clean shutdown file|unclean shutdown", re.IGNORECASE),
    "truncations": re.compile(r"Truncating to offset|Truncated to offset"),
    "corrupt_index_rebuilt": re.compile(r"Found a corrupted index file|rebuilding index"),
}


def recovery_counts(log_text: str) -> dict[str, int]:
    """How often each of Kafka's recovery lines appears in `log_text`."""
    return {name: len(pattern.findall(log_text)) for name, pattern in RECOVERY_LINES.items()}


def discarded_summary(report: dict[str, Any]) -> dict[str, Any]:
    """What a plfs cut report dropped, in a few numbers (the report stays in the node)."""
    mounts = report.get("mounts") or []
    files = [f for m in mounts for f in m.get("files") or [] if f.get("lost") or f.get("restored")]
    entries = [e for m in mounts for e in m.get("entries") or []]
    # A segment lost bytes, or its creation (or rename) was undone: forensics places the
    # lost records of its partition from these (lost_where.unsynced).
    paths = [str(f.get("path", "")) for f in files]
    paths += [str(e.get(k) or "") for e in entries for k in ("path", "to")]
    return {
        "files": len(files),
        "bytes": sum(int(m.get("lost_bytes") or 0) for m in mounts),
        "entries": len(entries),
        "segments": sorted({p for p in paths if p.endswith(".log")}),
    }


class PowerLossFault(Fault):
    kind = "power-loss"

    def __init__(
        self,
        cluster: NodeControl,
        nodes: list[Node],
        whole: bool,
        writeback_s: float | None,
        unsynced_tail: str = "drop",
    ) -> None:
        super().__init__(cluster)
        if not cluster.has(PowerLossFs):
            raise ConfigError(PowerLossFs.missing.format(kind=self.kind, title=PowerLossFs.title))
        if not nodes:
            raise ConfigError("power-loss: no Kafka node to cut")
        self.nodes = nodes
        self.whole = whole
        self.writeback_s = writeback_s
        self.unsynced_tail = unsynced_tail
        self.discarded: dict[str, dict[str, Any]] = {}
        self.healed: dict[str, Any] = {}
        self._log_len: dict[str, int] = {}

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "fault": self.kind,
            "target": ALL if self.whole else self.nodes[0].name,
            "nodes": [n.name for n in self.nodes],
        }
        if self.writeback_s is not None:
            out["writeback_s"] = self.writeback_s
        if self.unsynced_tail != "drop":
            out["unsynced_tail"] = self.unsynced_tail
        if self.discarded:
            out["discarded"] = self.discarded
        return {**out, **self.healed}

    def affected_nodes(self) -> list[Node]:
        return list(self.nodes)

    def rejoining(self) -> list[Node]:
        return [n for n in self.nodes if n.is_broker]

    def _each(self, action: Any) -> list[Any]:
        """`action(node)` on every target at once (a site loses power in one instant)."""
        with ThreadPoolExecutor(max_workers=len(self.nodes)) as pool:
            return list(pool.map(action, self.nodes))

    def _durable_before_ms(self) -> int | None:
        """What was written before the workload began is on disk: a real cluster was formatted
        and started long before its power cut (without this, a cut soon after the start
        takes KRaft's bootstrap.checkpoint, which format never fsyncs, and the node cannot
        start again). The workload's start, else the cluster's readiness, else none."""
        ready = None
        for event in self.cluster.history.events:
            if event.kind == PHASE and event.fields.get("phase") == PHASE_WORKLOAD:
                return event.ts
            if event.kind == CLUSTER_READY:
                ready = event.ts
        return ready

    def _cut(self, node: Node) -> dict[str, Any]:
        report = f"{STATE_DIR}/report-{self.id}.json"
        argv = [f"{PLFS_DIR}/plfs", "ctl", "--control", CONTROL, "cut"]
        # --exit: plfs exits once it has answered, aborting the FUSE connection; frozen, it
        # would hold the dying JVM's last flushes (dirty index pages written back at close)
        # for ever, and Docker could not kill the container ("PID 1 is zombie").
        argv += ["--fault-id", str(self.id), "--report", report, "--exit"]
        durable = self._durable_before_ms()
        if durable is not None:
            argv += ["--durable-before-ms", str(durable)]
        if self.writeback_s is not None:
            argv += ["--writeback-s", f"{self.writeback_s:g}"]
        if self.unsynced_tail != "drop":
            argv += ["--unsynced-tail", self.unsynced_tail]
        code, out = node.exec(*argv)
        if code != 0:
            raise FaultError(f"power-loss: plfs could not cut {node.name} (exit {code}): {out}")
        try:
            data = json.loads(out[out.index("{") :])
        except ValueError as exc:
            raise FaultError(f"power-loss: plfs's report from {node.name}: {exc}: {out}") from None
        return {**discarded_summary(data), "report": report}

    def _inject(self) -> None:
        self._each(lambda n: n.signal("SIGSTOP"))
        try:
            reports = self._each(self._cut)
        finally:  # frozen or not, the nodes die: a half-cut site is still a dead one
            self._each(lambda n: n.kill())
        self.discarded = {n.name: r for n, r in zip(self.nodes, reports, strict=True)}
        # fault.inject went out before the cut (the base books a fault before it acts): what
        # was dropped is its own event, at the instant the nodes died.
        self.cluster.history.append(
            FAULT_DISCARDED, fault_id=self.id, fault=self.kind, discarded=self.discarded
        )
        self._log_len = {n.name: len(n.logs()) for n in self.nodes}

    def _heal(self) -> None:
        came_back = self._each(lambda node: bring_back(self.cluster, node))
        self.healed = {
            "came_back": {n.name: up for n, up in zip(self.nodes, came_back, strict=True)},
            "recovery": {
                n.name: recovery_counts(n.logs()[self._log_len.get(n.name, 0) :])
                for n in self.nodes
            },
        }


class PowerLoss(FaultKind):
    """`{kind: power-loss, target: broker:1 | all, duration_s: 20, writeback_s: 5,
    unsynced_tail: zeros}`: the node (or every Kafka node) dies and loses what it never
    fsynced; back at heal."""

    name: ClassVar[str] = "power-loss"
    changes_cluster: ClassVar[bool] = True  # its disks lose what was never fsynced
    # A node, the leader, the active controller, or the whole site at one instant.
    drawing: ClassVar[Drawing | None] = Drawing(roles=("one", "leader", "controller", "all"))
    needs: ClassVar[tuple[type[PowerLossFs], ...]] = (PowerLossFs,)

    # What the kernel writes back by itself after this long survives (None: only fsynced data).
    writeback_s: float | None = Field(default=None, ge=0, le=MAX_SECONDS, allow_inf_nan=False)
    # What a file's unsynced growth becomes: cut off (drop; None), or its size kept as zeros.
    unsynced_tail: Literal["drop", "zeros"] | None = None

    @classmethod
    def drawn_options(cls, rng: random.Random | None, cell: CellView) -> dict[str, Any]:
        """writeback_s: unset (only what was fsynced survives: lazyfs' worst case, a power
        cut's own) three times in four, else 1-10 s; unsynced_tail: drop or zeros."""
        writeback = None if rng is None or rng.random() < 0.75 else between(rng, 1.0, 10.0)
        out: dict[str, Any] = {"unsynced_tail": pick(rng, ("drop", "zeros"))}
        return out if writeback is None else {"writeback_s": writeback, **out}

    def rules(self, cell: CellView) -> list[Problem]:
        out: list[Problem] = []
        if self.duration_s is None:
            out.append(("duration_s", "power-loss needs a duration_s (then the nodes start again)"))
        if cell.log_dirs > 1:
            out.append(
                ("kind", "power-loss serves one log directory per node (cluster.log_dirs 1)")
            )
        if cell.migration_controllers:
            out.append(("kind", "power-loss cannot act on a cluster that migrates to KRaft"))
        return out

    def target_problem(self, cell: CellView) -> str | None:
        return None if self.target == ALL else super().target_problem(cell)

    def plan_target(self, cell: CellView, rng: Any) -> str:
        return ALL if self.target == ALL else super().plan_target(cell, rng)

    def resolves_node(self, target: str) -> bool:
        return target != ALL

    def make(self, cluster: ChaosTarget, target: NodeRef | None) -> Fault:
        whole = target in (None, ALL)
        nodes = (
            [n for n in cluster.nodes if n.is_broker or n.is_controller]
            if whole
            else [cluster.node(target)]  # type: ignore[arg-type]
        )
        if not whole and not (nodes[0].is_broker or nodes[0].is_controller):
            raise ConfigError(f"power-loss: {nodes[0].name} is not a Kafka node (not on plfs)")
        tail = self.unsynced_tail or "drop"
        return PowerLossFault(cluster, nodes, whole, self.writeback_s, tail)
