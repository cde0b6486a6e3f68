"""A published bug as an experiment (`bug:`, docs/bugs.md): which releases have it and which
fixed it, and the rule that makes the file a test of that claim.

A bug file's matrix runs the same story on releases that have the bug and on releases that
fixed it, and its expectations differ between the two: the property breaks where the bug is
(the affected cells expect the break, so they `pass` when it shows) and holds where it was
fixed. The rule is checked over the expanded cells (`bug_problems`), because which version a
cell runs is only known once its matrix is applied.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal, Protocol

from pydantic import Field, StringConstraints, model_validator

from harness.common.spec_base import StrictModel


class Cell(Protocol):
    """A matrix cell as the rule reads it (harness.spec.matrix.Cell, which imports this
    module: a protocol keeps the two apart)."""

    @property
    def id(self) -> str: ...
    @property
    def spec(self) -> Any: ...


BUG_STATUSES = ("reproduced", "not-reproduced")
# A Kafka release as the images are tagged (docker/versions.txt): 3.7.0, 4.3.1.
Version = Annotated[str, StringConstraints(pattern=r"^\d+\.\d+\.\d+$")]
BugId = Annotated[str, StringConstraints(min_length=1, max_length=60, pattern=r"^\S+$")]
Url = Annotated[str, StringConstraints(pattern=r"^https://\S+$")]
Line = Annotated[str, StringConstraints(min_length=1, max_length=300)]


class BugSpec(StrictModel):
    """The bug's identity and history as its tracker states it, checked against the JIRA
    issue and its pull requests before the file was written."""

    id: BugId  # KAFKA-16541, librdkafka#4953
    url: Url
    affected: Annotated[list[Version], Field(min_length=1)]
    fixed: Annotated[list[Version], Field(min_length=1)]
    mechanism: Line  # one line: what goes wrong, and why
    status: Literal["reproduced", "not-reproduced"]

    @model_validator(mode="after")
    def _disjoint(self) -> BugSpec:
        both = sorted(set(self.affected) & set(self.fixed))
        if both:
            raise ValueError(f"{', '.join(both)} listed as both affected and fixed")
        return self

    def side(self, version: str) -> Literal["affected", "fixed"] | None:
        if version in self.affected:
            return "affected"
        if version in self.fixed:
            return "fixed"
        return None


def _expect_key(cell: Cell) -> Any:
    return cell.spec.model_dump(mode="json")["expect"]


def bug_problems(bug: BugSpec, cells: Sequence[Cell]) -> list[str]:
    """What keeps the cells from testing the bug: a cell on a release the section does not
    place, no cell on an affected or on a fixed release, or the same expectations on both
    sides (then no outcome tells the bug's presence from its absence)."""
    out: list[str] = []
    sides: dict[str, list[Cell]] = {"affected": [], "fixed": []}
    for cell in cells:
        version = cell.spec.cluster.version
        side = bug.side(version)
        if side is None:
            out.append(
                f"bug: cell {cell.id} runs {version}, which is in neither bug.affected "
                f"({', '.join(bug.affected)}) nor bug.fixed ({', '.join(bug.fixed)})"
            )
        else:
            sides[side].append(cell)
    for name, listed in (("affected", bug.affected), ("fixed", bug.fixed)):
        if not sides[name]:
            out.append(
                f"bug: no cell runs a {name} release ({', '.join(listed)}): the matrix must "
                "cross cluster.version over at least one affected and one fixed release"
            )
    if sides["affected"] and sides["fixed"]:
        broken = {repr(_expect_key(c)) for c in sides["affected"]}
        held = {repr(_expect_key(c)) for c in sides["fixed"]}
        if broken & held:
            out.append(
                "bug: an affected cell expects what a fixed cell expects: give the affected "
                "versions their own expectations (matrix.expect with when: {cluster.version: "
                "...}) that say the property breaks there"
            )
    return out


__all__ = ["BUG_STATUSES", "BugSpec", "bug_problems"]
