"""Every consumer set of a cell behind one face: start, crash a member, drain, collect."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

import pyarrow as pa

from harness.common.waiting import wait_until
from harness.errors import HarnessError, WaitTimeout
from harness.results.consumers import ConsumerRef, set_of
from harness.results.events import PIPELINE_SET
from harness.results.history import History
from harness.results.layout import CellPaths
from harness.results.member_files import MemberPaths, read_events
from harness.spec import GroupConsumerSpec, Spec
from harness.workload.group_consumers import GroupConsumers, GroupSettings
from harness.workload.pipeline_members import PipelineMembers, PipelineSettings
from harness.workload.spark_query import SparkQuery, SparkQuerySettings

DEFAULT_GROUP = "chaos-group"


class ConsumerSet(Protocol):
    """A consumer group's member processes, or one Spark streaming query."""

    names: list[str]

    def member(self, index: int) -> str: ...
    def start(self, name: str | None = None) -> None: ...
    def crash(self, name: str, index: int | None = None) -> None: ...
    def stop(self) -> None: ...
    def poll(self) -> None: ...
    def unready(self) -> list[str]: ...
    def lag(self, ends: dict[int, int]) -> dict[int, int]: ...
    def consumed_tables(self) -> Iterator[pa.Table]: ...
    def commits_tables(self) -> Iterator[pa.Table]: ...

    @property
    def rows(self) -> int: ...


class ConsumerSets:
    def __init__(
        self,
        spec: Spec,
        bootstrap: str,
        cell_dir: Path,
        history: History,
        max_s: float,
        seed: int = 0,
    ) -> None:
        self.history = history
        self.directory = CellPaths(cell_dir).consumers
        self.sets: dict[str, ConsumerSet] = {}
        self.default_group = spec.default_group() or DEFAULT_GROUP
        for name, consumer in spec.consumer_sets():
            if not isinstance(consumer, GroupConsumerSpec):
                query = SparkQuerySettings(
                    bootstrap=bootstrap,
                    topic=spec.topic.name,
                    set_name=name,
                    trigger_ms=consumer.trigger_ms,
                    max_offsets_per_trigger=consumer.max_offsets_per_trigger,
                    fail_on_data_loss=consumer.fail_on_data_loss,
                    starting_offsets=consumer.starting_offsets,
                    config=dict(consumer.config),
                    max_s=max_s,
                )
                self.sets[name] = SparkQuery(query, cell_dir, self.directory, history)
                continue
            settings = GroupSettings(
                bootstrap=bootstrap,
                topic=spec.topic.name,
                group=consumer.group,
                set_name=name,
                members=consumer.members,
                commit=consumer.commit,
                processing_ms=consumer.processing_ms,
                processing_jitter_ms=consumer.processing_jitter_ms,
                seed=seed,
                config=dict(consumer.config),
                max_s=max_s,
            )
            self.sets[name] = GroupConsumers(settings, self.directory, history)
        if spec.pipeline is not None:
            p = spec.pipeline
            pipeline = PipelineSettings(
                **vars(
                    GroupSettings(
                        bootstrap=bootstrap,
                        topic=spec.topic.name,
                        group=p.group,
                        set_name=PIPELINE_SET,
                        members=p.members,
                        processing_ms=p.processing_ms,
                        processing_jitter_ms=p.processing_jitter_ms,
                        seed=seed,
                        config=dict(p.config),
                        max_s=max_s,
                    )
                ),
                output=p.output,
                guarantee=p.guarantee,
                transactional_id=p.transactional_id,
                txn_timeout_ms=p.timeout_ms,
                producer_config=dict(p.producer_config),
            )
            self.sets[PIPELINE_SET] = PipelineMembers(pipeline, self.directory, history)

    def start(self) -> None:
        for s in self.sets.values():
            s.start()

    def wait_assigned(self, timeout_s: float) -> None:
        """Until every group member has had partitions assigned once and every Spark query has
        run a batch, so the workload starts on consumers that are reading."""
        try:
            wait_until(
                lambda: [n for s in self.sets.values() for n in s.unready()],
                timeout_s,
                "every consumer assigned",
                done=lambda waiting: not waiting,
                interval_s=0.2,
            )
        except WaitTimeout as exc:
            self.history.append("consumer.unassigned", consumers=exc.last, waited_s=timeout_s)

    def _resolve(self, ref: str) -> tuple[ConsumerSet, str]:
        """`group/0` (a set and a member index) -> the set and its member's name."""
        try:
            target = ConsumerRef.parse(ref)
        except ValueError:
            target = None
        if target is None or target.set_name not in self.sets or target.index is None:
            raise HarnessError(f"no consumer {ref!r} (sets: {', '.join(self.sets)})")
        group = self.sets[target.set_name]
        return group, group.member(target.index)

    def crash_member(self, ref: str, index: int | None = None) -> str:
        """`index`: the planned fault's, recorded on its `consumer.crash` (the evidence that
        the fault was done, harness.verdict.planned_faults)."""
        group, name = self._resolve(ref)
        group.crash(name, index)
        return name

    def restart_member(self, name: str) -> None:
        self.sets[set_of(name)].start(name)

    def poll(self) -> None:
        for s in self.sets.values():
            s.poll()

    @property
    def rows(self) -> int:
        return sum(s.rows for s in self.sets.values())

    def reached(self, ends: dict[int, int]) -> bool:
        return not any(any(s.lag(ends).values()) for s in self.sets.values())

    def lag(self, ends: dict[int, int]) -> dict[str, dict[int, int]]:
        return {name: s.lag(ends) for name, s in self.sets.items()}

    def stop(self) -> None:
        for s in self.sets.values():
            s.stop()

    def consumed_tables(self) -> Iterator[pa.Table]:
        """consumed.parquet's rows (CONSUMED): set after set, each member's in its file order
        (the checks' `_row` order), a chunk at a time."""
        for s in self.sets.values():
            yield from s.consumed_tables()

    def commits_tables(self) -> Iterator[pa.Table]:
        """commits.parquet's rows (COMMITS), set after set."""
        for s in self.sets.values():
            yield from s.commits_tables()

    def merge_events(self) -> None:
        """Member processes' own events (start, assign, revoke, stop) join the cell's history."""
        for s in self.sets.values():
            for name in s.names:
                self.history.merge(read_events(MemberPaths(self.directory, name)))
