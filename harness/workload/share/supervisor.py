"""A share group's members: started, crashed, stopped as a consumer group's are; what differs
is when they are ready, when they have drained, and the table they add (share.parquet)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pyarrow as pa

from harness.errors import HarnessError
from harness.results import events as ev
from harness.results.history import History
from harness.results.member_files import MemberPaths, read_events
from harness.results.member_tables import share_tables
from harness.spec.consumers import ShareConsumerSpec
from harness.workload.group.supervisor import GroupSupervisor
from harness.workload.java import share as java_share
from harness.workload.java.share import JavaShareMember
from harness.workload.runtime import Runtime
from harness.workload.share.group_config import GROUP_CONFIG, set_group_config
from harness.workload.share.group_tool import assigned_members, share_lag
from harness.workload.share.member import start_fields

ASK_EVERY_S = 3.0  # the drain asks the broker at most this often (a JVM each time)


class ShareSupervisor(GroupSupervisor):
    member_module = "harness.workload.share.member"

    def __init__(
        self, set_name: str, spec: ShareConsumerSpec, runtime: Runtime, history: History
    ) -> None:
        super().__init__(set_name, spec, runtime, history)
        self.share_spec = spec
        if spec.client == "java":
            fields = start_fields(spec)
            self.java = {
                n: JavaShareMember(spec, MemberPaths(self.directory, n), fields) for n in self.names
            }
        self._asked_at = 0.0
        self._lag: dict[int, int] = {}
        self._why = ""  # the tool's last failure, if its last answer was one
        self._configured = False
        self._members_at = 0.0
        self._unassigned: list[str] = list(self.names)

    def command(self, name: str) -> list[str]:
        if name in self.java:
            return java_share.command(
                self.share_spec, self.runtime, MemberPaths(self.directory, name)
            )
        return super().command(name)

    def start(self, name: str | None = None) -> None:
        """The group told to start at the log's beginning before its first member joins
        (a share group starts at the end by default: records written before a partition's
        first fetch would be skipped), then the members."""
        if not self._configured:
            set_group_config(self.runtime.bootstrap, self.share_spec.group, GROUP_CONFIG)
            self._configured = True
            self.history.append(ev.SHARE_GROUP_CONFIG, group=self.share_spec.group, **GROUP_CONFIG)
        super().start(name)

    def unready(self) -> list[str]:
        """Members the group has not assigned a partition yet, as the brokers say
        (harness.workload.share.group_tool): a member that subscribed is not in the group
        until its heartbeat is answered. Asked at most every ASK_EVERY_S / 3."""
        self.follow()  # a Java member's consumer.start is in its stdout until followed
        started = [
            n
            for n in self.names
            if any(
                e["kind"] == ev.CONSUMER_START for e in read_events(MemberPaths(self.directory, n))
            )
        ]
        waiting = [n for n in self.names if n not in started]
        if waiting:
            return waiting
        now = time.monotonic()
        if now - self._members_at >= ASK_EVERY_S / 3:
            self._members_at = now
            r = self.runtime
            try:
                members = assigned_members(r.bootstrap, self.share_spec.group, r.topic, r.version)
            except HarnessError:
                members = {}
            self._unassigned = [n for n in self.names if not members.get(n)]
        return self._unassigned

    def lag(self, ends: dict[int, int]) -> dict[int, int]:
        """Records each partition still has that the group has neither acknowledged nor
        archived (the broker's word, harness.workload.share.group_tool). Asked at most every
        ASK_EVERY_S; while the tool fails, or has no number for a partition, every record of
        it counts as left, and the history says why (`share.lag_unknown`, once per reason)."""
        self.poll()
        now = time.monotonic()
        if now - self._asked_at >= ASK_EVERY_S or set(ends) - set(self._lag):
            self._asked_at = now
            r = self.runtime
            try:
                left = share_lag(r.bootstrap, self.share_spec.group, r.topic, r.version, ends)
                why = ""
            except HarnessError as exc:
                left, why = {}, str(exc)
            if why and why != self._why:
                self.history.append(ev.SHARE_LAG_UNKNOWN, group=self.share_spec.group, error=why)
            self._why = why
            self._lag = {
                p: end if left.get(p) is None else min(end, left[p] or 0) for p, end in ends.items()
            }
        return {p: self._lag.get(p, end) for p, end in ends.items()}

    def share_tables(self) -> Iterator[pa.Table]:
        """share.parquet's rows of every member, each in its file order (SHARE)."""
        for name in self.names:
            yield from share_tables(MemberPaths(self.directory, name))
