"""remove-controller: a voter leaves a dynamic KRaft quorum (KIP-853), then the cluster.

The other half of replacing a controller (the operations guide's "Remove Controller"): Kafka's
`kafka-metadata-quorum --bootstrap-controller <voters> remove-controller --controller-id N
--controller-directory-id D`, run inside another controller; the directory id is the one
`describe --status` lists for the voter, so a dead controller can be removed too (the guide
recommends shutting it down first). Once the quorum no longer lists it, the node leaves the
cluster for good, stopped unless `keep_running`: a removed voter that came back with its old
log would still count itself a voter.
"""

from __future__ import annotations

import random
import re
import time
from typing import Any, ClassVar

from harness.common.waiting import wait_until
from harness.errors import FaultError
from harness.faults.add_controller import NEEDS_DYNAMIC, described, left, tool_error
from harness.faults.control import ChaosTarget, Node, NodeRef, QuorumControl
from harness.faults.drawing import Drawing, pick
from harness.faults.kind import CellView, FaultKind, Mode, OperationTimeout, Problem, required
from harness.faults.operation import Operation
from harness.nodes.dynamic_quorum import QuorumStatus, remove_controller_argv

_GONE = ("VoterNotFoundException", "is not part of the set of voters")  # removed already


class RemoveController(FaultKind):
    """`{kind: remove-controller, target: broker:101}` (or `controller`: the active one)."""

    name: ClassVar[str] = "remove-controller"
    changes_cluster: ClassVar[bool] = True  # a voter less
    # The active controller: a node role's brokers are no controllers (a dynamic quorum's
    # voters are dedicated controllers), so `controller` is the one role its target takes.
    drawing: ClassVar[Drawing | None] = Drawing(roles=("controller",))
    operation: ClassVar[bool] = True
    modes: ClassVar[tuple[Mode, ...]] = ("kraft",)

    keep_running: bool | None = None  # the removed controller is not stopped
    timeout_s: OperationTimeout = None

    @classmethod
    def drawn_options(cls, rng: random.Random | None, cell: CellView) -> dict[str, Any]:
        """keep_running: false (the removed controller stopped) or true (left running, an
        observer)."""
        return {"keep_running": pick(rng, (False, True))}

    def rules(self, cell: CellView) -> list[Problem]:
        if not cell.dynamic_quorum:
            return [("kind", f"{self.kind} {NEEDS_DYNAMIC}")]
        voters = len(cell.controllers)
        for at_s, kind in sorted(cell.planned):
            if at_s > self.at_s:
                break
            voters += {"add-controller": 1, self.kind: -1}.get(kind, 0)
        if voters < 1:
            return [
                (
                    "kind",
                    f"the quorum would have no voter left after this {self.kind} (at_s "
                    f"{self.at_s:g}: {len(cell.controllers)} controllers, the adds and removes "
                    "planned by then); a quorum needs at least one voter",
                )
            ]
        return []

    def target_problem(self, cell: CellView) -> str | None:
        if self.target == "controller":
            return None
        ids = [*cell.controllers, *cell.spare_controllers]
        m = re.fullmatch(r"broker:(\d+)", self.target)
        if m is None or int(m[1]) not in ids:
            named = ", ".join(f"broker:{i}" for i in ids) or "none in this cell"
            return (
                f"expected controller (the active one) or a controller ({named}) "
                f"(got {self.target!r})"
            )
        return None

    def make(self, cluster: ChaosTarget, target: NodeRef | None) -> RemoveControllerFault:
        return RemoveControllerFault(cluster, required(target), self)


class RemoveControllerFault(Operation):
    """Target: a controller's id (resolved when the fault fires), running or not.

    Outcome: `controller`, `directory_id`, `voters_before`, `voters_after` (ids, from
    `describe --status`), `removed`, `stopped`; the Operation adds `completed` and `elapsed_s`.
    """

    kind = "remove-controller"

    def __init__(self, cluster: QuorumControl, target: NodeRef, spec: RemoveController) -> None:
        super().__init__(cluster, spec.given(), spec.timeout_s)
        self.quorum = cluster
        self.node = cluster.node(target)
        self.keep_running = bool(spec.keep_running)

    def target_name(self) -> str:
        return self.node.name

    def _inject(self) -> None:
        if not self.quorum.dynamic_quorum:
            raise FaultError(f"remove-controller {NEEDS_DYNAMIC}")
        node_id = self.node.node_id
        if node_id is None or not self.node.is_controller or self.node.is_broker:
            raise FaultError(
                f"remove-controller takes a dedicated controller, not {self.node.name}"
            )
        deadline = time.monotonic() + self.timeout_s
        before = described(self.quorum, deadline)
        if node_id not in before.voters:
            raise FaultError(f"{self.node.name} is no voter (voters: {before.voter_ids})")
        if len(before.voters) < 2:
            raise FaultError(f"{self.node.name} is the last voter: the quorum cannot lose it")
        directory = before.voters[node_id]
        self.outcome.update(
            controller=node_id,
            directory_id=directory,
            voters_before=before.voter_ids,
            removed=False,
            stopped=False,
        )
        wait_until(
            lambda: self._remove(node_id, directory, before),
            left(deadline),
            f"{self.node.name} removed by remove-controller",
            done=lambda error: not error,
            interval_s=2.0,
        )
        after = described(
            self.quorum,
            deadline,
            f"{self.node.name} gone from the quorum's voters",
            done=lambda status: node_id not in status.voters,
        )
        self.outcome.update(removed=True, voters_after=after.voter_ids)
        self.quorum.retire_controller(node_id, stop=not self.keep_running)
        self.outcome["stopped"] = not self.keep_running

    def _remove(self, node_id: int, directory: str, before: QuorumStatus) -> str:
        """Kafka's remove-controller, run inside another running controller; "" once done."""
        others = [
            n
            for n in self.quorum.nodes
            if n.is_controller and n.node_id != node_id and n.node_id is not None and n.is_up()
        ]
        voters = [n.name for n in others if n.node_id in before.voters] or [n.name for n in others]
        runner = _first(others)
        code, out = runner.exec(*remove_controller_argv(voters, node_id, directory))
        return tool_error(code, out, _GONE)


def _first(nodes: list[Node]) -> Node:
    if not nodes:
        raise FaultError("remove-controller: no other controller is running to run the tool in")
    return nodes[0]
