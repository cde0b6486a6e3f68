"""A consumer group: member processes started, crashed (SIGKILL), restarted and stopped."""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa

from harness.common.processes import ManagedProcess, stop_all
from harness.results import events as ev
from harness.results.history import History
from harness.results.member_files import MemberPaths, not_started, read_events
from harness.results.member_tables import ConsumedTail, commits_tables, consumed_tables
from harness.spec.consumers import (
    CommandPipelineSpec,
    GroupConsumerSpec,
    PipelineSpec,
    ShareConsumerSpec,
)
from harness.workload.clocks import ClientClocks
from harness.workload.java import group as java_group
from harness.workload.java.follow import seal
from harness.workload.java.share import JavaShareMember
from harness.workload.member_process import member_command, member_index, member_name
from harness.workload.runtime import Runtime

STOP_GRACE_S = 20.0


class GroupSupervisor:
    """The members of one consumer set; each member is its own Python process, started with
    the set's spec and the cell's runtime (harness.workload.member_process)."""

    member_module = "harness.workload.group.member"

    def __init__(
        self,
        set_name: str,
        spec: GroupConsumerSpec | PipelineSpec | CommandPipelineSpec | ShareConsumerSpec,
        runtime: Runtime,
        history: History,
    ) -> None:
        self.set_name = set_name
        self.spec = spec
        self.runtime = runtime
        self.directory = runtime.directory
        self.history = history
        self.directory.mkdir(parents=True, exist_ok=True)
        self.names = [member_name(set_name, i) for i in range(spec.members)]
        self.procs: dict[str, ManagedProcess] = {}
        self.clocks: ClientClocks | None = None  # members whose clock a fault skews (fake clocks)
        self.tails = {n: ConsumedTail(MemberPaths(self.directory, n)) for n in self.names}
        # A Java set's members print events, followed into the usual files on every read.
        self.java: dict[str, java_group.JavaMember | JavaShareMember] = {}
        if isinstance(spec, GroupConsumerSpec) and spec.client == "java":
            self.java = {
                n: java_group.JavaMember(spec, MemberPaths(self.directory, n), set_name)
                for n in self.names
            }

    def command(self, name: str) -> list[str]:
        if name in self.java and isinstance(self.spec, GroupConsumerSpec):
            return java_group.command(self.spec, self.runtime, MemberPaths(self.directory, name))
        return member_command(self.member_module, self.spec, self.runtime, name)

    def follow(self) -> None:
        """A Java member's new events into its files (nothing for librdkafka members)."""
        for member in self.java.values():
            member.poll()

    def member(self, index: int) -> str:
        if not 0 <= index < len(self.names):
            raise ValueError(f"{self.set_name} has members 0..{len(self.names) - 1}, not {index}")
        return self.names[index]

    def start(self, name: str | None = None) -> None:
        for n in [name] if name else self.names:
            proc = self.procs.get(n)
            if proc is not None and proc.running:
                continue
            paths = MemberPaths(self.directory, n)
            cmd = self.command(n)
            stdout = None
            if n in self.java:
                stdout = java_group.stdout_path(paths)
                self.java[n].poll()  # what the last JVM printed, then its torn line dropped
                seal(stdout)
            # Own session: a Ctrl-C at the terminal reaches the runner, which stops members itself.
            env = None
            if self.clocks is not None:
                env = self.clocks.env(f"consumer:{self.set_name}/{member_index(n)}")
            self.procs[n] = ManagedProcess(cmd, paths.stderr, stdout, env=env).start()
            if n in self.java:
                self.java[n].pid = self.procs[n].pid
            self.history.append("consumer.launch", consumer=n, pid=self.procs[n].pid)

    def crash(self, name: str, index: int | None = None) -> None:
        """SIGKILL: no close, no commit, no leaving the group (the coordinator waits for the session).

        Sent to the member's process group, as for a Spark query; a member starts no
        children, so that is the member alone, as before."""
        proc = self.procs.get(name)
        if proc is None or not proc.running:
            planned = {} if index is None else {"index": index}
            self.history.append("consumer.crash", consumer=name, note="was not running", **planned)
            return
        proc.kill()
        self.history.append(
            "consumer.crash",
            consumer=name,
            pid=proc.pid,
            **({} if index is None else {"index": index}),
        )

    def stop(self) -> None:
        """SIGTERM every member (a clean close), SIGKILL any that outlives the grace period."""
        killed = stop_all(self.procs.values(), STOP_GRACE_S)
        self.follow()
        for name, proc in self.procs.items():
            if proc in killed:
                self.history.append("consumer.crash", consumer=name, note="did not stop on SIGTERM")

    def unready(self) -> list[str]:
        """Members that have not yet had partitions assigned."""
        self.follow()
        return [
            n
            for n in self.names
            if not any(
                e["kind"] == "consumer.assign" for e in read_events(MemberPaths(self.directory, n))
            )
        ]

    def not_started(self) -> dict[str, str]:
        """Members whose program could not be started (a command pipeline's launcher says
        so): name -> why. They will never read; the drain does not wait for them."""
        return not_started(self.directory, self.names)

    def poll(self) -> None:
        self.follow()
        for tail in self.tails.values():
            tail.poll()

    @property
    def rows(self) -> int:
        return sum(t.rows for t in self.tails.values())

    def lag(self, ends: dict[int, int]) -> dict[int, int]:
        """Records each partition still has past the furthest offset any member passed:
        processed, or reached as the partition's end (`consumer.at_end`: a partition the
        group started at its end has nothing to process, yet the group is there)."""
        self.poll()
        passed = self._at_end()
        for tail in self.tails.values():
            for partition, offset in tail.max_offset.items():
                passed[partition] = max(passed.get(partition, 0), offset + 1)
        return {p: max(0, end - passed.get(p, 0)) for p, end in ends.items()}

    def _at_end(self) -> dict[int, int]:
        """partition -> the highest end offset a member reported reaching."""
        out: dict[int, int] = {}
        for name in self.names:
            for e in read_events(MemberPaths(self.directory, name)):
                if e["kind"] == ev.CONSUMER_AT_END:
                    for key, offset in e["ends"].items():
                        out[int(key)] = max(out.get(int(key), 0), int(offset))
        return out

    def consumed_tables(self) -> Iterator[pa.Table]:
        """consumed.parquet's rows of every member, each in its processing order (CONSUMED)."""
        self.follow()
        for name in self.names:
            yield from consumed_tables(MemberPaths(self.directory, name))

    def commits_tables(self) -> Iterator[pa.Table]:
        """commits.parquet's rows of every member (COMMITS)."""
        self.follow()
        for name in self.names:
            yield from commits_tables(MemberPaths(self.directory, name))
