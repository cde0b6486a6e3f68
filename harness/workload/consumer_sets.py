"""Every consumer set of a cell behind one face: start, crash a member, drain, collect."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa

from harness.common.waiting import wait_until
from harness.errors import HarnessError, WaitTimeout
from harness.results.consumers import ConsumerRef, set_of
from harness.results.history import History
from harness.results.layout import CellPaths
from harness.results.member_files import MemberPaths, read_events
from harness.spec import Spec
from harness.workload.clocks import ClientClocks
from harness.workload.consumer_kinds import ConsumerSet, declared_sets
from harness.workload.group.supervisor import GroupSupervisor
from harness.workload.runtime import Runtime
from harness.workload.share.supervisor import ShareSupervisor

DEFAULT_GROUP = "chaos-group"


class ConsumerSets:
    def __init__(
        self,
        spec: Spec,
        bootstrap: str,
        cell_dir: Path,
        history: History,
        max_s: float,
        seed: int = 0,
        clocks: ClientClocks | None = None,
    ) -> None:
        self.history = history
        self.directory = CellPaths(cell_dir).consumers
        self.default_group = spec.default_group() or DEFAULT_GROUP
        # What every member gets besides its set's spec model and its name.
        self.runtime = Runtime(
            bootstrap, spec.topic.name, self.directory, max_s, seed, spec.cluster.version
        )
        self.sets: dict[str, ConsumerSet] = {
            name: kind.supervise(name, model, self.runtime, history)
            for name, kind, model in declared_sets(spec)
        }
        if clocks is not None:  # members whose clock a fault skews run with a fake clock
            for s in self.sets.values():
                if isinstance(s, GroupSupervisor):
                    s.clocks = clocks

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
                # a member that could not start never will be: no use waiting for it
                done=lambda waiting: not waiting or bool(self.not_started()),
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

    def not_started(self) -> dict[str, str]:
        """Members of any set whose program could not be started: name -> why."""
        return {n: why for s in self.sets.values() for n, why in s.not_started().items()}

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

    def share_sets(self) -> list[str]:
        """The names of the share-group sets (each adds its rows to share.parquet)."""
        return [name for name, s in self.sets.items() if isinstance(s, ShareSupervisor)]

    def share_tables(self) -> Iterator[pa.Table]:
        """share.parquet's rows (SHARE), set after set."""
        for s in self.sets.values():
            if isinstance(s, ShareSupervisor):
                yield from s.share_tables()

    def commits_tables(self) -> Iterator[pa.Table]:
        """commits.parquet's rows (COMMITS), set after set."""
        for s in self.sets.values():
            yield from s.commits_tables()

    def merge_events(self) -> None:
        """Member processes' own events (start, assign, revoke, stop) join the cell's history."""
        for s in self.sets.values():
            for name in s.names:
                self.history.merge(read_events(MemberPaths(self.directory, name)))
