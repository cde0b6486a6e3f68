"""A command pipeline's members: the user's program, one launcher process per member
(harness.workload.command.member), started, crashed and restarted like a group's members.

What differs from our own pipeline is what the harness can see: no `consumed` or `commits`
lines (the program writes none), so readiness is the program's start, and progress is the
output catching up with the input (harness.workload.command.catch_up)."""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa

from harness.results import events as ev
from harness.results.history import History
from harness.results.member_files import MemberPaths, read_events
from harness.spec.consumers import CommandPipelineSpec
from harness.workload.command.catch_up import CatchUp
from harness.workload.group.supervisor import GroupSupervisor
from harness.workload.runtime import Runtime


class CommandSupervisor(GroupSupervisor):
    member_module = "harness.workload.command.member"

    def __init__(
        self, set_name: str, spec: CommandPipelineSpec, runtime: Runtime, history: History
    ) -> None:
        super().__init__(set_name, spec, runtime, history)
        self.catch_up = CatchUp(runtime.bootstrap, runtime.topic, spec.output, spec.group)

    def unready(self) -> list[str]:
        """Members whose program has not started yet (whether it reads, only it knows)."""
        return [
            n
            for n in self.names
            if not any(
                e["kind"] == ev.CONSUMER_START for e in read_events(MemberPaths(self.directory, n))
            )
        ]

    def lag(self, ends: dict[int, int]) -> dict[int, int]:
        """Input records per partition the output has not caught up with."""
        return self.catch_up.lag(ends)

    def stop(self) -> None:
        super().stop()
        self.catch_up.close()

    def consumed_tables(self) -> Iterator[pa.Table]:
        """None: the harness cannot see what a user's program consumed."""
        return iter(())

    def commits_tables(self) -> Iterator[pa.Table]:
        return iter(())
