"""Fault targets named in experiments, resolved to a node when the fault fires.

`broker:<id>`, `controller`, `leader-of:<topic>/<partition>`,
`coordinator-of:<group>`, `random` (seeded), `zookeeper`.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Literal

from harness.errors import ConfigError, FaultError
from harness.faults.control import ClusterView

TargetKind = Literal["broker", "controller", "leader-of", "coordinator-of", "random", "zookeeper"]

_PATTERNS: list[tuple[TargetKind, re.Pattern[str]]] = [
    ("broker", re.compile(r"broker:(?P<id>\d+)")),
    ("controller", re.compile(r"controller")),
    ("leader-of", re.compile(r"leader-of:(?P<topic>[A-Za-z0-9._-]+)/(?P<partition>\d+)")),
    ("coordinator-of", re.compile(r"coordinator-of:(?P<group>\S+)")),
    ("random", re.compile(r"random")),
    ("zookeeper", re.compile(r"zookeeper")),
]
SYNTAX = "broker:<id> | controller | leader-of:<topic>/<partition> | coordinator-of:<group> | random | zookeeper"


@dataclass(frozen=True)
class Target:
    kind: TargetKind
    broker: int | None = None
    topic: str | None = None
    partition: int | None = None
    group: str | None = None

    @classmethod
    def parse(cls, text: str) -> Target:
        for kind, pattern in _PATTERNS:
            m = pattern.fullmatch(text.strip())
            if m:
                g = m.groupdict()
                return cls(
                    kind,
                    broker=int(g["id"]) if "id" in g else None,
                    topic=g.get("topic"),
                    partition=int(g["partition"]) if "partition" in g else None,
                    group=g.get("group"),
                )
        raise ConfigError(f"unknown fault target {text!r}; expected {SYNTAX}")

    def resolve(self, cluster: ClusterView, rng: random.Random) -> int | str:
        """The node this target names right now (a broker/controller id, or 'zookeeper')."""
        if self.kind == "broker":
            assert self.broker is not None
            cluster.node(self.broker)  # validates the id
            return self.broker
        if self.kind == "controller":
            return cluster.controller()
        if self.kind == "leader-of":
            assert self.topic is not None and self.partition is not None
            leader = cluster.leader(self.topic, self.partition)
            if leader is None:
                raise FaultError(f"{self.topic}/{self.partition} has no leader to target")
            return leader
        if self.kind == "coordinator-of":
            assert self.group is not None
            coordinator = cluster.coordinator(self.group)
            if coordinator is None:
                raise FaultError(
                    f"group {self.group!r} has no coordinator (its offsets partition is leaderless)"
                )
            return coordinator
        if self.kind == "random":
            return rng.choice(sorted(cluster.brokers))
        if cluster.mode != "zookeeper":
            raise ConfigError("target 'zookeeper' needs mode='zookeeper'")
        return "zookeeper"
