"""One cluster for many explore trials: a trial's cluster is kept, and the next trial runs on it
when it was built alike and a health check passes; otherwise the next trial starts a fresh one.

A cluster start is a third of a short trial (containers, KRaft format, JVM start and JIT:
~20 s of the ~65 s a 30 s trial took). Reuse is refused, and the kept cluster removed, when:

* the trial planned a fault that leaves the cluster other than it started even once healed:
  its members, versions or disks (the kind's `changes_cluster`, e.g. power-loss, corrupt,
  decommission, add-broker, a kill with wipe);
* the next trial's cluster is built otherwise (mode, version, size, settings, capabilities:
  a trial that draws power-loss needs plfs under its nodes). So that the others are built
  alike, each trial's cluster has every on/off capability a drawable kind needs (link
  proxies for latency, bandwidth and reset; the fake clock for clock-skew): see
  `shared_capabilities`;
* the health check fails: a fault still active, a node not running, a node retired or added,
  a broker not registered, a partition of any topic without a leader or with a short ISR, or
  the workload's topics not deleted in time.

A reused cluster's trial sees only its own: its history gets `cluster.start` again (with
`reused`: how many trials ran on it before, `first_cell`), every node's log is cut at the
trial's start (its broker logs and the lines its checks count), its metrics are counter
increases over its own scrapes, and its topics are created anew. `cluster.not_reused` in the
next trial's history says why a kept cluster was not taken.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.cluster.kafka_cluster import KafkaCluster
from harness.errors import HarnessError
from harness.faults.registry import SPEC_KINDS
from harness.results.history import History
from harness.spec import Spec
from harness.spec.explore_roles import Entry
from harness.spec.explore_rules import drawable_pairs
from harness.spec.models import parse_fault
from harness.spec.problems import cell_view

NOT_REUSED = "cluster.not_reused"  # history event: why a kept cluster was not taken
HEALTH_TIMEOUT_S = 30.0
REBOUND = ("history", "logs_dir", "run_id")  # what a reuse changes: the rest must match


def changes_cluster(faults: Sequence[Entry]) -> list[str]:
    """The kinds among these faults that leave the cluster changed (none: it may be reused)."""
    out: list[str] = []
    for f in faults:
        fault = parse_fault({"at_s": 0, **f})
        if fault.leaves_changed() and fault.kind not in out:
            out.append(fault.kind)
    return out


def shared_capabilities(spec: Spec) -> Spec:
    """The cell's spec with every on/off capability (link proxies, the fake clock) that a
    drawable kind needs turned on, unless the spec says otherwise: each trial's cluster is
    then built alike, whatever it drew, and may be reused. Not the disks' (plfs, sized log
    directories): the kinds that need them change the disks, so the next trial needs a fresh
    cluster anyway (and the two exclude each other)."""
    base = spec.model_copy(update={"faults": []})
    cell = cell_view(base)
    turned: dict[str, bool] = {}
    for kind, _role in drawable_pairs(base, cell):
        spec_kind = SPEC_KINDS[kind]
        if spec_kind.changes_cluster or spec_kind.plays != "cluster":
            continue
        for need in spec_kind.needs:
            key = getattr(need, "key", None)
            if isinstance(key, str) and getattr(spec.cluster, key, None) is None:
                turned[key] = True
    if not turned:
        return spec
    return spec.model_copy(update={"cluster": spec.cluster.model_copy(update=turned)})


def _key(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    """How the cluster is built, but what a reuse rebinds (a cell's history, folder, run id)."""
    return repr((args, sorted((k, v) for k, v in kwargs.items() if k not in REBOUND)))


def topics_of(spec: Spec) -> list[str]:
    """The topics a cell creates for its workload: its topic, a pipeline's output."""
    out = [spec.topic.name]
    if spec.pipeline is not None and spec.pipeline.output not in out:
        out.append(spec.pipeline.output)
    return out


def health_problem(cluster: KafkaCluster) -> str | None:
    """Why this cluster cannot serve another trial as it is (None: it can)."""
    if cluster.faults.touched():
        return f"faults still active on {sorted(cluster.faults.touched())}"
    if cluster.retired:
        return f"retired nodes: {[n.name for n in cluster.retired]}"
    started = sorted(str(n) for n in cluster.start_record.get("nodes", []))
    names = sorted(n.name for n in cluster.nodes)
    if names != started:
        return f"nodes {names}, started as {started}"
    down = [n.name for n in cluster.nodes if not n.is_up()]
    if down:
        return f"not running: {down}"
    try:
        admin = cluster.admin
        want = {n.spec.kafka_id for n in cluster.broker_nodes}
        registered = admin.registered_brokers()
        if registered != want:
            return f"registered brokers {sorted(registered)}, expected {sorted(want)}"
        short = admin.under_replicated()
        if short:
            return f"under-replicated: {short[:5]}"
        unled = [
            f"{name}/{p.id}"
            for name, topic in admin.topics().items()
            for p in topic.partitions.values()
            if p.leader < 0
        ]
        if unled:
            return f"no leader: {unled[:5]}"
    except HarnessError as exc:
        return f"{type(exc).__name__}: {exc}"
    except Exception as exc:  # an admin call that failed: not healthy, whatever it was
        return f"{type(exc).__name__}: {exc}"
    return None


def reset_topics(cluster: KafkaCluster, spec: Spec) -> str | None:
    """The cell's topics deleted and gone from every broker (the steady state creates them
    again); why not, or None."""
    try:
        existing = set(cluster.admin.topics())
        for name in topics_of(spec):
            if name in existing:
                cluster.admin.delete_topic(name)
                cluster.admin.wait_topic_gone(name, timeout_s=HEALTH_TIMEOUT_S)
    except Exception as exc:
        return f"topics not reset: {type(exc).__name__}: {exc}"
    return None


@dataclass
class ClusterPool:
    """The kept cluster between trials, and what reuse did (for the explore summary)."""

    enabled: bool = True
    kept: KafkaCluster | None = None
    current: KafkaCluster | None = None  # the running trial's (removed by close() on Ctrl-C)
    key: str | None = None
    fresh: int = 0  # trials that started a cluster
    reused: int = 0  # trials that ran on the one before
    refused: list[str] = field(default_factory=list)  # why a kept cluster was not taken

    def factory(self, spec: Spec, label: str) -> Callable[..., KafkaCluster]:
        """A cell runner's cluster factory for this trial (harness.runner.cell_runner.Parts)."""

        def make(*args: Any, **kwargs: Any) -> KafkaCluster:
            key = _key(args, kwargs)
            history: History = kwargs["history"]
            kept, self.kept = self.kept, None
            stale, self.current = self.current, None
            if stale is not None and stale is not kept:  # a cell that broke never handed it back
                _remove(stale)
            if kept is not None:
                why = "built otherwise" if key != self.key else health_problem(kept)
                why = why or reset_topics(kept, spec)
                if why is None:
                    kept.rebind(history, kwargs.get("logs_dir"), label)
                    self.reused += 1
                    self.current = kept
                    return kept
                history.append(NOT_REUSED, why=why)
                self.refused.append(f"{label}: {why}")
                _remove(kept)
            self.key = key
            self.fresh += 1
            cluster = KafkaCluster(*args, **kwargs)
            cluster.served.append(label)
            self.current = cluster
            return cluster

        return make

    def keep(self, cluster: KafkaCluster | None, faults: Sequence[Entry], label: str) -> None:
        """After a trial: keep its cluster for the next, unless reuse is off or its faults
        changed the cluster (then it is removed now)."""
        self.current = None
        if cluster is None:
            return
        changed = changes_cluster(faults)
        if self.enabled and not changed:
            self.kept = cluster
            return
        if changed:
            self.refused.append(f"after {label}: {', '.join(changed)} changed the cluster")
        _remove(cluster)

    def close(self) -> None:
        """The kept cluster removed (the end of the exploration, or Ctrl-C)."""
        for cluster in {id(c): c for c in (self.kept, self.current) if c is not None}.values():
            _remove(cluster)
        self.kept = self.current = None

    def describe(self) -> dict[str, Any]:
        return {"fresh": self.fresh, "reused": self.reused, "not_reused": list(self.refused)}


def _remove(cluster: KafkaCluster) -> None:
    cluster.logs_dir = None  # its last cell saved its logs already
    with contextlib.suppress(Exception):
        cluster.close()
