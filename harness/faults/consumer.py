"""Faults the nemesis does to the workload's consumer members (target consumer:<set>/<member>).

`consumer-crash` SIGKILLs a member of any set (random: one of any set's); `pipeline-crash`
is a consumer-crash of a pipeline member (random: one of the pipeline's). No Fault class:
the nemesis crashes the member through its ConsumerControl and starts it again at heal.
"""

from __future__ import annotations

import re
from typing import ClassVar

from harness.faults.kind import CellView, FaultKind, Plays, Problem
from harness.results.events import PIPELINE_SET

CONSUMER_TARGET = re.compile(r"consumer:(?P<set>[A-Za-z0-9._-]+)/(?P<member>\d+)")


class ConsumerCrash(FaultKind):
    """`{kind: consumer-crash, target: consumer:group/1}`."""

    name: ClassVar[str] = "consumer-crash"
    plays: ClassVar[Plays] = "consumer"

    def problems(self, cell: CellView) -> list[Problem]:
        out: list[Problem] = [(k, f"{self.kind} takes no {k}") for k in self.options_set()]
        why = self.target_problem(cell)
        return out + ([("target", why)] if why else [])

    def target_problem(self, cell: CellView) -> str | None:
        return consumer_target_problem(cell, self.target)


class PipelineCrash(ConsumerCrash):
    """`{kind: pipeline-crash, target: consumer:pipeline/0}` (random: a pipeline member)."""

    name: ClassVar[str] = "pipeline-crash"

    def target_problem(self, cell: CellView) -> str | None:
        text = self.target
        if not cell.has_pipeline:
            return f"{self.kind} needs a pipeline (the spec's pipeline: section)"
        if text != "random" and not text.startswith(f"consumer:{PIPELINE_SET}/"):
            return f"expected consumer:{PIPELINE_SET}/<member index> or random (got {text!r})"
        return consumer_target_problem(cell, text)


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
