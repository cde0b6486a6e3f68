"""add-controller: a spare controller joins a dynamic KRaft quorum as a voter (KIP-853).

What an operator does to replace a failed controller, with Kafka's own tool (the operations
guide's "Add New Controller"): start the new controller, formatted with
--no-initial-controllers, so it fetches the metadata log as an observer; then, inside it,
`kafka-metadata-quorum --bootstrap-controller <voters> --command-config <its properties>
add-controller`, which reads its id, directory id and endpoint from those properties; and
wait until `describe --status` lists it among the voters. The active controller accepts it
once it has caught up, so the tool is run again until Kafka takes it (bounded by timeout_s).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import ClassVar

from harness.common.waiting import wait_until
from harness.errors import FaultError, HarnessError
from harness.faults.control import ChaosTarget, Node, NodeRef, QuorumControl
from harness.faults.drawing import Drawing
from harness.faults.kind import CellView, FaultKind, Mode, OperationTimeout, Problem, TargetStyle
from harness.faults.operation import Operation
from harness.faults.target_rules import spare_left
from harness.nodes.dynamic_quorum import QuorumStatus, add_controller_argv, gist

# What the tool says when the voter is in the set already (an earlier attempt got through).
_ALREADY = ("DuplicateVoterException", "already part of the set of voters")


class AddController(FaultKind):
    """`{kind: add-controller}` (the next spare) or `{kind: add-controller, target: broker:104}`."""

    name: ClassVar[str] = "add-controller"
    changes_cluster: ClassVar[bool] = True  # a voter more
    # The next spare controller (target `random`), no options; the rules want spares.
    drawing: ClassVar[Drawing | None] = Drawing(roles=("cluster",))
    target_style: ClassVar[TargetStyle] = "spare"
    operation: ClassVar[bool] = True
    modes: ClassVar[tuple[Mode, ...]] = ("kraft",)

    timeout_s: OperationTimeout = None

    def rules(self, cell: CellView) -> list[Problem]:
        if not cell.dynamic_quorum:
            return [("kind", f"{self.kind} {NEEDS_DYNAMIC}")]
        why = spare_left(self.kind, self.at_s, cell, len(cell.spare_controllers), "controller")
        return [("kind", why)] if why else []

    def target_problem(self, cell: CellView) -> str | None:
        spares = cell.spare_controllers
        if not spares:
            return (
                f"{self.kind} needs cluster.spare_controllers >= 1 (a declared controller to start)"
            )
        if self.target == "random":
            return None  # the next spare
        node_id = controller_id(self.target)
        if node_id not in spares:
            ids = ", ".join(f"broker:{i}" for i in spares)
            return (
                f"expected a spare controller ({ids}) or no target for the next one "
                f"(got {self.target!r})"
            )
        return None

    def make(self, cluster: ChaosTarget, target: NodeRef | None) -> AddControllerFault:
        return AddControllerFault(cluster, target, self)


NEEDS_DYNAMIC = (
    "needs cluster.dynamic_quorum: true (a static quorum, controller.quorum.voters, "
    "cannot change its voters)"
)


class AddControllerFault(Operation):
    """Target `broker:<id>` of a spare controller, or None for the lowest spare left.

    Outcome: `controller` (its id), `voters_before`, `voters_after` (ids, from
    `describe --status`), `directory_id` (its metadata directory's, as the quorum has it),
    `joined`; the Operation adds `completed` and `elapsed_s`.
    """

    kind = "add-controller"

    def __init__(self, cluster: QuorumControl, target: NodeRef | None, spec: AddController) -> None:
        super().__init__(cluster, spec.given(), spec.timeout_s)
        self.quorum = cluster
        self.target = target
        # Resolved when the fault is made, i.e. when it fires: "next" is the next one *now*.
        spares = cluster.spare_controller_ids()
        self.node_id = _lowest(spares) if target is None or target == "" else controller_id(target)

    def target_name(self) -> str:
        return f"controller-{self.node_id}" if self.node_id is not None else "spare"

    def _inject(self) -> None:
        if not self.quorum.dynamic_quorum:
            raise FaultError(f"add-controller {NEEDS_DYNAMIC}")
        spares = self.quorum.spare_controller_ids()
        if self.node_id is None or self.node_id not in spares:
            wanted = "a spare controller" if self.target in (None, "") else repr(self.target)
            raise FaultError(
                f"add-controller: {wanted} is not a spare controller left to start "
                f"(left: {spares or 'none'})"
            )
        deadline = time.monotonic() + self.timeout_s
        before = described(self.quorum, deadline)
        self.outcome.update(controller=self.node_id, voters_before=before.voter_ids, joined=False)
        node = self.quorum.start_spare_controller(self.node_id)
        wait_until(
            lambda: self._add(node, before),
            left(deadline),
            f"{node.name} accepted as a voter by add-controller",
            done=lambda error: not error,
            interval_s=2.0,
        )
        after = described(
            self.quorum,
            deadline,
            f"{node.name} among the quorum's voters",
            done=lambda status: self.node_id in status.voters,
        )
        self.outcome.update(
            joined=True,
            voters_after=after.voter_ids,
            directory_id=after.voters.get(self.node_id or 0, ""),
        )

    def _add(self, node: Node, before: QuorumStatus) -> str:
        """Kafka's add-controller, run inside the new controller; "" once Kafka took it."""
        voters = [n.name for n in self.quorum.nodes if n.node_id in before.voters and n.is_up()]
        code, out = node.exec(*add_controller_argv(voters or [node.name]))
        return tool_error(code, out, _ALREADY)


def described(
    quorum: QuorumControl,
    deadline: float,
    what: str = "the quorum described (describe --status)",
    done: Callable[[QuorumStatus], object] = bool,
) -> QuorumStatus:
    """The quorum's status, asked again until it answers (a voter just killed may have been
    the leader: until the others elect one, the tool gets no answer) and, with `done`, until
    it shows what a voter change meant."""
    return wait_until(
        quorum.quorum_status,
        left(deadline),
        what,
        done=done,
        retry_on=HarnessError,
        interval_s=1.0,
    )


def tool_error(code: int, out: str, done_words: tuple[str, ...]) -> str:
    """The quorum tool's failure in a line, "" when it did what was asked (exit 0, or Kafka
    says an earlier attempt did: one of `done_words`)."""
    if code == 0 or any(word in out for word in done_words):
        return ""
    return f"exit {code}: {gist(out)}"


def controller_id(target: NodeRef) -> int | None:
    """The node id `broker:<id>` (or a bare id) names; None when it names none."""
    if isinstance(target, int):
        return target
    m = re.fullmatch(r"(?:broker:)?(\d+)", target.strip())
    return int(m[1]) if m else None


def _lowest(ids: list[int]) -> int | None:
    return min(ids) if ids else None


def left(deadline: float) -> float:
    return max(1.0, deadline - time.monotonic())
