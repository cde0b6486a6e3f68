"""Faults the nemesis does to the workload's consumer members (target consumer:<set>/<member>).

`consumer-crash` SIGKILLs a member of any set (random: one of any set's); `pipeline-crash`
is a consumer-crash of a pipeline member (random: one of the pipeline's). No Fault: the act
crashes the member through the consumers' ConsumerControl, which records it (consumer.crash),
and starts it again at heal, or at the heal phase when it has no duration.
"""

from __future__ import annotations

import random
import re
from typing import Any, ClassVar

from harness.faults.control import NodeRef
from harness.faults.drawing import Drawing, pick
from harness.faults.kind import CellView, FaultKind, Plays, Problem
from harness.faults.stage import ConsumerControl, Stage
from harness.results.events import PIPELINE_SET

CONSUMER_TARGET = re.compile(r"consumer:(?P<set>[A-Za-z0-9._-]+)/(?P<member>\d+)")


class ConsumerCrash(FaultKind):
    """`{kind: consumer-crash, target: consumer:group/1}`."""

    name: ClassVar[str] = "consumer-crash"
    plays: ClassVar[Plays] = "consumer"
    drawing: ClassVar[Drawing | None] = Drawing(roles=("client",))

    def problems(self, cell: CellView) -> list[Problem]:
        out: list[Problem] = [(k, f"{self.kind} takes no {k}") for k in self.options_set()]
        why = self.target_problem(cell)
        return out + ([("target", why)] if why else [])

    def target_problem(self, cell: CellView) -> str | None:
        return consumer_target_problem(cell, self.target)

    @classmethod
    def drawn_target(cls, rng: random.Random | None, cell: CellView) -> str:
        """`client`: a member of any consumer set but the pipeline (pipeline-crash's), each
        member as likely: consumer:<set>/<i>."""
        return pick(rng, _members(cell, pipeline=False) or [NO_MEMBER])

    def process_target(self) -> str:
        return self.target

    def plan_target(self, cell: CellView, rng: random.Random) -> str:
        """`random`: a member of any set but the pipeline (each set as likely)."""
        if self.target != "random":
            return self.target
        sets = list(cell.member_counts.items())
        if cell.has_pipeline:  # the pipeline's entry comes last
            sets = sets[:-1]
        name, members = rng.choice(sets)
        return f"consumer:{name}/{rng.randrange(members)}"

    def resolves_node(self, target: str) -> bool:
        return False

    def act(self, stage: Stage, target: NodeRef, index: int) -> MemberCrash:
        return MemberCrash(stage.consumers, str(target).removeprefix("consumer:"), index)


class MemberCrash:
    """A member SIGKILLed (inject) and started again (heal): not booked with the cluster's
    faults, so the nemesis restarts it at the heal phase when no heal came first."""

    healed_by_cluster = False

    def __init__(self, consumers: ConsumerControl, ref: str, index: int) -> None:
        self.consumers = consumers
        self.ref = ref  # <set>/<member index>
        self.index = index
        self.planned: dict[str, Any] = {}  # the consumer.crash event carries `index` instead
        self.crashed: str | None = None  # the member's name while it is down

    def inject(self) -> MemberCrash:
        self.crashed = self.consumers.crash_member(self.ref, self.index)
        return self

    def heal(self) -> None:
        name, self.crashed = self.crashed, None
        if name is not None:
            self.consumers.restart_member(name)


class PipelineCrash(ConsumerCrash):
    """`{kind: pipeline-crash, target: consumer:pipeline/0}` (random: a pipeline member)."""

    name: ClassVar[str] = "pipeline-crash"
    drawing: ClassVar[Drawing | None] = Drawing(roles=("client",))

    def target_problem(self, cell: CellView) -> str | None:
        text = self.target
        if not cell.has_pipeline:
            return f"{self.kind} needs a pipeline (the spec's pipeline: section)"
        if text != "random" and not text.startswith(f"consumer:{PIPELINE_SET}/"):
            return f"expected consumer:{PIPELINE_SET}/<member index> or random (got {text!r})"
        return consumer_target_problem(cell, text)

    @classmethod
    def drawn_target(cls, rng: random.Random | None, cell: CellView) -> str:
        """`client`: a member of the pipeline, each as likely: consumer:pipeline/<i>."""
        return pick(rng, _members(cell, pipeline=True) or [NO_MEMBER])

    def plan_target(self, cell: CellView, rng: random.Random) -> str:
        """`random`: one of the pipeline's members."""
        if self.target == "random" and cell.has_pipeline:
            return f"consumer:{PIPELINE_SET}/{rng.randrange(cell.member_counts[PIPELINE_SET])}"
        return super().plan_target(cell, rng)


# A drawn target when the cell has no member to crash: its rules refuse it, so explore does not
# draw the kind there (`random` would pass them and find no member when planned).
NO_MEMBER = "consumer:none"


def _members(cell: CellView, pipeline: bool) -> list[str]:
    """consumer:<set>/<i> of every member of the pipeline's set, or of every other set."""
    return [
        f"consumer:{name}/{i}"
        for name, members in cell.member_counts.items()
        if (name == PIPELINE_SET) == pipeline
        for i in range(members)
    ]


def consumer_target_problem(cell: CellView, text: str) -> str | None:
    if text == "random":
        return None
    m = CONSUMER_TARGET.fullmatch(text)
    if not m:
        return f"expected consumer:<set>/<member index> or random (got {text!r})"
    sets = cell.member_counts
    members = sets.get(m["set"])
    if members is None:
        return f"no consumer set named {m['set']!r}; sets: {', '.join(sets)}"
    if int(m["member"]) >= members:
        return (
            f"set {m['set']!r} has {members} member(s), indexes 0..{members - 1} "
            f"(got {m['member']})"
        )
    return None
