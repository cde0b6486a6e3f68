"""Fault targets named in experiments, resolved to a node when the fault fires.

`broker:<id>`, `controller`, `leader-of:<topic>/<partition>`, `leader-of:<topic>/*` (a
running broker leading some partition of the topic, seeded), `coordinator-of:<group>`, `random`
(seeded), `zookeeper`, `share-coordinator-of:<group>/<topic>/<partition>` (the broker
leading the __share_group_state partition that keeps that share partition's state); any of
them followed by `except <target>[, <target>…]`: the nodes those name at that moment are not
candidates. Two faults planned on one cell cannot then
cancel each other: `leader-of:chaos/* except coordinator-of` kills a leader and leaves the
group's coordinator for the fault that is about it.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, replace
from typing import Literal

from harness.errors import ConfigError, FaultError, HarnessError
from harness.faults.control import ClusterView

TargetKind = Literal[
    "broker",
    "controller",
    "leader-of",
    "coordinator-of",
    "txn-coordinator-of",
    "share-coordinator-of",
    "random",
    "zookeeper",
]

_PATTERNS: list[tuple[TargetKind, re.Pattern[str]]] = [
    ("broker", re.compile(r"broker:(?P<id>\d+)")),
    ("controller", re.compile(r"controller")),
    ("leader-of", re.compile(r"leader-of:(?P<topic>[A-Za-z0-9._-]+)/(?P<partition>\d+|\*)")),
    ("coordinator-of", re.compile(r"coordinator-of:(?P<group>\S+)")),
    ("txn-coordinator-of", re.compile(r"txn-coordinator-of:(?P<tid>\S+)")),
    (
        "share-coordinator-of",  # a group id may hold "/": topic and partition are the last two
        re.compile(
            r"share-coordinator-of:(?P<group>\S+)/(?P<topic>[A-Za-z0-9._-]+)/(?P<partition>\d+)"
        ),
    ),
    ("random", re.compile(r"random")),
    ("zookeeper", re.compile(r"zookeeper")),
]
SYNTAX = (
    "broker:<id> | controller | leader-of:<topic>/<partition> | leader-of:<topic>/* | "
    "coordinator-of:<group> | txn-coordinator-of:<transactional.id> | "
    "share-coordinator-of:<group>/<topic>/<partition> | random | zookeeper, "
    "optionally followed by "
    "'except <target>[, <target>...]'"
)
_EXCEPT = re.compile(r"\s+except\s+")


@dataclass(frozen=True)
class Target:
    kind: TargetKind
    broker: int | None = None
    topic: str | None = None
    partition: int | None = None  # None with leader-of: any partition of the topic
    group: str | None = None
    transactional_id: str | None = None
    excluded: tuple[Target, ...] = ()

    @classmethod
    def parse(cls, text: str) -> Target:
        base, *rest = _EXCEPT.split(text.strip(), maxsplit=1)
        target = cls._one(base, text)
        if not rest:
            return target
        others = [cls._one(part, text) for part in rest[0].split(",")]
        if any(o.kind in ("random", "zookeeper") for o in others):
            raise ConfigError(f"'except' takes brokers, not random or zookeeper (got {text!r})")
        return replace(target, excluded=tuple(others))

    @classmethod
    def _one(cls, part: str, text: str) -> Target:
        for kind, pattern in _PATTERNS:
            m = pattern.fullmatch(part.strip())
            if m:
                g = m.groupdict()
                partition = g.get("partition")
                return cls(
                    kind,
                    broker=int(g["id"]) if "id" in g else None,
                    topic=g.get("topic"),
                    partition=int(partition) if partition not in (None, "*") else None,
                    group=g.get("group"),
                    transactional_id=g.get("tid"),
                )
        raise ConfigError(f"unknown fault target {text!r}; expected {SYNTAX}")

    def resolve(self, cluster: ClusterView, rng: random.Random) -> int | str:
        """The node this target names right now (a broker/controller id, or 'zookeeper')."""
        candidates = self._candidates(cluster)
        if self.excluded:
            away = {n for t in self.excluded for n in t._excluding(cluster)}
            left = [n for n in candidates if n not in away]
            if not left:
                raise FaultError(
                    f"{self.describe()} names {_nodes(candidates)}, which 'except' leaves out"
                    f" ({_nodes(sorted(away, key=str))})"
                )
            candidates = left
        return candidates[0] if len(candidates) == 1 else rng.choice(candidates)

    def describe(self) -> str:
        if self.kind == "leader-of":
            return f"leader-of:{self.topic}/{'*' if self.partition is None else self.partition}"
        if self.kind == "coordinator-of":
            return f"coordinator-of:{self.group}"
        if self.kind == "txn-coordinator-of":
            return f"txn-coordinator-of:{self.transactional_id}"
        if self.kind == "share-coordinator-of":
            return f"share-coordinator-of:{self.group}/{self.topic}/{self.partition}"
        return f"broker:{self.broker}" if self.kind == "broker" else self.kind

    def _excluding(self, cluster: ClusterView) -> list[int | str]:
        """The nodes an `except` target names now; none when it names nothing or cannot be
        resolved (a leaderless coordinator, no controller elected yet)."""
        try:
            return self._candidates(cluster)
        except HarnessError:  # e.g. no controller elected yet, a leaderless coordinator
            return []

    def _candidates(self, cluster: ClusterView) -> list[int | str]:
        if self.kind == "broker":
            assert self.broker is not None
            cluster.node(self.broker)  # validates the id
            return [self.broker]
        if self.kind == "controller":
            return [cluster.controller()]
        if self.kind == "leader-of":
            assert self.topic is not None
            if self.partition is None:
                # Running brokers only: a broker killed a moment ago can still be named
                # leader until it is fenced, and a fault on it would do nothing new.
                running = set(cluster.brokers)
                leaders = {n for n in cluster.leaders(self.topic).values() if n is not None}
                if not leaders & running:
                    raise FaultError(f"no running broker leads a partition of {self.topic}")
                return sorted(leaders & running)
            leader = cluster.leader(self.topic, self.partition)
            if leader is None:
                raise FaultError(f"{self.topic}/{self.partition} has no leader to target")
            return [leader]
        if self.kind == "coordinator-of":
            assert self.group is not None
            coordinator = cluster.coordinator(self.group)
            if coordinator is None:
                raise FaultError(
                    f"group {self.group!r} has no coordinator (its offsets partition is leaderless)"
                )
            return [coordinator]
        if self.kind == "txn-coordinator-of":
            assert self.transactional_id is not None
            coordinator = cluster.txn_coordinator(self.transactional_id)
            if coordinator is None:
                raise FaultError(
                    f"transactional id {self.transactional_id!r} has no coordinator "
                    "(its __transaction_state partition is leaderless)"
                )
            return [coordinator]
        if self.kind == "share-coordinator-of":
            assert self.group is not None and self.topic is not None
            assert self.partition is not None
            coordinator = cluster.share_coordinator(self.group, self.topic, self.partition)
            if coordinator is None:
                raise FaultError(
                    f"share group {self.group!r} has no share coordinator for "
                    f"{self.topic}/{self.partition} (its __share_group_state partition is "
                    "leaderless)"
                )
            return [coordinator]
        if self.kind == "random":
            return list(sorted(cluster.brokers))
        if cluster.mode != "zookeeper":
            raise ConfigError("target 'zookeeper' needs mode='zookeeper'")
        return ["zookeeper"]


def names_plain_coordinator(text: str) -> bool:
    """Does the target say `coordinator-of` without a group (the spec's group is meant)?"""
    return _PLAIN_COORDINATOR.search(text) is not None


def with_group(text: str, group: str | None) -> str:
    """Plain `coordinator-of` (anywhere in a target, `except` parts included) names the
    spec's first group."""
    if group is None:
        return text
    return _PLAIN_COORDINATOR.sub(f"coordinator-of:{group}", text)


_PLAIN_COORDINATOR = re.compile(r"(?<![\w-])coordinator-of\b(?!:)")


def _nodes(nodes: list[int | str]) -> str:
    shown = [f"broker {n}" if isinstance(n, int) else str(n) for n in nodes]
    return ", ".join(shown) or "no node"
