"""Every consumer kind, in one place: kind word -> its spec model, its supervisor, its member
process (harness.faults.registry is the same table for faults).

Each kind is laid out by one rule: `harness/workload/<kind>/member.py` is the child process
(`python -m`, the set's spec model and the cell's Runtime as its arguments) and
`harness/workload/<kind>/supervisor.py` starts, crashes, stops and reads its members. The
spec's side of a kind is its model in harness.spec.consumers (a set kind's word is the
model's `kind`, the discriminated union's tag); the pipeline is the kind `pipeline:` declares,
its set named "pipeline" (a `command` pipeline's too: the kind `command`). Adding a kind: its model, its folder, one entry here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

import pyarrow as pa
from pydantic import BaseModel

from harness.results.events import PIPELINE_SET
from harness.results.history import History
from harness.spec import Spec
from harness.spec.consumers import (
    CONSUMER_TAGS,
    SET_MODELS,
    CommandPipelineSpec,
    GroupConsumerSpec,
    PipelineSpec,
    ShareConsumerSpec,
    SparkConsumerSpec,
)
from harness.workload.command.supervisor import CommandSupervisor
from harness.workload.group.supervisor import GroupSupervisor
from harness.workload.pipeline.supervisor import PipelineSupervisor
from harness.workload.runtime import Runtime
from harness.workload.share.supervisor import ShareSupervisor
from harness.workload.spark.supervisor import SparkSupervisor

S = TypeVar("S", bound=BaseModel)


class ConsumerSet(Protocol):
    """What a kind's supervisor is: a consumer group's member processes, or one Spark
    streaming query."""

    names: list[str]

    def member(self, index: int) -> str: ...
    def start(self, name: str | None = None) -> None: ...
    def crash(self, name: str, index: int | None = None) -> None: ...
    def stop(self) -> None: ...
    def poll(self) -> None: ...
    def unready(self) -> list[str]: ...
    def not_started(self) -> dict[str, str]: ...
    def lag(self, ends: dict[int, int]) -> dict[int, int]: ...
    def consumed_tables(self) -> Iterator[pa.Table]: ...
    def commits_tables(self) -> Iterator[pa.Table]: ...

    @property
    def rows(self) -> int: ...


@dataclass(frozen=True)
class ConsumerKind(Generic[S]):
    spec: type[S]  # its model in harness.spec.consumers
    # (set name, spec, runtime, history); its `member_module` is `harness.workload.<kind>.member`
    supervisor: Callable[[str, S, Runtime, History], ConsumerSet]

    def supervise(
        self, set_name: str, spec: BaseModel, runtime: Runtime, history: History
    ) -> ConsumerSet:
        """The set's supervisor (nothing started yet)."""
        if not isinstance(spec, self.spec):
            raise TypeError(f"{set_name}: expected a {self.spec.__name__}, got {spec!r}")
        return self.supervisor(set_name, spec, runtime, history)


PIPELINE = PIPELINE_SET  # the pipeline's kind word is its set's name
COMMAND = "command"  # a user's program as the pipeline (`pipeline.kind: command`), set "pipeline"

KINDS: dict[str, ConsumerKind[Any]] = {
    "group": ConsumerKind(GroupConsumerSpec, GroupSupervisor),
    "spark": ConsumerKind(SparkConsumerSpec, SparkSupervisor),
    "share": ConsumerKind(ShareConsumerSpec, ShareSupervisor),
    PIPELINE: ConsumerKind(PipelineSpec, PipelineSupervisor),
    COMMAND: ConsumerKind(CommandPipelineSpec, CommandSupervisor),
}

# Every model the spec takes is a kind here, under its own word (a set kind's tag).
assert all(KINDS[tag].spec is m for tag, m in zip(CONSUMER_TAGS, SET_MODELS, strict=True))
assert {k.spec for k in KINDS.values()} == {*SET_MODELS, PipelineSpec, CommandPipelineSpec}


def declared_sets(spec: Spec) -> list[tuple[str, ConsumerKind[Any], BaseModel]]:
    """(set name, kind, its spec model) of every consumer set a spec declares: `consumer` or
    `consumers` in their order, then the pipeline."""
    out: list[tuple[str, ConsumerKind[Any], BaseModel]] = [
        (name, KINDS[consumer.kind], consumer) for name, consumer in spec.consumer_sets()
    ]
    if spec.pipeline is not None:
        kind = COMMAND if isinstance(spec.pipeline, CommandPipelineSpec) else PIPELINE
        out.append((PIPELINE_SET, KINDS[kind], spec.pipeline))
    return out
