"""A consumer group: member processes started, crashed (SIGKILL), restarted and stopped."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from harness.common.processes import ManagedProcess, stop_all
from harness.results import events as ev
from harness.results.history import History
from harness.results.member_files import MemberPaths, read_events
from harness.results.member_tables import ConsumedTail, commits_tables, consumed_tables

STOP_GRACE_S = 20.0


@dataclass
class GroupSettings:
    bootstrap: str
    topic: str
    group: str
    set_name: str = "group"
    members: int = 1
    commit: str = "after-process"
    processing_ms: int = 0  # simulated work per polled batch
    processing_jitter_ms: int = 0  # plus a seeded uniform 0..jitter per batch
    seed: int = 0
    config: dict[str, Any] = field(default_factory=dict)
    max_s: float = 3600.0


def member_command(settings: GroupSettings, name: str, directory: Path) -> list[str]:
    """The command line of one member process (`harness.workload.group_member`)."""
    return [
        sys.executable,
        "-m",
        "harness.workload.group_member",
        "--bootstrap",
        settings.bootstrap,
        "--topic",
        settings.topic,
        "--group",
        settings.group,
        "--consumer",
        name,
        "--commit",
        settings.commit,
        "--processing-ms",
        str(settings.processing_ms),
        "--processing-jitter-ms",
        str(settings.processing_jitter_ms),
        "--seed",
        str(settings.seed),
        "--dir",
        str(directory),
        "--config",
        json.dumps(settings.config),
        "--max-s",
        str(settings.max_s),
    ]


class GroupConsumers:
    """The members of one consumer set; each member is its own Python process."""

    def __init__(self, settings: GroupSettings, directory: Path, history: History) -> None:
        self.s = settings
        self.directory = directory
        self.history = history
        directory.mkdir(parents=True, exist_ok=True)
        self.names = [f"{settings.set_name}/m{i}" for i in range(settings.members)]
        self.procs: dict[str, ManagedProcess] = {}
        self.tails = {n: ConsumedTail(MemberPaths(directory, n)) for n in self.names}

    def command(self, name: str) -> list[str]:
        return member_command(self.s, name, self.directory)

    def member(self, index: int) -> str:
        if not 0 <= index < len(self.names):
            raise ValueError(f"{self.s.set_name} has members 0..{len(self.names) - 1}, not {index}")
        return self.names[index]

    def start(self, name: str | None = None) -> None:
        for n in [name] if name else self.names:
            proc = self.procs.get(n)
            if proc is not None and proc.running:
                continue
            paths = MemberPaths(self.directory, n)
            cmd = self.command(n)
            # Own session: a Ctrl-C at the terminal reaches the runner, which stops members itself.
            self.procs[n] = ManagedProcess(cmd, paths.stderr).start()
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
        for name, proc in self.procs.items():
            if proc in killed:
                self.history.append("consumer.crash", consumer=name, note="did not stop on SIGTERM")

    def unready(self) -> list[str]:
        """Members that have not yet had partitions assigned."""
        return [
            n
            for n in self.names
            if not any(
                e["kind"] == "consumer.assign" for e in read_events(MemberPaths(self.directory, n))
            )
        ]

    def poll(self) -> None:
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
        for name in self.names:
            yield from consumed_tables(MemberPaths(self.directory, name))

    def commits_tables(self) -> Iterator[pa.Table]:
        """commits.parquet's rows of every member (COMMITS)."""
        for name in self.names:
            yield from commits_tables(MemberPaths(self.directory, name))
